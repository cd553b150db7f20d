// GET /health (GoTrue's), /health/live and /health/ready (the probes), GET /settings, and the
// discovery documents: /.well-known/openid-configuration and /.well-known/jwks.json.
import { PROVIDERS } from '../config/kinds.ts';
import { ApiError } from '../core/errors.ts';
import { isDatabaseUnavailable } from '../db/database.ts';
import { pendingMigrations } from '../db/migrate.ts';
import { databaseUnavailable } from '../http/error-body.ts';
import { serverMetadata } from '../oauth-server/discovery.ts';
import { routeGroup } from '../http/route.ts';
import { error, json } from '../openapi/parts.ts';

// GoTrue lists these too; authsvc does not implement them, so they always read false.
const GOTRUE_ONLY_PROVIDERS = ['snapchat', 'fly', 'kakao', 'linkedin_oidc', 'slack_oidc', 'zoom'] as const;

export const healthRoutes = routeGroup('health');

const PING_TIMEOUT_MS = 2_000;

// GoTrue: api.HealthCheck. As GoTrue's, it never touches the database: a liveness probe left on it
// (as Supabase's compose file has it) must not restart the server during a database blip. Whether
// the database answers is /health/ready's question.
healthRoutes.route(
  {
    method: 'get',
    path: '/health',
    summary: "GoTrue's health: the server answers (no database call)",
    gotrue: 'HealthCheck',
    replies: { 200: json('Health') },
  },
  (c) =>
    c.json({
      version: c.get('deps').version,
      name: 'GoTrue',
      description: 'GoTrue is a user registration and authentication API',
    }),
);

// Not GoTrue routes: the probes of docs/runtimes.md (Kubernetes livenessProbe and readinessProbe).
healthRoutes.route(
  {
    method: 'get',
    path: '/health/live',
    summary: 'Liveness: the process serves requests (no database call; not a GoTrue route)',
    replies: { 200: json({ type: 'object', description: '{status: "live"}' }) },
  },
  (c) => {
    c.header('Cache-Control', 'no-store');
    return c.json({ status: 'live' });
  },
);

healthRoutes.route(
  {
    method: 'get',
    path: '/health/ready',
    summary:
      'Readiness: the database answers within 2 s and every migration of this build is applied (not a GoTrue route)',
    replies: {
      200: json({ type: 'object', description: '{status: "ready"}' }),
      503: error(
        '`database_unavailable` (no answer within 2 s), or `migrations_pending` naming the versions not applied.',
      ),
    },
  },
  async (c) => {
    c.header('Cache-Control', 'no-store');
    const { db, migrations } = c.get('deps');
    const pending = await withinPingTimeout(
      pendingMigrations(
        db,
        migrations.map((version) => ({ version })),
      ),
    );
    if (pending.length > 0) {
      throw new ApiError(503, 'migrations_pending', `Database migrations not applied: ${pending.join(', ')}`);
    }
    return c.json({ status: 'ready' });
  },
);

/** `work`'s result, or database_unavailable when it fails to reach the database or takes over 2 s. */
async function withinPingTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), PING_TIMEOUT_MS);
  });
  try {
    const outcome = await Promise.race([
      work.then(
        (value) => ({ value }),
        (err: unknown) => ({ err }),
      ),
      late,
    ]);
    if (outcome === 'late') throw databaseUnavailable();
    if ('err' in outcome) throw isDatabaseUnavailable(outcome.err) ? databaseUnavailable() : outcome.err;
    return outcome.value;
  } finally {
    clearTimeout(timer);
  }
}

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
