// The consent hand-off (GoTrue: oauthserver/authorize.go OAuthServerGetAuthorization,
// OAuthServerConsent). The app's consent page, signed in as the user, reads the request and
// approves or denies it with the user's bearer token: a cookie is never enough, so another
// origin cannot approve on the user's behalf, and an Origin header must be one of the app's.
import { type Executor, transaction } from '../db/database.ts';
import {
  findActiveConsent,
  lockOAuthAuthorization,
  type OAuthAuthorizationRow,
  updateOAuthAuthorization,
  upsertConsent,
} from '../db/oauth-authorizations.ts';
import { findOAuthClient } from '../db/oauth-clients.ts';
import type { UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { notFound, validationFailed } from '../core/errors.ts';
import { isRedirectAllowed } from '../http/redirect.ts';
import { errorRedirect, withQuery } from './authorize.ts';
import { publicClientId } from './clients.ts';
import { hasAllScopes, parseScopes } from './scopes.ts';

const authorizationNotFound = () => notFound('oauth_authorization_not_found', 'authorization not found');

/** GoTrue's validateRequestOrigin: no Origin (a server, a native app) is fine; a foreign one is not. */
export function checkOrigin(deps: Deps, origin: string | undefined): void {
  if (!origin) return;
  if (!isRedirectAllowed(origin, deps.config.siteUrl, deps.config.uriAllowList))
    throw validationFailed('unauthorized request origin');
}

/** The row's expiry is committed, then 404 answered (GoTrue: NewCommitWithError). */
class ExpiredAuthorization {}

async function withPendingAuthorization<T>(
  deps: Deps,
  authorizationId: string,
  notPendingMessage: string,
  fn: (tx: Executor, auth: OAuthAuthorizationRow, now: Date) => Promise<T>,
): Promise<T> {
  const result = await transaction(deps.db, async (tx): Promise<T | ExpiredAuthorization> => {
    const auth = await lockOAuthAuthorization(tx, authorizationId);
    if (!auth) throw authorizationNotFound();
    const now = deps.now();
    if (now.getTime() > auth.expiresAt.getTime()) {
      if (auth.status !== 'pending') throw authorizationNotFound();
      await updateOAuthAuthorization(tx, auth.id, { status: 'expired' });
      return new ExpiredAuthorization();
    }
    if (auth.status !== 'pending') throw validationFailed(notPendingMessage);
    return fn(tx, auth, now);
  });
  if (result instanceof ExpiredAuthorization) throw authorizationNotFound();
  return result;
}

const newCode = () => crypto.randomUUID();

function successRedirect(auth: OAuthAuthorizationRow, code: string, issuer: string | undefined): string {
  return withQuery(auth.redirectUri, { code, state: auth.state ?? undefined, iss: issuer });
}

/**
 * GET /oauth/authorizations/{id}: the first signed-in viewer becomes the request's user. When the
 * user has already granted the client every requested scope, the request is approved at once
 * and only `{redirect_url}` is answered (GoTrue's auto-approve).
 */
export async function authorizationDetails(
  deps: Deps,
  user: UserRow,
  authorizationId: string,
): Promise<Record<string, unknown>> {
  const outcome = await withPendingAuthorization(
    deps,
    authorizationId,
    'authorization request cannot be processed',
    async (tx, auth, now) => {
      if (auth.userId && auth.userId !== user.id) throw authorizationNotFound();
      let approve = false;
      if (!auth.userId) {
        await updateOAuthAuthorization(tx, auth.id, { userId: user.id });
        const consent = await findActiveConsent(tx, user.id, auth.clientId);
        approve = !!consent && hasAllScopes(parseScopes(consent.scopes), parseScopes(auth.scope));
      }
      if (!approve) return { auth };
      const code = newCode();
      await updateOAuthAuthorization(tx, auth.id, { status: 'approved', approvedAt: now, authorizationCode: code });
      return { auth, code };
    },
  );
  if (outcome.code) return { redirect_url: successRedirect(outcome.auth, outcome.code, deps.config.jwt.issuer) };
  const { auth } = outcome;
  const client = await findOAuthClient(deps.db, auth.clientId);
  if (!client) throw authorizationNotFound();
  const clientOut: Record<string, unknown> = { id: publicClientId(client) };
  if (client.clientName) clientOut.name = client.clientName;
  if (client.clientUri) clientOut.uri = client.clientUri;
  if (client.logoUri) clientOut.logo_uri = client.logoUri;
  const userOut: Record<string, unknown> = { id: user.id };
  if (user.email) userOut.email = user.email;
  return {
    authorization_id: auth.authorizationId,
    redirect_uri: auth.redirectUri,
    client: clientOut,
    user: userOut,
    scope: auth.scope,
    // authsvc: the consent page can name the server the token will be for (RFC 8707).
    ...(auth.resource ? { resource: auth.resource } : {}),
  };
}

/** POST /oauth/authorizations/{id}/consent. */
export async function decideAuthorization(
  deps: Deps,
  user: UserRow,
  authorizationId: string,
  action: 'approve' | 'deny',
): Promise<{ redirect_url: string }> {
  const url = await withPendingAuthorization(
    deps,
    authorizationId,
    'authorization request is no longer pending',
    async (tx, auth, now) => {
      if (auth.userId !== user.id) throw authorizationNotFound();
      if (action === 'deny') {
        await updateOAuthAuthorization(tx, auth.id, { status: 'denied' });
        return errorRedirect(
          auth.redirectUri,
          'access_denied',
          'User denied the request',
          auth.state,
          deps.config.jwt.issuer,
        );
      }
      const code = newCode();
      await updateOAuthAuthorization(tx, auth.id, { status: 'approved', approvedAt: now, authorizationCode: code });
      await upsertConsent(tx, user.id, auth.clientId, parseScopes(auth.scope).join(' '), now);
      return successRedirect(auth, code, deps.config.jwt.issuer);
    },
  );
  return { redirect_url: url };
}
