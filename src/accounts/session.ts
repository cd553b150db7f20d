// Sessions and the tokens they issue (refreshing one: refresh.ts). Refresh tokens are random
// (160 bits), stored as SHA-256 hex, and a child is the HMAC of its parent under KeySet.refreshChildKey (or, for sessions created
// before that key, the session's own key): a retry of the immediate predecessor (inside
// SECURITY_REFRESH_TOKEN_REUSE_INTERVAL) gets the same child back without the database ever
// holding a usable token or the key that derives one.
import { base32, sha256Hex } from '../crypto/encoding.ts';
import { signJwt } from '../crypto/jwt.ts';
import type { AuditEntry } from '../db/audit.ts';
import { type Executor, transaction } from '../db/database.ts';
import { insertSessionWithToken } from '../db/session-statements.ts';
import { listAmrClaims, type SessionRow } from '../db/sessions.ts';
import { listFactors } from '../db/mfa.ts';
import { listIdentities, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { customizeAccessToken } from '../hooks/custom-access-token.ts';
import type { AmrMethod, IssuedSession, RequestMeta, TokenResponse } from './issued-session.ts';
import { userJson } from '../models/user-json.ts';

/**
 * Creates a session with its first refresh token and AMR entry, writes `audits` and stamps
 * last_sign_in_at: one statement (inside the caller's transaction, if any).
 */
export async function createSession(
  deps: Deps,
  ex: Executor,
  user: UserRow,
  method: AmrMethod,
  meta: RequestMeta,
  audits: AuditEntry[] = [],
): Promise<IssuedSession> {
  const now = deps.now();
  const refreshToken = base32(deps.randomBytes(20));
  const created = await insertSessionWithToken(ex, {
    sessionId: crypto.randomUUID(),
    userId: user.id,
    now,
    userAgent: meta.userAgent ?? null,
    ip: meta.ip ?? null,
    hmacKey: null,
    method,
    tokenHash: sha256Hex(refreshToken),
    audits,
  });
  return {
    ...created,
    refreshToken,
    amr: [{ method, timestamp: Math.floor(now.getTime() / 1000) }],
  };
}

export async function accessTokenClaims(
  deps: Deps,
  ex: Executor,
  user: UserRow,
  session: SessionRow,
  amr?: IssuedSession['amr'],
  clientId?: string,
): Promise<Record<string, unknown>> {
  const now = Math.floor(deps.now().getTime() / 1000);
  const claims: Record<string, unknown> = {};
  if (deps.config.jwt.issuer) claims.iss = deps.config.jwt.issuer;
  claims.sub = user.id;
  // GoTrue sends ClaimStrings{user.Aud}: one element, so `"aud": ""` even when JWT_AUD is empty.
  claims.aud = user.aud ?? '';
  claims.exp = now + deps.config.jwt.exp;
  claims.iat = now;
  // A session issued to an OAuth client carries the user's data only as its scopes grant it
  // (authsvc; GoTrue sends all four whatever the scope). `email` and `phone` stay, empty, as the
  // custom access token hook's schema requires them.
  const scopes = session.oauthClientId ? grantedScopes(session.scopes) : undefined;
  claims.email = !scopes || scopes.has('email') ? (user.email ?? '') : '';
  claims.phone = !scopes || scopes.has('phone') ? (user.phone ?? '') : '';
  if (!scopes || scopes.has('profile')) {
    claims.app_metadata = user.rawAppMetaData ?? {};
    claims.user_metadata = user.rawUserMetaData ?? {};
  }
  claims.role = user.role ?? '';
  claims.aal = session.aal ?? 'aal1';
  claims.amr = amr ?? (await listAmrClaims(ex, session.id));
  claims.session_id = session.id;
  claims.is_anonymous = user.isAnonymous;
  // A session issued to an OAuth client (oauth-server/): GoTrue's client_id and scope claims, and
  // (authsvc, RFC 8707) the resource the client asked for as the audience.
  if (session.oauthClientId) claims.client_id = clientId ?? session.oauthClientId;
  if (session.scopes !== null && session.scopes !== undefined) claims.scope = session.scopes;
  if (session.resource) claims.aud = session.resource;
  return claims;
}

const grantedScopes = (scope: string | null | undefined): Set<string> =>
  new Set((scope ?? '').split(' ').filter((x) => x !== ''));

/** The signed access token of a session and its claims. */
export async function signAccessToken(
  deps: Deps,
  ex: Executor,
  issued: Pick<IssuedSession, 'user' | 'session' | 'amr' | 'method' | 'clientId'>,
): Promise<{ token: string; claims: Record<string, unknown> }> {
  const claims = await accessTokenClaims(deps, ex, issued.user, issued.session, issued.amr, issued.clientId);
  // HOOK_CUSTOM_ACCESS_TOKEN: `ex` must be the request's transaction, so that a refusal takes the new session back.
  const token = await signJwt(
    deps.keys,
    deps.config.hooks.CUSTOM_ACCESS_TOKEN.enabled
      ? await customizeAccessToken(
          deps,
          ex,
          { userId: issued.user.id, method: issued.method ?? issued.amr?.[0]?.method ?? 'token_refresh' },
          claims,
        )
      : claims,
  );
  return { token, claims };
}

/** GoTrue's AccessTokenResponse plus its sb-auth-* headers. */
export async function tokenResponse(
  deps: Deps,
  ex: Executor,
  issued: IssuedSession,
  extra: Record<string, unknown> = {},
): Promise<TokenResponse> {
  const { token: accessToken, claims } = await signAccessToken(deps, ex, issued);
  const identities = issued.identities ?? (await listIdentities(ex, [issued.user.id]));
  // supabase-js reads user.factors from the session to tell whether aal2 is the next level.
  const factors = issued.factors ?? (await listFactors(ex, issued.user.id));
  const expiresAt = claims.exp as number;
  return {
    body: {
      access_token: accessToken,
      token_type: 'bearer',
      expires_in: expiresAt - (claims.iat as number),
      expires_at: expiresAt,
      refresh_token: issued.refreshToken,
      user: userJson(issued.user, identities, factors),
      ...extra,
    },
    headers: {
      'sb-auth-user-id': issued.user.id,
      'sb-auth-session-id': issued.session.id,
      'sb-auth-refresh-token-prefix': issued.refreshToken.slice(0, 5),
    },
  };
}

// The custom access token hook runs in the transaction that issues the session, so that its
// refusal takes the session back; without the hook the token is signed after the commit (the
// embedded database has one connection: a transaction must not wait on signing and reads).

/** `fn` in a transaction when the custom access token hook is on, else straight on the database. */
export function inHookTransaction<T>(deps: Deps, fn: (ex: Executor) => Promise<T>): Promise<T> {
  return deps.config.hooks.CUSTOM_ACCESS_TOKEN.enabled ? transaction(deps.db, fn) : fn(deps.db);
}

/** A session issued in a transaction, and its token when the hook had to make it there. */
export type PendingToken = { issued: IssuedSession; token?: TokenResponse };

/** In the issuing transaction: the token now when the hook is on, else later (tokenAfterCommit). */
export async function tokenInTransaction(deps: Deps, tx: Executor, issued: IssuedSession): Promise<PendingToken> {
  return deps.config.hooks.CUSTOM_ACCESS_TOKEN.enabled
    ? { issued, token: await tokenResponse(deps, tx, issued) }
    : { issued };
}

/** After the commit: the token made in the transaction, or one made now. */
export function tokenAfterCommit(deps: Deps, p: PendingToken): Promise<TokenResponse> {
  return p.token ? Promise.resolve(p.token) : tokenResponse(deps, deps.db, p.issued);
}
