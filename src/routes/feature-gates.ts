// Features authsvc does not have yet answer as GoTrue does when they are switched off, with the
// error codes clients show to users, instead of a bare 404: SAML SSO, Web3 sign-in (in
// routes/token.ts) and the OAuth 2.1 server. (Passkeys: routes/passkeys.ts gates its own group.)
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { requireAuth } from '../http/auth.ts';
import { notFound } from '../http/errors.ts';

const samlDisabled = () => notFound('saml_provider_disabled', 'SAML 2.0 is disabled');
const oauthServerDisabled = () => notFound('feature_disabled', 'OAuth server is disabled');

export const featureGateRoutes = new Hono<AppEnv>();

// GoTrue: requireSAMLEnabled on the /sso group.
for (const path of ['/sso', '/sso/*']) featureGateRoutes.all(path, () => { throw samlDisabled(); });

// GoTrue: requireOAuthServerEnabled (behind the admin check on /admin/oauth, the user check on /user/oauth).
featureGateRoutes.all('/admin/oauth/*', requireAdmin, () => { throw oauthServerDisabled(); });
featureGateRoutes.all('/user/oauth/*', requireAuth, () => { throw oauthServerDisabled(); });
for (const path of ['/oauth/*', '/.well-known/oauth-authorization-server']) featureGateRoutes.all(path, () => { throw oauthServerDisabled(); });
