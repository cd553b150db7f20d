// Reads migrations/*.sql from the package (Node, Bun, Deno). Workers bundle them as text.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Migration } from '../db/migrate.ts';
import { PACKAGE_ROOT } from './package-root.ts';

export const MIGRATIONS_DIR = join(PACKAGE_ROOT, 'migrations');

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => ({ version: f.replace(/\.sql$/, ''), sql: readFileSync(join(dir, f), 'utf8') }));
}
