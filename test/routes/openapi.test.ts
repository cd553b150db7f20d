// GET /openapi.json: the document lists exactly the routes the Hono app serves (both ways), marks
// exactly the guarded ones with a bearer scheme, validates as OpenAPI 3.1, and the server's real
// answers have the documented shapes.
import { Validator } from '@seriousme/openapi-schema-validator';
import { inspectRoutes } from 'hono/dev';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signJwt } from '../../src/crypto/jwt.ts';
import type { Database } from '../../src/db/database.ts';
import { SignupBody } from '../../src/routes/signup.ts';
import { buildTestApp, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

let db: Database;
let t: TestApp;
let doc: Json;
beforeAll(async () => {
  db = await openTestDb();
  // Passkeys and the OAuth server on: their routes are gated (404 passkey_disabled, feature_disabled) otherwise.
  t = await buildTestApp(db, {
    AUTHSVC_MAILER_AUTOCONFIRM: 'true',
    AUTHSVC_PASSKEY_ENABLED: 'true',
    AUTHSVC_OAUTH_SERVER_ENABLED: 'true',
    AUTHSVC_WEBAUTHN_RP_ID: 'localhost',
    AUTHSVC_WEBAUTHN_RP_DISPLAY_NAME: 'authsvc',
    AUTHSVC_WEBAUTHN_RP_ORIGINS: 'http://localhost:3000',
  });
  const res = await t.request('GET', '/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = (await res.json()) as Json;
});
afterAll(async () => {
  await db?.close();
});

interface Served {
  method: string;
  path: string;
  guards: string[];
}

/** The app's routes (handlers, not middleware), each with the route-level middleware in front of it. */
function servedRoutes(): Served[] {
  const byKey = new Map<string, Served>();
  const entries = inspectRoutes(t.app).filter((r) => r.path !== '/*');
  for (const r of entries) {
    const key = `${r.method} ${r.path}`;
    const s = byKey.get(key) ?? { method: r.method, path: r.path, guards: [] };
    if (r.isMiddleware) s.guards.push(r.name);
    byKey.set(key, s);
  }
  const handled = new Set(entries.filter((r) => !r.isMiddleware).map((r) => `${r.method} ${r.path}`));
  return [...byKey.entries()].filter(([k]) => handled.has(k)).map(([, s]) => s);
}

/** Hono's path syntax in OpenAPI's: `:id` → `{id}`; `:step{challenge|verify}` → one path per literal. */
function normalise(path: string): string[] {
  const alt = /:(\w+)\{([\w|]+)\}/.exec(path);
  if (alt) return alt[2]!.split('|').flatMap((lit) => normalise(path.replace(alt[0], lit)));
  return [path.replace(/:(\w+)/g, '{$1}')];
}

/** Does a served (Hono) path match a documented one? `*` stands for any rest of the path. */
function matches(served: string, documented: string): boolean {
  const pattern = served
    .split('/*')[0]!
    .split(/(\{[^}]+\})/)
    .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  const re = new RegExp(`^${pattern}${served.endsWith('/*') ? '/.+' : ''}$`);
  return re.test(documented.replace(/\{[^}]+\}/g, 'x'));
}

function documented(): { method: string; path: string; op: Json }[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ method: m.toUpperCase(), path, op: item[m] as Json })),
  );
}

function servedFlat(): Served[] {
  return servedRoutes()
    .filter((r) => !r.path.startsWith('/auth/v1/'))
    .flatMap((r) => normalise(r.path).map((path) => ({ ...r, path })));
}

