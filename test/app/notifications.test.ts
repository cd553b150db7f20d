// Account-change notifications (GoTrue's MAILER_NOTIFICATIONS_*_ENABLED): which change mails
// what, to whom, with which fields; off by default; a failed or refused send never fails the
// change; the email limits, the authorised addresses and the send email hook apply as to any
// email; the built-in and fetched templates render the notification's own variables.
import { eq } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { signJwt } from '../../src/crypto/jwt.ts';
import type { MailRequest } from '../../src/mail/mailer.ts';
import { createTemplateRenderer } from '../../src/mail/render.ts';
import { createMailer, type MailMessage } from '../../src/mail/transport.ts';
import { createLogger } from '../../src/telemetry/logger.ts';
import { signUpConfirmed, type TestApp, uniqueEmail } from '../helpers/app.ts';
import { callback, fragmentOf } from '../helpers/oauth-github.ts';
import { useGithubFake } from '../helpers/oauth-github.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';
import { decodeBase32, totpAt } from '../helpers/totp.ts';
import { SoftAuthenticator } from '../helpers/webauthn.ts';

type Json = Record<string, any>;
const h = useGithubFake();
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const ALL_ON = Object.fromEntries(
  [
    'PASSWORD_CHANGED',
    'EMAIL_CHANGED',
    'PHONE_CHANGED',
    'IDENTITY_LINKED',
    'IDENTITY_UNLINKED',
    'MFA_FACTOR_ENROLLED',
    'MFA_FACTOR_UNENROLLED',
    'PASSKEY_ADDED',
    'PASSKEY_REMOVED',
  ].map((k) => [`GOTRUE_MAILER_NOTIFICATIONS_${k}_ENABLED`, 'true']),
);
const AUTOCONFIRM = { AUTHSVC_MAILER_AUTOCONFIRM: 'true' };
const notifications = (t: TestApp) => t.mails.filter((m) => m.kind.endsWith('_notification'));
/** The fields a notification carries besides its kind and recipient (token, link: always empty). */
const shape = (m: MailRequest) => ({
  kind: m.kind,
  to: m.to,
  email: m.email,
  token: m.token,
  tokenHash: m.tokenHash,
  confirmationUrl: m.confirmationUrl,
  ...(m.oldEmail !== undefined ? { oldEmail: m.oldEmail } : {}),
  ...(m.oldPhone !== undefined ? { oldPhone: m.oldPhone } : {}),
  ...(m.provider !== undefined ? { provider: m.provider } : {}),
  ...(m.factorType !== undefined ? { factorType: m.factorType } : {}),
});
const empty = { token: '', tokenHash: '', confirmationUrl: '' };

let phoneN = 0;
const uniquePhone = () => `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++phoneN % 10)}`;

