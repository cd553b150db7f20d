// Reads the environment for Node (and Bun/Deno through their Node compatibility): `.env` in the
// working directory fills what the real environment lacks; local mode keeps a JWT secret in
// the data directory so tokens survive restarts.
import { unwritableDataDir } from './data-dir-error.ts';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { lookup } from '../config/names.ts';

export function readEnv(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  const file = join(cwd, '.env');
  if (existsSync(file)) Object.assign(out, parseEnv(readFileSync(file, 'utf8')));
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** Local mode = the embedded engine: DATABASE_URL unset, pglite:// or memory://. */
export function isLocalMode(env: Record<string, string | undefined>): boolean {
  const url = lookup(env, 'DATABASE_URL');
  return !url || url.startsWith('pglite://') || url.startsWith('memory://');
}

export function localDataDir(env: Record<string, string | undefined>): string | undefined {
  const url = lookup(env, 'DATABASE_URL');
  if (!url) return './.authsvc';
  if (url.startsWith('pglite://')) return url.slice('pglite://'.length) || './.authsvc';
  return undefined;
}

/**
 * In local mode without JWT_SECRET/JWT_KEYS: a random secret kept in `<data dir>/jwt-secret`
 * (mode 0600), or a per-process one for memory://. Returns the env to parse and a notice.
 */
export function withLocalSecret(
  env: Record<string, string>,
  randomSecret: () => string,
): { env: Record<string, string>; notice?: string } {
  if (!isLocalMode(env) || lookup(env, 'JWT_SECRET') || lookup(env, 'JWT_KEYS')) return { env };
  const dir = localDataDir(env);
  if (!dir)
    return {
      env: { ...env, AUTHSVC_JWT_SECRET: randomSecret() },
      notice: 'JWT_SECRET is not set: using a random secret for this process (memory:// database).',
    };
  const file = join(dir, 'jwt-secret');
  let secret: string;
  if (existsSync(file)) {
    secret = readFileSync(file, 'utf8').trim();
  } else {
    secret = randomSecret();
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(file, secret + '\n', { mode: 0o600 });
      chmodSync(file, 0o600);
    } catch (err) {
      throw unwritableDataDir(resolve(dir), err);
    }
  }
  return {
    env: { ...env, AUTHSVC_JWT_SECRET: secret },
    notice: `JWT_SECRET is not set: using the local secret kept in ${resolve(file)}.`,
  };
}
