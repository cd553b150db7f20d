// The fuzzed app and the pool of real values requests draw on: signed-up users and their
// tokens, service_role tokens, refresh tokens, pending one-time token hashes and odd JWTs.
import { generateKeyPair, SignJWT, exportJWK } from 'jose';
import type { Database } from '../../../src/db/database.ts';
import { signHs256, signJwt } from '../../../src/crypto/jwt.ts';
import type { SmsMessage, SmsProvider } from '../../../src/sms/provider.ts';
import { buildTestApp, TEST_JWT_SECRET, type TestApp } from '../../helpers/app.ts';
import { PROVIDER_ENV, providerFetch } from './provider.ts';

export const FUZZ_PASSWORD = 'fuzz-Password-1';

/** Rate limits out of the way (app/rate-limit.test.ts covers them), so requests reach the flows. */
export const FUZZ_ENV: Record<string, string> = {
  AUTHSVC_MAILER_AUTOCONFIRM: 'true',
  AUTHSVC_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true',
  AUTHSVC_SMS_PROVIDER: 'twilio',
  AUTHSVC_SMS_TWILIO_ACCOUNT_SID: 'AC-fuzz',
  AUTHSVC_SMS_TWILIO_AUTH_TOKEN: 'token',
  AUTHSVC_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG-fuzz',
  AUTHSVC_SMS_MAX_FREQUENCY: '0s',
  AUTHSVC_SMTP_MAX_FREQUENCY: '0s',
  AUTHSVC_RATE_LIMIT_SMS_SENT: '1000000',
  AUTHSVC_RATE_LIMIT_EMAIL_SENT: '1000000',
  AUTHSVC_RATE_LIMIT_TOKEN_REFRESH: '1000000',
  AUTHSVC_RATE_LIMIT_VERIFY: '1000000',
  AUTHSVC_RATE_LIMIT_OTP: '1000000',
  AUTHSVC_RATE_LIMIT_ANONYMOUS_USERS: '1000000',
  AUTHSVC_SECURITY_MANUAL_LINKING_ENABLED: 'true',
  AUTHSVC_OAUTH_SERVER_ENABLED: 'true',
  AUTHSVC_OAUTH_SERVER_AUTHORIZATION_PATH: '/oauth/consent',
  AUTHSVC_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'true',
  AUTHSVC_RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER: '1000000',
  ...PROVIDER_ENV,
};

export interface Pool {
  /** Access tokens of users (signed up, anonymous, fresh from responses). */
  user: string[];
  /** service_role tokens (admin routes). */
  admin: string[];
  refresh: string[];
  uid: string[];
  email: string[];
  /** Addresses signed up with FUZZ_PASSWORD (never rolled out of the pool). */
  login: string[];
  phone: string[];
  identity: string[];
  /** one_time_tokens.token_hash values (token_hash links). */
  otthash: string[];
  /** flow_state auth codes (pkce grant). */
  authcode: string[];
  /** OAuth states from /authorize redirects (the /callback's `state`). */
  state: string[];
  /** JWTs with odd headers, signatures and claims. */
  odd: string[];
  /** Codes sent by mail or SMS, index for index: the address, the code and its verify type. */
  codeAddr: string[];
  codeToken: string[];
  codeType: string[];
}

export interface FuzzTarget {
  t: TestApp;
  db: Database;
  pool: Pool;
  sms: SmsMessage[];
}

const b64 = (s: string) => btoa(s).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
const enc = new TextEncoder();

