// Test databases: PGlite in memory by default; with TEST_DATABASE_URL a fresh schema
// (namespace) on the Postgres server per call, dropped on close, so files run in parallel.
import { openPglite } from '../../src/adapters/db-pglite.ts';
import { openPostgres } from '../../src/adapters/db-postgres.ts';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

/**
 * TEST_BACKGROUND_ROWS=N writes N users, identities, sessions, refresh tokens and audit entries
 * into every test database first: with auto_explain on, the suite then shows which statements
 * scan a table of a real deployment's size (bench/README.md, "Plan audit").
 */
const BACKGROUND_ROWS = Number(process.env.TEST_BACKGROUND_ROWS ?? '0');

async function writeBackgroundRows(db: Database, namespace: string, n: number): Promise<void> {
  const ns = `"${namespace}"`;
  const old = `now() - interval '1 day'`;
  await db.withSession((s) =>
    s.exec(`
    insert into ${ns}.users (instance_id, id, aud, role, email, phone, encrypted_password, email_confirmed_at,
                             raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
    select '00000000-0000-0000-0000-000000000000', gen_random_uuid(), 'authenticated', 'authenticated',
           'bg-' || g || '@background.example.com', '1555' || lpad(g::text, 7, '0'), 'x', ${old},
           '{"provider": "email", "providers": ["email"]}', '{}', ${old}, ${old}
    from generate_series(1, ${Math.floor(n)}) g;
    insert into ${ns}.identities (provider_id, user_id, identity_data, provider, created_at, updated_at)
    select u.id::text, u.id, jsonb_build_object('sub', u.id::text, 'email', u.email), 'email', ${old}, ${old}
    from ${ns}.users u where u.email like 'bg-%@background.example.com';
    insert into ${ns}.sessions (id, user_id, created_at, updated_at, aal)
    select gen_random_uuid(), u.id, ${old}, ${old}, 'aal1' from ${ns}.users u where u.email like 'bg-%@background.example.com';
    insert into ${ns}.refresh_tokens (token, user_id, revoked, created_at, updated_at, session_id)
    select md5(s.id::text), s.user_id::text, false, ${old}, ${old}, s.id from ${ns}.sessions s;
    insert into ${ns}.audit_log_entries (instance_id, id, payload, created_at, ip_address)
    select '00000000-0000-0000-0000-000000000000', gen_random_uuid(), '{}', ${old}, '' from generate_series(1, ${Math.floor(n)});
    analyze ${ns}.users, ${ns}.identities, ${ns}.sessions, ${ns}.refresh_tokens, ${ns}.audit_log_entries;`),
  );
}

export function uniqueNamespace(): string {
  return `t_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
}

export async function openTestDb(opts: { namespace?: string; migrate?: boolean } = {}): Promise<Database> {
  const namespace = opts.namespace ?? (TEST_DATABASE_URL ? uniqueNamespace() : 'auth');
  const inner = TEST_DATABASE_URL
    ? openPostgres({ url: TEST_DATABASE_URL, namespace, maxPoolSize: 10 })
    : await openPglite({ namespace });
  if (opts.migrate !== false) await migrate(inner, loadMigrations());
  if (opts.migrate !== false && BACKGROUND_ROWS > 0) await writeBackgroundRows(inner, namespace, BACKGROUND_ROWS);
  if (!TEST_DATABASE_URL) return inner;
  return {
    ...inner,
    async close() {
      await inner.withSession((s) => s.exec(`DROP SCHEMA IF EXISTS "${namespace}" CASCADE`)).catch(() => undefined);
      await inner.close();
    },
  };
}
