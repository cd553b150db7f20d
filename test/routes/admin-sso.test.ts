// The SAML SSO admin API (routes/admin-sso.ts): GET/POST /admin/sso/providers and
// GET/PUT/DELETE /admin/sso/providers/{idp_id} — GoTrue's JSON and errors, the validation of
// metadata, and metadata URLs fetched through the SSRF guard. Sign-in through a provider is
// test/routes/sso.test.ts.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, TEST_JWT_SECRET, type TestApp } from '../helpers/app.ts';
import { createSamlProvider, SAML_ON, type SsoApp, startSsoApp } from '../helpers/sso-app.ts';
import { createTestIdp, EMAIL_FORMAT, type TestIdp } from '../helpers/saml-idp.ts';

type Json = Record<string, any>;

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

describe('admin API', () => {
  test("create from XML, get (by id and resource_), list, update, delete — GoTrue's JSON and errors", async () => {
    const idp = createTestIdp(`crud-${unique()}`);
    const domain = `crud-${unique()}.example.com`;
    const p = await createProvider(idp, {
      domains: [domain],
      resource_id: `res-${domain}`,
      attribute_mapping: { keys: { name: { name: 'displayName' } } },
    });
    expect(p).toMatchObject({
      resource_id: `res-${domain}`,
      disabled: null,
      allow_any_email_domain: false,
      domains: [{ domain }],
      saml: {
        entity_id: idp.entityId,
        metadata_xml: idp.metadataXml,
        attribute_mapping: { keys: { name: { name: 'displayName' } } },
      },
    });
    expect(
      (
        (await (
          await t.request('GET', `/admin/sso/providers/resource_res-${domain}`, undefined, auth())
        ).json()) as Json
      ).id,
    ).toBe(p.id);
    const list = (await (
      await t.request('GET', `/admin/sso/providers?resource_id=res-${domain}`, undefined, auth())
    ).json()) as Json;
    expect(list.items).toHaveLength(1);
    const byPrefix = (await (
      await t.request('GET', `/admin/sso/providers?resource_id_prefix=res-crud-`, undefined, auth())
    ).json()) as Json;
    expect(byPrefix.items.map((i: Json) => i.id)).toContain(p.id);
    expect(list.items[0].saml.metadata_xml).toBeUndefined();
    const dup = await t.request(
      'POST',
      '/admin/sso/providers',
      { type: 'saml', metadata_xml: idp.metadataXml },
      auth(),
    );
    expect(dup.status).toBe(422);
    expect(await dup.json()).toMatchObject({ error_code: 'saml_idp_already_exists' });
    const other = createTestIdp(`crud2-${unique()}`);
    const taken = await t.request(
      'POST',
      '/admin/sso/providers',
      { type: 'saml', metadata_xml: other.metadataXml, domains: [domain] },
      auth(),
    );
    expect(taken.status).toBe(400);
    expect(await taken.json()).toMatchObject({ error_code: 'sso_domain_already_exists' });
    const put = await t.request(
      'PUT',
      `/admin/sso/providers/${p.id}`,
      { domains: [`new-${domain}`], name_id_format: EMAIL_FORMAT },
      auth(),
    );
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({
      domains: [{ domain: `new-${domain}` }],
      saml: { name_id_format: EMAIL_FORMAT },
    });
    // name_id_format left out clears it, as in GoTrue.
    expect(
      ((await (await t.request('PUT', `/admin/sso/providers/${p.id}`, {}, auth())).json()) as Json).saml.name_id_format,
    ).toBeUndefined();
    const mismatch = await t.request(
      'PUT',
      `/admin/sso/providers/${p.id}`,
      { metadata_xml: other.metadataXml },
      auth(),
    );
    expect(mismatch.status).toBe(400);
    expect(await mismatch.json()).toMatchObject({ error_code: 'saml_entity_id_mismatch' });
    const del = await t.request('DELETE', `/admin/sso/providers/${p.id}`, undefined, auth());
    expect(del.status).toBe(200);
    expect(((await del.json()) as Json).id).toBe(p.id);
    const gone = await t.request('GET', `/admin/sso/providers/${p.id}`, undefined, auth());
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({
      error_code: 'sso_provider_not_found',
      msg: 'SSO Identity Provider not found',
    });
  });

  test('validation: type, metadata source, name_id_format, bad XML, XXE, not admin', async () => {
    const post = (body: Json) => t.request('POST', '/admin/sso/providers', body, auth());
    const idp = createTestIdp(`val-${unique()}`);
    const cases: [Json, string][] = [
      [{ type: 'oidc', metadata_xml: idp.metadataXml }, "Only 'saml' supported for SSO provider type"],
      [
        { type: 'saml', metadata_xml: idp.metadataXml, metadata_url: 'https://x.example/m' },
        'Only one of metadata_xml or metadata_url needs to be set',
      ],
      [{ type: 'saml' }, 'Either metadata_xml or metadata_url must be set'],
      [{ type: 'saml', metadata_url: 'http://idp.example.com/m' }, 'metadata_url is not a HTTPS URL'],
      [
        { type: 'saml', metadata_xml: idp.metadataXml, name_id_format: 'bogus' },
        'name_id_format must be unspecified or one of',
      ],
      [
        {
          type: 'saml',
          metadata_xml:
            '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"></EntityDescriptor>',
        },
        'SAML Metadata does not contain any IDPSSODescriptor',
      ],
      [{ type: 'saml', metadata_xml: '<not xml' }, 'SAML Metadata is not valid'],
      [
        {
          type: 'saml',
          metadata_xml: `<?xml version="1.0"?><!DOCTYPE m [<!ENTITY x SYSTEM "file:///etc/passwd">]>${idp.metadataXml.replace(/^<\?xml[^>]*>/, '')}`,
        },
        'DOCTYPE',
      ],
    ];
    for (const [body, msg] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      const json = (await res.json()) as Json;
      expect(json.error_code).toBe('validation_failed');
      expect(json.msg).toContain(msg);
    }
    const user = await t.request('GET', '/admin/sso/providers', undefined, {
      authorization: `Bearer ${await new SignJWT({ role: 'authenticated' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(TEST_JWT_SECRET))}`,
    });
    expect(user.status).toBe(403);
  });

  test('metadata_url: fetched through the SSRF guard (trusted host allowed over http; private https refused; non-200 → saml_metadata_fetch_failed)', async () => {
    const idp = createTestIdp(`url-${unique()}`);
    served.set('/idp.xml', { status: 200, body: idp.metadataXml });
    const url = `http://127.0.0.1:${metadataPort}/idp.xml`;
    const p = await (async () => {
      const res = await t.request('POST', '/admin/sso/providers', { type: 'saml', metadata_url: url }, auth());
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as Json;
    })();
    expect(p.saml).toMatchObject({ entity_id: idp.entityId, metadata_url: url });
    const missing = await t.request(
      'POST',
      '/admin/sso/providers',
      { type: 'saml', metadata_url: `http://127.0.0.1:${metadataPort}/none.xml` },
      auth(),
    );
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error_code: 'saml_metadata_fetch_failed' });
    // Without the allowance: plain http is refused, and an https URL to a private address too.
    const strict = await buildTestApp(db, ON);
    const http = await strict.request('POST', '/admin/sso/providers', { type: 'saml', metadata_url: url }, auth());
    expect(await http.json()).toMatchObject({
      error_code: 'validation_failed',
      msg: 'metadata_url is not a HTTPS URL',
    });
    const priv = await strict.request(
      'POST',
      '/admin/sso/providers',
      { type: 'saml', metadata_url: 'https://10.0.0.7/idp.xml' },
      auth(),
    );
    expect(priv.status).toBe(400);
    expect(((await priv.json()) as Json).msg).toContain('private network');
  });
});
