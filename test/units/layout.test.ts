// The source layout of docs/architecture.md: the import rules themselves run in `npm test` as
// dependency-cruiser (.dependency-cruiser.cjs, `npm run check:imports`). This file checks that
// those rules cover every room, that they catch what they are meant to catch, and that no file
// is too long to read (issue 12).
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { cruise } from 'dependency-cruiser';
import { afterAll, describe, expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');
const require = createRequire(import.meta.url);
const { LAYERS } = require('../../scripts/import-layers.cjs') as { LAYERS: { name: string; rooms: string[] }[] };
const config = require('../../.dependency-cruiser.cjs');
const MAX_LINES = 400;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Cruises `tree` (path under src/ → source) laid out in a scratch checkout, with the project's rules. */
async function violations(tree: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'authsvc-layout-'));
  scratch.push(dir);
  cpSync(join(ROOT, 'tsconfig.json'), join(dir, 'tsconfig.json'));
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
    writeFileSync(join(dir, 'src', path), text);
  }
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const result = await cruise(['src'], {
      ...config.options,
      validate: true,
      ruleSet: { forbidden: config.forbidden },
    });
    const output = result.output as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
    return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
  } finally {
    process.chdir(cwd);
  }
}
const scratch: string[] = [];
afterAll(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

describe('source layout', () => {
  test('every folder and root file under src/ is in a layer of scripts/import-layers.cjs, and every layer room exists', () => {
    const rooms = LAYERS.flatMap((l) => l.rooms);
    const present = readdirSync(SRC).filter((f) => statSync(join(SRC, f)).isDirectory() || f.endsWith('.ts'));
    expect(present.filter((r) => !rooms.includes(r))).toEqual([]);
    expect(rooms.filter((r) => !present.includes(r))).toEqual([]);
    expect(new Set(rooms).size).toBe(rooms.length);
  });

  test('docs/architecture.md draws the same layers, bottom last', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const drawn = [...doc.matchAll(/^\| (\d+) \| `([^`]+)` \| ([^|]+) \|/gm)].map((m) => ({
      n: Number(m[1]),
      name: m[2],
      rooms: m[3]!.trim(),
    }));
    expect(drawn.map((d) => d.name)).toEqual([...LAYERS].reverse().map((l) => l.name));
    for (const d of drawn) expect(d.rooms).toBe(LAYERS[d.n]!.rooms.map((r) => `\`${r}\``).join(', '));
  });

  test('the rules catch an upward import, a circle, a feature importing another, Node outside adapters/, and a room without a layer', async () => {
    expect(
      await violations({
        'db/users.ts': "import { signup } from '../flows/signup.ts';\nexport const u = signup;\n",
        'flows/signup.ts': "import { x } from '../crypto/jwt.ts';\nexport const signup = x;\n",
        'crypto/jwt.ts': "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n",
        'mfa/verify.ts': "import { signup } from '../flows/signup.ts';\nexport const v = signup;\n",
        'accounts/a.ts': "import type { B } from './b.ts';\nexport type A = B;\n",
        'accounts/b.ts': "import type { A } from './a.ts';\nexport type B = A | 1;\n",
        'newroom/x.ts': "import { x } from '../crypto/jwt.ts';\nexport const y = x;\n",
        'adapters/node.ts':
          "import { readFileSync } from 'node:fs';\nimport { signup } from '../flows/signup.ts';\nexport const n = [readFileSync, signup];\n",
      }),
    ).toEqual([
      'db-imports-down: src/db/users.ts → src/flows/signup.ts',
      'features-no-peer-imports: src/mfa/verify.ts → src/flows/signup.ts',
      'in-a-layer: src/newroom/x.ts → src/crypto/jwt.ts',
      'no-circular: src/accounts/a.ts → src/accounts/b.ts',
      'runtime-neutral: src/crypto/jwt.ts → fs',
    ]);
  });

  test(`no file in src/ is over ${MAX_LINES} lines`, () => {
    const long = files(SRC)
      .filter((p) => readFileSync(p, 'utf8').split('\n').length > MAX_LINES)
      .map((p) => relative(ROOT, p));
    expect(long).toEqual([]);
  });

  test('every route group (src/routes/<group>.ts) has its test file, test/routes/<group>.test.ts (more of it in <group>-<part>.test.ts), and no test file there names a group that is gone', () => {
    const groups = readdirSync(join(SRC, 'routes')).map((f) => f.replace(/\.ts$/, ''));
    const tests = readdirSync(join(ROOT, 'test', 'routes')).map((f) => f.replace(/\.test\.ts$/, ''));
    expect({
      untested: groups.filter((g) => !tests.includes(g)),
      orphans: tests.filter((t) => !groups.some((g) => t === g || t.startsWith(`${g}-`))),
    }).toEqual({
      untested: [],
      orphans: [],
    });
  });
});
