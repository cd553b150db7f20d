import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { CONFIG_DOC, configTable, tableIn } from '../../scripts/config-docs.ts';

const root = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

describe('README', () => {
  test('shows the two set-up commands', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });

  test('stays a short page (at most 12 KB; the details live under docs/)', () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(12 * 1024);
  });
});

describe('docs/configuration.md', () => {
  test('its configuration table is the one generated from the config schema (npm run docs:config)', () => {
    const section = tableIn(readFileSync(CONFIG_DOC, 'utf8'));
    expect(section?.trim()).toBe(configTable().trim());
  });
});

/** README.md and every Markdown file under docs/. */
function markdownFiles(): string[] {
  const out = [join(root, 'README.md')];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) out.push(p);
    }
  };
  walk(join(root, 'docs'));
  return out;
}

/** The text without fenced code blocks and inline code, where `](` and `#` mean nothing. */
const prose = (md: string) => md.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '``');

/** GitHub's heading anchors (github-slugger): lower case, punctuation dropped, spaces as '-', duplicates numbered. */
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of md.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

describe('documentation links', () => {
  const files = markdownFiles();

  test('docs/ has the pages the README points to', () => {
    expect(files.map((f) => relative(root, f))).toEqual(
      expect.arrayContaining(['docs/configuration.md', 'docs/security.md']),
    );
  });

  test.each(files.map((f) => [relative(root, f), f]))(
    'every relative link in %s points at an existing file and heading',
    (_name, file) => {
      const broken: string[] = [];
      const text = readFileSync(file, 'utf8');
      for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const dest = path === '' ? file : resolve(dirname(file), path);
        if (!existsSync(dest)) {
          broken.push(`${target}: no such file`);
          continue;
        }
        if (anchor !== undefined && dest.endsWith('.md') && !anchors(readFileSync(dest, 'utf8')).has(anchor)) {
          broken.push(`${target}: no heading with that anchor`);
        }
      }
      expect(broken).toEqual([]);
    },
  );

  test("the anchor rule is GitHub's", () => {
    expect([
      ...anchors('# Fault injection\n## Node.js\n## `redirect_to` and (globs)\n## Node.js\n```\n# not a heading\n```'),
    ]).toEqual(['fault-injection', 'nodejs', 'redirect_to-and-globs', 'nodejs-1']);
  });
});
