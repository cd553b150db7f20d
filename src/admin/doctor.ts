// `authsvc doctor`: what a database holds before authsvc runs on it (typically one GoTrue has
// run on), read in one READ ONLY transaction that is rolled back: nothing is changed. It names
// the GoTrue release the schema comes from, authsvc's pending migrations, GoTrue's refresh tokens
// that authsvc will adopt on first use, secrets stored encrypted and whether the configured keys
// open them, and what will not carry over.
import type { Config } from '../config/types.ts';
import { DecryptionError, decryptString, parseEncryptedString } from '../crypto/encrypted-string.ts';
import type { Database, RawSession } from '../db/database.ts';
import { type Migration, pendingVersions, renderMigration } from '../db/migrate.ts';

// The first GoTrue release that carries each migration since v2.144 (from supabase/auth's tags):
// the newest migration recorded names the oldest release the schema can be.
const GOTRUE_RELEASES: [string, string][] = [
  ['20240115144230', 'v2.144.0'],
  ['20240306115329', 'v2.145.0'],
  ['20240427152123', 'v2.151.0'],
  ['20240612123726', 'v2.154.0'],
  ['20240729123726', 'v2.158.0'],
  ['20240802193726', 'v2.158.1'],
  ['20240806073726', 'v2.159.0'],
  ['20241009103726', 'v2.163.0'],
  ['20250717082212', 'v2.178.0'],
  ['20250731150234', 'v2.179.0'],
  ['20250804100000', 'v2.180.0'],
  ['20250925093508', 'v2.181.0'],
  ['20251104100000', 'v2.183.0'],
  ['20251201000000', 'v2.184.0'],
  ['20260115000000', 'v2.186.0'],
  ['20260219120000', 'v2.187.0'],
  ['20260302000000', 'v2.188.0'],
  ['20260625000000', 'v2.192.0'],
];

/** The release a schema whose newest GoTrue migration is `latest` comes from, at the least. */
export function gotrueReleaseOf(latest: string): string {
  let release = 'older than v2.144.0';
  for (const [migration, r] of GOTRUE_RELEASES) if (latest >= migration) release = `${r} or later`;
  return release;
}

export interface EncryptedColumn {
  column: string;
  keyId: string;
  count: number;
  /** Of the values tried (up to 5 per key), how many the configured keys opened. */
  tried: number;
  opened: number;
}

export interface DoctorReport {
  namespace: string;
  gotrue: { migrations: number; latest: string; release: string } | null;
  authsvc: { applied: string[]; pending: string[] };
  refreshTokens: { plainLive: number; plainRevoked: number; withoutSession: number; signedSessions: number };
  encrypted: EncryptedColumn[];
  /** What GoTrue keeps here that authsvc does not use (yet). */
  notCarried: string[];
  /** What stops something from working: reported, exit status 1. */
  problems: string[];
}

const SAMPLE = 5;
// Table, id column, column that may hold GoTrue's encrypted strings (the row id is the HKDF info).
const ENCRYPTED: [string, string][] = [
  ['users', 'encrypted_password'],
  ['mfa_factors', 'secret'],
  ['mfa_challenges', 'otp_code'],
  ['sessions', 'refresh_token_hmac_key'],
  ['identity_provider_tokens', 'refresh_token'],
];

export async function doctorReport(
  db: Database,
  config: Config,
  migrations: readonly Migration[],
): Promise<DoctorReport> {
  return db.withSession(async (s) => {
    await s.exec('BEGIN READ ONLY');
    try {
      return await inspect(s, db.namespace, config, migrations);
    } finally {
      await s.exec('ROLLBACK').catch(() => undefined);
    }
  });
}

