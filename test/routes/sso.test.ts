// SAML 2.0 SSO (issue 32): a test IdP with its own key and certificate signs responses with
// xml-crypto; the whole flow runs through the real app — the admin API creates the provider from
// metadata XML or a metadata URL, POST /sso redirects with a signed AuthnRequest, the IdP's
// answer at the ACS signs the user in (PKCE code, or tokens in the fragment) — and every forged,
// replayed, expired, misaddressed or unsigned answer is refused with GoTrue's error and nothing
// written.
import { createHash, createPublicKey, createVerify, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate, KeyUsage, KeyUsageFlags, id_ce_keyUsage } from '@peculiar/asn1-x509';
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { openTestDb, uniqueNamespace } from '../helpers/db.ts';
import { exec, lit } from '../helpers/gotrue-rows.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';
import { createSamlProvider, SAML_ON, SP_KEY, SP_KEY_B64, type SsoApp, startSsoApp } from '../helpers/sso-app.ts';
import {
  createTestIdp,
  decodeAuthnRequest,
  EMAIL_FORMAT,
  type ResponseOptions,
  strangerKey,
  type TestIdp,
  TRANSIENT,
  wrapSignedAssertion,
} from '../helpers/saml-idp.ts';

type Json = Record<string, any>;

/** The certificate's keyUsage extension, read with an X.509 parser (node:crypto does not show it). */
function keyUsage(cert: X509Certificate): { usages: number | undefined; critical: boolean | undefined } {
  const { extensions } = AsnConvert.parse(cert.raw, Certificate).tbsCertificate;
  const ext = extensions?.find((e) => e.extnID === id_ce_keyUsage);
  return {
    usages: ext && AsnConvert.parse(ext.extnValue.buffer, KeyUsage).toNumber(),
    critical: ext?.critical,
  };
}
const ENTITY = 'http://localhost:9999/sso/saml/metadata';
const ACS = 'http://localhost:9999/sso/saml/acs';
const SITE = 'http://localhost:3000';
const ON = SAML_ON;

let app: SsoApp;
let db: Database;
let t: TestApp;
let admin: string;
let metadataPort: number;
let served: SsoApp['served'];

beforeAll(async () => {
  app = await startSsoApp();
  ({ db, t, admin, metadataPort, served } = app);
});
afterAll(async () => {
  app?.metadataServer.close();
  await db?.close();
});

const auth = () => ({ authorization: `Bearer ${admin}` });
const unique = () => crypto.randomUUID().slice(0, 8);

const createProvider = (idp: TestIdp, extra: Json = {}) => createSamlProvider(app, idp, extra);

