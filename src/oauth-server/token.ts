// POST /oauth/token after client authentication (GoTrue: oauthserver/handlers.go OAuthToken):
// authorization_code (PKCE S256, single use) and refresh_token. Refusals are OAuth error bodies.
import { base64url, timingSafeEqual, utf8 } from '../crypto/encoding.ts';
import { sha256 } from '@noble/hashes/sha2.js';
import { CommitThenFail, transaction } from '../db/database.ts';
import { lockOAuthAuthorizationByCode, updateOAuthAuthorization } from '../db/oauth-authorizations.ts';
import type { OAuthClientRow } from '../db/oauth-clients.ts';
import { deleteSessions, type SessionRow, touchSession } from '../db/sessions.ts';
import { findUserById, isBanned, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, OAuthApiError } from '../core/errors.ts';
import { refreshSession } from '../accounts/refresh.ts';
import { createSession, signAccessToken } from '../accounts/session.ts';
import type { IssuedSession, RequestMeta } from '../accounts/issued-session.ts';
import { publicClientId, splitList } from './clients.ts';
import { canSignIdTokens, idTokenError, signIdToken } from './id-token.ts';
import { invalidGrant, invalidRequest } from './oauth-errors.ts';
import { parseScopes } from './scopes.ts';

export interface TokenParams {
  grant_type?: string;
  code?: string;
  refresh_token?: string;
  redirect_uri?: string;
  code_verifier?: string;
  resource?: string;
  scope?: string;
}

/** The grant types the server knows; one the client was not registered for is unauthorized_client. */
const GRANT_TYPES = ['authorization_code', 'refresh_token'];

export async function oauthToken(
  deps: Deps,
  client: OAuthClientRow,
  p: TokenParams,
  meta: RequestMeta,
): Promise<Record<string, unknown>> {
  const grantType = p.grant_type ?? '';
  if (!grantType) throw invalidRequest('grant_type is required');
  if (!GRANT_TYPES.includes(grantType))
    throw new OAuthApiError('unsupported_grant_type', `Unsupported grant type: ${grantType}`);
  if (
    !splitList(client.grantTypes)
      .map((g) => g.trim())
      .includes(grantType)
  ) {
    throw new OAuthApiError('unauthorized_client', `Client is not allowed to use grant type: ${grantType}`);
  }
  if (grantType === 'authorization_code') return exchangeCode(deps, client, p, meta);
  if (!p.refresh_token) throw invalidRequest('refresh_token is required for refresh_token grant');
  const { body } = await refreshSession(deps, p.refresh_token, meta, {
    oauthClientId: client.id,
    clientId: publicClientId(client),
    oneTimeTokens: client.clientType === 'public',
    check: (session) => narrowed(session, p),
  }).catch((err: unknown) => {
    // Every refusal of the refresh token itself (unknown, used, expired, banned, another client's) is invalid_grant.
    if (err instanceof ApiError && err.status < 500) throw invalidGrant(err.message);
    if (err instanceof OAuthApiError && err.error === 'invalid_client')
      throw invalidGrant('Refresh token was not issued to this client');
    throw err;
  });
  return {
    access_token: body.access_token,
    expires_in: body.expires_in,
    refresh_token: body.refresh_token,
    token_type: 'bearer',
  };
}

/**
 * RFC 6749 §6: a refresh may ask for fewer scopes than were granted, never more (invalid_scope);
 * RFC 8707: a `resource` must be the one the grant is for (invalid_target).
 */
function narrowed(session: SessionRow, p: TokenParams): SessionRow {
  if (p.resource && p.resource !== (session.resource ?? '')) {
    throw new OAuthApiError('invalid_target', 'resource does not match the resource the grant was issued for');
  }
  if (p.scope === undefined || p.scope.trim() === '') return session;
  const granted = parseScopes(session.scopes);
  const asked = parseScopes(p.scope);
  const extra = asked.find((s) => !granted.includes(s));
  if (extra !== undefined) throw new OAuthApiError('invalid_scope', `scope '${extra}' was not granted`);
  return { ...session, scopes: granted.filter((s) => asked.includes(s)).join(' ') };
}

/** GoTrue's answer: keys sorted, no user, no expires_at. The ID token is made for the access token (at_hash). */
async function tokenBody(
  issued: IssuedSession,
  signed: { token: string; claims: Record<string, unknown> },
  idTokenFor?: (accessToken: string) => Promise<string>,
): Promise<Record<string, unknown>> {
  const { token, claims } = signed;
  const idToken = idTokenFor ? await idTokenFor(token) : undefined;
  return {
    access_token: token,
    expires_in: (claims.exp as number) - (claims.iat as number),
    ...(idToken ? { id_token: idToken } : {}),
    refresh_token: issued.refreshToken,
    token_type: 'bearer',
  };
}

