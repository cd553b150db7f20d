// Mail goes out after the transaction commits (src/accounts/outbox.ts): a mail server that never
// answers holds no database connection, the request ends within its time limit, and a failed
// send takes back everything the request wrote.
import { tokenHash } from '../../src/crypto/otp.ts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../../src/db/database.ts';
import type { Mailer, MailRequest } from '../../src/mail/mailer.ts';
import { buildTestApp, signUpConfirmed, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const bearer = (s: Json) => ({ authorization: `Bearer ${s.access_token}` });
const userRow = async (email: string) => (await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email)))[0];
const ottRows = async (userId: string) =>
  db.orm.select().from(db.t.oneTimeTokens).where(eq(db.t.oneTimeTokens.userId, userId));
const auditOf = async (email: string) =>
  db.orm
    .select()
    .from(db.t.auditLogEntries)
    .where(
      sql`${db.t.auditLogEntries.payload}->>'actor_username' = ${email} or ${db.t.auditLogEntries.payload}->'traits'->>'user_email' = ${email}`,
    );
const emailSentCount = async () =>
  (await db.orm.select().from(db.t.rateLimits).where(eq(db.t.rateLimits.key, 'email_sent')))[0]?.count ?? 0;

/** A mail server that accepts the connection and then never answers; `entered` resolves when a send starts. */
function hangingMailer(): Mailer & { entered: Promise<MailRequest> } {
  let enter!: (m: MailRequest) => void;
  const entered = new Promise<MailRequest>((r) => {
    enter = r;
  });
  return {
    entered,
    send: (m) => {
      enter(m);
      return new Promise<void>(() => undefined);
    },
  };
}

const failingMailer: Mailer = {
  async send() {
    throw new Error('550 mailbox unavailable');
  },
};