async function acs(app: TestApp, fields: Record<string, string>): Promise<Response> {
  return app.app.request('/sso/saml/acs', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

/** POST /sso, then the AuthnRequest's ID and the relay state. */
async function start(body: Json): Promise<{ url: string; requestId: string; relayState: string }> {
  const res = await t.request('POST', '/sso', { skip_http_redirect: true, ...body });
  expect(res.status, await res.clone().text()).toBe(200);
  const { url } = (await res.json()) as Json;
  const { xml, params } = decodeAuthnRequest(url);
  return { url, requestId: /ID="([^"]+)"/.exec(xml)![1]!, relayState: params.get('RelayState')! };
}

const base = (o: Partial<ResponseOptions> = {}): ResponseOptions => ({ audience: ENTITY, acsUrl: ACS, ...o });

async function tally(): Promise<{ users: number; sessions: number; identities: number }> {
  const n = async (table: any) => Number((await db.orm.select({ n: count() }).from(table))[0]!.n);
  return { users: await n(db.t.users), sessions: await n(db.t.sessions), identities: await n(db.t.identities) };
}

/** A refusal: 303 to SITE_URL with GoTrue's error triple in the query. */
async function expectRefused(res: Response, errorCode: string, description?: string | RegExp): Promise<void> {
  expect(res.status).toBe(303);
  const to = new URL(res.headers.get('location')!);
  expect(to.origin).toBe(SITE);
  expect(to.searchParams.get('error_code')).toBe(errorCode);
  expect(to.searchParams.get('error')).toBeTruthy();
  if (description) expect(to.searchParams.get('error_description')).toMatch(description);
}

describe('settings, gate and SP metadata', () => {
  test('/settings reports saml_enabled; off, every /sso path answers 404 saml_provider_disabled before reading the body', async () => {
    expect(((await (await t.request('GET', '/settings')).json()) as Json).saml_enabled).toBe(true);
    const off = await buildTestApp(db);
    expect(((await (await off.request('GET', '/settings')).json()) as Json).saml_enabled).toBe(false);
    for (const [method, path, body] of [
      ['POST', '/sso', '{"provider_id":"valid-provider-id"}'],
      ['GET', '/sso/saml/metadata'],
      ['POST', '/sso/saml/acs', 'x'],
    ] as const) {
      const res = await off.request(method, path, body);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error_code: 'saml_provider_disabled', msg: 'SAML 2.0 is disabled' });
    }
  });

  test('SAML_ENABLED needs a valid PKCS#1 SAML_PRIVATE_KEY to start', async () => {
    await expect(buildTestApp(db, { AUTHSVC_SAML_ENABLED: 'true' })).rejects.toThrow(/SAML_PRIVATE_KEY.*required/);
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .privateKey.export({ type: 'pkcs1', format: 'der' })
      .toString('base64');
    await expect(buildTestApp(db, { ...ON, AUTHSVC_SAML_PRIVATE_KEY: small })).rejects.toThrow(/at least 2048 bits/);
    await expect(buildTestApp(db, { ...ON, AUTHSVC_SAML_PRIVATE_KEY: 'bm90IGEga2V5' })).rejects.toThrow(/PKCS#1/);
    // The refusal never quotes the key.
    await expect(buildTestApp(db, { ...ON, AUTHSVC_SAML_PRIVATE_KEY: small })).rejects.not.toThrow(small.slice(10, 40));
    // GoTrue's name works too.
    const g = await buildTestApp(db, { GOTRUE_SAML_ENABLED: 'true', GOTRUE_SAML_PRIVATE_KEY: SP_KEY_B64 });
    expect(g.deps.config.saml.enabled).toBe(true);
  });

  test('GET /sso/saml/metadata: the SP entity, the ACS, a certificate of the SP key; ?download=true as an attachment valid 5 years', async () => {
    const res = await t.request('GET', '/sso/saml/metadata');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/xml');
    expect(res.headers.get('cache-control')).toBe('public, max-age=600');
    const xml = await res.text();
    expect(xml).toContain(`entityID="${ENTITY}"`);
    expect(xml).toContain(`Location="${ACS}"`);
    expect(xml).toContain('urn:oasis:names:tc:SAML:2.0:nameid-format:persistent');
    expect(xml).not.toContain('use="encryption"');
    const cert = new X509Certificate(Buffer.from(/<X509Certificate>([^<]+)</.exec(xml)![1]!, 'base64'));
    expect(cert.subject).toBe('CN=SAML 2.0 Certificate for localhost');
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.checkPrivateKey(SP_KEY)).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    // As GoTrue makes it: serial 0, 1970 to 2170 (UTCTime, then GeneralizedTime), keyUsage critical.
    expect(cert.serialNumber).toBe('0');
    expect([cert.validFromDate.toISOString(), cert.validToDate.toISOString()]).toEqual([
      '1970-01-01T00:00:00.000Z',
      '2170-01-01T00:00:00.000Z',
    ]);
    expect(keyUsage(cert)).toEqual({ usages: KeyUsageFlags.digitalSignature, critical: true });
    const dl = await t.request('GET', '/sso/saml/metadata?download=true');
    expect(dl.headers.get('content-disposition')).toBe('attachment; filename="metadata.xml"');
    const until = new Date(/validUntil="([^"]+)"/.exec(await dl.text())![1]!);
    expect(until.getTime()).toBeGreaterThan(Date.now() + 4 * 365 * 86400_000);
  });

  test('SAML_PRIVATE_KEY_NEXT: both certificates published, cached for a minute, reported in /settings', async () => {
    const next = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const rotating = await buildTestApp(db, {
      ...ON,
      AUTHSVC_SAML_PRIVATE_KEY_NEXT: next.export({ type: 'pkcs1', format: 'der' }).toString('base64'),
    });
    expect(((await (await rotating.request('GET', '/settings')).json()) as Json).saml_private_key_next_configured).toBe(
      true,
    );
    const res = await rotating.request('GET', '/sso/saml/metadata');
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    const xml = await res.text();
    expect(xml).toContain('cacheDuration="PT1H"');
    const certs = [...xml.matchAll(/<X509Certificate>([^<]+)</g)].map(
      (m) => new X509Certificate(Buffer.from(m[1]!, 'base64')),
    );
    expect(certs.map((c) => [c.checkPrivateKey(SP_KEY), c.checkPrivateKey(next)])).toEqual([
      [true, false],
      [false, true],
    ]);
  });
});