describe('password changed', () => {
  test('off by default: a password change mails nothing', async () => {
    const t = await h.app(AUTOCONFIRM);
    const { session } = await signUpConfirmed(t, uniqueEmail('quiet'));
    expect(
      (await t.request('PUT', '/user', { password: 'another-horse-2' }, bearer(session.access_token))).status,
    ).toBe(200);
    expect(notifications(t)).toEqual([]);
  });

  test("on: PUT /user with a password mails the account's address once the change is stored; other updates mail nothing", async () => {
    const t = await h.app({ ...AUTOCONFIRM, ...ALL_ON });
    const { email, session } = await signUpConfirmed(t, uniqueEmail('pw'));
    expect((await t.request('PUT', '/user', { data: { nickname: 'ada' } }, bearer(session.access_token))).status).toBe(
      200,
    );
    expect(notifications(t)).toEqual([]);
    const res = await t.request('PUT', '/user', { password: 'another-horse-2' }, bearer(session.access_token));
    expect(res.status).toBe(200);
    expect(notifications(t).map(shape)).toEqual([
      { kind: 'password_changed_notification', to: email, email, ...empty },
    ]);
    expect(notifications(t)[0]!.userMetadata).toMatchObject({ nickname: 'ada' });
    expect((await t.request('POST', '/token?grant_type=password', { email, password: 'another-horse-2' })).status).toBe(
      200,
    );
  });

  test('a mail server that fails, the email limit and an unauthorised address never fail the change: each is logged', async () => {
    const failing = await h.app(
      { ...AUTOCONFIRM, ...ALL_ON, AUTHSVC_LOG_LEVEL: 'warn' },
      {
        mailer: {
          async send() {
            throw new Error('421 mail server busy');
          },
        },
      },
    );
    const a = await signUpConfirmed(failing, uniqueEmail('fail'));
    expect(
      (await failing.request('PUT', '/user', { password: 'another-horse-2' }, bearer(a.session.access_token))).status,
    ).toBe(200);
    expect(
      (await failing.request('POST', '/token?grant_type=password', { email: a.email, password: 'another-horse-2' }))
        .status,
    ).toBe(200);
    const failed = failing.logs.map((l) => JSON.parse(l) as Json).find((l) => l.msg === 'notification email not sent');
    expect(failed).toMatchObject({
      level: 'warn',
      mail_kind: 'password_changed_notification',
      error: '421 mail server busy',
    });
    // The address itself is not logged.
    expect(failing.logs.join('\n')).not.toContain(a.email);

    // A mail server that never answers: the change is answered within half the request's limit (API_MAX_REQUEST_DURATION).
    const hanging = await h.app(
      { ...AUTOCONFIRM, ...ALL_ON, AUTHSVC_LOG_LEVEL: 'warn', AUTHSVC_API_MAX_REQUEST_DURATION: '4s' },
      {
        mailer: { send: () => new Promise<void>(() => undefined) },
      },
    );
    const d = await signUpConfirmed(hanging, uniqueEmail('hang'));
    const started = performance.now();
    expect(
      (await hanging.request('PUT', '/user', { password: 'another-horse-2' }, bearer(d.session.access_token))).status,
    ).toBe(200);
    // Before the limit (a 4 s limit, so the margin holds on a loaded machine).
    expect(performance.now() - started).toBeLessThan(4000);
    expect(
      hanging.logs.map((l) => JSON.parse(l) as Json).find((l) => l.msg === 'notification email not sent'),
    ).toMatchObject({ error: 'the mail server did not finish within 2000 ms' });

    // A limit of 0 blocks every email, under autoconfirm too (GoTrue).
    const limited = await h.app({
      ...AUTOCONFIRM,
      ...ALL_ON,
      AUTHSVC_LOG_LEVEL: 'warn',
      AUTHSVC_RATE_LIMIT_EMAIL_SENT: '0',
    });
    const b = await signUpConfirmed(limited, uniqueEmail('limited'));
    expect(
      (await limited.request('PUT', '/user', { password: 'another-horse-2' }, bearer(b.session.access_token))).status,
    ).toBe(200);
    expect(notifications(limited)).toEqual([]);
    expect(limited.logs.some((l) => l.includes('notification email not sent: email rate limit exceeded'))).toBe(true);

    // Autoconfirm lets an address outside the list sign up (no email is sent); its notification is refused.
    const listed = await h.app({
      ...AUTOCONFIRM,
      ...ALL_ON,
      AUTHSVC_LOG_LEVEL: 'warn',
      GOTRUE_EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES: 'only@example.com',
    });
    const c = await signUpConfirmed(listed, uniqueEmail('unlisted'));
    expect(
      (await listed.request('PUT', '/user', { password: 'another-horse-2' }, bearer(c.session.access_token))).status,
    ).toBe(200);
    expect(notifications(listed)).toEqual([]);
    expect(
      listed.logs.some((l) =>
        l.includes('notification email not sent: the address is not in EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES'),
      ),
    ).toBe(true);
    expect(listed.logs.join('\n')).not.toContain(c.email);
  });

  test('without autoconfirm a notification counts against RATE_LIMIT_EMAIL_SENT; a failed one is given back', async () => {
    const state = { fail: false };
    const sent: MailRequest[] = [];
    const t = await h.app(
      { ...ALL_ON, AUTHSVC_RATE_LIMIT_EMAIL_SENT: '100000' },
      {
        mailer: {
          async send(m) {
            if (state.fail) throw new Error('421 busy');
            sent.push(m);
          },
        },
      },
    );
    const count = async () =>
      Number(
        (await h.db.orm.select().from(h.db.t.rateLimits).where(eq(h.db.t.rateLimits.key, 'email_sent')))[0]?.count ?? 0,
      );
    const email = uniqueEmail('counted');
    await t.request('POST', '/signup', { email, password: 'correct-horse-1' });
    const verified = await t.request('POST', '/verify', { type: 'signup', email, token: sent.at(-1)!.token });
    const session = (await verified.json()) as Json;
    const before = await count();
    expect(
      (await t.request('PUT', '/user', { password: 'another-horse-2' }, bearer(session.access_token))).status,
    ).toBe(200);
    expect(sent.at(-1)!.kind).toBe('password_changed_notification');
    expect(await count()).toBe(before + 1);
    state.fail = true;
    expect((await t.request('PUT', '/user', { password: 'third-horse-3' }, bearer(session.access_token))).status).toBe(
      200,
    );
    expect(await count()).toBe(before + 1);
  });
});