const s256 = (verifier: string) => base64url(sha256(utf8(verifier)));

type Exchange = {
  ok: {
    issued: IssuedSession;
    signed: { token: string; claims: Record<string, unknown> };
    user: UserRow;
    scope: string;
    nonce: string | null;
  };
};

async function exchangeCode(
  deps: Deps,
  client: OAuthClientRow,
  p: TokenParams,
  meta: RequestMeta,
): Promise<Record<string, unknown>> {
  if (!p.code) throw invalidRequest('code is required for authorization_code grant');
  // RFC 6749 §4.1.3: the authorization request always named one (authorize.ts requires it).
  if (!p.redirect_uri) throw invalidRequest('redirect_uri is required for authorization_code grant');
  const code = p.code;
  const outcome = await transaction(deps.db, async (tx): Promise<Exchange> => {
    const auth = await lockOAuthAuthorizationByCode(tx, code);
    if (!auth) throw invalidGrant('Invalid authorization code');
    if (auth.sessionId) {
      // A second use of a code: whoever holds it, the session it issued ends (RFC 6749 §4.1.2),
      // committed although the request fails.
      await deleteSessions(tx, auth.userId ?? '', 'local', auth.sessionId);
      await updateOAuthAuthorization(tx, auth.id, { sessionId: null });
      throw new CommitThenFail(invalidGrant('Invalid authorization code'));
    }
    if (auth.status !== 'approved') throw invalidGrant('Invalid authorization code');
    const now = deps.now();
    if (now.getTime() > auth.expiresAt.getTime()) throw invalidGrant('Authorization code has expired');
    if (auth.clientId !== client.id) throw invalidGrant('Authorization code was not issued for this client');
    if (p.resource && p.resource !== (auth.resource ?? '')) {
      throw new OAuthApiError('invalid_target', 'Authorization code resource does not match the resource parameter');
    }
    if (p.redirect_uri !== auth.redirectUri) throw invalidGrant('Invalid redirect_uri');
    if (p.scope && parseScopes(p.scope).some((x) => !parseScopes(auth.scope).includes(x))) {
      throw new OAuthApiError('invalid_scope', 'scope exceeds what was authorized');
    }
    if (auth.codeChallenge) {
      if (!p.code_verifier)
        throw invalidGrant('PKCE verification failed: code_verifier is required when PKCE challenge is present');
      const expected = auth.codeChallengeMethod === 'plain' ? p.code_verifier : s256(p.code_verifier);
      if (!timingSafeEqual(expected, auth.codeChallenge)) {
        throw invalidGrant('PKCE verification failed: code challenge does not match previously saved code verifier');
      }
    }
    if (!auth.userId) throw invalidGrant('Authorization code has no associated user');
    const user = await findUserById(tx, auth.userId);
    if (!user || user.deletedAt) throw invalidGrant('User not found for authorization code');
    if (isBanned(user, now)) throw new OAuthApiError('access_denied', 'User is banned');
    const scopes = parseScopes(auth.scope);
    // Checked before anything is written (GoTrue issues the session, then fails): the code stays usable.
    if (scopes.includes('openid') && !canSignIdTokens(deps)) throw idTokenError();

    const login = {
      actor: user,
      action: 'login' as const,
      traits: { provider_type: 'oauth_provider_authorization_code', client_id: client.id },
      ip: meta.ip,
      now,
    };
    const created = await createSession(deps, tx, user, 'oauth_provider/authorization_code', meta, [login]);
    const oauth = { oauthClientId: client.id, scopes: auth.scope, resource: auth.resource };
    await touchSession(tx, created.session.id, oauth);
    await updateOAuthAuthorization(tx, auth.id, { status: 'expired', sessionId: created.session.id });
    const issued = { ...created, session: { ...created.session, ...oauth }, clientId: publicClientId(client) };
    // Signed in the transaction: a refusal of the custom access token hook takes the session back.
    const signed = await signAccessToken(deps, tx, issued);
    return { ok: { issued, signed, user: created.user, scope: auth.scope, nonce: auth.nonce } };
  });
  const { issued, signed, user, scope, nonce } = outcome.ok;
  const scopes = parseScopes(scope);
  const idTokenFor = scopes.includes('openid')
    ? (accessToken: string) => signIdToken(deps, { user, clientId: publicClientId(client), nonce, scopes, accessToken })
    : undefined;
  return tokenBody(issued, signed, idTokenFor);
}