describe('sign-in', () => {
  let idp: TestIdp;
  let provider: Json;
  let domain: string;
  beforeAll(async () => {
    idp = createTestIdp(`flow-${unique()}`);
    domain = `flow-${unique()}.example.com`;
    provider = await createProvider(idp, {
      domains: [domain],
      attribute_mapping: {
        keys: {
          name: { name: 'displayName' },
          groups: { names: ['memberOf'], array: true },
          department: { name: 'dept', default: 'none' },
        },
      },
    });
  });

  test('PKCE: POST /sso by domain → signed AuthnRequest → signed response at the ACS → ?code= → /token?grant_type=pkce → GET /user shows the sso identity', async () => {
    const verifier = 'v'.repeat(50);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const { url, requestId, relayState } = await start({
      domain,
      code_challenge: challenge,
      code_challenge_method: 's256',
      redirect_to: `${SITE}/welcome`,
    });
    expect(url.startsWith(`${idp.ssoUrl}?SAMLRequest=`)).toBe(true);
    const { xml, params } = decodeAuthnRequest(url);
    expect(xml).toContain(`Destination="${idp.ssoUrl}"`);
    expect(xml).toContain(`AssertionConsumerServiceURL="${ACS}"`);
    expect(xml).toContain(
      `<saml:Issuer Format="urn:oasis:names:tc:SAML:2.0:nameid-format:entity">${ENTITY}</saml:Issuer>`,
    );
    expect(xml).toContain('NameIDPolicy Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"');
    // The redirect binding's signature, over the query as sent, with the SP key.
    expect(params.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    const signed = new URL(url).search.slice(1).split('&Signature=')[0]!;
    expect(createVerify('RSA-SHA256').update(signed).verify(SP_KEY, params.get('Signature')!, 'base64')).toBe(true);

    const email = `Alice.${unique()}@${domain}`;
    const response = idp.response(
      base({
        inResponseTo: requestId,
        nameId: `alice-${unique()}`,
        attributes: { email: [email], displayName: ['Alice A'], memberOf: ['admins', 'staff'] },
      }),
    );
    const res = await acs(t, { SAMLResponse: response, RelayState: relayState });
    expect(res.status, res.headers.get('location') ?? '').toBe(302);
    const to = new URL(res.headers.get('location')!);
    expect(`${to.origin}${to.pathname}`).toBe(`${SITE}/welcome`);
    const code = to.searchParams.get('code')!;
    const token = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: verifier });
    expect(token.status, await token.clone().text()).toBe(200);
    const session = (await token.json()) as Json;
    const claims = JSON.parse(Buffer.from(session.access_token.split('.')[1], 'base64url').toString());
    expect(claims.amr).toEqual([expect.objectContaining({ method: 'sso/saml' })]);
    const user = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${session.access_token}` })
    ).json()) as Json;
    expect(user).toMatchObject({ email: email.toLowerCase(), app_metadata: { provider: `sso:${provider.id}` } });
    // is_sso_user is stored, not shown (GoTrue's json:"-").
    expect(user.is_sso_user).toBeUndefined();
    expect((await db.orm.select().from(db.t.users).where(eq(db.t.users.id, user.id)))[0]!.isSsoUser).toBe(true);
    expect(user.email_confirmed_at).toBeTruthy();
    expect(user.identities).toHaveLength(1);
    expect(user.identities[0]).toMatchObject({
      provider: `sso:${provider.id}`,
      identity_data: {
        iss: idp.entityId,
        email,
        email_verified: true,
        name: 'Alice A',
        custom_claims: { groups: ['admins', 'staff'], department: 'none' },
      },
    });
    // The IdP owns the account's sign-in details (GoTrue's user_sso_managed); metadata is the user's.
    const bearer = { authorization: `Bearer ${session.access_token}` };
    for (const change of [
      { email: 'other@example.com' },
      { password: 'another-password-1' },
      { phone: '15550001234' },
    ]) {
      const res = await t.request('PUT', '/user', change, bearer);
      expect(res.status).toBe(422);
      expect(await res.json()).toMatchObject({ error_code: 'user_sso_managed' });
    }
    expect((await t.request('PUT', '/user', { data: { theme: 'dark' } }, bearer)).status).toBe(200);
    // Audit entries name an SSO actor (GoTrue's actor_via_sso).
    const entries = await db.orm.select().from(db.t.auditLogEntries);
    const mine = entries.filter((e) => (e.payload as Json | null)?.actor_id === user.id);
    expect(mine.map((e) => (e.payload as Json).action)).toEqual(expect.arrayContaining(['user_signedup', 'login']));
    expect(mine.every((e) => (e.payload as Json).actor_via_sso === true)).toBe(true);
    // The code is used once.
    const again = await t.request('POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: verifier });
    expect(again.status).toBe(404);
  });

  test('implicit: POST /sso by provider_id answers 303 to the IdP; the ACS sends tokens in the fragment; the next sign-in is the same user', async () => {
    const res = await t.request('POST', '/sso', { provider_id: provider.id });
    expect(res.status).toBe(303);
    const url = res.headers.get('location')!;
    const { xml, params } = decodeAuthnRequest(url);
    const requestId = /ID="([^"]+)"/.exec(xml)![1]!;
    const nameId = `bob-${unique()}`;
    const email = `bob.${unique()}@${domain}`;
    const done = await acs(t, {
      SAMLResponse: idp.response(
        base({
          inResponseTo: requestId,
          nameId,
          attributes: { mail: [email] },
          sessionNotOnOrAfter: new Date(Date.now() + 3600_000),
        }),
      ),
      RelayState: params.get('RelayState')!,
    });
    expect(done.status).toBe(302);
    const to = new URL(done.headers.get('location')!);
    expect(to.origin).toBe(SITE);
    const f = new URLSearchParams(to.hash.slice(1));
    expect(f.get('token_type')).toBe('bearer');
    expect(f.get('refresh_token')).toBeTruthy();
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${f.get('access_token')}` })
    ).json()) as Json;
    expect(me.email).toBe(email);
    const [session] = await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, me.id));
    expect(session!.notAfter).toBeTruthy();
    // Signed as a whole Response this time, then both: the same identity, the same user.
    for (const sign of ['response', 'both'] as const) {
      const s = await start({ provider_id: provider.id });
      const r = await acs(t, {
        SAMLResponse: idp.response(base({ inResponseTo: s.requestId, nameId, attributes: { mail: [email] }, sign })),
        RelayState: s.relayState,
      });
      expect(r.status, r.headers.get('location') ?? '').toBe(302);
      const token = new URLSearchParams(new URL(r.headers.get('location')!).hash.slice(1)).get('access_token');
      const again = (await (
        await t.request('GET', '/user', undefined, { authorization: `Bearer ${token}` })
      ).json()) as Json;
      expect(again.id).toBe(me.id);
    }
  });

  test('IdP-initiated (no RelayState): signed in once; the same response replayed is refused', async () => {
    const response = idp.response(
      base({ nameId: `carol-${unique()}`, attributes: { email: [`carol.${unique()}@${domain}`] } }),
    );
    const first = await acs(t, { SAMLResponse: response, RelayState: '' });
    expect(first.status).toBe(302);
    expect(new URL(first.headers.get('location')!).hash).toContain('access_token=');
    const before = await tally();
    await expectRefused(await acs(t, { SAMLResponse: response }), 'validation_failed', /already been used/);
    expect(await tally()).toEqual(before);
  });

  test('security review 2026-12-01, section 5: under a non-loopback SITE_URL an IdP-initiated RelayState=http://localhost:9999/steal is not followed (the session goes to SITE_URL)', async () => {
    const prod = await buildTestApp(db, {
      ...ON,
      AUTHSVC_SITE_URL: 'https://app.example.org',
      AUTHSVC_URI_ALLOW_LIST: 'https://*.example.com/**',
    });
    const signIn = (relayState: string) =>
      acs(prod, {
        SAMLResponse: idp.response(
          base({ nameId: `dave-${unique()}`, attributes: { email: [`dave.${unique()}@${domain}`] } }),
        ),
        RelayState: relayState,
      });
    const stolen = await signIn('http://localhost:9999/steal');
    expect(stolen.status).toBe(302);
    const to = new URL(stolen.headers.get('location')!);
    expect(to.origin).toBe('https://app.example.org');
    expect(to.hash).toContain('access_token=');
    // An allow-listed RelayState is still followed.
    const listed = new URL((await signIn('https://portal.example.com/welcome')).headers.get('location')!);
    expect(`${listed.origin}${listed.pathname}`).toBe('https://portal.example.com/welcome');
  });

  test('a new SSO account calls before user created in the transaction and after user created once committed (as GoTrue); a returning one calls neither', async () => {
    const calls: { name: string; email: unknown }[] = [];
    const hooks = Object.fromEntries(
      ['BEFORE_USER_CREATED', 'AFTER_USER_CREATED'].flatMap((kind) => [
        [`AUTHSVC_HOOK_${kind}_ENABLED`, 'true'],
        [`AUTHSVC_HOOK_${kind}_URI`, `https://hooks.test/${kind.toLowerCase()}`],
        [`AUTHSVC_HOOK_${kind}_SECRETS`, `v1,whsec_${btoa('a 32-byte key for the hook tests')}`],
      ]),
    );
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input));
      const payload = JSON.parse(String(init?.body)) as Json;
      calls.push({ name: url.pathname.slice(1), email: payload.user?.email });
      return new Response(null, { status: 204 });
    }) as typeof globalThis.fetch;
    const withHooks = await buildTestApp(db, { ...ON, ...hooks }, { fetch });
    const email = `dora.${unique()}@${domain}`;
    const nameId = `dora-${unique()}`;
    const first = await acs(withHooks, {
      SAMLResponse: idp.response(base({ nameId, attributes: { email: [email] } })),
    });
    expect(first.status, first.headers.get('location') ?? '').toBe(302);
    expect(calls).toEqual([
      { name: 'before_user_created', email },
      { name: 'after_user_created', email },
    ]);
    const again = await acs(withHooks, {
      SAMLResponse: idp.response(base({ nameId, attributes: { email: [email] } })),
    });
    expect(again.status).toBe(302);
    expect(calls).toHaveLength(2);
  });

  test('a comment inside the signed NameID does not cut it short (the comment-truncation attack)', async () => {
    const s = await start({ domain });
    const victim = `victim-${unique()}@${domain}`;
    const res = await acs(t, {
      SAMLResponse: idp.response(
        base({
          inResponseTo: s.requestId,
          nameIdXml: `${victim}<!---->.attacker.test`,
          nameIdFormat: EMAIL_FORMAT,
          attributes: { email: [`x.${unique()}@${domain}`] },
        }),
      ),
      RelayState: s.relayState,
    });
    expect(res.status).toBe(302);
    const token = new URLSearchParams(new URL(res.headers.get('location')!).hash.slice(1)).get('access_token');
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${token}` })
    ).json()) as Json;
    expect(me.identities[0].identity_data.sub).toBe(`${victim}.attacker.test`);
  });

  describe("refusals: GoTrue's error in the redirect, nothing written", () => {
    const email = () => `eve.${unique()}@${domain}`;
    async function refusedFlow(
      opts: (requestId: string) => Partial<ResponseOptions> | string,
      code: string,
      description?: RegExp,
    ): Promise<void> {
      const s = await start({ domain });
      const before = await tally();
      const o = opts(s.requestId);
      const SAMLResponse =
        typeof o === 'string'
          ? o
          : idp.response(
              base({ inResponseTo: s.requestId, nameId: `eve-${unique()}`, attributes: { email: [email()] }, ...o }),
            );
      await expectRefused(await acs(t, { SAMLResponse, RelayState: s.relayState }), code, description);
      expect(await tally()).toEqual(before);
    }

    test('a signature by another key', () =>
      refusedFlow(() => ({ signingKey: strangerKey() }), 'validation_failed', /Signature is invalid/));
    test('an unsigned assertion', () =>
      refusedFlow(
        () => ({ sign: 'none' }),
        'validation_failed',
        /Neither the SAML Response nor its Assertion is signed/,
      ));
    test('signature wrapping: the signed assertion moved into Extensions, a forged one in its place', () =>
      refusedFlow(
        (id) => {
          const genuine = idp.responseXml(
            base({ inResponseTo: id, nameId: 'victim', attributes: { email: [email()] } }),
          );
          return Buffer.from(wrapSignedAssertion(genuine, 'attacker')).toString('base64');
        },
        'validation_failed',
        /exactly one Assertion/,
      ));
    test('an expired assertion', () =>
      refusedFlow(
        () => ({ now: new Date(Date.now() - 20 * 60_000), validFor: 60 }),
        'validation_failed',
        /expired|too old/,
      ));
    test('another audience', () =>
      refusedFlow(() => ({ audience: 'https://other-sp.example.com/metadata' }), 'validation_failed', /Audience/));
    test('another recipient', () =>
      refusedFlow(() => ({ recipient: 'https://other-sp.example.com/acs' }), 'validation_failed', /Recipient/));
    test('another destination', () =>
      refusedFlow(() => ({ destination: 'https://other-sp.example.com/acs' }), 'validation_failed', /Destination/));
    test('a wrong InResponseTo', () =>
      refusedFlow(() => ({ inResponseTo: 'id-not-ours' }), 'validation_failed', /InResponseTo/));
    test('a transient NameID and no subject-id', () =>
      refusedFlow(() => ({ nameIdFormat: TRANSIENT }), 'saml_assertion_no_user_id'));
    test('no email', () => refusedFlow(() => ({ attributes: {} }), 'saml_assertion_no_email'));

    test('a replayed assertion id under a new relay state', async () => {
      const assertionId = `_replay${unique()}`;
      const s1 = await start({ domain });
      const ok = await acs(t, {
        SAMLResponse: idp.response(
          base({
            inResponseTo: s1.requestId,
            assertionId,
            nameId: `rep-${unique()}`,
            attributes: { email: [email()] },
          }),
        ),
        RelayState: s1.relayState,
      });
      expect(ok.status).toBe(302);
      await refusedFlow(() => ({ assertionId }), 'validation_failed', /already been used/);
    });

    test('a relay state used, unknown, or expired', async () => {
      const s = await start({ domain });
      const response = idp.response(
        base({ inResponseTo: s.requestId, nameId: `rs-${unique()}`, attributes: { email: [email()] } }),
      );
      expect((await acs(t, { SAMLResponse: response, RelayState: s.relayState })).status).toBe(302);
      const before = await tally();
      const used = await acs(t, { SAMLResponse: response, RelayState: s.relayState });
      await expectRefused(used, 'saml_relay_state_not_found');
      const old = await start({ domain });
      await db.orm
        .update(db.t.samlRelayStates)
        .set({ createdAt: new Date(Date.now() - 3 * 60_000) })
        .where(eq(db.t.samlRelayStates.id, old.relayState));
      const expired = await acs(t, {
        SAMLResponse: idp.response(base({ inResponseTo: old.requestId, attributes: { email: [email()] } })),
        RelayState: old.relayState,
      });
      await expectRefused(expired, 'saml_relay_state_expired', /expired/);
      expect(await tally()).toEqual(before);
    });

    test('bad input: garbage base64, a bad RelayState, XXE, a huge body, an unknown IdP', async () => {
      const before = await tally();
      await expectRefused(
        await acs(t, { SAMLResponse: '%%%not base64%%%' }),
        'validation_failed',
        /not a valid Base64/,
      );
      await expectRefused(
        await acs(t, { SAMLResponse: 'eA==', RelayState: 'not a uuid or url' }),
        'validation_failed',
        /RelayState/,
      );
      const xxe = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"><saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">&x;</saml:Issuer></samlp:Response>`;
      await expectRefused(
        await acs(t, { SAMLResponse: Buffer.from(xxe).toString('base64') }),
        'validation_failed',
        /not a valid XML/,
      );
      const stranger = createTestIdp(`stranger-${unique()}`);
      await expectRefused(
        await acs(t, { SAMLResponse: stranger.response(base({ attributes: { email: [email()] } })) }),
        'saml_idp_not_found',
      );
      const huge = await t.app.request('/sso/saml/acs', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `SAMLResponse=${'A'.repeat(1100 * 1024)}`,
      });
      expect(huge.status).toBe(413);
      expect(((await huge.json()) as Json).error_code).toBeTruthy();
      expect(await tally()).toEqual(before);
    });
  });

  test("a metadata_url provider's stale metadata is fetched again at the ACS (the IdP rotated its key)", async () => {
    const name = `rot-${unique()}`;
    const before = createTestIdp(name);
    served.set(`/${name}.xml`, { status: 200, body: before.metadataXml });
    const rotDomain = `${name}.example.com`;
    const created = await t.request(
      'POST',
      '/admin/sso/providers',
      { type: 'saml', metadata_url: `http://127.0.0.1:${metadataPort}/${name}.xml`, domains: [rotDomain] },
      auth(),
    );
    expect(created.status).toBe(201);
    const id = ((await created.json()) as Json).id;
    const after = createTestIdp(name);
    served.set(`/${name}.xml`, { status: 200, body: after.metadataXml });
    const answer = () =>
      after.response(base({ nameId: `rot-${unique()}`, attributes: { email: [`rot.${unique()}@${rotDomain}`] } }));
    // Fresh metadata is not fetched again: the new key is unknown yet.
    await expectRefused(await acs(t, { SAMLResponse: answer() }), 'validation_failed', /Signature is invalid/);
    // A day old (no validUntil, no cacheDuration): fetched again, and the new key signs in.
    await db.orm
      .update(db.t.samlProviders)
      .set({ updatedAt: new Date(Date.now() - 25 * 3600_000) })
      .where(eq(db.t.samlProviders.ssoProviderId, id));
    expect((await acs(t, { SAMLResponse: answer() })).status).toBe(302);
    const [row] = await db.orm.select().from(db.t.samlProviders).where(eq(db.t.samlProviders.ssoProviderId, id));
    expect(row!.metadataXml).toBe(after.metadataXml);
  });

  test("POST /sso: GoTrue's errors; a disabled provider is refused at /sso and at the ACS", async () => {
    const expectError = async (res: Response, status: number, code: string) => {
      expect(res.status).toBe(status);
      expect(await res.json()).toMatchObject({ error_code: code });
    };
    await expectError(await t.request('POST', '/sso', { provider_id: provider.id, domain }), 400, 'validation_failed');
    await expectError(await t.request('POST', '/sso', {}), 400, 'validation_failed');
    await expectError(await t.request('POST', '/sso', { domain: 'nobody.example.com' }), 404, 'sso_provider_not_found');
    await expectError(
      await t.request('POST', '/sso', { provider_id: crypto.randomUUID() }),
      404,
      'sso_provider_not_found',
    );
    await expectError(
      await t.request('POST', '/sso', { domain, code_challenge: 'x'.repeat(43) }),
      400,
      'validation_failed',
    );
    await expectError(await t.request('POST', '/sso', '{"domain":'), 400, 'bad_json');
    // The provider's name_id_format goes into the AuthnRequest's NameIDPolicy.
    expect(
      (await t.request('PUT', `/admin/sso/providers/${provider.id}`, { name_id_format: EMAIL_FORMAT }, auth())).status,
    ).toBe(200);
    expect(decodeAuthnRequest((await start({ domain })).url).xml).toContain(`NameIDPolicy Format="${EMAIL_FORMAT}"`);
    expect((await t.request('PUT', `/admin/sso/providers/${provider.id}`, {}, auth())).status).toBe(200);
    const other = createTestIdp(`off-${unique()}`);
    const offDomain = `off-${unique()}.example.com`;
    const p = await createProvider(other, { domains: [offDomain] });
    const s = await start({ domain: offDomain });
    expect((await t.request('PUT', `/admin/sso/providers/${p.id}`, { disabled: true }, auth())).status).toBe(200);
    await expectError(await t.request('POST', '/sso', { domain: offDomain }), 404, 'sso_provider_disabled');
    const before = await tally();
    await expectRefused(
      await acs(t, {
        SAMLResponse: other.response(base({ inResponseTo: s.requestId, attributes: { email: [`x@${offDomain}`] } })),
        RelayState: s.relayState,
      }),
      'sso_provider_disabled',
    );
    await expectRefused(
      await acs(t, { SAMLResponse: other.response(base({ attributes: { email: [`y@${offDomain}`] } })) }),
      'sso_provider_disabled',
    );
    expect(await tally()).toEqual(before);
  });

  test('supabase-js signInWithSSO gets the IdP URL; captcha and RATE_LIMIT_SSO guard POST /sso', async () => {
    const { data, error } = await supabaseClientFor(t.app).auth.signInWithSSO({
      domain,
      options: { redirectTo: `${SITE}/after` },
    });
    expect(error).toBeNull();
    expect(data!.url.startsWith(`${idp.ssoUrl}?SAMLRequest=`)).toBe(true);
    const captcha = await buildTestApp(db, {
      ...ON,
      AUTHSVC_SECURITY_CAPTCHA_ENABLED: 'true',
      AUTHSVC_SECURITY_CAPTCHA_SECRET: 's',
    });
    const refused = await captcha.request('POST', '/sso', { domain });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error_code: 'captcha_failed' });
    const limited = await buildTestApp(db, {
      ...ON,
      AUTHSVC_RATE_LIMIT_HEADER: 'X-Forwarded-For',
      AUTHSVC_RATE_LIMIT_SSO: '1',
    });
    const ip = { 'x-forwarded-for': '203.0.113.9' };
    for (let i = 0; i < 30; i++) expect((await limited.request('POST', '/sso', {}, ip)).status).toBe(400);
    const over = await limited.request('POST', '/sso', {}, ip);
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({ error_code: 'over_request_rate_limit' });
  });

  test('a runtime without the SAML XML module (Workers) answers 501 saml_not_supported_on_runtime; the metadata still works', async () => {
    const workers = await buildTestApp(db, ON, { samlXml: undefined });
    const res = await workers.request('POST', '/sso', { domain });
    expect(res.status).toBe(501);
    expect(await res.json()).toMatchObject({ error_code: 'saml_not_supported_on_runtime' });
    const acsRes = await acs(workers, { SAMLResponse: 'eA==' });
    expect(acsRes.status).toBe(501);
    expect((await workers.request('GET', '/sso/saml/metadata')).status).toBe(200);
  });
});

