// Settings that take a key's PEM or the path of its file (EXTERNAL_APPLE_PRIVATE_KEY): on Node, Bun
// and Deno a value that is not a PEM is read here as a path (relative to the working directory),
// before the configuration is parsed; the runtime-neutral core only ever sees the PEM. Workers have
// no file system, so there only the PEM itself works (config/apple-key.ts says so when it is not one).
import { readFileSync, statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { resolve } from '../config/names.ts';

const KEY_FILE_SETTINGS = ['EXTERNAL_APPLE_PRIVATE_KEY'] as const;
/** A .p8 file is a few hundred bytes; anything much larger is not the key. */
const MAX_KEY_FILE = 64 * 1024;

/**
 * The environment with each key-file setting's path replaced by the file's contents, and what
 * could not be read (by variable, and path when it ends in .p8 or .pem; never contents). A setting whose file cannot be read
 * is left out, so the parser does not report it a second time as not being a PEM.
 */
export function readKeyFiles(
  env: Record<string, string>,
  cwd = process.cwd(),
): { env: Record<string, string>; problems: string[] } {
  const out = { ...env };
  const problems: string[] = [];
  for (const name of KEY_FILE_SETTINGS) {
    const found = resolve(env, name, false);
    if (!found || found.value.includes('-----BEGIN')) continue;
    const path = resolvePath(cwd, found.value.trim());
    try {
      if (statSync(path).size > MAX_KEY_FILE) throw Object.assign(new Error(), { code: 'EFBIG' });
      out[found.key] = readFileSync(path, 'utf8');
    } catch (err) {
      delete out[found.key];
      // The path is named only when it looks like one: a key pasted without its PEM lines is no path to print.
      const named = /\.(p8|pem)$/i.test(path) ? ` ${path}` : '';
      const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      problems.push(`${found.key}: is not a PEM, and the key file${named} cannot be read (${code})`);
    }
  }
  return { env: out, problems };
}
