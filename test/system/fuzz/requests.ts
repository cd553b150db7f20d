// One generated request: a route of the table under either prefix, its path parameters, query,
// headers (Authorization, Content-Type, API version) and body, valid or hostile.
import fc from 'fast-check';
import { ROUTES, type RouteDef } from './routes.ts';
import type { Pool } from './setup.ts';
import { big, field, hostileString, MIB, queryEncode, ref, wrongType } from './values.ts';

export interface FuzzRequest {
  /** `METHOD /pattern` as in the route table. */
  route: string;
  prefix: '' | '/auth/v1';
  method: string;
  /** Path and query, with `~~kind.N~~` references still in. */
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** Whether the request is meant to be accepted (deep-path requests). */
  valid: boolean;
}

const MALFORMED_AUTH = [
  'Bearer',
  'Bearer ',
  'bearer  x',
  'Basic dXNlcjpwYXNz',
  'Bearer a b',
  'Token abc',
  'Bearer é',
  'Bearer \u00ff\u00fe',
  'Bearer null',
  'Bearer undefined',
  'Bearer .',
  'BEARER abc.def.ghi',
  'Bearer\tabc',
  `Bearer ${'A'.repeat(100_000)}`,
  `Bearer ${'eyJhbGciOiJIUzI1NiJ9.'.repeat(2000)}`,
  'Bearer ~~user.0~~x',
  'Bearer ~~user.1~~ ~~user.2~~',
  'Bearer ~~refresh.0~~',
];

function authHeader(auth: RouteDef['auth']): fc.Arbitrary<string | undefined> {
  const good =
    auth === 'user'
      ? ref('user').map((r) => `Bearer ${r}`)
      : auth === 'admin'
        ? ref('admin').map((r) => `Bearer ${r}`)
        : fc.constant(undefined);
  return fc.oneof(
    { weight: 5, arbitrary: good },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: ref('odd').map((r) => `Bearer ${r}`) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('user', 'admin')
        .chain((k) => ref(k))
        .map((r) => `Bearer ${r}`),
    },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_AUTH) },
  );
}

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      undefined,
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-16',
      'application/json;charset=latin1',
      'APPLICATION/JSON',
      '',
      'x/y',
      'application/xml',
      'application/json, text/plain',
    ),
  },
);

const apiVersion = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constantFrom('2024-01-01', '2023-12-31', '2025-06-30', 'garbage', '2024-1-1', '') },
);

const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'x-jwt-aud',
    'apikey',
    'x-forwarded-for',
    'x-client-info',
    'origin',
    'x-use-cookie',
    'cookie',
    'x-request-id',
  ),
  fc.constantFrom(
    'authenticated',
    'x',
    '',
    '1.2.3.4, ::1',
    'garbage',
    'http://evil.example.com',
    '\u00e9',
    'a'.repeat(8000),
    '~~admin.0~~',
  ),
  { maxKeys: 2 },
);

const JUNK_QUERY = [
  'a=1',
  'a=1&a=2',
  '%',
  '%zz',
  '%ED%A0%80',
  '%FF%FE',
  'x[]=1&x[]=2',
  '&&&',
  '=',
  '==',
  'a',
  'redirect_to=%00',
  'redirect_to=a&redirect_to=b',
  'type=signup&type=recovery',
  'token=1&token=2',
  'page=1&page=2',
  `q=${'x'.repeat(10_000)}`,
  'scope=global&scope=others',
  'provider[]=google',
];

function queryFor(route: RouteDef): fc.Arbitrary<string> {
  const params = Object.entries(route.query ?? {});
  const own =
    params.length === 0
      ? fc.constant([] as string[])
      : fc.subarray(params).chain((chosen) =>
          fc.tuple(...chosen.map(([k, arb]) => fc.tuple(fc.constant(k), arb, fc.boolean()))).map((kvs) =>
            kvs.flatMap(([k, v, twice]) => {
              const one = `${k}=${k === 'grant_type' ? v : queryEncode(v)}`;
              return twice ? [one, `${k}=${encodeURIComponent('x')}`] : [one];
            }),
          ),
        );
  const junk = fc.oneof(
    { weight: 4, arbitrary: fc.constant([] as string[]) },
    { weight: 1, arbitrary: fc.subarray(JUNK_QUERY, { maxLength: 2 }) },
  );
  return fc.tuple(own, junk).map(([a, b]) => [...a, ...b].join('&'));
}