async function oddTokens(t: TestApp, sub: string, sid: string): Promise<string[]> {
  const now = Math.floor(Date.now() / 1000);
  const secret = enc.encode(TEST_JWT_SECRET);
  const base = { sub, role: 'authenticated', aud: 'authenticated', exp: now + 3600, iat: now, session_id: sid };
  const hs = (header: Record<string, unknown>, claims: Record<string, unknown>, key = secret) =>
    signHs256({ alg: 'HS256', typ: 'JWT', ...header } as never, claims, key);
  const rsa = await generateKeyPair('RS256');
  const rs256 = await new SignJWT(base).setProtectedHeader({ alg: 'RS256', kid: 'fuzz' }).sign(rsa.privateKey);
  const jwk = JSON.stringify(await exportJWK(rsa.publicKey));
  const unsigned = (header: Record<string, unknown>, claims: Record<string, unknown>) =>
    `${b64(JSON.stringify(header))}.${b64(JSON.stringify(claims))}.`;
  const service = (claims: Record<string, unknown>) =>
    signJwt(t.deps.keys, { role: 'service_role', exp: now + 3600, ...claims });
  return [
    unsigned({ alg: 'none', typ: 'JWT' }, base),
    unsigned({ alg: 'none' }, { role: 'service_role', exp: now + 3600 }),
    `${unsigned({ alg: 'NONE' }, base)}sig`,
    rs256,
    `${rs256.split('.').slice(0, 2).join('.')}.${hs({}, base).split('.')[2]}`,
    hs({ alg: 'HS512' }, base),
    hs({ alg: 'ES256' }, base),
    hs({ alg: 'XX999' }, base),
    hs({ alg: 'RS256' }, base),
    hs({ kid: 'unknown-kid' }, base),
    hs({ kid: '' }, base),
    hs({ kid: 42 }, base),
    hs({ kid: '../../etc/passwd' }, base),
    hs({ kid: 'x'.repeat(5000) }, base),
    hs({ jwk: JSON.parse(jwk) }, base),
    hs({ jku: 'http://127.0.0.1:1/jwks.json' }, base),
    hs({ crit: ['exp'] }, base),
    hs({ typ: 'at+jwt' }, base),
    hs({ b64: false, crit: ['b64'] }, base),
    hs({}, base, enc.encode('wrong-secret-wrong-secret-wrong-secret')),
    hs({}, { ...base, exp: now - 10 }),
    hs({}, { ...base, exp: '9999999999' }),
    hs({}, { ...base, exp: 1e300 }),
    hs({}, { ...base, nbf: now + 3600 }),
    hs({}, { ...base, iat: 'yesterday' }),
    hs({}, { ...base, sub: 'not-a-uuid' }),
    hs({}, { ...base, sub: '' }),
    hs({}, { ...base, sub: 123 }),
    hs({}, { ...base, sub: ['x'] }),
    hs({}, { ...base, sub: crypto.randomUUID() }),
    hs({}, { ...base, sub: sub.toUpperCase() }),
    hs({}, { ...base, session_id: 'nope' }),
    hs({}, { ...base, session_id: 7 }),
    hs({}, { ...base, session_id: crypto.randomUUID() }),
    hs({}, { ...base, session_id: null }),
    hs({}, { ...base, aud: ['authenticated', 'other'] }),
    hs({}, { ...base, aud: 42 }),
    hs({}, { ...base, role: { nested: true } }),
    hs({}, { ...base, role: 'service_role' }),
    hs({}, { ...base, amr: 'password', aal: 9, is_anonymous: 'yes', app_metadata: [], user_metadata: 'x' }),
    hs({}, { ...base, ['__proto__']: { admin: true }, constructor: 'x' }),
    await service({}),
    await service({ sub: 'not-a-uuid' }),
    await service({ sub: sub }),
    await service({ role: 'service_role', aud: 'weird', exp: now - 5 }),
    await service({ role: 'supabase_admin' }),
    await service({ role: 'anon' }),
    await service({ role: ['service_role'] }),
    'a.b.c',
    'a.b',
    'a',
    '..',
    '...',
    'x'.repeat(10_000),
    `${b64('{"alg":"HS256"')}.${b64('{}')}.abc`,
    `${b64('[1,2]')}.${b64('"str"')}.abc`,
    `${b64('null')}.${b64('null')}.abc`,
    `!!!.@@@.###`,
    `${base.sub}.${base.sub}.${base.sub}`,
    `eyJ${'A'.repeat(3)}.eyJ.e30`,
    `${b64(JSON.stringify({ alg: 'HS256' }))}.${btoa('{"sub":"x"}')}.${'='.repeat(4)}`,
  ];
}

/**
 * `confirm`: addresses need confirming (MAILER_AUTOCONFIRM off), a password change needs the
 * reauthentication nonce, the email change the two codes: the flows' other half.
 */
