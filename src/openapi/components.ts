// The OpenAPI document's shared parts: response shapes (coarse: the fields GoTrue's clients read),
// GoTrue's two error bodies, the security schemes. Plain JSON Schema (2020-12, OpenAPI 3.1's
// dialect), built only when the document is: nothing here runs on a request path.
type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str: Schema = { type: 'string' };
const time: Schema = { type: 'string', format: 'date-time' };
const int: Schema = { type: 'integer' };
const obj: Schema = { type: 'object', additionalProperties: true };

function object(properties: Record<string, Schema>, required: string[] = []): Schema {
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

/** An entry of GET /sessions (flows/sessions.ts's OwnSession). */
function ownSession(): Schema {
  const maybe = (s: Schema): Schema => ({ ...s, type: [s.type, 'null'] });
  return object(
    {
      id: { ...str, format: 'uuid' },
      created_at: maybe(time),
      updated_at: maybe(time),
      refreshed_at: maybe(time),
      not_after: maybe(time),
      user_agent: maybe(str),
      ip: maybe(str),
      aal: { type: ['string', 'null'], enum: ['aal1', 'aal2', 'aal3', null] },
      factor_id: { ...maybe(str), format: 'uuid' },
      current: { type: 'boolean', description: "The session of the request's access token." },
    },
    ['id', 'created_at', 'updated_at', 'refreshed_at', 'not_after', 'user_agent', 'ip', 'aal', 'factor_id', 'current'],
  );
}

function schemas(): Record<string, Schema> {
  const identity = object(
    {
      identity_id: { ...str, format: 'uuid' },
      id: str,
      user_id: { ...str, format: 'uuid' },
      identity_data: obj,
      provider: str,
      last_sign_in_at: time,
      created_at: time,
      updated_at: time,
      email: str,
    },
    ['identity_id', 'id', 'user_id', 'provider'],
  );
  const userProps: Record<string, Schema> = {
    id: { ...str, format: 'uuid' },
    aud: str,
    role: str,
    email: str,
    email_confirmed_at: time,
    invited_at: time,
    phone: str,
    phone_confirmed_at: time,
    confirmation_sent_at: time,
    confirmed_at: time,
    recovery_sent_at: time,
    new_email: str,
    email_change_sent_at: time,
    new_phone: str,
    phone_change_sent_at: time,
    reauthentication_sent_at: time,
    last_sign_in_at: time,
    app_metadata: obj,
    user_metadata: obj,
    identities: { oneOf: [{ type: 'array', items: ref('Identity') }, { type: 'null' }] },
    created_at: time,
    updated_at: time,
    banned_until: time,
    deleted_at: time,
    is_anonymous: { type: 'boolean' },
  };
  const user = object(userProps, [
    'id',
    'aud',
    'role',
    'email',
    'phone',
    'app_metadata',
    'user_metadata',
    'created_at',
    'updated_at',
    'is_anonymous',
  ]);
  const session = object(
    {
      access_token: str,
      token_type: { const: 'bearer' },
      expires_in: int,
      expires_at: int,
      refresh_token: str,
      user: ref('User'),
      weak_password: obj,
      provider_token: str,
      provider_refresh_token: str,
    },
    ['access_token', 'token_type', 'expires_in', 'expires_at', 'refresh_token', 'user'],
  );
  return {
    Identity: identity,
    User: user,
    Session: session,
    VerifiedSession: {
      allOf: [
        ref('Session'),
        object({ type: { type: 'string', description: 'The verification type; absent for SMS codes.' } }),
      ],
    },
    SessionOrUser: {
      oneOf: [ref('Session'), ref('User')],
      description: 'A session when the account needs no confirmation, else the user.',
    },
    Empty: { type: 'object', maxProperties: 0 },
    MessageId: object({ message_id: str }),
    UserList: object({ users: { type: 'array', items: ref('User') }, aud: str }, ['users', 'aud']),
    SessionList: object({ sessions: { type: 'array', items: ownSession() } }, ['sessions']),
    GeneratedLink: {
      allOf: [
        ref('User'),
        object(
          {
            action_link: str,
            email_otp: str,
            hashed_token: str,
            verification_type: str,
            redirect_to: str,
          },
          ['action_link', 'email_otp', 'hashed_token', 'verification_type', 'redirect_to'],
        ),
      ],
      description: "The user's fields at the top level, then the link's (GoTrue's GenerateLinkResponse).",
    },
    AuditEntry: object({ id: { ...str, format: 'uuid' }, payload: obj, created_at: time, ip_address: str }, [
      'id',
      'payload',
      'created_at',
      'ip_address',
    ]),
    Health: object({ version: str, name: str, description: str }, ['version', 'name', 'description']),
    Settings: object(
      {
        external: { type: 'object', additionalProperties: { type: 'boolean' } },
        disable_signup: { type: 'boolean' },
        autoconfirm: { type: 'boolean' },
        mailer_autoconfirm: { type: 'boolean' },
        phone_autoconfirm: { type: 'boolean' },
        sms_provider: str,
        saml_enabled: { type: 'boolean' },
        passkeys_enabled: { type: 'boolean' },
      },
      ['external', 'disable_signup', 'mailer_autoconfirm', 'phone_autoconfirm', 'sms_provider'],
    ),
    Jwks: object({ keys: { type: 'array', items: obj } }, ['keys']),
    OpenIdConfiguration: object({ issuer: str, jwks_uri: str, authorization_endpoint: str, token_endpoint: str }, [
      'issuer',
      'jwks_uri',
    ]),
    UrlResponse: object({ url: str }, ['url']),
    ProviderToken: object(
      {
        provider_token: { ...str, description: "The provider's new access token." },
        provider_expires_in: {
          type: ['integer', 'null'],
          description: 'Its lifetime in seconds, as the provider said.',
        },
      },
      ['provider_token', 'provider_expires_in'],
    ),
    EmailChangeHalf: object({ msg: str, code: { const: '200' } }, ['msg', 'code']),
    OpenApiDocument: object({ openapi: str, info: obj, paths: obj }, ['openapi', 'info', 'paths']),
    // GoTrue's two error bodies (http/error-body.ts). `code` tells them apart: a number in the
    // legacy body, the error code string in the 2024-01-01 one.
    ErrorLegacy: object(
      {
        code: { type: 'integer', description: 'The HTTP status.' },
        error_code: str,
        msg: str,
        error_id: { type: 'string', description: 'The request id, on 5xx answers.' },
      },
      ['code', 'error_code', 'msg'],
    ),
    Error2024: object({ code: { type: 'string', description: 'The error code.' }, message: str }, ['code', 'message']),
    OAuthError: object({ error: str, error_description: str }, ['error', 'error_description']),
  };
}

const ERROR_CONTENT = {
  'application/json': { schema: { oneOf: [ref('ErrorLegacy'), ref('Error2024')] } },
};

const ERROR_HEADERS = {
  'x-sb-error-code': { description: 'The error code (absent on a 2024-01-01 weak_password answer).', schema: str },
};

export function components(): Record<string, unknown> {
  return {
    schemas: schemas(),
    responses: {
      ClientError: {
        description:
          "GoTrue's error body: `{code, error_code, msg}`, or `{code, message}` when the request sends `X-Supabase-Api-Version: 2024-01-01` or later.",
        headers: ERROR_HEADERS,
        content: ERROR_CONTENT,
      },
      ServerError: {
        description:
          '500 unexpected_failure, 503 database_unavailable, 504 request_timeout; same shapes as ClientError.',
        headers: ERROR_HEADERS,
        content: ERROR_CONTENT,
      },
    },
    parameters: {
      ApiVersion: {
        name: 'X-Supabase-Api-Version',
        in: 'header',
        required: false,
        description: 'A date (YYYY-MM-DD); 2024-01-01 or later selects the `{code, message}` error body.',
        schema: { type: 'string', examples: ['2024-01-01'] },
      },
    },
    securitySchemes: {
      UserBearer: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'An access token issued by this server (POST /token, /verify, /signup …).',
      },
      AdminBearer: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          "A JWT signed with the server's key whose `role` is one of JWT_ADMIN_ROLES (default service_role, supabase_admin): the service_role key.",
      },
    },
  };
}
