// The source layout of DESIGN.md: rooms by concern, imports running one way, no file too long to
// read (issue 12). A new file that imports upwards fails here, not in review.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

/** What each room may not import. Rooms not listed (routes, adapters, the root files) may import any room. */
const FORBIDDEN: Record<string, string[]> = {
  db: ['flows', 'admin', 'routes', 'http', 'mail', 'crypto', 'telemetry', 'adapters', 'sms', 'oauth', 'oauth-server'],
  config: ['flows', 'admin', 'routes', 'http', 'mail', 'crypto', 'telemetry', 'db', 'adapters', 'sms', 'oauth', 'oauth-server'],
  crypto: ['flows', 'admin', 'routes', 'mail', 'adapters', 'sms', 'oauth', 'oauth-server'],
  mail: ['flows', 'admin', 'routes', 'adapters', 'sms', 'oauth', 'oauth-server'],
  telemetry: ['flows', 'admin', 'routes', 'http', 'adapters', 'sms', 'oauth', 'oauth-server'],
  http: ['flows', 'admin', 'routes', 'adapters', 'sms', 'oauth', 'oauth-server'],
  flows: ['routes', 'adapters'],
  admin: ['routes', 'adapters'],
  sms: ['flows', 'admin', 'routes', 'adapters'],
  oauth: ['routes', 'adapters'],
  'oauth-server': ['routes', 'adapters'],
  routes: ['adapters'],
  // The OpenAPI document reads the routes' body schemas; only routes/openapi.ts reads it.
  openapi: ['adapters'],
};
const MAX_LINES = 400;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The room of a path under src/ (its first folder), or '' for src/'s own files and anything outside. */
function room(path: string): string {
  const rel = relative(SRC, path);
  if (rel.startsWith('..')) return '';
  const parts = rel.split(sep);
  return parts.length > 1 ? parts[0]! : '';
}

const IMPORT = /(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** `file: imports target` for every import that runs against FORBIDDEN. */
function upwardImports(sources: { path: string; text: string }[]): string[] {
  const out: string[] = [];
  for (const { path, text } of sources) {
    const from = room(path);
    const banned = FORBIDDEN[from] ?? [];
    for (const m of text.matchAll(IMPORT)) {
      const target = resolve(dirname(path), m[1]!);
      const to = room(target);
      if (to !== from && banned.includes(to)) out.push(`${relative(ROOT, path)} (${from}/) imports ${relative(ROOT, target)} (${to}/)`);
    }
  }
  return out;
}

describe('source layout', () => {
  const sources = files(SRC).map((path) => ({ path, text: readFileSync(path, 'utf8') }));

  test('imports run one way: db/ knows no flow, route or HTTP type; crypto/, mail/, config/ know no flow', () => {
    expect(sources.length).toBeGreaterThan(50);
    expect(upwardImports(sources)).toEqual([]);
  });

  test('the check itself catches an import that runs upwards, and allows one that runs down', () => {
    const fake = (path: string, text: string) => ({ path: join(SRC, path), text });
    expect(upwardImports([
      fake('db/users.ts', "import { signup } from '../flows/signup.ts';"),
      fake('db/sessions.ts', "import type { AppEnv } from '../http/auth.ts';"),
      fake('crypto/jwt.ts', "const m = await import('../admin/users.ts');"),
      fake('config/fields.ts', "import { x } from '../flows/verify.ts';"),
      fake('mail/render.ts', "import { y } from '../admin/generate-link.ts';"),
      fake('flows/signup.ts', "import { insertUser } from '../db/users.ts';\nimport { signJwt } from '../crypto/jwt.ts';"),
    ])).toHaveLength(5);
  });

  test(`src/lib/ is gone and no file in src/ is over ${MAX_LINES} lines`, () => {
    expect(existsSync(join(SRC, 'lib'))).toBe(false);
    const long = sources.filter((s) => s.text.split('\n').length > MAX_LINES).map((s) => relative(ROOT, s.path));
    expect(long).toEqual([]);
  });
});