function fieldsObject(route: RouteDef): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.entries(route.fields ?? {});
  const chosen =
    fields.length === 0
      ? fc.constant({})
      : fc
          .subarray(fields)
          .chain((sub) =>
            fc
              .tuple(...sub.map(([k, arb]) => fc.tuple(fc.constant(k), field(arb))))
              .map((kv) => Object.fromEntries(kv)),
          );
  const extra = fc.dictionary(
    fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.constantFrom('EMAIL', 'Password', 'DATA', '__proto__', 'constructor', 'user_metadata', 'role', 'id', 'aud'),
    ),
    fc.oneof(wrongType, hostileString),
    { maxKeys: 2 },
  );
  return fc.tuple(chosen, fc.option(extra, { nil: undefined, freq: 3 })).map(([a, b]) => (b ? { ...b, ...a } : a));
}

const RAW_BODIES = [
  '',
  ' ',
  'null',
  '[]',
  '[{}]',
  '"str"',
  '123',
  'true',
  '{',
  '{"a":',
  '{"email":}',
  '{"email":"a@example.com",}',
  "{'a':1}",
  '{"a":1}{"b":2}',
  '\ufeff{}',
  '{"email":"a@example.com"} trailing',
  'email=a%40example.com&password=x',
  '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\na\r\n--x--',
  '{"a":"\\u0000"}',
  '{"a":"\\ud800"}',
  '{"\\u0000":1}',
  '{"a":NaN}',
  '{"a":1e999}',
  '{"a":-0}',
  '{"a":0x10}',
  '{"a":"\u0000"}',
  '{"__proto__":{"x":1},"email":"a@example.com"}',
  '{"data":{"__proto__":{"x":1}}}',
  '{"email":"a@example.com","email":null}',
  '{"email":"a@example.com","EMAIL":"b@example.com","Email":1}',
  '{"password":"x","password":["y"]}',
];

const NON_UTF8 = [
  [0xff, 0xfe, 0x7b, 0x7d],
  [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d],
  [0xed, 0xa0, 0x80],
  [0x7b, 0x22, 0x65, 0x6d, 0x61, 0x69, 0x6c, 0x22, 0x3a, 0x22, 0xf0, 0x28, 0x8c, 0xbc, 0x22, 0x7d],
  [0x80],
  [0xc0, 0xaf],
  [0x00, 0x7b, 0x7d],
].map((b) => new Uint8Array(b));

function deep(kind: 'array' | 'object', depth: number): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** A body whose text is `size` bytes: `{"data":{"s":"aaa…"}}` plus the route's other fields. */
function sized(size: number, key: string): string {
  const head = `{"email":"big@example.com","password":"fuzz-Password-1","${key}":{"s":"`;
  const tail = '"}}';
  return head + big.overBody().slice(0, size - head.length - tail.length) + tail;
}

/** Fields as a form body; values that are not strings are written as JSON text. */
const formEncode = (o: Record<string, unknown>): string =>
  Object.entries(o)
    .map(([k, v]) => `${queryEncode(k)}=${queryEncode(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`)
    .join('&');

