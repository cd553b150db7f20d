// A connection to Postgres reset in the middle of signup, refresh rotation, verify and email
// change (the proxy resets it as a chosen statement goes through), and reset right after COMMIT
// went out (committed, but the server never hears so). The client gets 503 database_unavailable;
// once the proxy passes again, retrying works, and every invariant holds: no half-written
// signup, no refresh token with two children, no one-time token without its user. Every
// statement also travels with 10 ms of added latency. Postgres server only.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TEST_DATABASE_URL } from '../../helpers/db.ts';
import { type ServerProcess, cleanupProcesses } from '../../helpers/server.ts';
import { type Mailbox, mailLink, startMailbox } from '../../helpers/smtp.ts';
import { type FaultProxy, startFaultProxy } from './fault-proxy.ts';
import { brokenInvariants, leftInTransaction } from './invariants.ts';
import { PASSWORD, call, dropSchema, newNamespace, sleep, startAuthsvc } from './setup.ts';

describe.runIf(TEST_DATABASE_URL)('connection reset mid-flow', () => {
  const namespace = newNamespace();
  const ns = `"${namespace}"`;
  let proxy: FaultProxy;
  let mailbox: Mailbox;
  let base: string;
  let server: ServerProcess;

  beforeAll(async () => {
    proxy = await startFaultProxy(Number(new URL(TEST_DATABASE_URL!).port || 5432));
    mailbox = await startMailbox();
    server = await startAuthsvc(proxy.port, namespace, {
      AUTHSVC_MAILER_AUTOCONFIRM: 'false',
      AUTHSVC_SMTP_PORT: String(mailbox.port),
      AUTHSVC_SMTP_MAX_FREQUENCY: '1s',
      AUTHSVC_RATE_LIMIT_EMAIL_SENT: '100000',
      AUTHSVC_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'false',
    });
    base = server.url;
    proxy.delay(10);
  });
  afterAll(async () => {
    expect(server.exit).toBeUndefined();
    await cleanupProcesses();
    await mailbox?.close();
    await proxy?.close();
    await dropSchema(namespace);
  });

  // A COMMIT: a simple-protocol Query message ('Q', length, text, NUL).
  const COMMIT = /Q[\s\S]{4}commit\x00/i;

  /** Runs `request` with a reset trap on `statement`; the trap must fire and the answer be 503. */
  async function cut(
    statement: RegExp,
    when: 'before' | 'after',
    request: () => Promise<{ status: number; json: Record<string, any> }>,
  ) {
    let fired = false;
    proxy.trap({
      match: statement,
      when,
      fired: () => {
        fired = true;
      },
    });
    const r = await request().catch((err: unknown) => {
      throw new Error(`no answer; server output:\n${server.output().slice(-3000)}`, { cause: err });
    });
    proxy.untrap();
    expect(fired, `no statement matched ${statement}`).toBe(true);
    expect({ status: r.status, code: r.json.error_code }).toEqual({ status: 503, code: 'database_unavailable' });
  }

  async function holds() {
    expect(await brokenInvariants(TEST_DATABASE_URL!, namespace)).toEqual({});
    expect(await leftInTransaction(TEST_DATABASE_URL!, proxy.upstreamPorts())).toEqual([]);
  }

  const signup = (email: string) => call(base, 'POST', '/signup', { email, password: PASSWORD });
  const confirm = async (email: string) => {
    const link = new URL(mailLink(await mailbox.next(email))!);
    return call(base, 'POST', '/verify', { type: 'signup', token_hash: link.searchParams.get('token') });
  };
  const signIn = (email: string) => call(base, 'POST', '/token?grant_type=password', { email, password: PASSWORD });

  test('signup: reset after the user row, before its token row, leaves no user; reset after COMMIT leaves a whole one; retries work', async () => {
    const a = 'cut-signup-a@faults.example.com';
    await cut(new RegExp(`insert into ${ns.replaceAll('"', '"?')}\\."?one_time_tokens`, 'i'), 'before', () =>
      signup(a),
    );
    await holds();
    expect(mailbox.to(a)).toHaveLength(0);
    expect((await signup(a)).status).toBe(200);
    expect((await confirm(a)).status).toBe(200);

    const b = 'cut-signup-b@faults.example.com';
    await cut(COMMIT, 'after', () => signup(b));
    await holds();
    // Committed, but the mail did not go out (the outcome of the COMMIT was unknown): a second
    // signup inside SMTP_MAX_FREQUENCY is refused as for any resend, after it sends the confirmation.
    expect((await signup(b)).json.error_code).toBe('over_email_send_rate_limit');
    expect(mailbox.to(b)).toHaveLength(0);
    await sleep(1_100);
    const again = await signup(b);
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    expect((await confirm(b)).status).toBe(200);
    expect((await signIn(b)).status).toBe(200);
    await holds();
  });

  test('refresh rotation: reset mid-way or after COMMIT; the retry gets one child, never two', async () => {
    const email = 'cut-refresh@faults.example.com';
    expect((await signup(email)).status).toBe(200);
    expect((await confirm(email)).status).toBe(200);
    const session = (await signIn(email)).json;
    const refresh = (token: string) => call(base, 'POST', '/token?grant_type=refresh_token', { refresh_token: token });

    // Rotation is one named statement (revoke, insert the child, touch the session).
    const ROTATE = /authsvc_refresh_rotate\x00/;
    await cut(ROTATE, 'before', () => refresh(session.refresh_token));
    await holds();
    const first = await refresh(session.refresh_token);
    expect(first.status).toBe(200);

    // Rotated, but the answer is lost.
    await cut(ROTATE, 'after', () => refresh(first.json.refresh_token));
    await holds();
    // Inside the reuse interval the same parent gets the child the lost answer carried.
    const again = await refresh(first.json.refresh_token);
    const twice = await refresh(first.json.refresh_token);
    expect([again.status, twice.status]).toEqual([200, 200]);
    expect(twice.json.refresh_token).toBe(again.json.refresh_token);
    expect((await refresh(again.json.refresh_token)).status).toBe(200);
    await holds();
  });

  test('verify: reset mid-way leaves the token usable; reset after COMMIT has confirmed the user', async () => {
    const a = 'cut-verify-a@faults.example.com';
    expect((await signup(a)).status).toBe(200);
    const tokenA = new URL(mailLink(await mailbox.next(a))!).searchParams.get('token');
    await cut(new RegExp(`update ${ns.replaceAll('"', '"?')}\\."?users`, 'i'), 'before', () =>
      call(base, 'POST', '/verify', { type: 'signup', token_hash: tokenA }),
    );
    await holds();
    const retried = await call(base, 'POST', '/verify', { type: 'signup', token_hash: tokenA });
    expect(retried.status, JSON.stringify(retried.json) + server.output().slice(-2000)).toBe(200);

    const b = 'cut-verify-b@faults.example.com';
    expect((await signup(b)).status).toBe(200);
    const tokenB = new URL(mailLink(await mailbox.next(b))!).searchParams.get('token');
    await cut(COMMIT, 'after', () => call(base, 'POST', '/verify', { type: 'signup', token_hash: tokenB }));
    await holds();
    // The link was used by the lost answer; the user is confirmed and signs in.
    expect((await call(base, 'POST', '/verify', { type: 'signup', token_hash: tokenB })).json.error_code).toBe(
      'otp_expired',
    );
    expect((await signIn(b)).status).toBe(200);
  });

  test('email change: reset mid-way leaves no token without its row; the retry sends a link that works', async () => {
    const email = 'cut-change@faults.example.com';
    const next = 'cut-change-new@faults.example.com';
    expect((await signup(email)).status).toBe(200);
    expect((await confirm(email)).status).toBe(200);
    const auth = { authorization: `Bearer ${(await signIn(email)).json.access_token}` };
    await cut(new RegExp(`insert into ${ns.replaceAll('"', '"?')}\\."?one_time_tokens`, 'i'), 'before', () =>
      call(base, 'PUT', '/user', { email: next }, auth),
    );
    await holds();
    expect(mailbox.to(next)).toHaveLength(0);
    expect((await call(base, 'PUT', '/user', { email: next }, auth)).status).toBe(200);
    const token = new URL(mailLink(await mailbox.next(next))!).searchParams.get('token');
    expect((await call(base, 'POST', '/verify', { type: 'email_change', token_hash: token })).status).toBe(200);
    expect((await call(base, 'GET', '/user', undefined, auth)).json.email).toBe(next);
    await holds();
  });
});
