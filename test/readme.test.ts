import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { configTable } from '../scripts/config-docs.ts';

const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');

describe('README', () => {
  test('shows the two set-up commands', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });

  test('its configuration table is the one generated from the config schema (npm run docs:config)', () => {
    const section = readme.split('<!-- config:start -->\n')[1]?.split('<!-- config:end -->')[0];
    expect(section?.trim()).toBe(configTable().trim());
  });
});