describe('encrypted assertions (SAML_ALLOW_ENCRYPTED_ASSERTIONS)', () => {
  test('the metadata offers the key for encryption; GCM and CBC assertions decrypt (signed inside, or the Response signed); the next key too; off, refused', async () => {
    const next = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const enc = await buildTestApp(db, {
      ...ON,
      AUTHSVC_SAML_ALLOW_ENCRYPTED_ASSERTIONS: 'true',
      AUTHSVC_SAML_PRIVATE_KEY_NEXT: next.export({ type: 'pkcs1', format: 'der' }).toString('base64'),
    });
    const metadata = await (await enc.request('GET', '/sso/saml/metadata')).text();
    expect(metadata.match(/use="encryption"/g)).toHaveLength(2);
    const encCert = new X509Certificate(Buffer.from(/<X509Certificate>([^<]+)</.exec(metadata)![1]!, 'base64'));
    expect(keyUsage(encCert)).toEqual({
      usages: KeyUsageFlags.digitalSignature | KeyUsageFlags.dataEncipherment,
      critical: true,
    });
    expect(metadata).toContain('rsa-oaep-mgf1p');
    expect(await t.request('GET', '/sso/saml/metadata').then((r) => r.text())).not.toContain('use="encryption"');
    const idp = createTestIdp(`enc-${unique()}`);
    const encDomain = `enc-${unique()}.example.com`;
    const created = await enc.request(
      'POST',
      '/admin/sso/providers',
      { type: 'saml', metadata_xml: idp.metadataXml, domains: [encDomain] },
      auth(),
    );
    expect(created.status).toBe(201);
    const spPublic = createPublicKey(SP_KEY);
    const answer = (o: Partial<ResponseOptions>) =>
      idp.response(
        base({
          nameId: `enc-${unique()}`,
          attributes: { email: [`enc.${unique()}@${encDomain}`] },
          encryptTo: spPublic,
          ...o,
        }),
      );
    for (const o of [
      {},
      { dataCipher: 'aes128-cbc' as const },
      { sign: 'response' as const },
      { encryptTo: createPublicKey(next) },
    ]) {
      const res = await acs(enc, { SAMLResponse: answer(o) });
      expect(res.status, res.headers.get('location') ?? '').toBe(302);
      expect(res.headers.get('location')).toContain('#access_token=');
    }
    const before = await tally();
    // To a key the SP does not hold; unsigned inside and out; and to an SP that does not accept them
    // (the same database, SAML_ALLOW_ENCRYPTED_ASSERTIONS off).
    await expectRefused(
      await acs(enc, {
        SAMLResponse: answer({
          encryptTo: createPublicKey(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey),
        }),
      }),
      'validation_failed',
      /could not be decrypted/,
    );
    await expectRefused(
      await acs(enc, { SAMLResponse: answer({ sign: 'none' }) }),
      'validation_failed',
      /Neither the SAML Response nor its Assertion is signed/,
    );
    const shared = createTestIdp(`enc-off-${unique()}`);
    await createProvider(shared);
    await expectRefused(
      await acs(t, {
        SAMLResponse: shared.response(base({ attributes: { email: ['x@example.com'] }, encryptTo: spPublic })),
      }),
      'validation_failed',
      /Encrypted assertions are not accepted/,
    );
    expect(await tally()).toEqual(before);
  });
});

