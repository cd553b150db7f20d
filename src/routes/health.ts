// GET /health, GET /settings, GET /.well-known/jwks.json
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { PROVIDERS } from '../lib/config.ts';

// GoTrue lists these too; authsvc does not implement them, so they always read false.
const GOTRUE_ONLY_PROVIDERS = ['snapchat', 'fly', 'kakao', 'linkedin_oidc', 'slack_oidc', 'zoom'] as const;

export const healthRoutes = new Hono<AppEnv>();

// GoTrue: api.HealthCheck
healthRoutes.get('/health', (c) => c.json({
  version: c.var.deps.version,
  name: 'GoTrue',
  description: 'GoTrue is a user registration and authentication API',
}));

// GoTrue: api.Settings
healthRoutes.get('/settings', (c) => {
  const cfg = c.var.deps.config;
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
    saml_enabled: false,
    saml_private_key_next_configured: false,
    passkeys_enabled: false,
  });
});

// GoTrue: api.WellKnownJwks — public halves of asymmetric keys only.
healthRoutes.get('/.well-known/jwks.json', (c) => {
  c.header('Cache-Control', 'public, max-age=600');
  return c.json({ keys: c.var.deps.keys.publicJwks });
});
