// Every route of src/app.ts's table, with the fields its body reads, the query parameters it
// reads, who may call it, and a generator of a valid request (so deep paths are reached).
import fc from 'fast-check';
import { FUZZ_PASSWORD } from './setup.ts';
import {
  email,
  emailTypes,
  hostileString,
  otpType,
  password,
  phone,
  queryEncode,
  record,
  redirect,
  ref,
  uuidish,
} from './values.ts';

export type Auth = 'none' | 'user' | 'admin';

export interface RouteDef {
  method: string;
  /** The route's pattern as in the route table (the stats' name); `:x` is filled in. */
  path: string;
  auth: Auth;
  fields?: Record<string, fc.Arbitrary<unknown>>;
  query?: Record<string, fc.Arbitrary<string>>;
  params?: Record<string, fc.Arbitrary<string>>;
  /** The body is a form (application/x-www-form-urlencoded) of `fields`, not JSON. */
  form?: boolean;
  /** A request the route accepts (body, query), given a pool. */
  valid?: fc.Arbitrary<{ body?: unknown; query?: string }>;
}

const str = hostileString;
const bool = fc.boolean();
const pkce = {
  code_challenge: fc.oneof(fc.constant('a'.repeat(43)), str),
  code_challenge_method: fc.constantFrom('s256', 'plain', 'S256', 'x', ''),
};
const captcha = {
  captcha_token: str,
  gotrue_meta_security: fc.oneof(fc.record({ captcha_token: str }), fc.constant('x') as fc.Arbitrary<unknown>),
};
const uniqueEmail = fc.nat(10_000_000).map((n) => `fz${n}@example.com`);
const uniquePhone = fc.integer({ min: 1_000_000, max: 9_999_999 }).map((n) => `1556${n}`);
const grantType = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      'grant_type=password',
      'grant_type=refresh_token',
      'grant_type=pkce',
      'grant_type=id_token',
      'grant_type=web3',
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      'grant_type=',
      'grant_type=PASSWORD',
      'grant_type=password&grant_type=refresh_token',
      'grant_type[]=password',
      'grant_type=refresh_token&grant_type=password',
      'grant_type=x',
      'grant_type',
      'grant_type=password%20',
      'GRANT_TYPE=password',
      'grant_type=%ED%A0%80',
      'grant_type=%FF',
      'grant_type=pass%00word',
      'grant_type=%',
      `grant_type=${'p'.repeat(5000)}`,
    ),
  },
  { weight: 1, arbitrary: str.map((s) => `grant_type=${queryEncode(s)}`) },
);
/** A path parameter: an id-like value, or any hostile string percent-encoded into the path. */
const pathParam = fc.oneof(uuidish, hostileString.map(queryEncode));
const page = fc.oneof(
  fc.constantFrom('1', '0', '-1', '2', '1e3', 'abc', '', '99999999999999999999', '1.5', ' 1', '0x10', '1000'),
  fc.nat().map(String),
);