describe('L4 (security review 2026-12-01): an SSO identity provider vouches only for its own domains', () => {
  const signIn = async (idp: TestIdp, nameId: string, email: string) =>
    acs(t, { SAMLResponse: idp.response(base({ nameId, attributes: { email: [email] } })) });
  const tokenOf = (res: Response) =>
    new URLSearchParams(new URL(res.headers.get('location')!).hash.slice(1)).get('access_token');
  const put = (id: string, body: Json) => t.request('PUT', `/admin/sso/providers/${id}`, body, auth());

  test("L4 (security review 2026-12-01): IdP B, registered for its own domain, asserting an address of IdP A's domain is refused (nothing written); its own domain signs in; allow_any_email_domain lets it through", async () => {
    const acme = `acme-${unique()}.example`;
    const bravo = `bravo-${unique()}.example`;
    await createProvider(createTestIdp(`a-${unique()}`), { domains: [acme] });
    const idpB = createTestIdp(`b-${unique()}`);
    const b = await createProvider(idpB, { domains: [bravo] });
    expect(b.allow_any_email_domain).toBe(false);

    const before = await tally();
    await expectRefused(
      await signIn(idpB, `ceo-${unique()}`, `ceo@${acme}`),
      'saml_email_domain_not_allowed',
      new RegExp(`domain ${acme} is not one of this SSO provider's domains`),
    );
    // Another address of no provider's, and a subdomain of B's own: a domain is matched exactly.
    await expectRefused(
      await signIn(idpB, `x-${unique()}`, `someone.${unique()}@gmail.example`),
      'saml_email_domain_not_allowed',
    );
    await expectRefused(await signIn(idpB, `y-${unique()}`, `y@eu.${bravo}`), 'saml_email_domain_not_allowed');
    expect(await tally()).toEqual(before);

    const own = await signIn(idpB, `bob-${unique()}`, `Bob@${bravo.toUpperCase()}`);
    expect(own.status, own.headers.get('location') ?? '').toBe(302);
    expect(tokenOf(own)).toBeTruthy();

    // The operator's switch for an IdP that legitimately asserts other domains (PUT, shown in the JSON).
    const on = await put(b.id, { allow_any_email_domain: true });
    expect(((await on.json()) as Json).allow_any_email_domain).toBe(true);
    const guest = await signIn(idpB, `guest-${unique()}`, `guest.${unique()}@partner.example`);
    expect(guest.status).toBe(302);
    const me = (await (
      await t.request('GET', '/user', undefined, { authorization: `Bearer ${tokenOf(guest)}` })
    ).json()) as Json;
    expect(me.email_confirmed_at).toBeTruthy();
    // Left out of a PUT, it stays; POST sets it too.
    expect(((await (await put(b.id, {})).json()) as Json).allow_any_email_domain).toBe(true);
    expect(
      (await createProvider(createTestIdp(`c-${unique()}`), { allow_any_email_domain: true })).allow_any_email_domain,
    ).toBe(true);
  });

  test("L4 (security review 2026-12-01): an SSO user whose address is outside the provider's domains is refused at the next sign-in, whatever the IdP now asserts; a provider without domains vouches for no address", async () => {
    const bravo = `bravo-${unique()}.example`;
    const idp = createTestIdp(`b2-${unique()}`);
    const p = await createProvider(idp, { domains: [bravo], allow_any_email_domain: true });
    const nameId = `ceo-${unique()}`;
    const outside = `ceo.${unique()}@acme-${unique()}.example`;
    expect((await signIn(idp, nameId, outside)).status).toBe(302);
    expect((await put(p.id, { allow_any_email_domain: false })).status).toBe(200);
    await expectRefused(await signIn(idp, nameId, outside), 'saml_email_domain_not_allowed');
    // The same identity now asserting an address of the provider's domain: the account still carries the other one.
    await expectRefused(await signIn(idp, nameId, `ceo@${bravo}`), 'saml_email_domain_not_allowed');

    const bare = createTestIdp(`bare-${unique()}`);
    await createProvider(bare);
    await expectRefused(
      await signIn(bare, `z-${unique()}`, `z@${bravo}`),
      'saml_email_domain_not_allowed',
      /has no domains/,
    );
  });

  test('L4 (security review 2026-12-01): on upgrade (migration 0015), a provider without domains or whose users carry another domain keeps signing in (switch on); one whose users are all in its domains is held to them', async () => {
    const old = await openTestDb({ migrate: false, namespace: uniqueNamespace() });
    try {
      await migrate(
        old,
        loadMigrations().filter((m) => m.version < '0015'),
      );
      const ns = `"${old.namespace}"`;
      // The rows as the admin API (GoTrue's, or authsvc's before 0015) wrote them.
      const make = async (idp: TestIdp, domains: string[]) => {
        const id = crypto.randomUUID();
        await exec(
          old,
          `insert into ${ns}.sso_providers (id, created_at, updated_at) values (${lit(id)}, now(), now());
          insert into ${ns}.saml_providers (id, sso_provider_id, entity_id, metadata_xml, attribute_mapping, created_at, updated_at)
            values (gen_random_uuid(), ${lit(id)}, ${lit(idp.entityId)}, ${lit(idp.metadataXml)}, '{}', now(), now());
          ${domains.map((d) => `insert into ${ns}.sso_domains (id, sso_provider_id, domain, created_at, updated_at) values (gen_random_uuid(), ${lit(id)}, ${lit(d)}, now(), now());`).join('\n')}`,
        );
        return id;
      };
      const strict = createTestIdp(`up-s-${unique()}`);
      const mixed = createTestIdp(`up-m-${unique()}`);
      const bare = createTestIdp(`up-b-${unique()}`);
      const strictDomain = `s-${unique()}.example`;
      const mixedDomain = `m-${unique()}.example`;
      const ids = {
        strict: await make(strict, [strictDomain]),
        mixed: await make(mixed, [mixedDomain]),
        bare: await make(bare, []),
      };
      // SSO users the code before 0015 made: the mixed provider's IdP also asserted another domain.
      const ssoUser = async (provider: string, email: string) => {
        const id = crypto.randomUUID();
        await old.orm.insert(old.t.users).values({
          id,
          aud: 'authenticated',
          role: 'authenticated',
          email,
          emailConfirmedAt: new Date(),
          isSsoUser: true,
          rawAppMetaData: {},
          rawUserMetaData: {},
        });
        await old.orm.insert(old.t.identities).values({
          providerId: `sub-${id}`,
          userId: id,
          provider: `sso:${provider}`,
          identityData: { sub: `sub-${id}`, email },
        });
      };
      await ssoUser(ids.strict, `a@${strictDomain}`);
      await ssoUser(ids.mixed, `a@${mixedDomain}`);
      await ssoUser(ids.mixed, `guest@partner-${unique()}.example`);
      await migrate(old, loadMigrations());
      const after = await buildTestApp(old, ON);
      const flags = Object.fromEntries(
        await Promise.all(
          Object.entries(ids).map(async ([k, id]) => [
            k,
            ((await (await after.request('GET', `/admin/sso/providers/${id}`, undefined, auth())).json()) as Json)
              .allow_any_email_domain,
          ]),
        ),
      );
      expect(flags).toEqual({ strict: false, mixed: true, bare: true });
      const at = (idp: TestIdp, email: string) =>
        acs(after, { SAMLResponse: idp.response(base({ nameId: `n-${unique()}`, attributes: { email: [email] } })) });
      expect((await at(mixed, `new@elsewhere-${unique()}.example`)).status).toBe(302);
      expect((await at(bare, `new@elsewhere-${unique()}.example`)).status).toBe(302);
      expect((await at(strict, `new@${strictDomain}`)).status).toBe(302);
      await expectRefused(await at(strict, `new@elsewhere-${unique()}.example`), 'saml_email_domain_not_allowed');
    } finally {
      await old.close();
    }
  });
});
