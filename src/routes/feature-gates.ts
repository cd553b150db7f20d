// Features switched off answer as GoTrue does, with the error codes clients show to users,
// instead of a bare 404: the OAuth 2.1 server when OAUTH_SERVER_ENABLED is off (its routes:
// routes/oauth-server.ts). (Passkeys: routes/passkeys.ts, SAML SSO: routes/sso.ts, Web3:
// routes/token.ts gate their own.)
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { requireAuth } from '../http/auth.ts';
import { requireOAuthServer } from './oauth-server.ts';

export const featureGateRoutes = new Hono<AppEnv>();

// GoTrue: requireOAuthServerEnabled (behind the admin check on /admin/oauth, the user check on
// /user/oauth): 404 feature_disabled when off. Middleware, not handlers: a route the server
// has answers before these run, and when on, a path it does not have falls through to the 404.
featureGateRoutes.use('/admin/oauth/*', requireAdmin, requireOAuthServer);
featureGateRoutes.use('/user/oauth/*', requireAuth, requireOAuthServer);
for (const path of ['/oauth/*', '/.well-known/oauth-authorization-server'])
  featureGateRoutes.use(path, requireOAuthServer);