describe('email changed', () => {
  test('mailed to the old address once both halves are confirmed, naming the new one; the first half mails nothing', async () => {
    const t = await h.app(ALL_ON);
    const email = uniqueEmail('old');
    await t.request('POST', '/signup', { email, password: 'correct-horse-1' });
    const session = (await (
      await t.request('POST', '/verify', { type: 'signup', email, token: t.mails.at(-1)!.token })
    ).json()) as Json;
    const newEmail = uniqueEmail('new');
    const before = t.mails.length;
    expect((await t.request('PUT', '/user', { email: newEmail }, bearer(session.access_token))).status).toBe(200);
    const [toNew, toCurrent] = t.mails.slice(before);
    expect((await t.request('POST', '/verify', { type: 'email_change', email, token: toCurrent!.token })).status).toBe(
      200,
    );
    expect(notifications(t)).toEqual([]);
    expect(
      (await t.request('POST', '/verify', { type: 'email_change', email: newEmail, token: toNew!.token })).status,
    ).toBe(200);
    expect(notifications(t).map(shape)).toEqual([
      { kind: 'email_changed_notification', to: email, email: newEmail, oldEmail: email, ...empty },
    ]);
  });

  test('an anonymous user who gets a first address is not notified (there was no address before)', async () => {
    const t = await h.app({ ...AUTOCONFIRM, ...ALL_ON, AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
    const anon = (await (await t.request('POST', '/signup', {})).json()) as Json;
    expect((await t.request('PUT', '/user', { email: uniqueEmail('first') }, bearer(anon.access_token))).status).toBe(
      200,
    );
    expect(notifications(t)).toEqual([]);
  });
});

describe('phone changed, phone identity linked', () => {
  test('SMS_AUTOCONFIRM: a first number links the phone identity; a second one is a change from the first', async () => {
    const t = await h.app({
      ...AUTOCONFIRM,
      ...ALL_ON,
      AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true',
      AUTHSVC_SMS_AUTOCONFIRM: 'true',
    });
    const { email, session } = await signUpConfirmed(t, uniqueEmail('phone'));
    const first = uniquePhone();
    const second = uniquePhone();
    expect((await t.request('PUT', '/user', { phone: first }, bearer(session.access_token))).status).toBe(200);
    expect(notifications(t).map(shape)).toEqual([
      { kind: 'identity_linked_notification', to: email, email, provider: 'phone', ...empty },
    ]);
    expect((await t.request('PUT', '/user', { phone: second }, bearer(session.access_token))).status).toBe(200);
    expect(notifications(t).slice(1).map(shape)).toEqual([
      { kind: 'phone_changed_notification', to: email, email, oldPhone: first, ...empty },
    ]);
    expect(notifications(t)[1]!.phone).toBe(second);
  });

  test('a code typed in: POST /verify type=phone_change sends them once the number is confirmed', async () => {
    const sent: string[] = [];
    const t = await h.app(
      {
        ...AUTOCONFIRM,
        ...ALL_ON,
        AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true',
        AUTHSVC_SMS_PROVIDER: 'twilio',
        AUTHSVC_SMS_TWILIO_ACCOUNT_SID: 'AC-test',
        AUTHSVC_SMS_TWILIO_AUTH_TOKEN: 'token',
        AUTHSVC_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG-test',
        AUTHSVC_RATE_LIMIT_SMS_SENT: '100000',
      },
      {
        sms: {
          name: 'twilio',
          supportsWhatsApp: true,
          verifiesCodes: false,
          async send(m) {
            sent.push(m.otp);
            return 'SM1';
          },
        },
      },
    );
    const { email, session } = await signUpConfirmed(t, uniqueEmail('phone-code'));
    const phone = uniquePhone();
    expect((await t.request('PUT', '/user', { phone }, bearer(session.access_token))).status).toBe(200);
    expect(notifications(t)).toEqual([]);
    expect((await t.request('POST', '/verify', { type: 'phone_change', phone, token: sent.at(-1) })).status).toBe(200);
    expect(notifications(t).map(shape)).toEqual([
      { kind: 'identity_linked_notification', to: email, email, provider: 'phone', ...empty },
    ]);
  });
});

describe('identities linked and unlinked', () => {
  const linking = { ...AUTOCONFIRM, ...ALL_ON, AUTHSVC_SECURITY_MANUAL_LINKING_ENABLED: 'true' };

  async function linkGithub(t: TestApp, token: string): Promise<void> {
    const res = await t.request(
      'GET',
      '/user/identities/authorize?provider=github&skip_http_redirect=true',
      undefined,
      bearer(token),
    );
    expect(res.status).toBe(200);
    const cb = await callback(t, {
      code: 'abcd-code',
      state: new URL(((await res.json()) as Json).url).searchParams.get('state')!,
    });
    expect(fragmentOf(cb.location).access_token).toBeTruthy();
  }

  test("manual linking mails the account's address; unlinking the address's own identity mails the address the account had", async () => {
    const t = await h.app(linking);
    const { email, session } = await signUpConfirmed(t, uniqueEmail('linker'));
    const githubEmail = h.emails[0]!.email.toLowerCase();
    await linkGithub(t, session.access_token);
    expect(notifications(t).map(shape)).toEqual([
      { kind: 'identity_linked_notification', to: email, email, provider: 'github', ...empty },
    ]);

    const me = (await (await t.request('GET', '/user', undefined, bearer(session.access_token))).json()) as Json;
    const emailIdentity = me.identities.find((i: Json) => i.provider === 'email');
    expect(
      (
        await t.request(
          'DELETE',
          `/user/identities/${emailIdentity.identity_id ?? emailIdentity.id}`,
          undefined,
          bearer(session.access_token),
        )
      ).status,
    ).toBe(200);
    // The account now carries GitHub's address; the notice goes to the one it had, and names it.
    const after = (await (await t.request('GET', '/user', undefined, bearer(session.access_token))).json()) as Json;
    expect(after.email).toBe(githubEmail);
    expect(notifications(t).slice(1).map(shape)).toEqual([
      { kind: 'identity_unlinked_notification', to: email, email, provider: 'email', ...empty },
    ]);
  });

  test('a PKCE link (made at the code exchange) mails too', async () => {
    const t = await h.app(linking);
    const { email, password } = await signUpConfirmed(t, uniqueEmail('pkce-linker'));
    const client = supabaseClientFor(t.app, 'anon', { auth: { flowType: 'pkce' } });
    expect((await client.auth.signInWithPassword({ email, password })).error).toBeNull();
    h.emails = [{ email: uniqueEmail('other'), primary: true, verified: true }];
    const linked = await client.auth.linkIdentity({ provider: 'github', options: { skipBrowserRedirect: true } });
    t.cookies.clear();
    const cb = await callback(t, { code: 'abcd-code', state: new URL(linked.data.url!).searchParams.get('state')! });
    expect(notifications(t)).toEqual([]); // nothing is linked before the exchange
    expect((await client.auth.exchangeCodeForSession(cb.location.searchParams.get('code')!)).error).toBeNull();
    expect(notifications(t).map(shape)).toEqual([
      { kind: 'identity_linked_notification', to: email, email, provider: 'github', ...empty },
    ]);
  });
});

describe('MFA factors', () => {
  test('a factor\'s first verification mails "enrolled"; later verifications do not; unenrolling mails "unenrolled"', async () => {
    const t = await h.app({ ...AUTOCONFIRM, ...ALL_ON });
    const { email, session } = await signUpConfirmed(t, uniqueEmail('mfa'));
    const v = { ...bearer(session.access_token), 'x-supabase-api-version': '2024-01-01' };
    const factor = (await (
      await t.request('POST', '/factors', { factor_type: 'totp', friendly_name: 'app' }, v)
    ).json()) as Json;
    const key = decodeBase32(factor.totp.secret);
    const verifyOnce = async (token: string, at: number) => {
      const ch = (await (
        await t.request('POST', `/factors/${factor.id}/challenge`, undefined, { ...v, ...bearer(token) })
      ).json()) as Json;
      const res = await t.request(
        'POST',
        `/factors/${factor.id}/verify`,
        { challenge_id: ch.id, code: totpAt(key, at) },
        { ...v, ...bearer(token) },
      );
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as Json;
    };
    const now = Date.now() / 1000;
    const aal2 = await verifyOnce(session.access_token, now);
    expect(notifications(t).map(shape)).toEqual([
      { kind: 'mfa_factor_enrolled_notification', to: email, email, factorType: 'totp', ...empty },
    ]);
    await verifyOnce(aal2.access_token, now + 30);
    expect(notifications(t)).toHaveLength(1);
    expect(
      (await t.request('DELETE', `/factors/${factor.id}`, undefined, { ...v, ...bearer(aal2.access_token) })).status,
    ).toBe(200);
    expect(notifications(t).slice(1).map(shape)).toEqual([
      { kind: 'mfa_factor_unenrolled_notification', to: email, email, factorType: 'totp', ...empty },
    ]);
  });
});

describe('passkeys', () => {
  const PASSKEYS = {
    AUTHSVC_PASSKEY_ENABLED: 'true',
    AUTHSVC_WEBAUTHN_RP_ID: 'localhost',
    AUTHSVC_WEBAUTHN_RP_DISPLAY_NAME: 'notifications',
    AUTHSVC_WEBAUTHN_RP_ORIGINS: 'http://localhost:5173',
  };
  const v = (token: string) => ({ ...bearer(token), 'x-supabase-api-version': '2024-01-01' });
  async function addPasskey(t: TestApp, token: string): Promise<Response> {
    const opts = (await (await t.request('POST', '/passkeys/registration/options', {}, v(token))).json()) as Json;
    const key = await SoftAuthenticator.create('http://localhost:5173');
    return t.request(
      'POST',
      '/passkeys/registration/verify',
      { challenge_id: opts.challenge_id, credential: await key.register(opts.options) },
      v(token),
    );
  }

  test('L3 (security review 2026-12-01): registering a passkey mails "passkey added", deleting it mails "passkey removed"; off by default neither', async () => {
    const quiet = await h.app({ ...AUTOCONFIRM, ...PASSKEYS });
    const a = await signUpConfirmed(quiet, uniqueEmail('pk-quiet'));
    const added = await addPasskey(quiet, a.session.access_token);
    expect(added.status).toBe(200);
    expect(
      (
        await quiet.request(
          'DELETE',
          `/passkeys/${((await added.json()) as Json).id}`,
          undefined,
          v(a.session.access_token),
        )
      ).status,
    ).toBe(204);
    expect(notifications(quiet)).toEqual([]);

    const t = await h.app({ ...AUTOCONFIRM, ...PASSKEYS, ...ALL_ON });
    const { email, session } = await signUpConfirmed(t, uniqueEmail('pk'));
    const res = await addPasskey(t, session.access_token);
    expect(res.status).toBe(200);
    expect(notifications(t).map(shape)).toEqual([{ kind: 'passkey_added_notification', to: email, email, ...empty }]);
    expect(
      (await t.request('DELETE', `/passkeys/${((await res.json()) as Json).id}`, undefined, v(session.access_token)))
        .status,
    ).toBe(204);
    expect(notifications(t).slice(1).map(shape)).toEqual([
      { kind: 'passkey_removed_notification', to: email, email, ...empty },
    ]);
    // The admin API's deletion sends none (as for MFA factors); a refused registration sends none.
    const second = (await (await addPasskey(t, session.access_token)).json()) as Json;
    expect(notifications(t)).toHaveLength(3);
    const service = {
      authorization: `Bearer ${await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 600 })}`,
    };
    expect(
      (await t.request('DELETE', `/admin/users/${session.user.id}/passkeys/${second.id}`, undefined, service)).status,
    ).toBe(204);
    const opts = (await (
      await t.request('POST', '/passkeys/registration/options', {}, v(session.access_token))
    ).json()) as Json;
    expect(
      (
        await t.request(
          'POST',
          '/passkeys/registration/verify',
          { challenge_id: opts.challenge_id, credential: { id: 'AA' } },
          v(session.access_token),
        )
      ).status,
    ).toBe(400);
    expect(notifications(t)).toHaveLength(3);
  });

  test('L3 (security review 2026-12-01): a mail server that fails never fails the registration; the send email hook gets passkey_added_notification and passkey_removed_notification', async () => {
    const failing = await h.app(
      { ...AUTOCONFIRM, ...PASSKEYS, ...ALL_ON, AUTHSVC_LOG_LEVEL: 'warn' },
      {
        mailer: {
          async send() {
            throw new Error('421 mail server busy');
          },
        },
      },
    );
    const a = await signUpConfirmed(failing, uniqueEmail('pk-fail'));
    expect((await addPasskey(failing, a.session.access_token)).status).toBe(200);
    expect(
      failing.logs.map((l) => JSON.parse(l) as Json).find((l) => l.msg === 'notification email not sent'),
    ).toMatchObject({ mail_kind: 'passkey_added_notification' });
    expect(
      (await (await failing.request('GET', '/passkeys', undefined, v(a.session.access_token))).json()) as Json[],
    ).toHaveLength(1);

    const calls: Json[] = [];
    const fetch = (async (_input: RequestInfo | URL, init?: RequestInit) => {
      calls.push(JSON.parse(String(init?.body)) as Json);
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    }) as typeof globalThis.fetch;
    const t = await h.app(
      {
        ...AUTOCONFIRM,
        ...PASSKEYS,
        ...ALL_ON,
        AUTHSVC_HOOK_SEND_EMAIL_ENABLED: 'true',
        AUTHSVC_HOOK_SEND_EMAIL_URI: 'https://hooks.test/send-email',
        AUTHSVC_HOOK_SEND_EMAIL_SECRETS: `v1,whsec_${btoa('a 32-byte key for the hook tests')}`,
      },
      { fetch },
    );
    const { email, session } = await signUpConfirmed(t, uniqueEmail('pk-hook'));
    const res = await addPasskey(t, session.access_token);
    expect(res.status).toBe(200);
    expect(
      (await t.request('DELETE', `/passkeys/${((await res.json()) as Json).id}`, undefined, v(session.access_token)))
        .status,
    ).toBe(204);
    expect(t.mails).toEqual([]);
    const base = {
      token: '',
      token_hash: '',
      redirect_to: 'http://localhost:3000',
      site_url: 'http://localhost:9999',
      token_new: '',
      token_hash_new: '',
      old_email: '',
      old_phone: '',
      provider: '',
      factor_type: '',
    };
    expect(calls.map((c) => c.email_data)).toEqual([
      { ...base, email_action_type: 'passkey_added_notification' },
      { ...base, email_action_type: 'passkey_removed_notification' },
    ]);
    expect(calls.map((c) => c.user.email)).toEqual([email, email]);
  });
});

describe('the send email hook', () => {
  test('gets the notification as GoTrue sends it: email_action_type <kind>_notification, the changed fields filled, no token', async () => {
    const calls: Json[] = [];
    const fetch = (async (_input: RequestInfo | URL, init?: RequestInit) => {
      calls.push(JSON.parse(String(init?.body)) as Json);
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    }) as typeof globalThis.fetch;
    const t = await h.app(
      {
        ...AUTOCONFIRM,
        ...ALL_ON,
        AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true',
        AUTHSVC_SMS_AUTOCONFIRM: 'true',
        AUTHSVC_HOOK_SEND_EMAIL_ENABLED: 'true',
        AUTHSVC_HOOK_SEND_EMAIL_URI: 'https://hooks.test/send-email',
        AUTHSVC_HOOK_SEND_EMAIL_SECRETS: `v1,whsec_${btoa('a 32-byte key for the hook tests')}`,
      },
      { fetch },
    );
    const { email, session } = await signUpConfirmed(t, uniqueEmail('hooked'));
    const first = uniquePhone();
    expect((await t.request('PUT', '/user', { phone: first }, bearer(session.access_token))).status).toBe(200);
    expect(
      (
        await t.request(
          'PUT',
          '/user',
          { phone: uniquePhone(), password: 'another-horse-2' },
          bearer(session.access_token),
        )
      ).status,
    ).toBe(200);
    expect(t.mails).toEqual([]);
    // One request's notifications go out side by side: their order is not fixed.
    calls.sort((a, b) => String(a.email_data.email_action_type).localeCompare(String(b.email_data.email_action_type)));
    expect(calls.map((c) => c.email_data)).toEqual([
      {
        token: '',
        token_hash: '',
        redirect_to: 'http://localhost:3000',
        email_action_type: 'identity_linked_notification',
        site_url: 'http://localhost:9999',
        token_new: '',
        token_hash_new: '',
        old_email: '',
        old_phone: '',
        provider: 'phone',
        factor_type: '',
      },
      {
        token: '',
        token_hash: '',
        redirect_to: 'http://localhost:3000',
        email_action_type: 'password_changed_notification',
        site_url: 'http://localhost:9999',
        token_new: '',
        token_hash_new: '',
        old_email: '',
        old_phone: '',
        provider: '',
        factor_type: '',
      },
      {
        token: '',
        token_hash: '',
        redirect_to: 'http://localhost:3000',
        email_action_type: 'phone_changed_notification',
        site_url: 'http://localhost:9999',
        token_new: '',
        token_hash_new: '',
        old_email: '',
        old_phone: first,
        provider: '',
        factor_type: '',
      },
    ]);
    expect(calls.map((c) => c.user.email)).toEqual([email, email, email]);
  });
});

describe('rendering', () => {
  function mailerWith(
    fetch: typeof globalThis.fetch,
    subjects: Record<string, string> = {},
    templates: Record<string, string> = {},
  ) {
    const sent: MailMessage[] = [];
    const logger = createLogger('error', () => undefined);
    const mailer = createMailer({
      config: {
        smtp: { adminEmail: 'auth@example.com', senderName: 'Auth' },
        mailer: {
          subjects: {
            invite: '',
            confirmation: '',
            recovery: '',
            magicLink: '',
            emailChange: '',
            reauthentication: '',
            password_changed_notification: 'Your password was changed',
            email_changed_notification: 'Your email address was changed',
            phone_changed_notification: 'Your phone number was changed',
            identity_linked_notification: 'A new sign-in method was linked to your account',
            identity_unlinked_notification: 'A sign-in method was removed from your account',
            mfa_factor_enrolled_notification: 'A new verification method was added to your account',
            mfa_factor_unenrolled_notification: 'A verification method was removed from your account',
            passkey_added_notification: 'A new passkey was added to your account',
            passkey_removed_notification: 'A passkey was removed from your account',
            ...subjects,
          },
          templates,
        },
      },
      transport: {
        async deliver(m) {
          sent.push(m);
        },
      },
      renderer: createTemplateRenderer({ fetch, logger }),
      logger,
    });
    return { mailer, sent };
  }
  const base: MailRequest = {
    kind: 'email_changed_notification',
    to: 'old@example.com',
    email: 'new@example.com',
    oldEmail: 'old@example.com',
    token: '',
    tokenHash: '',
    confirmationUrl: '',
    siteUrl: 'https://app.example.com',
    redirectTo: 'https://app.example.com',
    userMetadata: { name: '<b>Ada</b>' },
  };

  test("built-in bodies name what changed, carry no link and no code; GoTrue's default subjects", async () => {
    const { mailer, sent } = mailerWith((() => {
      throw new Error('no fetch');
    }) as never);
    await mailer.send(base);
    await mailer.send({
      ...base,
      kind: 'phone_changed_notification',
      to: 'a@example.com',
      email: 'a@example.com',
      oldPhone: '15550001',
      phone: '15550002',
    });
    await mailer.send({
      ...base,
      kind: 'identity_unlinked_notification',
      to: 'a@example.com',
      email: 'a@example.com',
      provider: 'github',
    });
    await mailer.send({
      ...base,
      kind: 'mfa_factor_enrolled_notification',
      to: 'a@example.com',
      email: 'a@example.com',
      factorType: 'webauthn',
    });
    await mailer.send({ ...base, kind: 'passkey_added_notification', to: 'a@example.com', email: 'a@example.com' });
    await mailer.send({ ...base, kind: 'passkey_removed_notification', to: 'a@example.com', email: 'a@example.com' });
    expect(sent.map((m) => [m.to, m.subject])).toEqual([
      ['old@example.com', 'Your email address was changed'],
      ['a@example.com', 'Your phone number was changed'],
      ['a@example.com', 'A sign-in method was removed from your account'],
      ['a@example.com', 'A new verification method was added to your account'],
      ['a@example.com', 'A new passkey was added to your account'],
      ['a@example.com', 'A passkey was removed from your account'],
    ]);
    expect(sent[4]!.text).toContain('A new passkey can now be used to sign in to your account a@example.com');
    expect(sent[5]!.html).toContain('A passkey can no longer be used to sign in to your account a@example.com.');
    expect(sent[0]!.text).toContain(
      'The email address of your account is now new@example.com instead of old@example.com.',
    );
    expect(sent[1]!.text).toContain('is now 15550002 instead of 15550001');
    expect(sent[2]!.html).toContain(
      'Your github account can no longer be used to sign in to your account a@example.com.',
    );
    expect(sent[3]!.text).toContain('A webauthn factor now verifies sign-ins');
    for (const m of sent) {
      expect(m.html).not.toContain('href');
      expect(m.sendIdentity).toBeUndefined(); // no token: no idempotency key
    }
  });

  test("a template URL and a subject of the operator's: every notification variable, values escaped in HTML", async () => {
    const fetch = (async (input: RequestInfo | URL) => {
      expect(String(input)).toBe('https://templates.example.com/email-changed.html');
      return new Response(
        '<p>{{ .Email }} was {{ .OldEmail }} ({{ .Data.name }}) at {{ .SiteURL }}; {{ .OldPhone }}{{ .Phone }}{{ .Provider }}{{ .FactorType }}</p>',
      );
    }) as typeof globalThis.fetch;
    const { mailer, sent } = mailerWith(
      fetch,
      { email_changed_notification: 'Changed to {{ .Email }}' },
      { email_changed_notification: 'https://templates.example.com/email-changed.html' },
    );
    await mailer.send(base);
    expect(sent[0]!.subject).toBe('Changed to new@example.com');
    expect(sent[0]!.html).toBe(
      '<p>new@example.com was old@example.com (&lt;b&gt;Ada&lt;/b&gt;) at https://app.example.com; </p>',
    );
  });
});
