// The settings' declarations (src/config/sections/): each variable declared once, credentials
// flagged secret, and every declared setting reaching the Config the rest of authsvc reads.
import { describe, expect, test } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { FIELD_NAMES, SETTINGS } from '../../src/config/fields.ts';
import { SECTIONS, TITLED_SECTIONS } from '../../src/config/sections/index.ts';
import { settingsOf } from '../../src/config/setting.ts';
import { GOTRUE_ENV } from '../helpers/config-env.ts';

describe('settings', () => {
  test('each variable is declared once, and each section is listed once in the docs order', () => {
    expect(new Set(FIELD_NAMES).size).toBe(FIELD_NAMES.length);
    expect(TITLED_SECTIONS.flatMap(([, s]) => settingsOf(s)).map((s) => s.name)).toEqual(FIELD_NAMES);
  });

  test('credentials are flagged secret, and nothing else is', () => {
    // The names GET /admin/config masked before the flags existed: keys, secrets, passwords,
    // tokens, OTLP headers, test OTPs.
    const credential = /(SECRETS?|_PASS|PASSWORD|_KEY|_KEYS|_KEY_NEXT|TOKEN|_OTLP_HEADERS|_TEST_OTP)$/;
    expect(SETTINGS.filter((s) => s.secret).map((s) => s.name)).toEqual(FIELD_NAMES.filter((n) => credential.test(n)));
    expect(SETTINGS.filter((s) => s.secret).length).toBeGreaterThan(40);
  });

  test("a value set for any setting shows in the Config at the setting's place", () => {
    // Every setting that takes free text gets a value of its own, which Config must hold where its
    // section puts it: walk the tree and the built Config together.
    const env: Record<string, string> = { ...GOTRUE_ENV };
    const plain = SETTINGS.filter(
      (s) => s.parser.safeParse(`value-of-${s.name}`).data === `value-of-${s.name}` && !(`GOTRUE_${s.name}` in env),
    );
    for (const s of plain) env[`GOTRUE_${s.name}`] = `value-of-${s.name}`;
    const result = parseConfig(env);
    if (!result.ok) throw new Error(result.errors.join('\n'));
    const found: string[] = [];
    const walk = (tree: unknown, value: unknown) => {
      if (tree && typeof tree === 'object' && 'name' in tree && 'parser' in tree) {
        if (value === `value-of-${(tree as { name: string }).name}`) found.push((tree as { name: string }).name);
        return;
      }
      for (const [k, t] of Object.entries(tree as object)) walk(t, (value as Record<string, unknown>)[k]);
    };
    walk(SECTIONS, result.config);
    expect(plain.length).toBeGreaterThan(10);
    expect(found.sort()).toEqual(plain.map((s) => s.name).sort());
  });
});
