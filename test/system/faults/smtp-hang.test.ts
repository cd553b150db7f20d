// An SMTP server that accepts the connection and then says nothing (a fault proxy in front of the
// test mailbox, black-holed). The request ends inside API_MAX_REQUEST_DURATION with GoTrue's
// 500 "Error sending … email"; nothing it wrote stays (no user, no token, the RATE_LIMIT_EMAIL_SENT
// count given back); and the abandoned send does not deliver a stale mail once the server
// answers again. Postgres server only (with the proxies of the other fault tests).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TEST_DATABASE_URL } from '../../helpers/db.ts';
import { type ServerProcess, cleanupProcesses } from '../../helpers/server.ts';
import { type Mailbox, startMailbox } from '../../helpers/smtp.ts';
import { type FaultProxy, startFaultProxy } from './fault-proxy.ts';
import { brokenInvariants } from './invariants.ts';
import { PASSWORD, call, dropSchema, newNamespace, sleep, startAuthsvc } from './setup.ts';

const LIMIT_S = 3;

describe.runIf(TEST_DATABASE_URL)('SMTP server that hangs', () => {
  const namespace = newNamespace();
  let mailbox: Mailbox;
  let smtpProxy: FaultProxy;
  let server: ServerProcess;
  let db: pg.Client;

  beforeAll(async () => {
    mailbox = await startMailbox();
    smtpProxy = await startFaultProxy(mailbox.port);
    server = await startAuthsvc(Number(new URL(TEST_DATABASE_URL!).port || 5432), namespace, {
      AUTHSVC_MAILER_AUTOCONFIRM: 'false',
      AUTHSVC_SMTP_PORT: String(smtpProxy.port),
      AUTHSVC_SMTP_MAX_FREQUENCY: '1s',
      AUTHSVC_RATE_LIMIT_EMAIL_SENT: '1000',
      AUTHSVC_API_MAX_REQUEST_DURATION: String(LIMIT_S),
    });
    db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => {
    expect(server.exit).toBeUndefined();
    await cleanupProcesses();
    await db?.end();
    await smtpProxy?.close();
    await mailbox?.close();
    await dropSchema(namespace);
  });

  const ns = `"${namespace}"`;
  const sentCount = async () =>
    Number(
      (await db.query(`select coalesce(sum(count), 0) as n from ${ns}.rate_limits where key = 'email_sent'`)).rows[0].n,
    );
  const userRow = async (email: string) =>
    (await db.query(`select id, recovery_token, recovery_sent_at from ${ns}.users where email = $1`, [email])).rows[0];
  const tokens = async () => Number((await db.query(`select count(*)::int as n from ${ns}.one_time_tokens`)).rows[0].n);

  test('signup and recovery end within the limit, leave nothing behind, and no stale mail arrives later', async () => {
    // Warm: one mail through, so the pooled SMTP connection exists before the hang.
    const known = 'hang-known@faults.example.com';
    expect((await call(server.url, 'POST', '/signup', { email: known, password: PASSWORD })).status).toBe(200);
    await mailbox.next(known);
    await sleep(1_100);
    const countBefore = await sentCount();
    const tokensBefore = await tokens();

    smtpProxy.resetAll();
    smtpProxy.blackhole();
    const fresh = 'hang-fresh@faults.example.com';
    const signup = await call(server.url, 'POST', '/signup', { email: fresh, password: PASSWORD });
    expect({ status: signup.status, code: signup.json.error_code, msg: signup.json.msg }).toEqual({
      status: 500,
      code: 'unexpected_failure',
      msg: 'Error sending confirmation email',
    });
    expect(signup.ms).toBeLessThan(LIMIT_S * 1000);
    expect(await userRow(fresh)).toBeUndefined();

    const recover = await call(server.url, 'POST', '/recover', { email: known });
    expect({ status: recover.status, msg: recover.json.msg }).toEqual({
      status: 500,
      msg: 'Error sending recovery email',
    });
    expect(recover.ms).toBeLessThan(LIMIT_S * 1000);
    const after = await userRow(known);
    expect({ token: after.recovery_token ?? '', sentAt: after.recovery_sent_at }).toEqual({ token: '', sentAt: null });

    expect(await sentCount()).toBe(countBefore);
    expect(await tokens()).toBe(tokensBefore);
    expect(await brokenInvariants(TEST_DATABASE_URL!, namespace)).toEqual({});

    // The server answers again: the abandoned sends must not deliver their links now.
    await smtpProxy.heal();
    await sleep(1_500);
    expect(mailbox.to(fresh)).toHaveLength(0);
    expect(mailbox.to(known)).toHaveLength(1);

    // And mail flows again.
    const retry = await call(server.url, 'POST', '/signup', { email: fresh, password: PASSWORD });
    expect(retry.status, JSON.stringify(retry.json)).toBe(200);
    await mailbox.next(fresh, 10_000);
    expect(await sentCount()).toBe(countBefore + 1);
  }, 40_000);
});