async function inspect(
  s: RawSession,
  ns: string,
  config: Config,
  migrations: readonly Migration[],
): Promise<DoctorReport> {
  const q = (sql: string) => s.exec(renderMigration(sql, ns));
  const tables = new Set(
    (await q(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = '{{namespace}}'`)).map((r) =>
      String(r.t),
    ),
  );
  const columns = new Set(
    (
      await q(`SELECT table_name || '.' || column_name AS c FROM information_schema.columns
    WHERE table_schema = '{{namespace}}'`)
    ).map((r) => String(r.c)),
  );
  const count = async (table: string, where = 'true'): Promise<number> =>
    tables.has(table)
      ? Number((await q(`SELECT count(*)::int AS n FROM "{{namespace}}".${table} WHERE ${where}`))[0]?.n ?? 0)
      : 0;

  const versions = tables.has('schema_migrations')
    ? (await q(`SELECT version FROM "{{namespace}}".schema_migrations`)).map((r) => String(r.version))
    : [];
  const gotrueVersions = versions.filter((v) => /^\d+$/.test(v)).sort();
  const latest = gotrueVersions.at(-1);
  const pending = pendingVersions(migrations, versions);
  const report: DoctorReport = {
    namespace: ns,
    gotrue: latest ? { migrations: gotrueVersions.length, latest, release: gotrueReleaseOf(latest) } : null,
    authsvc: { applied: migrations.map((m) => m.version).filter((v) => !pending.includes(v)), pending },
    refreshTokens: {
      plainLive: await count('refresh_tokens', 'length(token) = 12 AND NOT coalesce(revoked, false)'),
      plainRevoked: await count('refresh_tokens', 'length(token) = 12 AND coalesce(revoked, false)'),
      withoutSession: await count(
        'refresh_tokens',
        'length(token) = 12 AND session_id IS NULL AND NOT coalesce(revoked, false)',
      ),
      signedSessions: columns.has('sessions.refresh_token_counter')
        ? await count('sessions', 'refresh_token_counter >= 0 AND refresh_token_hmac_key IS NOT NULL')
        : 0,
    },
    encrypted: [],
    notCarried: [],
    problems: [],
  };

  for (const [table, column] of ENCRYPTED) {
    if (!columns.has(`${table}.${column}`)) continue;
    const rows = await q(
      `SELECT id::text AS id, ${column} AS v FROM "{{namespace}}".${table} WHERE ${column} LIKE '{%'`,
    );
    const byKey = new Map<string, EncryptedColumn>();
    for (const row of rows) {
      const es = parseEncryptedString(String(row.v));
      if (!es) continue;
      const entry = byKey.get(es.keyId) ?? {
        column: `${table}.${column}`,
        keyId: es.keyId,
        count: 0,
        tried: 0,
        opened: 0,
      };
      byKey.set(es.keyId, entry);
      entry.count += 1;
      if (entry.tried >= SAMPLE) continue;
      entry.tried += 1;
      try {
        await decryptString(es, String(row.id), config.security.dbEncryption.decryptionKeys);
        entry.opened += 1;
      } catch (err) {
        if (!(err instanceof DecryptionError)) throw err;
      }
    }
    for (const e of byKey.values()) {
      report.encrypted.push(e);
      if (e.opened < e.tried) {
        report.problems.push(
          `${e.count} value(s) of ${e.column} are encrypted under key id "${e.keyId}", which SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS does not open`,
        );
      }
    }
  }

  const notCarried: [string, string, string][] = [
    // They carry over (the same tables), but sign in only with SAML on and GoTrue's key.
    ...(config.saml.enabled
      ? []
      : [
          [
            'sso_providers',
            'true',
            "SAML SSO providers (SAML_ENABLED is off: set it and GoTrue's SAML_PRIVATE_KEY to keep their users signing in through SSO)",
          ] as [string, string, string],
        ]),
    // The same: OAuth server clients and custom providers work once their feature is switched on.
    ...(config.oauthServer.enabled
      ? []
      : [
          [
            'oauth_clients',
            'deleted_at IS NULL',
            'OAuth 2.1 server clients (OAUTH_SERVER_ENABLED is off: set it to keep serving them)',
          ] as [string, string, string],
        ]),
    ...(config.customOAuth.enabled
      ? []
      : [
          [
            'custom_oauth_providers',
            'true',
            'custom OAuth/OIDC providers (CUSTOM_OAUTH_ENABLED is off: set it to keep their users signing in)',
          ] as [string, string, string],
        ]),
    ['flow_state', 'true', 'OAuth/PKCE flows in flight (short-lived: finish them before the switch)'],
  ];
  for (const [table, where, what] of notCarried) {
    const n = await count(table, where);
    if (n > 0) report.notCarried.push(`${n} ${what}`);
  }
  if (report.refreshTokens.withoutSession > 0) {
    report.notCarried.push(
      `${report.refreshTokens.withoutSession} legacy refresh token(s) from before sessions existed (GoTrue refuses them too)`,
    );
  }
  return report;
}

/** The report as text for a terminal. */
export function formatDoctorReport(r: DoctorReport): string {
  const lines = [`database schema "${r.namespace}"`];
  lines.push(
    r.gotrue
      ? `GoTrue: ${r.gotrue.migrations} migrations recorded, the newest ${r.gotrue.latest} (${r.gotrue.release})`
      : 'GoTrue: no GoTrue migrations recorded',
  );
  lines.push(
    r.authsvc.pending.length
      ? `authsvc: ${r.authsvc.pending.length} migration(s) pending (applied at start-up or by \`authsvc migrate\`): ${r.authsvc.pending.join(', ')}`
      : 'authsvc: no migration pending',
  );
  const t = r.refreshTokens;
  lines.push(
    `refresh tokens in clear (GoTrue's legacy format): ${t.plainLive} live, ${t.plainRevoked} revoked; sessions on GoTrue's signed tokens not yet refreshed in authsvc: ${t.signedSessions}`,
  );
  if (t.plainLive + t.plainRevoked > 0) {
    lines.push(
      '  each is hashed when first used; `authsvc hash-refresh-tokens` hashes the rest (then GoTrue can no longer refresh them)',
    );
  }
  if (r.encrypted.length === 0) lines.push('encrypted secrets: none');
  for (const e of r.encrypted) {
    lines.push(
      `encrypted secrets: ${e.count} in ${e.column} under key id "${e.keyId}": ${e.opened}/${e.tried} tried open with the configured keys`,
    );
  }
  lines.push(r.notCarried.length ? 'will not carry over:' : 'will not carry over: nothing found');
  for (const n of r.notCarried) lines.push(`  - ${n}`);
  for (const p of r.problems) lines.push(`PROBLEM: ${p}`);
  return lines.join('\n');
}
