// The test app the SSO tests share (test/routes/sso.test.ts, admin-sso.test.ts): SAML on with a
// fresh SP key, a local metadata server (`served`: path → answer) trusted as a custom host, a
// service-role token, and the admin call that registers an IdP from its metadata XML.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { SignJWT } from 'jose';
import { expect } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, TEST_JWT_SECRET, type TestApp } from './app.ts';
import { openTestDb } from './db.ts';
import { freePort } from './free-port.ts';
import type { TestIdp } from './saml-idp.ts';

type Json = Record<string, any>;

/** The SP's private key (its certificate is in the SP metadata; assertions are encrypted to it). */
export const SP_KEY = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 }).privateKey;
/** The SP key as SAML_PRIVATE_KEY takes it: PKCS#1 DER in base64. */
export const SP_KEY_B64 = SP_KEY.export({ type: 'pkcs1', format: 'der' }).toString('base64');
export const SAML_ON = {
  AUTHSVC_SAML_ENABLED: 'true',
  AUTHSVC_SAML_PRIVATE_KEY: SP_KEY_B64,
  AUTHSVC_URI_ALLOW_LIST: 'http://localhost:3000/**',
};

export interface SsoApp {
  db: Database;
  t: TestApp;
  /** A service-role token. */
  admin: string;
  metadataServer: Server;
  metadataPort: number;
  /** What the metadata server answers, by path. */
  served: Map<string, { status: number; body: string }>;
}

export async function startSsoApp(): Promise<SsoApp> {
  const db = await openTestDb();
  const served = new Map<string, { status: number; body: string }>();
  const metadataPort = await freePort();
  const metadataServer = createServer((req, res) => {
    const s = served.get(req.url ?? '') ?? { status: 404, body: 'not found' };
    res.writeHead(s.status, { 'content-type': 'application/xml' }).end(s.body);
  });
  await new Promise<void>((resolve) => metadataServer.listen(metadataPort, '127.0.0.1', resolve));
  const t = await buildTestApp(db, { ...SAML_ON, AUTHSVC_CUSTOM_OAUTH_TRUSTED_HOSTS: `127.0.0.1:${metadataPort}` });
  const admin = await new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
  return { db, t, admin, metadataServer, metadataPort, served };
}

/** POST /admin/sso/providers from `idp`'s metadata XML: 201 and the provider's JSON. */
export async function createSamlProvider(app: SsoApp, idp: TestIdp, extra: Json = {}): Promise<Json> {
  const res = await app.t.request(
    'POST',
    '/admin/sso/providers',
    { type: 'saml', metadata_xml: idp.metadataXml, ...extra },
    { authorization: `Bearer ${app.admin}` },
  );
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Json;
}