describe('GET /openapi.json lists what the app serves', () => {
  test('the /auth/v1 mount serves the same routes as the root', () => {
    const served = servedRoutes();
    const root = served
      .filter((r) => !r.path.startsWith('/auth/v1/'))
      .map((r) => `${r.method} ${r.path}`)
      .sort();
    const prefixed = served
      .filter((r) => r.path.startsWith('/auth/v1/'))
      .map((r) => `${r.method} ${r.path.slice('/auth/v1'.length)}`)
      .sort();
    expect(prefixed).toEqual(root);
    expect(root.length).toBeGreaterThan(40);
  });

  test('every served route is documented', () => {
    const docs = documented();
    const missing = servedFlat().filter(
      (s) =>
        !docs.some(
          (d) =>
            (s.method === 'ALL' || s.method === d.method) &&
            (s.path.includes('*') ? matches(s.path, d.path) : s.path === d.path),
        ),
    );
    expect(missing.map((s) => `${s.method} ${s.path}`)).toEqual([]);
  });

  test('every documented operation is served', () => {
    const served = servedFlat();
    const extra = documented().filter(
      (d) => !served.some((s) => (s.method === 'ALL' || s.method === d.method) && matches(s.path, d.path)),
    );
    expect(extra.map((d) => `${d.method} ${d.path}`)).toEqual([]);
  });

  test('exactly the routes behind requireAdmin / requireAuth* carry the bearer schemes', () => {
    const docs = documented();
    for (const s of servedFlat()) {
      const want = s.guards.includes('requireAdmin')
        ? 'AdminBearer'
        : s.guards.some((g) => g.startsWith('requireAuth'))
          ? 'UserBearer'
          : undefined;
      for (const d of docs.filter((d) => (s.method === 'ALL' || s.method === d.method) && matches(s.path, d.path))) {
        const schemes = ((d.op.security ?? []) as Json[])
          .filter((req) => Object.keys(req).length > 0)
          .flatMap((req) => Object.keys(req));
        const optional = ((d.op.security ?? []) as Json[]).some((req) => Object.keys(req).length === 0);
        expect({ op: `${d.method} ${d.path}`, schemes: optional ? [] : schemes }).toEqual({
          op: `${d.method} ${d.path}`,
          schemes: want ? [want] : [],
        });
      }
    }
  });
});