function bodyFor(route: RouteDef): fc.Arbitrary<string | Uint8Array> {
  const obj = fieldsObject(route);
  if (route.form) {
    return fc.oneof(
      { weight: 10, arbitrary: obj.map((o) => formEncode(o as Record<string, unknown>)) },
      { weight: 2, arbitrary: fc.constantFrom(...RAW_BODIES) },
      { weight: 1, arbitrary: fc.constantFrom(...NON_UTF8) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          'code=a%00b',
          'a%00=1',
          'code=%ED%A0%80',
          '%',
          '&&=&',
          `code=${'x'.repeat(MIB + 1)}`,
        ),
      },
    );
  }
  const recordKey =
    Object.keys(route.fields ?? {}).find((k) => ['data', 'user_metadata', 'app_metadata'].includes(k)) ?? 'data';
  return fc.oneof(
    { weight: 10, arbitrary: obj.map((o) => JSON.stringify(o)) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(obj, fc.constantFrom(...Object.keys(route.fields ?? { x: 1 })), fc.oneof(wrongType, hostileString))
        .map(([o, k, v]) => {
          const text = JSON.stringify(o);
          return `{${JSON.stringify(k)}:${JSON.stringify(v)}${text === '{}' ? '' : ','}${text.slice(1)}`;
        }),
    },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_BODIES) },
    { weight: 1, arbitrary: fc.constantFrom(...NON_UTF8) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom<'array' | 'object'>('array', 'object'),
          fc.constantFrom(997, 998, 999, 1000, 5000, 100_000),
        )
        .map(
          ([kind, d]) =>
            `{"email":"deep@example.com","password":"fuzz-Password-1","${recordKey}":{"n":${deep(kind, d)}}}`,
        ),
    },
    { weight: 1, arbitrary: fc.constantFrom(MIB - 1, MIB, MIB + 1, 100_000).map((n) => sized(n, recordKey)) },
  );
}

const declaredLength = fc.option(
  fc.constantFrom('correct', String(MIB + 1), '-1', 'abc', '0', '99999999999999999999'),
  { nil: undefined, freq: 8 },
);

function requestFor(route: RouteDef): fc.Arbitrary<FuzzRequest> {
  const hasBody = route.method !== 'GET';
  const params = Object.entries(route.params ?? {});
  const path =
    params.length === 0
      ? fc.constant(route.path)
      : fc
          .tuple(...params.map(([, a]) => a))
          .map((values) => params.reduce((p, [k], i) => p.replace(`:${k}`, values[i]!), route.path));
  const fuzzed = fc
    .record({
      prefix: fc.constantFrom<'' | '/auth/v1'>('', '/auth/v1'),
      path,
      slash: fc.nat(10).map((n) => (n === 0 ? '/' : '')),
      query: queryFor(route),
      auth: authHeader(route.auth),
      ct: contentType,
      version: apiVersion,
      extra: extraHeaders,
      body: hasBody ? fc.option(bodyFor(route), { nil: undefined, freq: 8 }) : fc.constant(undefined),
      declared: hasBody ? declaredLength : fc.constant(undefined),
    })
    .map((r): FuzzRequest => {
      const headers: Record<string, string> = { ...r.extra };
      if (r.auth !== undefined) headers.authorization = r.auth;
      const ct = route.form && r.ct === 'application/json' ? 'application/x-www-form-urlencoded' : r.ct;
      if (ct !== undefined && r.body !== undefined) headers['content-type'] = ct;
      if (r.version !== undefined) headers['x-supabase-api-version'] = r.version;
      if (r.declared !== undefined) headers['content-length'] = r.declared;
      const url = `${r.prefix}${r.path}${r.slash}${r.query ? `?${r.query}` : ''}`;
      return {
        route: `${route.method} ${route.path}`,
        prefix: r.prefix,
        method: route.method,
        url,
        headers,
        body: r.body,
        valid: false,
      };
    });
  if (!route.valid) return fuzzed;
  const valid = fc
    .tuple(fc.constantFrom<'' | '/auth/v1'>('', '/auth/v1'), path, route.valid, fc.nat(1000))
    .map(([prefix, p, v, n]): FuzzRequest => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (route.auth !== 'none') headers.authorization = `Bearer ~~${route.auth}.${n}~~`;
      const url = `${prefix}${p}${v.query ? `?${v.query}` : ''}`;
      const body = v.body === undefined ? (route.method === 'GET' ? undefined : '{}') : JSON.stringify(v.body);
      return { route: `${route.method} ${route.path}`, prefix, method: route.method, url, headers, body, valid: true };
    });
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 4, arbitrary: fuzzed });
}

