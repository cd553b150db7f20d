// Audit entries are also logged as `audit_event` lines (GoTrue's shape), and
// AUDIT_LOG_DISABLE_POSTGRES keeps them out of audit_log_entries.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import type { Database } from '../../src/db/database.ts';
import { type TestApp, buildTestApp, signUpConfirmed } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const ENV = { AUTHSVC_MAILER_AUTOCONFIRM: 'true', AUTHSVC_LOG_LEVEL: 'info' };

function auditEvents(t: TestApp, userId: string): Json[] {
  return t.logs
    .map((l) => JSON.parse(l) as Json)
    .filter((l) => l.msg === 'audit_event' && l.auth_audit_event?.actor_id === userId);
}

async function auditRows(userId: string): Promise<Json[]> {
  const a = db.t.auditLogEntries;
  return db.orm.select().from(a).where(sql`${a.payload} ->> 'actor_id' = ${userId}`).orderBy(a.createdAt);
}

/** Sign-up, a refresh on the one-statement path, a password change (transactional writes), logout. */
async function flows(t: TestApp): Promise<{ userId: string }> {
  const { password, session } = await signUpConfirmed(t);
  const userId = session.user.id as string;
  const refreshed = await t.request('POST', '/token?grant_type=refresh_token', {
    refresh_token: session.refresh_token,
  });
  expect(refreshed.status).toBe(200);
  const access = ((await refreshed.json()) as Json).access_token as string;
  const auth = { authorization: `Bearer ${access}` };
  expect((await t.request('PUT', '/user', { password: `${password}-new` }, auth)).status).toBe(200);
  expect((await t.request('POST', '/logout', undefined, auth)).status).toBe(204);
  expect(decodeJwt(access).sub).toBe(userId);
  return { userId };
}

const ACTIONS = [
  'user_signedup',
  'login',
  'token_revoked',
  'token_refreshed',
  'user_updated_password',
  'user_modified',
  'logout',
];

describe('audit_event log lines', () => {
  test('every entry is logged with its id, IP, time and request id; the rows carry the same payloads', async () => {
    const t = await buildTestApp(db, ENV);
    const { userId } = await flows(t);
    const events = auditEvents(t, userId);
    expect(events.map((e) => e.auth_audit_event.action).sort()).toEqual([...ACTIONS].sort());
    for (const e of events) {
      expect(e.level).toBe('info');
      expect(e.request_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(e.auth_audit_event).toMatchObject({
        actor_id: userId,
        actor_via_sso: false,
        ip_address: expect.any(String),
      });
      expect(Number.isNaN(Date.parse(e.auth_audit_event.created_at))).toBe(false);
    }
    const rows = await auditRows(userId);
    expect(rows.map((r) => r.id).sort()).toEqual(events.map((e) => e.auth_audit_event.audit_log_id).sort());
    for (const r of rows) {
      const {
        audit_log_id: _id,
        ip_address: _ip,
        created_at: _at,
        ...payload
      } = events.find((e) => e.auth_audit_event.audit_log_id === r.id)!.auth_audit_event;
      expect(r.payload).toEqual(payload);
    }
  });

  test('AUDIT_LOG_DISABLE_POSTGRES=true: the same lines, no audit_log_entries rows', async () => {
    const t = await buildTestApp(db, { ...ENV, AUTHSVC_AUDIT_LOG_DISABLE_POSTGRES: 'true' });
    const { userId } = await flows(t);
    expect(
      auditEvents(t, userId)
        .map((e) => e.auth_audit_event.action)
        .sort(),
    ).toEqual([...ACTIONS].sort());
    expect(await auditRows(userId)).toEqual([]);
  });
});
