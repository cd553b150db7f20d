// The OpenAPI 3.1 document: the operations the routes declare (http/route.ts), their bodies converted from the very zod
// schemas the handlers parse with (zod 4's own z.toJSONSchema, JSON Schema 2020-12 as OpenAPI 3.1
// reads it), GoTrue's error shapes and the two bearer schemes. Built once per app, on the first
// GET /openapi.json (routes/openapi.ts): never on another request's path.
import * as z from 'zod';
import { components } from './components.ts';
import type { Operation, Param, Reply } from '../http/route.ts';

type Json = Record<string, unknown>;

/**
 * A body schema as a client must send it: the input side (optStr & co. end in a transform that
 * JSON Schema cannot say), no `$schema` (the document's dialect applies). Unknown keys are
 * ignored by readJson, so objects stay open, as zod's input side leaves them.
 */
function bodySchema(schema: z.ZodType): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  return rest;
}

function requestBody(op: Operation): Json | undefined {
  if (op.form) {
    return { required: false, content: { 'application/x-www-form-urlencoded': { schema: op.form } } };
  }
  if (!op.body) return undefined;
  let schema: Json;
  if (op.body instanceof z.ZodObject) schema = bodySchema(op.body);
  else {
    // Several bodies, one per value of a query parameter (POST /token's grant_type): they overlap, so anyOf.
    schema = {
      anyOf: Object.entries(op.body).map(([key, s]) => ({ title: key, ...bodySchema(s) })),
      description: 'The body of the grant named by `grant_type` (its title here).',
    };
  }
  // readJson refuses an empty body (400 bad_json); readOptionalJson reads it as {}.
  return { required: !op.bodyOptional, content: { 'application/json': { schema } } };
}

const pathParams = (path: string): string[] => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);

function parameters(op: Operation): Json[] {
  const out: Json[] = pathParams(op.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: name === 'user_id' || name === 'factor_id' ? { type: 'string', format: 'uuid' } : { type: 'string' },
  }));
  for (const q of op.query ?? []) out.push(queryParam(q));
  out.push({ $ref: '#/components/parameters/ApiVersion' });
  return out;
}

function queryParam(q: Param): Json {
  return {
    name: q.name,
    in: 'query',
    required: q.required ?? false,
    ...(q.description ? { description: q.description } : {}),
    schema: { type: 'string', ...q.schema },
  };
}

function response(r: Reply): Json {
  if (r.error) return { $ref: '#/components/responses/ClientError', description: r.description };
  const out: Json = { description: r.description };
  if (r.headers) {
    out.headers = Object.fromEntries(
      Object.entries(r.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
    );
  }
  if (r.schema) {
    const schema = typeof r.schema === 'string' ? { $ref: `#/components/schemas/${r.schema}` } : r.schema;
    out.content = { 'application/json': { schema } };
  }
  return out;
}

const SECURITY: Record<NonNullable<Operation['auth']>, Json[]> = {
  user: [{ UserBearer: [] }],
  admin: [{ AdminBearer: [] }],
  // POST /token: a bearer only to link an id_token identity to the signed-in user.
  'user-optional': [{}, { UserBearer: [] }],
};

function operationId(op: Operation): string {
  const words = op.path
    .replace(/[{}]/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return op.method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

function operation(op: Operation): Json {
  const replies: Json = {};
  for (const [status, r] of Object.entries(op.replies)) replies[status] = response(r);
  // Every operation can fail with GoTrue's error body; an explicit 4xx above says more.
  replies['4XX'] ??= { $ref: '#/components/responses/ClientError' };
  replies['5XX'] = { $ref: '#/components/responses/ServerError' };
  const body = requestBody(op);
  return {
    operationId: operationId(op),
    summary: op.summary,
    ...(op.gotrue ? { description: `GoTrue: \`api.${op.gotrue}\`.` } : {}),
    tags: [op.tag],
    ...(op.auth ? { security: SECURITY[op.auth] } : {}),
    parameters: parameters(op),
    ...(body ? { requestBody: body } : {}),
    responses: replies,
  };
}

const TAGS = [
  { name: 'auth', description: 'Sign-up, sign-in, sessions, verification.' },
  { name: 'passwordless', description: 'Email and SMS codes and links.' },
  { name: 'user', description: "The signed-in user (bearer: the user's access token)." },
  { name: 'oauth', description: 'Sign-in with external OAuth / OIDC providers.' },
  { name: 'admin', description: 'The admin API (bearer: a service_role JWT).' },
  { name: 'mfa', description: 'MFA factors: TOTP, phone and WebAuthn; recovery codes.' },
  { name: 'passkeys', description: 'Passkeys: sign-in with a discoverable WebAuthn credential, and its management.' },
  { name: 'oauth-server', description: 'authsvc as an OAuth 2.1 / OpenID Connect provider (OAUTH_SERVER_ENABLED).' },
  { name: 'sso', description: 'SAML 2.0 single sign-on (SAML_ENABLED) and its admin API.' },
  { name: 'health', description: 'Health, settings, discovery.' },
  {
    name: 'console',
    description: "The admin console's static files (CONSOLE_ENABLED): a browser client of the admin API.",
  },
];

/**
 * The document. `server` is the mount it is served under ('/' or '/auth/v1'), so a client that
 * fetched it from either finds the operations at the same prefix (relative: no host).
 */
export function openApiDocument(version: string, server: string, operations: readonly Operation[]): Json {
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    const item = paths[op.path] ?? {};
    paths[op.path] = item;
    if (item[op.method]) throw new Error(`openapi: ${op.method.toUpperCase()} ${op.path} listed twice`);
    item[op.method] = operation(op);
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'authsvc',
      version,
      description: 'Authentication and user-management API, wire-compatible with Supabase Auth (GoTrue).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: server }],
    tags: TAGS,
    paths,
    components: components(),
  };
}
