import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
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
const linkToken = (url: string) => new URL(url).searchParams;

/** A confirmed user on an app without autoconfirm (so changes need confirming). */
async function confirmedUser(env: Record<string, string> = {}) {
  const t = await buildTestApp(db, env);
  const email = uniqueEmail();
  await t.request('POST', '/signup', { email, password: 'secret-pw-1' });
  const v = await t.request('POST', '/verify', { type: 'signup', email, token: t.mails.at(-1)!.token });
  return { t, email, session: (await v.json()) as Json };
}

describe('email change', () => {
  test('secure (default): codes to both addresses; the first answers a message, the second switches the address', async () => {
    const { t, email, session } = await confirmedUser();
    const newEmail = uniqueEmail('new');
    const before = t.mails.length;
    const res = await t.request('PUT', '/user', { email: newEmail }, bearer(session));
    expect(res.status).toBe(200);
    const user = (await res.json()) as Json;
    expect(user).toMatchObject({ email, new_email: newEmail });
    expect(user.email_change_sent_at).toBeTruthy();
    const mails = t.mails.slice(before);
    expect(mails.map((m) => [m.kind, m.to])).toEqual([
      ['email_change', newEmail],
      ['email_change', email],
    ]);
    for (const m of mails) {
      expect(m.newEmail).toBe(newEmail);
      // {{ .Email }} is the current address in both mails, as GoTrue renders them.
      expect(m.email).toBe(email);
      expect(linkToken(m.confirmationUrl).get('type')).toBe('email_change');
    }
    const [toNew, toCurrent] = mails;
    // The current address's code goes with the current address.
    const half = await t.request('POST', '/verify', { type: 'email_change', email, token: toCurrent!.token });
    expect(half.status).toBe(200);
    expect(await half.json()).toEqual({
      msg: 'Confirmation link accepted. Please proceed to confirm link sent to the other email',
      code: '200',
    });
    const done = await t.request(
      'GET',
      `/verify?token=${linkToken(toNew!.confirmationUrl).get('token')}&type=email_change`,
    );
    expect(done.status).toBe(303);
    const frag = new URLSearchParams(done.headers.get('location')!.split('#')[1]);
    expect(frag.get('type')).toBe('email_change');
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${frag.get('access_token')}` })
    ).json()) as Json;
    expect(me.email).toBe(newEmail);
    expect(me).not.toHaveProperty('new_email');
    expect(me.identities[0]).toMatchObject({
      provider: 'email',
      email: newEmail,
      identity_data: { email: newEmail, email_verified: true },
    });
    expect(
      (await t.request('POST', '/token?grant_type=password', { email: newEmail, password: 'secret-pw-1' })).status,
    ).toBe(200);
    expect((await t.request('POST', '/token?grant_type=password', { email, password: 'secret-pw-1' })).status).toBe(
      400,
    );
    // Used up.
    const again = await t.request('POST', '/verify', { type: 'email_change', email, token: toCurrent!.token });
    expect(again.status).toBe(403);
  });

  test('the GET link of the first half redirects with the message', async () => {
    const { t, session } = await confirmedUser();
    const before = t.mails.length;
    await t.request('PUT', '/user', { email: uniqueEmail('new') }, bearer(session));
    const toCurrent = t.mails.slice(before)[1]!;
    const res = await t.request(
      'GET',
      `/verify?token=${linkToken(toCurrent.confirmationUrl).get('token')}&type=email_change`,
    );
    expect(res.headers.get('location')).toBe(
      'http://localhost:3000#message=Confirmation+link+accepted.+Please+proceed+to+confirm+link+sent+to+the+other+email&sb=',
    );
  });

  test('with MAILER_SECURE_EMAIL_CHANGE_ENABLED=false one code to the new address is enough', async () => {
    const { t, session } = await confirmedUser({ GOTRUE_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'false' });
    const newEmail = uniqueEmail('new');
    const before = t.mails.length;
    await t.request('PUT', '/user', { email: newEmail }, bearer(session));
    const mails = t.mails.slice(before);
    expect(mails.map((m) => m.to)).toEqual([newEmail]);
    const res = await t.request('POST', '/verify', { type: 'email_change', email: newEmail, token: mails[0]!.token });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).user.email).toBe(newEmail);
  });

  test("under MAILER_AUTOCONFIRM a permanent user's change still needs the codes (as GoTrue); a taken address is 422 email_exists", async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const a = await signUpConfirmed(t);
    const b = await signUpConfirmed(t);
    const taken = await t.request('PUT', '/user', { email: b.email }, bearer(a.session));
    expect(taken.status).toBe(422);
    expect(await taken.json()).toMatchObject({ error_code: 'email_exists' });
    const newEmail = uniqueEmail('new');
    const res = await t.request('PUT', '/user', { email: newEmail.toUpperCase() }, bearer(a.session));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ email: a.email, new_email: newEmail });
    expect(t.mails.map((m) => m.to).sort()).toEqual([a.email, newEmail].sort());
    // Under autoconfirm one code is enough.
    const code = t.mails.find((m) => m.to === newEmail)!;
    const v = await t.request('POST', '/verify', { type: 'email_change', email: newEmail, token: code.token });
    expect(v.status).toBe(200);
    expect(((await v.json()) as Json).user.email).toBe(newEmail);
  });

  test("under MAILER_AUTOCONFIRM an anonymous user's email applies at once", async () => {
    const t = await buildTestApp(db, {
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
    });
    const anon = (await (await t.request('POST', '/signup', {})).json()) as Json;
    const email = uniqueEmail('anon');
    const res = await t.request('PUT', '/user', { email }, bearer(anon));
    expect(await res.json()).toMatchObject({ email, is_anonymous: false });
    expect(t.mails).toHaveLength(0);
  });

  test('an anonymous user becomes permanent by confirming an email', async () => {
    const t = await buildTestApp(db, { GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
    const anon = (await (await t.request('POST', '/signup', {})).json()) as Json;
    const email = uniqueEmail('anon');
    const put = await t.request('PUT', '/user', { email, password: 'anon-password-1' }, bearer(anon));
    expect(put.status).toBe(200);
    expect(t.mails.map((m) => m.to)).toEqual([email]);
    const v = await t.request('POST', '/verify', { type: 'email_change', email, token: t.mails[0]!.token });
    const body = (await v.json()) as Json;
    expect(body.user).toMatchObject({
      email,
      is_anonymous: false,
      app_metadata: { provider: 'email', providers: ['email'] },
    });
    expect(body.user.identities).toHaveLength(1);
    expect((await t.request('POST', '/token?grant_type=password', { email, password: 'anon-password-1' })).status).toBe(
      200,
    );
  });

  test('POST /resend type=email_change repeats the emails after the frequency window', async () => {
    let now = new Date('2033-01-01T00:00:00Z');
    const t0 = await confirmedUser();
    const t = await buildTestApp(db, {}, { now: () => now });
    await t0.t.request('PUT', '/user', { email: uniqueEmail('new') }, bearer(t0.session));
    // The change was requested at real time; move well past the window for this app's clock.
    now = new Date(Date.now() + 901_000);
    const res = await t.request('POST', '/resend', { type: 'email_change', email: t0.email });
    expect(res.status).toBe(200);
    expect(t.mails.map((m) => m.kind)).toEqual(['email_change', 'email_change']);
    const early = await t.request('POST', '/resend', { type: 'email_change', email: t0.email });
    expect(early.status).toBe(429);
  });
});
