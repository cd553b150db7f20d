// The configuration tables of docs/configuration.md, one per section, generated from the settings
// (src/config/sections/).
// `npm run docs:config` rewrites the table between the markers in that file (`-- --stdout` prints
// it instead); test/units/readme.test.ts fails when the file and the schema drift apart.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_VARIABLES } from '../src/config/fields.ts';
import { PROVIDERS } from '../src/config/kinds.ts';
import { TITLED_SECTIONS } from '../src/config/sections/index.ts';
import { settingsOf } from '../src/config/setting.ts';

export const CONFIG_DOC = join(import.meta.dirname, '..', 'docs', 'configuration.md');
export const START = '<!-- config:start -->\n';
export const END = '<!-- config:end -->';

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** One table per section, under its title. */
export function configTable(): string {
  const byName = new Map(CONFIG_VARIABLES.map((v) => [v.name, v]));
  const providerPrefixes = PROVIDERS.map((p) => `EXTERNAL_${p.toUpperCase()}_`);
  const out: string[] = [];
  for (const [title, section] of TITLED_SECTIONS) {
    out.push(`### ${title}`, '', '| Variable | Default | Meaning |', '|---|---|---|');
    let providersDone = false;
    for (const { name } of settingsOf(section)) {
      const v = byName.get(name)!;
      // A provider's own setting (Apple's key) is a row of its own; the shared ones are one row each.
      const shared = providerPrefixes.some(
        (p) => name.startsWith(p) && byName.has(`EXTERNAL_GITHUB_${name.slice(p.length)}`),
      );
      if (!shared) {
        out.push(`| \`${v.name}\` | ${cell(v.default) || '—'} | ${cell(v.description)} |`);
        continue;
      }
      if (providersDone) continue;
      providersDone = true;
      // GitHub's rows stand for all (Apple and Google ignore _URL, and only ID-token providers
      // have a nonce, so the nonce row is Google's).
      const template = (suffix: string) => (suffix === 'SKIP_NONCE_CHECK' ? 'google' : 'github');
      for (const row of CONFIG_VARIABLES.filter((x) => x.name.startsWith('EXTERNAL_GITHUB_'))) {
        const suffix = row.name.slice('EXTERNAL_GITHUB_'.length);
        const p = template(suffix);
        const sub = byName.get(`EXTERNAL_${p.toUpperCase()}_${suffix}`)!;
        out.push(
          `| \`EXTERNAL_<PROVIDER>_${suffix}\` | ${cell(sub.default) || '—'} | ${cell(sub.description.replaceAll(p, 'the provider'))} |`,
        );
      }
    }
    out.push('');
  }
  return out.join('\n').trimEnd();
}

/** The table between the markers of a document, or undefined when a marker is missing. */
export function tableIn(doc: string): string | undefined {
  const [before, rest] = doc.split(START);
  if (before === undefined || rest === undefined) return undefined;
  const end = rest.indexOf(END);
  return end < 0 ? undefined : rest.slice(0, end);
}

/** The document with the table between its markers replaced by the generated one. */
export function withTable(doc: string): string {
  const old = tableIn(doc);
  if (old === undefined) throw new Error(`${CONFIG_DOC}: the markers ${START.trim()} and ${END} are missing`);
  const start = doc.indexOf(START) + START.length;
  return doc.slice(0, start) + configTable() + '\n' + doc.slice(start + old.length);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--stdout')) process.stdout.write(configTable() + '\n');
  else {
    const doc = readFileSync(CONFIG_DOC, 'utf8');
    const next = withTable(doc);
    if (next === doc) console.log(`${CONFIG_DOC}: the table is up to date`);
    else {
      writeFileSync(CONFIG_DOC, next);
      console.log(`${CONFIG_DOC}: table rewritten`);
    }
  }
}
