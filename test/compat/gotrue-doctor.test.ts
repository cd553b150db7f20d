// Issue 31 item 5: `authsvc doctor` on a GoTrue database: the release, pending migrations, GoTrue's
// refresh tokens, encrypted secrets and whether the keys open them, what will not carry over;
// and it changes nothing.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { doctorReport, gotrueReleaseOf } from '../../src/admin/doctor.ts';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import { parseConfig } from '../../src/config/config.ts';
import type { Config } from '../../src/config/types.ts';
import { encryptString } from '../../src/crypto/encrypted-string.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { gotrueSchemaSql } from '../fixtures/gotrue-schema.ts';
import { BASE_ENV } from '../helpers/app.ts';
import { openTestDb, uniqueNamespace } from '../helpers/db.ts';
import {
  exec,
  insertGoTrueSession,
  insertGoTrueUser,
  insertLegacyChain,
  insertLegacyToken,
  legacyToken,
  lit,
  signingKey,
} from '../helpers/gotrue-rows.ts';
import { runCli, tempDir } from '../helpers/server.ts';

const MASTER = Buffer.alloc(32, 9).toString('base64url');
const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));

function config(env: Record<string, string> = {}): Config {
  const parsed = parseConfig({ ...BASE_ENV, ...env }, { local: true });
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  return parsed.config;
}

