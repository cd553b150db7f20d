// The core must run on Workers, Deno and Bun: only src/adapters/ may touch runtime APIs.
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const FORBIDDEN: [RegExp, string][] = [
  [/from\s+['"]node:/, 'imports node:*'],
  [/import\(\s*['"]node:/, 'imports node:*'],
  [/from\s+['"]cloudflare:/, 'imports cloudflare:*'],
  [/from\s+['"]bun(:[^'"]*)?['"]/, 'imports bun'],
  [/\bDeno\./, 'uses Deno'],
  [/\bBun\./, 'uses Bun'],
  [/\bprocess\.(env|argv|exit|cwd|on|once|stdout|stderr|kill|pid)\b/, 'uses process'],
  [/\bBuffer\./, 'uses Buffer'],
  [/from\s+['"](fs|path|os|crypto|http|net|child_process|util)['"]/, 'imports a Node builtin'],
];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function violations(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const rel = relative(ROOT, p);
    if (rel.startsWith(join('src', 'adapters'))) continue;
    readFileSync(p, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const [re, what] of FORBIDDEN) if (re.test(line)) out.push(`${rel}:${i + 1} ${what}: ${line.trim()}`);
      });
  }
  return out;
}

describe('runtime-neutral core', () => {
  test('src/ outside src/adapters/ uses no node:*, cloudflare:*, Bun, Deno, process or Buffer', () => {
    const core = [...files(join(ROOT, 'src')), ...files(join(ROOT, 'drizzle'))];
    expect(core.length).toBeGreaterThan(10);
    expect(violations(core)).toEqual([]);
  });

  test('the check itself catches a violation', () => {
    const dir = mkdtempSync(join(tmpdir(), 'neutral-'));
    const file = join(dir, 'leaky.ts');
    writeFileSync(
      file,
      "import { readFileSync } from 'node:fs';\nconst b = Buffer.from('x');\nconst e = process.env.X;\n",
    );
    expect(violations([file])).toHaveLength(3);
  });
});
