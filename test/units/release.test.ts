// A version that means something (docs/releasing.md): package.json's is semver, CHANGELOG.md
// (Keep a Changelog) has a dated section for it below Unreleased, and the version the server
// reports is that one.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { VERSION } from '../../src/adapters/version.ts';
import { REPO_ROOT } from '../helpers/server.ts';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; private?: boolean };
const changelog = readFileSync(join(REPO_ROOT, 'CHANGELOG.md'), 'utf8');

test('package.json: a semver version, and publishable', () => {
  expect(pkg.version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  expect(pkg.private).toBeUndefined();
});

test('CHANGELOG.md: Unreleased first, then a dated section for this version, newest first', () => {
  const sections = [...changelog.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
  expect(sections[0]).toBe('Unreleased');
  const released = sections.slice(1).map((s) => /^(\d+\.\d+\.\d+\S*) - (\d{4}-\d{2}-\d{2})$/.exec(s));
  expect(released.every(Boolean), sections.join(', ')).toBe(true);
  expect(released[0]![1]).toBe(pkg.version);
  const dates = released.map((r) => r![2]!);
  expect([...dates].sort().reverse()).toEqual(dates);
});

test("the server reports package.json's version", () => {
  expect(VERSION).toBe(pkg.version);
});