export const ROUTES: RouteDef[] = [
  { method: 'GET', path: '/health', auth: 'none' },
  { method: 'GET', path: '/settings', auth: 'none' },
  { method: 'GET', path: '/.well-known/openid-configuration', auth: 'none' },
  { method: 'GET', path: '/.well-known/jwks.json', auth: 'none' },
  {
    method: 'POST',
    path: '/signup',
    auth: 'none',
    fields: {
      email,
      phone,
      password,
      data: record,
      channel: fc.constantFrom('sms', 'whatsapp', 'x'),
      ...pkce,
      ...captcha,
    },
    query: { redirect_to: redirect },
    valid: fc
      .oneof(
        fc.record({
          email: uniqueEmail,
          password: fc.constant(FUZZ_PASSWORD),
          data: fc.option(record, { nil: undefined }),
        }),
        fc.record({ phone: uniquePhone, password: fc.constant(FUZZ_PASSWORD) }),
        fc.record({ data: fc.option(record, { nil: undefined }) }, { requiredKeys: [] }),
        fc.record({ email: ref('email'), password: fc.constant(FUZZ_PASSWORD) }),
      )
      .map((body) => ({ body })),
  },
  {
    method: 'POST',
    path: '/token',
    auth: 'none',
    fields: {
      email,
      phone,
      password,
      refresh_token: fc.oneof(ref('refresh'), str),
      auth_code: fc.oneof(ref('authcode'), str),
      code_verifier: fc.oneof(fc.constant('v'.repeat(43)), str),
      id_token: fc.oneof(ref('odd'), str),
      access_token: str,
      nonce: str,
      provider: fc.constantFrom('google', 'apple', 'azure', 'facebook', 'keycloak', 'x', ''),
      client_id: str,
      issuer: str,
      link_identity: bool,
      ...captcha,
    },
    query: { grant_type: grantType.map((g) => g.replace(/^grant_type=?/, '')) },
    valid: fc.oneof(
      fc
        .record({ email: fc.oneof(ref('login'), ref('email')), password: fc.constant(FUZZ_PASSWORD) })
        .map((body) => ({ body, query: 'grant_type=password' })),
      fc
        .record({ phone: ref('phone'), password: fc.constant(FUZZ_PASSWORD) })
        .map((body) => ({ body, query: 'grant_type=password' })),
      fc.record({ refresh_token: ref('refresh') }).map((body) => ({ body, query: 'grant_type=refresh_token' })),
      fc
        .record({ auth_code: ref('authcode'), code_verifier: fc.constant('v'.repeat(43)) })
        .map((body) => ({ body, query: 'grant_type=pkce' })),
    ),
  },
  { method: 'GET', path: '/user', auth: 'user' },
  {
    method: 'PUT',
    path: '/user',
    auth: 'user',
    fields: {
      email,
      phone,
      password,
      nonce: str,
      channel: str,
      current_password: password,
      data: record,
      app_metadata: record,
      ...pkce,
    },
    valid: fc
      .oneof(
        fc.record({ data: record }),
        fc.record({ email: uniqueEmail }),
        fc.record({ password: fc.constant(FUZZ_PASSWORD) }),
        fc.record({ phone: uniquePhone }),
        fc.nat(1000).map((n) => ({ password: FUZZ_PASSWORD, nonce: `~~codeToken.${n}~~` })),
      )
      .map((body) => ({ body })),
  },
  { method: 'GET', path: '/reauthenticate', auth: 'user' },
  {
    method: 'POST',
    path: '/logout',
    auth: 'user',
    query: { scope: fc.constantFrom('global', 'local', 'others', 'GLOBAL', '', 'x') },
    valid: fc.constant({ query: 'scope=local' }),
  },
  {
    method: 'POST',
    path: '/verify',
    auth: 'none',
    fields: {
      type: otpType,
      token: fc.oneof(fc.stringMatching(/^[0-9]{6}$/), str),
      token_hash: fc.oneof(ref('otthash'), str),
      email,
      phone,
      redirect_to: redirect,
    },
    query: { redirect_to: redirect },
    valid: fc
      .oneof(
        fc.record({ type: fc.constantFrom(...emailTypes), token_hash: ref('otthash') }),
        fc
          .nat(1000)
          .map((n) => ({ type: `~~codeType.${n}~~`, email: `~~codeAddr.${n}~~`, token: `~~codeToken.${n}~~` })),
        fc
          .nat(1000)
          .map((n) => ({ type: `~~codeType.${n}~~`, phone: `~~codeAddr.${n}~~`, token: `~~codeToken.${n}~~` })),
      )
      .map((body) => ({ body })),
  },
  {
    method: 'GET',
    path: '/verify',
    auth: 'none',
    query: {
      type: otpType.map(String),
      token: fc.oneof(ref('otthash'), str, fc.constant('pkce_x')),
      redirect_to: redirect,
    },
    valid: fc
      .record({ type: fc.constantFrom(...emailTypes), token: ref('otthash') })
      .map((q) => ({ query: new URLSearchParams(q).toString() })),
  },
  {
    method: 'POST',
    path: '/recover',
    auth: 'none',
    fields: { email, ...pkce, ...captcha },
    query: { redirect_to: redirect },
    valid: fc.record({ email: ref('email') }).map((body) => ({ body })),
  },
  {
    method: 'POST',
    path: '/magiclink',
    auth: 'none',
    fields: { email, data: record, ...pkce, ...captcha },
    valid: fc.record({ email: fc.oneof(ref('email'), uniqueEmail) }).map((body) => ({ body })),
  },
  {
    method: 'POST',
    path: '/otp',
    auth: 'none',
    fields: {
      email,
      phone,
      channel: fc.constantFrom('sms', 'whatsapp', 'SMS', 'x'),
      create_user: bool,
      data: record,
      ...pkce,
      ...captcha,
    },
    valid: fc
      .oneof(
        fc.record({ email: fc.oneof(ref('email'), uniqueEmail), create_user: bool }),
        fc.record({ phone: fc.oneof(ref('phone'), uniquePhone), create_user: bool }),
      )
      .map((body) => ({ body })),
  },
  {
    method: 'POST',
    path: '/resend',
    auth: 'none',
    fields: { type: otpType, email, phone, ...pkce, ...captcha },
    valid: fc
      .oneof(
        fc.record({ type: fc.constantFrom('signup', 'email_change'), email: ref('email') }),
        fc.record({ type: fc.constantFrom('sms', 'phone_change'), phone: ref('phone') }),
      )
      .map((body) => ({ body })),
  },
  {
    method: 'POST',
    path: '/invite',
    auth: 'admin',
    fields: { email, data: record },
    valid: fc.record({ email: uniqueEmail, data: record }).map((body) => ({ body })),
  },
  {
    method: 'GET',
    path: '/admin/users',
    auth: 'admin',
    query: { page, per_page: page, filter: str, sort: fc.constantFrom('created_at asc', 'created_at desc', 'x') },
  },
  {
    method: 'POST',
    path: '/admin/users',
    auth: 'admin',
    fields: {
      id: uuidish,
      aud: str,
      role: str,
      email,
      phone,
      password,
      password_hash: fc.oneof(
        str,
        fc.constantFrom(
          '$2a$10$abcdefghijklmnopqrstuuOlLJ7u4pa6mR7zYOI3DNrBH6J1ah9e6',
          '$argon2id$v=19$m=4096,t=3,p=1$x$y',
          '$fbscrypt$x',
          '$2b$04$',
        ),
      ),
      email_confirm: bool,
      phone_confirm: bool,
      user_metadata: record,
      app_metadata: record,
      ban_duration: fc.constantFrom('none', '1h', '24h', '-1h', 'x', '999999999h', '1ns'),
    },
    valid: fc
      .oneof(
        fc.record({
          email: uniqueEmail,
          password: fc.constant(FUZZ_PASSWORD),
          email_confirm: fc.constant(true),
          user_metadata: record,
          app_metadata: record,
        }),
        fc.record({ phone: uniquePhone, phone_confirm: bool }),
      )
      .map((body) => ({ body })),
  },
  { method: 'GET', path: '/admin/users/:user_id', auth: 'admin', params: { user_id: uuidish } },
  ...['PUT', 'POST'].map(
    (method): RouteDef => ({
      method,
      path: '/admin/users/:user_id',
      auth: 'admin',
      params: { user_id: uuidish },
      fields: {
        email,
        phone,
        password,
        email_confirm: bool,
        phone_confirm: bool,
        user_metadata: record,
        app_metadata: record,
        role: str,
        aud: str,
        ban_duration: fc.constantFrom('none', '1h', '-1h', 'x', '87600h', '0'),
      },
      valid:
        method === 'PUT'
          ? fc
              .oneof(
                fc.record({ user_metadata: record }),
                fc.record({ app_metadata: record }),
                fc.record({ ban_duration: fc.constantFrom('none', '1h') }),
                fc.record({ email: uniqueEmail }),
              )
              .map((body) => ({ body }))
          : fc.record({ email: uniqueEmail, password: fc.constant(FUZZ_PASSWORD) }).map((body) => ({ body })),
    }),
  ),
  {
    method: 'DELETE',
    path: '/admin/users/:user_id',
    auth: 'admin',
    params: { user_id: uuidish },
    fields: { should_soft_delete: bool },
    valid: fc.record({ should_soft_delete: bool }).map((body) => ({ body })),
  },
  {
    method: 'POST',
    path: '/admin/generate_link',
    auth: 'admin',
    fields: {
      type: fc.constantFrom(
        'signup',
        'invite',
        'magiclink',
        'recovery',
        'email_change_current',
        'email_change_new',
        'x',
      ),
      email,
      new_email: email,
      password,
      data: record,
      redirect_to: redirect,
    },
    valid: fc
      .oneof(
        fc.record({ type: fc.constantFrom('magiclink', 'recovery'), email: ref('email') }),
        fc.record({ type: fc.constant('signup'), email: uniqueEmail, password: fc.constant(FUZZ_PASSWORD) }),
        fc.record({
          type: fc.constantFrom('email_change_current', 'email_change_new'),
          email: ref('email'),
          new_email: uniqueEmail,
        }),
      )
      .map((body) => ({ body })),
  },
  {
    method: 'GET',
    path: '/admin/audit',
    auth: 'admin',
    query: {
      page,
      per_page: page,
      query: fc.oneof(fc.constantFrom('author:a', 'action:login', 'type:account', 'x', 'author:', ':'), str),
    },
  },
  {
    method: 'GET',
    path: '/authorize',
    auth: 'none',
    query: {
      provider: fc.constantFrom('google', 'github', 'apple', 'x', '', 'GOOGLE'),
      redirect_to: redirect,
      scopes: str,
      code_challenge: str,
      code_challenge_method: fc.constantFrom('s256', 'plain', 'x'),
      skip_http_redirect: fc.constantFrom('true', 'false'),
    },
    valid: fc
      .constantFrom(
        '',
        '&code_challenge=' + 'a'.repeat(43) + '&code_challenge_method=s256',
        '&redirect_to=http://localhost:3000/cb',
        '&scopes=repo',
      )
      .map((extra) => ({ query: `provider=github${extra}` })),
  },
  ...['GET', 'POST'].map(
    (method): RouteDef => ({
      method,
      path: '/callback',
      auth: 'none',
      query: {
        state: fc.oneof(ref('state'), ref('odd'), str),
        code: fc.oneof(fc.constant('gh-code'), str),
        error: str,
        error_description: str,
      },
      valid: ref('state').map((state) => ({ query: `state=${state}&code=gh-code` })),
    }),
  ),
  {
    method: 'GET',
    path: '/user/identities/authorize',
    auth: 'user',
    query: {
      provider: fc.constantFrom('google', 'github', 'x'),
      skip_http_redirect: fc.constantFrom('true', 'false'),
      redirect_to: redirect,
    },
    valid: fc.constant({ query: 'provider=github' }),
  },
  {
    method: 'DELETE',
    path: '/user/identities/:identity_id',
    auth: 'user',
    params: { identity_id: fc.oneof(ref('identity'), uuidish) },
  },
  { method: 'GET', path: '/sso', auth: 'none' },
  { method: 'POST', path: '/sso', auth: 'none', fields: { domain: str, provider_id: str } },
  { method: 'GET', path: '/passkeys/x', auth: 'none' },
  { method: 'GET', path: '/admin/oauth/clients', auth: 'admin' },
  { method: 'GET', path: '/user/oauth/grants', auth: 'user' },
  { method: 'GET', path: '/oauth/authorize', auth: 'none' },
  {
    method: 'POST',
    path: '/oauth/token',
    auth: 'none',
    form: true,
    fields: {
      grant_type: fc.constantFrom('authorization_code', 'refresh_token', 'password', 'x', ''),
      code: str,
      refresh_token: fc.oneof(ref('refresh'), str),
      code_verifier: fc.oneof(fc.constant('v'.repeat(43)), str),
      redirect_uri: redirect,
      resource: str,
      client_id: fc.oneof(fc.uuid(), str),
      client_secret: str,
    },
  },
  {
    method: 'POST',
    path: '/oauth/clients/register',
    auth: 'none',
    fields: {
      redirect_uris: fc.array(fc.oneof(redirect, str), { maxLength: 3 }),
      client_name: str,
      client_uri: fc.oneof(redirect, str),
      logo_uri: str,
      token_endpoint_auth_method: fc.constantFrom('none', 'client_secret_basic', 'client_secret_post', 'x'),
      grant_types: fc.array(str, { maxLength: 2 }),
    },
  },
  { method: 'GET', path: '/oauth/userinfo', auth: 'user' },
  ...['/oauth/revoke', '/oauth/introspect'].map(
    (path): RouteDef => ({
      method: 'POST',
      path,
      auth: 'none',
      form: true,
      fields: {
        token: fc.oneof(ref('refresh'), ref('user'), str),
        token_type_hint: fc.constantFrom('access_token', 'refresh_token', 'x'),
        client_id: fc.oneof(fc.uuid(), str),
        client_secret: str,
      },
    }),
  ),
  {
    method: 'GET',
    path: '/oauth/authorizations/:authorization_id',
    auth: 'user',
    params: { authorization_id: pathParam },
  },
  {
    method: 'POST',
    path: '/oauth/authorizations/:authorization_id/consent',
    auth: 'user',
    params: { authorization_id: pathParam },
    fields: { action: fc.constantFrom('approve', 'deny', 'x') },
  },
  ...['GET', 'PUT', 'DELETE'].map(
    (method): RouteDef => ({
      method,
      path: '/admin/custom-providers/:identifier',
      auth: 'admin',
      params: { identifier: pathParam.map((p) => `custom:${p}`) },
    }),
  ),
  { method: 'GET', path: '/.well-known/oauth-authorization-server', auth: 'none' },
  {
    method: 'POST',
    path: '/factors',
    auth: 'user',
    fields: { factor_type: fc.constantFrom('totp', 'phone', 'webauthn', 'x'), friendly_name: str, issuer: str, phone },
  },
  { method: 'DELETE', path: '/factors/:factor_id', auth: 'user', params: { factor_id: uuidish } },
  {
    method: 'POST',
    path: '/factors/:factor_id/challenge',
    auth: 'user',
    params: { factor_id: uuidish },
    fields: { channel: str },
  },
  {
    method: 'POST',
    path: '/factors/:factor_id/verify',
    auth: 'user',
    params: { factor_id: uuidish },
    fields: { challenge_id: str, code: str },
  },
  { method: 'GET', path: '/admin/users/:user_id/factors', auth: 'admin', params: { user_id: uuidish } },
  ...['PUT', 'DELETE'].map(
    (method): RouteDef => ({
      method,
      path: '/admin/users/:user_id/factors/:factor_id',
      auth: 'admin',
      params: { user_id: uuidish, factor_id: uuidish },
    }),
  ),
  { method: 'GET', path: '/no-such-route', auth: 'none' },
];
