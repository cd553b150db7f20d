// POST /oauth/token after client authentication (GoTrue: oauthserver/handlers.go OAuthToken):
// authorization_code (PKCE S256, single use) and refresh_token. Refusals are OAuth error bodies.
import { base64url, timingSafeEqual, utf8 } from '../crypto/encoding.ts';
import { sha256 } from '@noble/hashes/sha2.js';
import { transaction } from '../db/database.ts';
import { lockOAuthAuthorizationByCode, updateOAuthAuthorization } from '../db/oauth-authorizations.ts';
import type { OAuthClientRow } from '../db/oauth-clients.ts';
import { deleteSessions, touchSession } from '../db/sessions.ts';
import { findUserById, isBanned, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { OAuthApiError } from '../http/errors.ts';
import { createSession, type IssuedSession, type RequestMeta, refreshSession, signAccessToken } from '../flows/session.ts';
import { splitList } from './clients.ts';
import { canSignIdTokens, idTokenError, signIdToken } from './id-token.ts';
import { parseScopes } from './scopes.ts';

export interface TokenParams {
  grant_type?: string;
  code?: string;
  refresh_token?: string;
  redirect_uri?: string;
  code_verifier?: string;
  resource?: string;
}

const invalidGrant = (msg: string) => new OAuthApiError('invalid_grant', msg);

export async function oauthToken(deps: Deps, client: OAuthClientRow, p: TokenParams, meta: RequestMeta): Promise<Record<string, unknown>> {
  const grantType = p.grant_type ?? '';
  if (!grantType) throw new OAuthApiError('invalid_request', 'grant_type is required');
  if (!splitList(client.grantTypes).map((g) => g.trim()).includes(grantType)) {
    throw new OAuthApiError('unsupported_grant_type', `Client is not allowed to use grant type: ${grantType}`);
  }
  if (grantType === 'authorization_code') return exchangeCode(deps, client, p, meta);
  if (grantType === 'refresh_token') {
    if (!p.refresh_token) throw new OAuthApiError('invalid_request', 'refresh_token is required for refresh_token grant');
    const { body } = await refreshSession(deps, p.refresh_token, meta, { oauthClientId: client.id });
    return { access_token: body.access_token, expires_in: body.expires_in, refresh_token: body.refresh_token, token_type: 'bearer' };
  }
  throw new OAuthApiError('unsupported_grant_type', `Unsupported grant type: ${grantType}`);
}

/** GoTrue's answer: keys sorted, no user, no expires_at. The ID token is made for the access token (at_hash). */
async function tokenBody(
  issued: IssuedSession, signed: { token: string; claims: Record<string, unknown> }, idTokenFor?: (accessToken: string) => Promise<string>,
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
  ok: { issued: IssuedSession; signed: { token: string; claims: Record<string, unknown> }; user: UserRow; scope: string; nonce: string | null };
} | { refused: OAuthApiError };

async function exchangeCode(deps: Deps, client: OAuthClientRow, p: TokenParams, meta: RequestMeta): Promise<Record<string, unknown>> {
  if (!p.code) throw new OAuthApiError('invalid_request', 'code is required for authorization_code grant');
  const code = p.code;
  const outcome = await transaction(deps.db, async (tx): Promise<Exchange> => {
    const auth = await lockOAuthAuthorizationByCode(tx, code);
    if (!auth) throw invalidGrant('Invalid authorization code');
    if (auth.sessionId) {
      // A second use of a code: whoever holds it, the session it issued ends (RFC 6749 §4.1.2),
      // committed although the request fails.
      await deleteSessions(tx, auth.userId ?? '', 'local', auth.sessionId);
      await updateOAuthAuthorization(tx, auth.id, { sessionId: null });
      return { refused: invalidGrant('Invalid authorization code') };
    }
    if (auth.status !== 'approved') throw invalidGrant('Invalid authorization code');
    const now = deps.now();
    if (now.getTime() > auth.expiresAt.getTime()) throw invalidGrant('Authorization code has expired');
    if (auth.clientId !== client.id) throw invalidGrant('Authorization code was not issued for this client');
    if (p.resource && p.resource !== (auth.resource ?? '')) {
      throw invalidGrant('Authorization code resource does not match the resource parameter');
    }
    if (p.redirect_uri && p.redirect_uri !== auth.redirectUri) throw invalidGrant('Invalid redirect_uri');
    if (auth.codeChallenge) {
      if (!p.code_verifier) throw invalidGrant('PKCE verification failed: code_verifier is required when PKCE challenge is present');
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

    const login = { actor: user, action: 'login' as const, traits: { provider_type: 'oauth_provider_authorization_code', client_id: client.id }, ip: meta.ip, now };
    const created = await createSession(deps, tx, user, 'oauth_provider/authorization_code', meta, [login]);
    const oauth = { oauthClientId: client.id, scopes: auth.scope, resource: auth.resource };
    await touchSession(tx, created.session.id, oauth);
    await updateOAuthAuthorization(tx, auth.id, { status: 'expired', sessionId: created.session.id });
    const issued = { ...created, session: { ...created.session, ...oauth } };
    // Signed in the transaction: a refusal of the custom access token hook takes the session back.
    const signed = await signAccessToken(deps, tx, issued);
    return { ok: { issued, signed, user: created.user, scope: auth.scope, nonce: auth.nonce } };
  });
  if ('refused' in outcome) throw outcome.refused;
  const { issued, signed, user, scope, nonce } = outcome.ok;
  const scopes = parseScopes(scope);
  const idTokenFor = scopes.includes('openid')
    ? (accessToken: string) => signIdToken(deps, { user, clientId: client.id, nonce, scopes, accessToken })
    : undefined;
  return tokenBody(issued, signed, idTokenFor);
}