describe('the document', () => {
  test('validates as OpenAPI 3.1', async () => {
    const validator = new Validator();
    const res = await validator.validate(structuredClone(doc));
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('info.version is the package version the adapter passes; servers are relative to the mount', async () => {
    expect(doc.info.version).toBe(t.deps.version);
    expect(doc.servers).toEqual([{ url: '/' }]);
    const prefixed = (await (await t.request('GET', '/auth/v1/openapi.json')).json()) as Json;
    expect(prefixed.servers).toEqual([{ url: '/auth/v1' }]);
    expect(prefixed.paths).toEqual(doc.paths);
  });

  test('request bodies are the zod schemas the handlers parse with', () => {
    const body = doc.paths['/signup'].post.requestBody;
    expect(body.required).toBe(true);
    const schema = body.content['application/json'].schema;
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(SignupBody.shape).sort());
    expect(schema.properties.email).toEqual({ type: ['string', 'null'] });
    // POST /token: one body per grant type.
    const token = doc.paths['/token'].post.requestBody.content['application/json'].schema;
    expect(token.anyOf.map((s: Json) => s.title)).toEqual(['password', 'refresh_token', 'pkce', 'id_token', 'web3']);
    expect(token.anyOf[1].properties).toEqual({ refresh_token: { type: ['string', 'null'] } });
    // DELETE /admin/users/{id} reads an optional body.
    expect(doc.paths['/admin/users/{user_id}'].delete.requestBody.required).toBe(false);
    expect(doc.paths['/admin/users/{user_id}'].delete.parameters[0]).toEqual({
      name: 'user_id',
      in: 'path',
      required: true,
      schema: { type: 'string', format: 'uuid' },
    });
    expect(doc.paths['/token'].post.parameters[0]).toMatchObject({ name: 'grant_type', in: 'query', required: true });
  });
});

/** Checks `value` against the few keywords the documented response schemas use (required, type, const, $ref, allOf). */
function conforms(value: unknown, schema: Json, where = '$'): string[] {
  if (schema.$ref) return conforms(value, doc.components.schemas[String(schema.$ref).split('/').pop()!], where);
  if (schema.allOf) return (schema.allOf as Json[]).flatMap((s) => conforms(value, s, where));
  if (schema.oneOf) {
    const fits = (schema.oneOf as Json[]).filter((s) => conforms(value, s, where).length === 0);
    return fits.length === 1 ? [] : [`${where}: fits ${fits.length} of oneOf`];
  }
  if ('const' in schema && value !== schema.const) return [`${where}: not ${JSON.stringify(schema.const)}`];
  const types = [schema.type ?? []].flat() as string[];
  const typeOf =
    value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
  if (types.length && !types.includes(typeOf) && !(typeOf === 'integer' && types.includes('number')))
    return [`${where}: ${typeOf}, not ${types.join('|')}`];
  const out: string[] = [];
  if (typeOf === 'object') {
    const v = value as Json;
    for (const key of (schema.required ?? []) as string[]) if (!(key in v)) out.push(`${where}.${key}: missing`);
    for (const [key, s] of Object.entries((schema.properties ?? {}) as Json))
      if (key in v) out.push(...conforms(v[key], s, `${where}.${key}`));
  }
  if (typeOf === 'array' && schema.items)
    (value as unknown[]).forEach((item, i) => {
      out.push(...conforms(item, schema.items, `${where}[${i}]`));
    });
  return out;
}

function replySchema(path: string, method: string, status: string): Json {
  let r = doc.paths[path][method].responses[status] as Json;
  if (r.$ref) r = doc.components.responses[String(r.$ref).split('/').pop()!];
  return r.content['application/json'].schema;
}

describe('real answers have the documented shapes', () => {
  test('sessions, the user, its own sessions, the settings, an admin list; both error bodies', async () => {
    const u = await signUpConfirmed(t);
    expect(conforms(u.session, replySchema('/signup', 'post', '200'))).toEqual([]);
    const bearer = { authorization: `Bearer ${u.session.access_token}` };
    const refreshed = await t.request('POST', '/token?grant_type=refresh_token', {
      refresh_token: u.session.refresh_token,
    });
    expect(conforms(await refreshed.json(), replySchema('/token', 'post', '200'))).toEqual([]);
    const user = await (await t.request('GET', '/user', undefined, bearer)).json();
    expect(conforms(user, replySchema('/user', 'get', '200'))).toEqual([]);
    const own = await (await t.request('GET', '/sessions', undefined, bearer)).json();
    expect(own.sessions).toHaveLength(1);
    expect(conforms(own, replySchema('/sessions', 'get', '200'))).toEqual([]);
    expect(
      conforms(await (await t.request('GET', '/settings')).json(), replySchema('/settings', 'get', '200')),
    ).toEqual([]);
    const admin = {
      authorization: `Bearer ${await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 })}`,
    };
    expect(
      conforms(
        await (await t.request('GET', '/admin/users', undefined, admin)).json(),
        replySchema('/admin/users', 'get', '200'),
      ),
    ).toEqual([]);

    const legacy = await t.request('GET', '/user');
    expect(legacy.status).toBe(401);
    const legacyBody = await legacy.json();
    expect(conforms(legacyBody, replySchema('/user', 'get', '4XX'))).toEqual([]);
    expect(conforms(legacyBody, doc.components.schemas.ErrorLegacy)).toEqual([]);
    const v2024 = await (await t.request('GET', '/user', undefined, { 'X-Supabase-Api-Version': '2024-01-01' })).json();
    expect(conforms(v2024, replySchema('/user', 'get', '4XX'))).toEqual([]);
    expect(conforms(v2024, doc.components.schemas.Error2024)).toEqual([]);
  });
});

describe('every documented operation reaches its handler', () => {
  test("guarded ones answer 401 without a token; none answers the router's 404", async () => {
    const id = crypto.randomUUID();
    const admin = {
      authorization: `Bearer ${await signJwt(t.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 })}`,
    };
    for (const d of documented()) {
      const path = d.path.replace(/\{[^}]+\}/g, id);
      const secured = ((d.op.security ?? []) as Json[]).every((req) => Object.keys(req).length > 0) && d.op.security;
      const anonymous = await t.request(d.method, path);
      const body = await anonymous.text();
      expect({ op: `${d.method} ${d.path}`, status: anonymous.status === 401 }).toEqual({
        op: `${d.method} ${d.path}`,
        status: Boolean(secured),
      });
      expect({ op: `${d.method} ${d.path}`, body }).not.toMatchObject({
        body: expect.stringContaining('"error_code":"not_found"'),
      });
      if (!secured) continue;
      // A fresh session per request: POST /logout ends the one it is given.
      const token = d.op.security[0].AdminBearer
        ? admin
        : { authorization: `Bearer ${(await signUpConfirmed(t)).session.access_token}` };
      const authed = await t.request(d.method, path, undefined, token);
      expect({ op: `${d.method} ${d.path}`, status: authed.status }).not.toEqual({
        op: `${d.method} ${d.path}`,
        status: 401,
      });
      expect({ op: `${d.method} ${d.path}`, body: await authed.text() }).not.toMatchObject({
        body: expect.stringContaining('"error_code":"not_found"'),
      });
    }
  }, 60_000);
});