export type FuzzProfile = 'autoconfirm' | 'confirm';
const PROFILE_ENV: Record<FuzzProfile, Record<string, string>> = {
  autoconfirm: {},
  confirm: { AUTHSVC_MAILER_AUTOCONFIRM: 'false', AUTHSVC_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true' },
};

/** Builds the app on `db`, signs up a few users and fills the pool with their real values. */
export async function setupFuzzTarget(db: Database, profile: FuzzProfile = 'autoconfirm'): Promise<FuzzTarget> {
  const sms: SmsMessage[] = [];
  const provider: SmsProvider = {
    name: 'twilio',
    supportsWhatsApp: true,
    verifiesCodes: false,
    async send(m) {
      sms.push(m);
      return `SM${sms.length}`;
    },
  };
  const t = await buildTestApp(db, { ...FUZZ_ENV, ...PROFILE_ENV[profile] }, { sms: provider, fetch: providerFetch() });
  const pool: Pool = {
    user: [],
    admin: [],
    refresh: [],
    uid: [],
    email: [],
    login: [],
    phone: [],
    identity: [],
    otthash: [],
    authcode: [],
    state: [],
    odd: [],
    codeAddr: [],
    codeToken: [],
    codeType: [],
  };
  const now = Math.floor(Date.now() / 1000);
  pool.admin.push(await signJwt(t.deps.keys, { role: 'service_role', exp: now + 86_400 }));
  for (let i = 0; i < 4; i++) {
    const email = `fuzz-seed-${i}-${crypto.randomUUID().slice(0, 8)}@example.com`;
    // Created confirmed in either profile, so that they can sign in.
    const res =
      profile === 'autoconfirm'
        ? await t.request('POST', '/signup', { email, password: FUZZ_PASSWORD })
        : await signInNew(t, pool.admin[0]!, email);
    if (res.status !== 200) throw new Error(`fuzz setup: signup ${res.status} ${await res.text()}`);
    harvest(pool, await res.json());
    pool.email.push(email);
    pool.login.push(email);
  }
  const anon = await t.request('POST', '/signup', {});
  harvest(pool, await anon.json());
  const first = JSON.parse(atob(pool.user[0]!.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { sub: string };
  pool.odd = await oddTokens(t, first.sub, sessionOf(pool.user[0]!));
  await refreshPool({ t, db, pool, sms });
  return { t, db, pool, sms };
}

/** The session_id claim of one of our own access tokens (a UUID, so safe to quote in SQL). */
function sessionOf(token: string): string {
  const claims = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as {
    session_id?: string;
  };
  return /^[0-9a-f-]{36}$/.test(claims.session_id ?? '') ? claims.session_id! : '00000000-0000-0000-0000-000000000000';
}

/** An admin-created, confirmed user's first session (the `confirm` profile's seed users). */
async function signInNew(t: TestApp, adminToken: string, email: string): Promise<Response> {
  const made = await t.request(
    'POST',
    '/admin/users',
    { email, password: FUZZ_PASSWORD, email_confirm: true },
    { authorization: `Bearer ${adminToken}` },
  );
  if (made.status !== 200) return made;
  return t.request('POST', '/token?grant_type=password', { email, password: FUZZ_PASSWORD });
}

export const cap = (list: string[], v: unknown, max = 64) => {
  if (typeof v !== 'string' || v === '' || list.includes(v)) return;
  list.push(v);
  if (list.length > max) list.shift();
};

/** Takes tokens, user ids and identities from a successful response body. */
export function harvest(pool: Pool, body: unknown): void {
  if (!body || typeof body !== 'object') return;
  const b = body as Record<string, unknown>;
  cap(pool.user, b.access_token);
  cap(pool.refresh, b.refresh_token);
  const user = (b.user && typeof b.user === 'object' ? b.user : 'aud' in b ? b : undefined) as
    | Record<string, unknown>
    | undefined;
  if (user) {
    cap(pool.uid, user.id);
    if (Array.isArray(user.identities))
      for (const i of user.identities) cap(pool.identity, (i as { identity_id?: unknown }).identity_id);
  }
}

const VERIFY_TYPE: Record<string, string> = {
  confirmation: 'signup',
  invite: 'invite',
  recovery: 'recovery',
  magic_link: 'magiclink',
  email_change: 'email_change',
  reauthentication: 'reauthentication',
};

function addCode(pool: Pool, addr: string, token: string, type: string): void {
  pool.codeAddr.push(addr);
  pool.codeToken.push(token);
  pool.codeType.push(type);
  if (pool.codeAddr.length > 64) for (const l of [pool.codeAddr, pool.codeToken, pool.codeType]) l.shift();
}

/** Reads ids, one-time token hashes and auth codes the requests have written, and the codes sent. */
export async function refreshPool(target: FuzzTarget): Promise<void> {
  const { db, pool } = target;
  // Drained, so that a long run holds no more than the last few.
  for (const m of target.t.mails.splice(0))
    if (m.token)
      addCode(
        pool,
        m.newEmail && m.kind === 'email_change' ? m.newEmail : m.to,
        m.token,
        VERIFY_TYPE[m.kind] ?? 'email',
      );
  for (const m of target.sms.splice(0)) addCode(pool, m.phone, m.otp, 'sms');
  const ns = `"${db.namespace}"`;
  const q = (sql: string) => db.withSession((s) => s.exec(sql));
  // Access tokens whose session has ended (logout, password change, deletion) only reach the
  // auth check: dropped, so that most requests with a user's token get past it.
  const sids = pool.user.map((tok) => sessionOf(tok));
  const live = new Set(
    (
      await q(`select id::text as v from ${ns}.sessions where id in (${sids.map((s) => `'${s}'`).join(',') || 'null'})`)
    ).map((r) => r.v),
  );
  pool.user = pool.user.filter((_tok, i) => live.has(sids[i]!) || i === 0);
  for (const r of await q(`select id::text as v from ${ns}.users order by created_at desc, id limit 20`))
    cap(pool.uid, r.v);
  for (const r of await q(`select id::text as v from ${ns}.identities order by created_at desc, id limit 20`))
    cap(pool.identity, r.v);
  for (const r of await q(`select token_hash as v from ${ns}.one_time_tokens order by created_at desc limit 20`))
    cap(pool.otthash, r.v);
  for (const r of await q(`select auth_code as v from ${ns}.flow_state order by created_at desc limit 10`))
    cap(pool.authcode, r.v);
  for (const r of await q(
    `select phone as v from ${ns}.users where phone is not null order by created_at desc, id limit 10`,
  ))
    cap(pool.phone, r.v);
  for (const r of await q(
    `select email as v from ${ns}.users where email is not null order by created_at desc, id limit 10`,
  ))
    cap(pool.email, r.v);
}
