// Features authsvc does not have yet answer as GoTrue does when they are switched off, with the
// error codes clients show to users, instead of a bare 404: SAML SSO, Web3 sign-in (in
// routes/token.ts); the OAuth 2.1 server when OAUTH_SERVER_ENABLED is off (its routes:
// routes/oauth-server.ts). (Passkeys: routes/passkeys.ts gates its own group.)
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { requireAuth } from '../http/auth.ts';
import { notFound } from '../http/errors.ts';
import { requireOAuthServer } from './oauth-server.ts';

const samlDisabled = () => notFound('saml_provider_disabled', 'SAML 2.0 is disabled');

export const featureGateRoutes = new Hono<AppEnv>();

// GoTrue: requireSAMLEnabled on the /sso group.
for (const path of ['/sso', '/sso/*']) featureGateRoutes.all(path, () => { throw samlDisabled(); });

// GoTrue: requireOAuthServerEnabled (behind the admin check on /admin/oauth, the user check on
// /user/oauth): 404 feature_disabled when off. Middleware, not handlers: a route the server
// has answers before these run, and when on, a path it does not have falls through to the 404.
featureGateRoutes.use('/admin/oauth/*', requireAdmin, requireOAuthServer);
featureGateRoutes.use('/user/oauth/*', requireAuth, requireOAuthServer);
for (const path of ['/oauth/*', '/.well-known/oauth-authorization-server']) featureGateRoutes.use(path, requireOAuthServer);