describe('authsvc doctor over GoTrue v2.196.0', () => {
  let db: Database;
  const snapshot = async () =>
    exec(
      db,
      `select table_name, (xpath('/row/n/text()', query_to_xml(format('select count(*) as n from %I.%I', table_schema, table_name), false, true, '')))[1]::text::int as n
    from information_schema.tables where table_schema = '${db.namespace}' order by 1`,
    );

  beforeAll(async () => {
    db = await openTestDb({ migrate: false, namespace: uniqueNamespace() });
    const ns = `"${db.namespace}"`;
    await exec(db, gotrueSchemaSql(db.namespace, 'v2.196.0'));
    const user = await insertGoTrueUser(db, { email: 'doc@example.com' });
    const session = await insertGoTrueSession(db, user.id);
    await insertLegacyChain(db, user.id, session, 3);
    await insertLegacyToken(db, { userId: user.id, sessionId: null, token: legacyToken() });
    const signed = await insertGoTrueSession(db, user.id, { hmacKey: signingKey(), counter: 2 });
    await exec(
      db,
      `update ${ns}.sessions set refresh_token_hmac_key = ${lit(await encryptString(signed, signingKey(), 'k1', MASTER, random))} where id = ${lit(signed)}`,
    );
    const factor = crypto.randomUUID();
    await exec(
      db,
      `insert into ${ns}.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret)
      values (${lit(factor)}, ${lit(user.id)}, 'app', 'totp', 'verified', now(), now(), ${lit(await encryptString(factor, 'JBSWY3DPEHPK3PXP', 'k1', MASTER, random))})`,
    );
    await exec(
      db,
      `insert into ${ns}.webauthn_credentials (user_id, credential_id, public_key) values (${lit(user.id)}, '\\x01', '\\x02');
      insert into ${ns}.sso_providers (id, resource_id) values (gen_random_uuid(), 'acme')`,
    );
  });
  afterAll(async () => {
    await exec(db, `drop schema if exists "${db.namespace}" cascade`).catch(() => undefined);
    await db?.close();
  });

  test('reports the release, pending migrations, tokens, secrets and what will not carry over; changes nothing', async () => {
    const before = await snapshot();
    const report = await doctorReport(
      db,
      config({ AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${MASTER}` }),
      loadMigrations(),
    );
    expect(await snapshot()).toEqual(before);
    expect(report.gotrue).toEqual({ migrations: 70, latest: '20260625000000', release: 'v2.192.0 or later' });
    expect(report.authsvc).toEqual({ applied: [], pending: loadMigrations().map((m) => m.version) });
    expect(report.refreshTokens).toEqual({ plainLive: 2, plainRevoked: 2, withoutSession: 1, signedSessions: 1 });
    expect(report.encrypted).toEqual([
      { column: 'mfa_factors.secret', keyId: 'k1', count: 1, tried: 1, opened: 1 },
      { column: 'sessions.refresh_token_hmac_key', keyId: 'k1', count: 1, tried: 1, opened: 1 },
    ]);
    expect(report.notCarried).toEqual([
      expect.stringMatching(/^1 SAML SSO providers/),
      expect.stringMatching(/^1 legacy refresh token\(s\) from before sessions existed/),
    ]);
    expect(report.problems).toEqual([]);
  });

  test('secrets under a key the configuration does not hold are a problem', async () => {
    const report = await doctorReport(db, config(), loadMigrations());
    expect(report.encrypted.map((e) => e.opened)).toEqual([0, 0]);
    expect(report.problems).toEqual([
      expect.stringContaining('mfa_factors.secret are encrypted under key id "k1"'),
      expect.stringContaining('sessions.refresh_token_hmac_key are encrypted under key id "k1"'),
    ]);
  });

  test('OAuth server clients and custom providers are reported only while their feature is off', async () => {
    const ns = `"${db.namespace}"`;
    await exec(
      db,
      `insert into ${ns}.oauth_clients (id, registration_type, redirect_uris, grant_types, token_endpoint_auth_method)
        values (gen_random_uuid(), 'manual', 'https://app.example.com/cb', 'authorization_code,refresh_token', 'none');
      insert into ${ns}.custom_oauth_providers (provider_type, identifier, name, client_id, client_secret, issuer)
        values ('oidc', 'custom:acme', 'Acme', 'client', 'secret', 'https://idp.example.com')`,
    );
    // OAUTH_SERVER_ENABLED is off by default, CUSTOM_OAUTH_ENABLED on (as GoTrue's).
    const off = await doctorReport(
      db,
      config({ AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${MASTER}`, AUTHSVC_CUSTOM_OAUTH_ENABLED: 'false' }),
      loadMigrations(),
    );
    expect(off.notCarried).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^1 OAuth 2.1 server clients \(OAUTH_SERVER_ENABLED is off/),
        expect.stringMatching(/^1 custom OAuth\/OIDC providers \(CUSTOM_OAUTH_ENABLED is off/),
      ]),
    );
    const on = await doctorReport(
      db,
      config({
        AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${MASTER}`,
        AUTHSVC_OAUTH_SERVER_ENABLED: 'true',
      }),
      loadMigrations(),
    );
    expect(on.notCarried.filter((l) => /OAuth 2\.1 server clients|custom OAuth/.test(l))).toEqual([]);
    await exec(db, `delete from ${ns}.oauth_clients; delete from ${ns}.custom_oauth_providers`);
  });

  test('after authsvc migrated: nothing pending, the GoTrue release unchanged', async () => {
    await migrate(db, loadMigrations());
    const report = await doctorReport(
      db,
      config({ AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${MASTER}` }),
      loadMigrations(),
    );
    expect(report.authsvc.pending).toEqual([]);
    expect(report.gotrue?.latest).toBe('20260625000000');
  });
});

test('the release named by the newest GoTrue migration', () => {
  expect(gotrueReleaseOf('20240314092811')).toBe('v2.145.0 or later');
  expect(gotrueReleaseOf('20240427152123')).toBe('v2.151.0 or later');
  expect(gotrueReleaseOf('20230116124412')).toBe('older than v2.144.0');
});

test('`authsvc doctor --json` on an empty embedded database: every migration pending, exit 0; then `migrate`, none', async () => {
  const cwd = tempDir();
  const env = { DATABASE_URL: 'pglite://data' };
  const first = await runCli(['doctor', '--json'], { cwd, env });
  expect(first.code, first.proc.output()).toBe(0);
  const report = JSON.parse(first.stdout) as { gotrue: unknown; authsvc: { pending: string[] } };
  expect(report.gotrue).toBeNull();
  expect(report.authsvc.pending).toEqual(loadMigrations().map((m) => m.version));
  expect((await runCli(['migrate'], { cwd, env })).code).toBe(0);
  const after = await runCli(['doctor'], { cwd, env });
  expect(after.code, after.proc.output()).toBe(0);
  expect(after.stdout).toContain('authsvc: no migration pending');
}, 180_000);