/** Resolves with the promise's value, or rejects if it takes longer than `ms` (a deadlock shows as a failure, not a hang). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)),
  ]);
}

describe('a mail server that never answers', () => {
  test('holds no connection: an unrelated sign-in answers while the send hangs; the signup then fails within its limit and leaves nothing', async () => {
    const other = await signUpConfirmed(await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' }));
    const mailer = hangingMailer();
    // 4 s request limit: the send is given up after 3.2 s, before the 504. The 0.8 s between
    // them holds the hash, the commit and the undo even at a load average of three times the
    // cores (at a 2 s limit, 0.4 s did not: a loaded machine answered 504).
    const t = await buildTestApp(db, { AUTHSVC_API_MAX_REQUEST_DURATION: '4' }, { mailer });
    const email = uniqueEmail('hang');
    const countBefore = await emailSentCount();
    let settled = false;
    const signup = t.request('POST', '/signup', { email, password: 'secret-pw-1' }).finally(() => {
      settled = true;
    });
    await mailer.entered;
    // The signup's transaction has committed: the user exists while its email is being sent.
    expect(await userRow(email)).toBeDefined();
    // On the embedded database (one connection) this sign-in waited for the send before.
    // Well inside the send's 3.2 s: an answer then cannot have waited for the send.
    const login = await within(
      t.request('POST', '/token?grant_type=password', { email: other.email, password: other.password }),
      2_000,
      'the sign-in',
    );
    expect(login.status).toBe(200);
    expect(settled).toBe(false);
    const res = await signup;
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({
      error_code: 'unexpected_failure',
      msg: 'Error sending confirmation email',
    });
    expect(await userRow(email)).toBeUndefined();
    expect(await auditOf(email)).toEqual([]);
    expect(await emailSentCount()).toBe(countBefore);
  });
});

describe('a failed send takes back what the request wrote', () => {
  test('signup: no user, no identity, no token, no audit entry, the hourly count given back', async () => {
    const t = await buildTestApp(db, {}, { mailer: failingMailer });
    const email = uniqueEmail('fail');
    const before = await emailSentCount();
    const res = await t.request('POST', '/signup', { email, password: 'secret-pw-1' });
    expect(res.status).toBe(500);
    expect(await userRow(email)).toBeUndefined();
    expect(
      await db.orm.select().from(db.t.identities).where(sql`${db.t.identities.identityData}->>'email' = ${email}`),
    ).toEqual([]);
    expect(await db.orm.select().from(db.t.oneTimeTokens).where(eq(db.t.oneTimeTokens.relatesTo, email))).toEqual([]);
    expect(await auditOf(email)).toEqual([]);
    expect(await emailSentCount()).toBe(before);
  });

  test('a repeated signup of an unconfirmed user: the earlier password, link and code stay in force', async () => {
    let now = new Date('2032-02-01T00:00:00Z');
    const ok = await buildTestApp(db, {}, { now: () => now });
    const email = uniqueEmail('again');
    await ok.request('POST', '/signup', { email, password: 'first-password' });
    const first = ok.mails[0]!;
    const rowBefore = (await userRow(email))!;
    const ottBefore = await ottRows(rowBefore.id);
    now = new Date(now.getTime() + 901_000);
    const broken = await buildTestApp(db, {}, { now: () => now, mailer: failingMailer });
    expect((await broken.request('POST', '/signup', { email, password: 'second-password' })).status).toBe(500);
    const rowAfter = (await userRow(email))!;
    expect(rowAfter.encryptedPassword).toBe(rowBefore.encryptedPassword);
    expect(rowAfter.confirmationToken).toBe(rowBefore.confirmationToken);
    expect(rowAfter.confirmationSentAt).toEqual(rowBefore.confirmationSentAt);
    expect((await ottRows(rowBefore.id)).map((o) => [o.tokenType, o.tokenHash])).toEqual(
      ottBefore.map((o) => [o.tokenType, o.tokenHash]),
    );
    const v = await ok.request('POST', '/verify', { type: 'signup', token_hash: first.tokenHash });
    expect(v.status).toBe(200);
  });

  test('recovery of an existing user: its earlier recovery link still works', async () => {
    let now = new Date('2032-03-01T00:00:00Z');
    const auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' }, { now: () => now });
    const { email } = await signUpConfirmed(auto);
    const ok = await buildTestApp(db, {}, { now: () => now });
    expect((await ok.request('POST', '/recover', { email })).status).toBe(200);
    const link = ok.mails[0]!;
    now = new Date(now.getTime() + 901_000);
    const broken = await buildTestApp(db, {}, { now: () => now, mailer: failingMailer });
    const res = await broken.request('POST', '/recover', { email });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ msg: 'Error sending recovery email' });
    expect((await userRow(email))!.recoveryToken).toBe(tokenHash(email, link.token));
    expect((await ok.request('POST', '/verify', { type: 'recovery', token_hash: link.tokenHash })).status).toBe(200);
  });

  test('invite: no user is left behind', async () => {
    const { signJwt } = await import('../../src/crypto/jwt.ts');
    const t = await buildTestApp(db, {}, { mailer: failingMailer });
    const token = await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 });
    const email = uniqueEmail('invitee');
    const res = await t.request('POST', '/invite', { email }, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ msg: 'Error sending invite email' });
    expect(await userRow(email)).toBeUndefined();
    expect(await auditOf(email)).toEqual([]);
  });

  test('PUT /user with a new password and a new email: neither happens, no session ends', async () => {
    const auto = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const a = await signUpConfirmed(auto);
    const second = (await (
      await auto.request('POST', '/token?grant_type=password', { email: a.email, password: a.password })
    ).json()) as Json;
    const broken = await buildTestApp(db, {}, { mailer: failingMailer });
    const before = (await userRow(a.email))!;
    const res = await broken.request(
      'PUT',
      '/user',
      { email: uniqueEmail('next'), password: 'brand-new-password-1' },
      bearer(a.session),
    );
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ msg: 'Error sending email change email' });
    const after = (await userRow(a.email))!;
    expect(after.encryptedPassword).toBe(before.encryptedPassword);
    expect(after.emailChange ?? '').toBe(before.emailChange ?? '');
    expect(after.emailChangeTokenNew ?? '').toBe('');
    expect(
      await db.orm
        .select()
        .from(db.t.oneTimeTokens)
        .where(and(eq(db.t.oneTimeTokens.userId, before.id))),
    ).toEqual([]);
    expect(
      (await auto.request('POST', '/token?grant_type=refresh_token', { refresh_token: second.refresh_token })).status,
    ).toBe(200);
    expect(
      (await auto.request('POST', '/token?grant_type=password', { email: a.email, password: a.password })).status,
    ).toBe(200);
  });
});
