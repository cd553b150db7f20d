// Features authsvc does not have yet answer as GoTrue does when they are switched off, with the
// error codes clients show to users, instead of a bare 404: SAML SSO, Web3 sign-in (in
// routes/token.ts), MFA factors, passkeys and the OAuth 2.1 server.
import { Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { adminGetUser, parseUuid, userIdParam } from '../admin/users.ts';
import type { AppEnv } from '../app-env.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { requireAuth } from '../http/auth.ts';
import { ApiError, forbidden, notFound, validationFailed } from '../http/errors.ts';
import { optStr, readJson } from '../http/read-json.ts';

const samlDisabled = () => notFound('saml_provider_disabled', 'SAML 2.0 is disabled');
const passkeysDisabled = () => notFound('passkey_disabled', 'Passkeys are disabled');
const oauthServerDisabled = () => notFound('feature_disabled', 'OAuth server is disabled');
const factorNotFound = () => notFound('mfa_factor_not_found', 'Factor not found');

const ENROLL_DISABLED: Record<string, [string, string]> = {
  totp: ['mfa_totp_enroll_not_enabled', 'MFA enroll is disabled for TOTP'],
  phone: ['mfa_phone_enroll_not_enabled', 'MFA enroll is disabled for Phone'],
  webauthn: ['mfa_webauthn_enroll_not_enabled', 'MFA enroll is disabled for WebAuthn'],
};

export const EnrollBody = z.object({ factor_type: optStr, friendly_name: optStr, issuer: optStr, phone: optStr });

/** GoTrue's loadFactor on a user with no factors: a malformed id is 404 validation_failed, any other 404 mfa_factor_not_found. */
function noSuchFactor(raw: string): never {
  if (!parseUuid(raw)) throw notFound('validation_failed', 'factor_id must be an UUID');
  throw factorNotFound();
}

export const featureGateRoutes = new Hono<AppEnv>();

// GoTrue: requireSAMLEnabled on the /sso group.
for (const path of ['/sso', '/sso/*']) featureGateRoutes.all(path, () => { throw samlDisabled(); });

// GoTrue: requirePasskeyEnabled on the /passkeys group (before authentication).
for (const path of ['/passkeys', '/passkeys/*']) featureGateRoutes.all(path, () => { throw passkeysDisabled(); });

// GoTrue: requireOAuthServerEnabled (behind the admin check on /admin/oauth, the user check on /user/oauth).
featureGateRoutes.all('/admin/oauth/*', requireAdmin, () => { throw oauthServerDisabled(); });
featureGateRoutes.all('/user/oauth/*', requireAuth, () => { throw oauthServerDisabled(); });
for (const path of ['/oauth/*', '/.well-known/oauth-authorization-server']) featureGateRoutes.all(path, () => { throw oauthServerDisabled(); });

// MFA (GoTrue: requireAuthentication, requireNotAnonymous; EnrollFactor with every factor type's
// enrolment off; loadFactor finds nothing).
const notAnonymous: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.var.auth.user.isAnonymous) throw forbidden('no_authorization', 'Anonymous user not allowed to perform these actions');
  await next();
};
featureGateRoutes.post('/factors', requireAuth, notAnonymous, async (c) => {
  const body = await readJson(c, EnrollBody);
  // Own keys only: factor_type "__proto__" or "constructor" must not reach Object.prototype.
  const type = body.factor_type ?? '';
  const disabled = Object.hasOwn(ENROLL_DISABLED, type) ? ENROLL_DISABLED[type] : undefined;
  if (!disabled) throw validationFailed('factor_type needs to be totp, phone, or webauthn');
  throw new ApiError(422, ...disabled);
});
featureGateRoutes.delete('/factors/:factor_id', requireAuth, notAnonymous, (c) => noSuchFactor(c.req.param('factor_id')));
featureGateRoutes.post('/factors/:factor_id/:step{challenge|verify}', requireAuth, notAnonymous, (c) => noSuchFactor(c.req.param('factor_id')));

// Admin views of factors and passkeys: a user has none.
featureGateRoutes.get('/admin/users/:user_id/factors', requireAdmin, async (c) => {
  await adminGetUser(c.var.deps, userIdParam(c.req.param('user_id')));
  return c.json([]);
});
featureGateRoutes.on(['PUT', 'DELETE'], '/admin/users/:user_id/factors/:factor_id', requireAdmin, async (c) => {
  await adminGetUser(c.var.deps, userIdParam(c.req.param('user_id')));
  noSuchFactor(c.req.param('factor_id'));
});
