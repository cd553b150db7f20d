// GET /health, GET /settings, GET /.well-known/jwks.json
import { PROVIDERS } from '../config/kinds.ts';
import { isDatabaseUnavailable, pingDatabase } from '../db/database.ts';
import { databaseUnavailable } from '../http/error-body.ts';
import { serverMetadata } from '../oauth-server/discovery.ts';
import { routeGroup } from '../http/route.ts';
import { json } from '../openapi/parts.ts';

// GoTrue lists these too; authsvc does not implement them, so they always read false.
const GOTRUE_ONLY_PROVIDERS = ['snapchat', 'fly', 'kakao', 'linkedin_oidc', 'slack_oidc', 'zoom'] as const;

export const healthRoutes = routeGroup('health');

const PING_TIMEOUT_MS = 2_000;

// GoTrue: api.HealthCheck. GoTrue's answer never touches the database; authsvc's asks it for
// `select 1` (at most 2 s) and answers 503 database_unavailable when it cannot, so a load
// balancer stops sending it requests it could only fail (docs/reliability.md, Fault injection).
healthRoutes.route(
  {
    method: 'get',
    path: '/health',
    summary: 'Liveness, with a database ping',
    gotrue: 'HealthCheck',
    replies: { 200: json('Health') },
  },
  async (c) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), PING_TIMEOUT_MS);
    });
    try {
      const ping = pingDatabase(c.get('deps').db).then(
        () => 'up' as const,
        (err: unknown) => err,
      );
      const outcome = await Promise.race([ping, late]);
      if (outcome === 'late') throw databaseUnavailable();
      if (outcome !== 'up') throw isDatabaseUnavailable(outcome) ? databaseUnavailable() : outcome;
    } finally {
      clearTimeout(timer);
    }
    return c.json({
      version: c.get('deps').version,
      name: 'GoTrue',
      description: 'GoTrue is a user registration and authentication API',
    });
  },
);

// GoTrue: api.Settings
healthRoutes.route(
  {
    method: 'get',
    path: '/settings',
    summary: 'Public settings: enabled providers, signup, autoconfirm',
    gotrue: 'Settings',
    replies: { 200: json('Settings') },
  },
  (c) => {
    const cfg = c.get('deps').config;
    const external: Record<string, boolean> = { anonymous_users: cfg.external.anonymousUsers.enabled };
    for (const p of PROVIDERS) external[p] = cfg.external.providers[p].enabled;
    for (const p of GOTRUE_ONLY_PROVIDERS) external[p] = false;
    external.email = cfg.external.email.enabled;
    external.phone = cfg.external.phone.enabled;
    return c.json({
      external,
      disable_signup: cfg.disableSignup,
      autoconfirm: cfg.mailer.autoconfirm,
      mailer_autoconfirm: cfg.mailer.autoconfirm,
      phone_autoconfirm: cfg.sms.autoconfirm,
      sms_provider: cfg.sms.provider ?? '',
      saml_enabled: cfg.saml.enabled,
      saml_private_key_next_configured: cfg.saml.enabled && !!cfg.saml.privateKeyNext,
      passkeys_enabled: cfg.passkey.enabled,
    });
  },
);

// GoTrue: api.WellKnownOpenID — the discovery document (served whether or not the OAuth server is on).
healthRoutes.route(
  {
    method: 'get',
    path: '/.well-known/openid-configuration',
    summary: 'OpenID discovery document',
    gotrue: 'WellKnownOpenID',
    replies: { 200: json('OpenIdConfiguration') },
  },
  (c) => {
    const { config, keys } = c.get('deps');
    c.header('Cache-Control', 'public, max-age=600');
    return c.json(serverMetadata(config, keys.algorithms));
  },
);

// GoTrue: api.WellKnownJwks — public halves of asymmetric keys only.
healthRoutes.route(
  {
    method: 'get',
    path: '/.well-known/jwks.json',
    summary: 'Public signing keys',
    gotrue: 'WellKnownJwks',
    replies: { 200: json('Jwks') },
  },
  (c) => {
    c.header('Cache-Control', 'public, max-age=600');
    return c.json({ keys: c.get('deps').keys.publicJwks });
  },
);