const ODD_PATHS = [
  '//signup',
  '/auth/v1//token',
  '/AUTH/V1/health',
  '/Signup',
  '/signup%00',
  '/%2e%2e/signup',
  '/auth/v1/../health',
  '/signup/extra',
  '/admin/users/%2F',
  '/admin/users//',
  '/user/identities/',
  '/factors/',
  `/${'a'.repeat(10_000)}`,
  '/%FF',
  '/%',
  '/verify;x=1',
  '/auth/v2/signup',
  '/auth/v1',
  '/',
  '/settings.json',
  '/admin',
  '/callback/x',
  '/.well-known/',
  '/token%2Fx',
];
const STRAY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** Wrong methods on the table's paths, preflights, HEAD, odd paths, many parameters and headers. */
const strayRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method: fc.constantFrom(...STRAY_METHODS),
    path: fc.oneof(
      fc.constantFrom(...ROUTES.map((r) => r.path.replace(/:(\w+)/g, '~~uid.0~~'))),
      fc.constantFrom(...ODD_PATHS),
    ),
    prefix: fc.constantFrom<'' | '/auth/v1'>('', '/auth/v1'),
    preflight: fc.boolean(),
    manyParams: fc.constantFrom(0, 0, 0, 1000, 20_000),
    manyHeaders: fc.constantFrom(0, 0, 0, 200),
    auth: fc.oneof(
      fc.constant(undefined),
      ref('user').map((r) => `Bearer ${r}`),
      ref('admin').map((r) => `Bearer ${r}`),
    ),
  })
  .map((r): FuzzRequest => {
    const headers: Record<string, string> = {};
    if (r.auth) headers.authorization = r.auth;
    if (r.preflight)
      Object.assign(headers, {
        origin: 'http://localhost:3000',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-evil, authorization',
      });
    for (let i = 0; i < r.manyHeaders; i++) headers[`x-fuzz-${i}`] = String(i);
    const query = r.manyParams ? `?${Array.from({ length: r.manyParams }, (_, i) => `p${i % 50}=${i}`).join('&')}` : '';
    const body = r.method === 'GET' || r.method === 'HEAD' ? undefined : '{}';
    if (body) headers['content-type'] = 'application/json';
    return {
      route: `${r.method} (stray)`,
      prefix: r.prefix,
      method: r.method,
      url: `${r.prefix}${r.path}${query}`,
      headers,
      body,
      valid: false,
    };
  });

/** A request to any route of the table, or a stray one. */
export const anyRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  { weight: ROUTES.length, arbitrary: fc.oneof(...ROUTES.map(requestFor)) },
  { weight: 3, arbitrary: strayRequest },
);

const ROUTE_COUNT = ROUTES.length;
export const routeCount = () => ROUTE_COUNT;

/** Replaces each `~~kind.N~~` with a real value from the pool, escaped for where it stands. */
export function materialize(req: FuzzRequest, pool: Pool): Request {
  const pick = (kind: string, n: string) => {
    const list = (pool as unknown as Record<string, string[]>)[kind] ?? [];
    return list.length === 0 ? 'empty-pool' : list[Number(n) % list.length]!;
  };
  const fill = (s: string, esc: (v: string) => string) =>
    s.replace(/~~(\w+)\.(\d+)~~/g, (_m, k: string, n: string) => esc(pick(k, n)));
  const [path, query] = req.url.split(/\?(.*)/s, 2) as [string, string | undefined];
  const url = `http://localhost${fill(path, queryEncode)}${query !== undefined ? `?${fill(query, queryEncode)}` : ''}`;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k] = fill(v, (x) => x);
  let body: Uint8Array | undefined;
  if (typeof req.body === 'string')
    body = new TextEncoder().encode(fill(req.body, (x) => JSON.stringify(x).slice(1, -1)));
  else body = req.body;
  if (headers['content-length'] === 'correct') headers['content-length'] = String(body?.byteLength ?? 0);
  return new Request(url, { method: req.method, headers, body: body as BodyInit | undefined });
}
