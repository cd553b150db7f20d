// Prints the README's configuration table from CONFIG_VARIABLES (`npm run docs:config`);
// test/readme.test.ts fails when the README and the schema drift apart.
import { CONFIG_VARIABLES } from '../src/config/fields.ts';
import { PROVIDERS } from '../src/config/types.ts';

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

export function configTable(): string {
  const providerPrefixes = PROVIDERS.map((p) => `EXTERNAL_${p.toUpperCase()}_`);
  const rows = ['| Variable | Default | Meaning |', '|---|---|---|'];
  let providersDone = false;
  for (const v of CONFIG_VARIABLES) {
    if (providerPrefixes.some((p) => v.name.startsWith(p))) {
      if (providersDone) continue;
      providersDone = true;
      // GitHub's rows stand for all (Apple and Google ignore _URL, and only ID-token providers
      // have a nonce, so the nonce row is Google's).
      const template = (suffix: string) => (suffix === 'SKIP_NONCE_CHECK' ? 'google' : 'github');
      for (const row of CONFIG_VARIABLES.filter((x) => x.name.startsWith('EXTERNAL_GITHUB_'))) {
        const suffix = row.name.slice('EXTERNAL_GITHUB_'.length);
        const p = template(suffix);
        const sub = CONFIG_VARIABLES.find((x) => x.name === `EXTERNAL_${p.toUpperCase()}_${suffix}`)!;
        rows.push(`| \`EXTERNAL_<PROVIDER>_${suffix}\` | ${cell(sub.default) || '—'} | ${cell(sub.description.replaceAll(p, 'the provider'))} |`);
      }
      continue;
    }
    rows.push(`| \`${v.name}\` | ${cell(v.default) || '—'} | ${cell(v.description)} |`);
  }
  return rows.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(configTable() + '\n');
