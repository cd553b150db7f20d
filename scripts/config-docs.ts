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
      const first = PROVIDERS[0].toUpperCase();
      for (const sub of CONFIG_VARIABLES.filter((x) => x.name.startsWith(`EXTERNAL_${first}_`))) {
        const name = sub.name.replace(`EXTERNAL_${first}_`, 'EXTERNAL_<PROVIDER>_');
        rows.push(`| \`${name}\` | ${cell(sub.default) || '—'} | ${cell(sub.description.replaceAll(PROVIDERS[0], 'the provider'))} |`);
      }
      continue;
    }
    rows.push(`| \`${v.name}\` | ${cell(v.default) || '—'} | ${cell(v.description)} |`);
  }
  return rows.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(configTable() + '\n');
