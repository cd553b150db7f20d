// grant_type=refresh_token: a refresh token rotated for its child, and a new access token. A
// retry of the immediate predecessor (inside SECURITY_REFRESH_TOKEN_REUSE_INTERVAL) gets the same
// child back (session.ts says how it is derived); GoTrue-era tokens are adopted on first use
// (gotrue-refresh.ts).
import type { Config } from '../config/types.ts';
import { base32, fromBase64url, hmacSha256, sha256Hex, utf8 } from '../crypto/encoding.ts';
import { insertAudit } from '../db/audit.ts';
import { CommitThenFail, type Executor, transaction } from '../db/database.ts';
import { rotateRefreshToken } from '../db/session-statements.ts';
import {
  findActiveRefreshToken,
  findRefreshToken,
  findSession,
  insertRefreshToken,
  revokeRefreshToken,
  revokeSessionTokens,
  type SessionRow,
  sessionsOfUser,
  touchSession,
} from '../db/sessions.ts';
import { hasVerifiedFactor } from '../db/mfa.ts';
import { findUserById, isBanned, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, badRequest, OAuthApiError } from '../core/errors.ts';
import { adoptGoTrueToken, finishGoTrueAdoption } from './gotrue-refresh.ts';
import { newerSessionAmong, sessionRefusal } from './session-validity.ts';
import type { RequestMeta, TokenResponse } from './issued-session.ts';
import {
  inHookTransaction,
  type PendingToken,
  tokenAfterCommit,
  tokenInTransaction,
  tokenResponse,
} from './session.ts';

const REFRESH_TOKEN_RE = /^[A-Za-z0-9_-]{12,128}$/;

/** Who refreshes: an ordinary client of /token, or the OAuth client authenticated at /oauth/token. */
export interface RefreshAs {
  oauthClientId?: string;
  /** The client's public id for the `client_id` claim (IssuedSession.clientId). */
  clientId?: string;
  /** No reuse window: a rotated-out token is refused at once (public OAuth clients, OAuth 2.1 §4.3.1). */
  oneTimeTokens?: boolean;
  /**
   * The OAuth server's own checks of the session once it is admitted (scope, resource): throws to
   * refuse, or returns the session as the new access token should describe it.
   */
  check?: (session: SessionRow) => SessionRow;
}

/**
 * grant_type=refresh_token. The common case, a live token of a valid session, is one statement
 * (db/session-statements.ts). Everything else (revoked tokens and the reuse window, bans,
 * expiry, sessions with a per-session key, races lost) goes through one transaction in which
 * the session row lock serialises all refreshes of a session.
 */
export async function refreshSession(
  deps: Deps,
  token: string,
  meta: RequestMeta,
  as: RefreshAs = {},
): Promise<TokenResponse> {
  if (!REFRESH_TOKEN_RE.test(token)) throw new ApiError(400, 'validation_failed', 'Refresh token is not valid');
  const hash = sha256Hex(token);
  // The transactional path: SESSIONS_SINGLE_PER_USER compares the user's sessions first,
  // SESSIONS_ALLOW_LOW_AAL looks at the user's factors, the custom access token hook's refusal
  // must take the rotation back, and an OAuth client's refresh has its client checked.
  if (deps.config.sessions.singlePerUser || deps.config.sessions.allowLowAal > 0 || as.oauthClientId) {
    return refreshInTransaction(deps, token, hash, meta, as);
  }
  const child = childToken(deps, null, token);
  const rotation = {
    tokenHash: hash,
    childHash: sha256Hex(child),
    now: deps.now(),
    userAgent: meta.userAgent || null,
    ip: meta.ip || null,
    timebox: deps.config.sessions.timebox,
    inactivityTimeout: deps.config.sessions.inactivityTimeout,
  };
  // One statement; with the hook, in a transaction with it (its refusal takes the rotation back).
  // Nothing rotated (the statement changed nothing): the transactional path answers.
  const answered = await inHookTransaction(deps, async (ex) => {
    const rotated = await rotateRefreshToken(ex, rotation);
    return rotated ? tokenResponse(deps, ex, { ...rotated, refreshToken: child, method: 'token_refresh' }) : undefined;
  });
  return answered ?? refreshInTransaction(deps, token, hash, meta, as);
}

/** SESSIONS_SINGLE_PER_USER: a newer valid session of the user with the same tag exists. */
async function newerSessionExists(
  ex: Executor,
  session: SessionRow,
  tokenUpdatedAt: Date | null,
  now: Date,
  limits: Config['sessions'],
  userHasVerifiedFactor: boolean,
): Promise<boolean> {
  const sessions = await sessionsOfUser(ex, session.userId);
  return newerSessionAmong(sessions, session, tokenUpdatedAt, now, limits, userHasVerifiedFactor);
}

/**
 * A token's one possible child: HMAC of the parent under the session's own key (sessions
 * created before the instance-wide key) or under KeySet.refreshChildKey, first 160 bits.
 */
function childToken(deps: Deps, sessionKey: string | null, parent: string): string {
  const key = sessionKey ? fromBase64url(sessionKey) : deps.keys.refreshChildKey;
  return base32(hmacSha256(key, utf8(parent)).subarray(0, 20));
}

/** GoTrue's RefreshTokenGrant client check: an OAuth session refreshes only through its own client. */
function clientRefusal(session: SessionRow, as: RefreshAs): OAuthApiError | undefined {
  if (session.oauthClientId) {
    if (!as.oauthClientId)
      return new OAuthApiError('invalid_client', 'Client authentication required for OAuth session');
    if (as.oauthClientId !== session.oauthClientId)
      return new OAuthApiError('invalid_client', "Client does not match the session's OAuth client");
  } else if (as.oauthClientId) {
    return new OAuthApiError('invalid_client', 'Client authentication not allowed for non-OAuth session');
  }
  return undefined;
}

/** Throws why a refresh of `session` is refused now (a soft-deleted user, ban, expiry, low AAL, a newer login, another OAuth client), if it is. */
async function admitRefresh(
  deps: Deps,
  tx: Executor,
  session: SessionRow,
  user: UserRow,
  tokenUpdatedAt: Date | null,
  as: RefreshAs,
): Promise<void> {
  // A soft-deleted user no longer exists (review M3): GoTrue's answer for a missing user.
  if (user.deletedAt) throw badRequest('refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');
  const now = deps.now();
  if (isBanned(user, now)) throw badRequest('user_banned', 'Invalid Refresh Token: User Banned');
  const mfaEnabled = deps.config.sessions.allowLowAal > 0 && (await hasVerifiedFactor(tx, user.id));
  const refusal = sessionRefusal(session, tokenUpdatedAt, now, deps.config.sessions, mfaEnabled);
  if (refusal) throw badRequest('session_expired', refusal);
  if (
    deps.config.sessions.singlePerUser &&
    (await newerSessionExists(tx, session, tokenUpdatedAt, now, deps.config.sessions, mfaEnabled))
  ) {
    throw badRequest('session_expired', 'Invalid Refresh Token: Session Expired (Revoked by Newer Login)');
  }
  const wrongClient = clientRefusal(session, as);
  if (wrongClient) throw wrongClient;
}

async function refreshInTransaction(
  deps: Deps,
  token: string,
  hash: string,
  meta: RequestMeta,
  as: RefreshAs,
): Promise<TokenResponse> {
  const cfg = deps.config.security;
  const pending = await transaction(deps.db, async (tx): Promise<PendingToken> => {
    let found = await findRefreshToken(tx, hash);
    if (!found) {
      // GoTrue's own token formats miss the hash look-up (accounts/gotrue-refresh.ts).
      const adoption = await adoptGoTrueToken(deps, tx, token, hash);
      if (adoption && 'admit' in adoption) {
        const p = adoption.admit;
        await admitRefresh(deps, tx, p.session, p.user, p.tokenUpdatedAt, as);
        const outcome = await finishGoTrueAdoption(deps, tx, p, hash, meta);
        if (outcome && 'ok' in outcome) return tokenInTransaction(deps, tx, outcome.ok);
        found = outcome?.row;
      } else {
        found = adoption?.row;
      }
    }
    if (!found) throw badRequest('refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');
    if (!found.sessionId) throw badRequest('session_not_found', 'Invalid Refresh Token: No Valid Session Found');
    const session = await findSession(tx, found.sessionId, { forUpdate: true });
    if (!session) throw badRequest('refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');
    // Re-read under the session lock: a concurrent refresh may have revoked it meanwhile.
    const row = await findRefreshToken(tx, hash);
    if (!row) throw badRequest('refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');
    const user = await findUserById(tx, session.userId);
    if (!user) throw badRequest('refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');
    await admitRefresh(deps, tx, session, user, row.updatedAt, as);
    const now = deps.now();
    // With refresh_token_counter set, the column holds GoTrue's signing key, not a child key.
    const sessionKey = session.refreshTokenCounter == null ? session.refreshTokenHmacKey || null : null;
    let child: string;
    if (!row.revoked) {
      child = childToken(deps, sessionKey, token);
      await revokeRefreshToken(tx, row.id, now);
      await insertRefreshToken(tx, {
        tokenHash: sha256Hex(child),
        parentHash: hash,
        userId: user.id,
        sessionId: session.id,
        now,
      });
      await insertAudit(tx, { actor: user, action: 'token_revoked', ip: meta.ip, now });
      await insertAudit(tx, { actor: user, action: 'token_refreshed', ip: meta.ip, now });
    } else {
      const active = await findActiveRefreshToken(tx, session.id);
      // An interval of 0 means no window at all (not "the same millisecond"): with a coarse or
      // frozen clock a concurrent retry would otherwise slip through as a legitimate one.
      const withinInterval =
        !as.oneTimeTokens &&
        cfg.refreshTokenReuseInterval > 0 &&
        now.getTime() <= (row.updatedAt?.getTime() ?? 0) + cfg.refreshTokenReuseInterval * 1000;
      const candidate = childToken(deps, sessionKey, token);
      const isImmediateChild = active !== undefined && active.parent === hash && active.token === sha256Hex(candidate);
      if (!(isImmediateChild && withinInterval)) {
        if (cfg.refreshTokenRotationEnabled) await revokeSessionTokens(tx, session.id, now);
        // Committed on purpose: the family stays revoked although the request fails.
        throw new CommitThenFail(badRequest('refresh_token_already_used', 'Invalid Refresh Token: Already Used'));
      }
      child = candidate;
    }
    await touchSession(tx, session.id, {
      refreshedAt: now,
      updatedAt: now,
      ...(meta.userAgent ? { userAgent: meta.userAgent } : {}),
      ...(meta.ip ? { ip: meta.ip } : {}),
    });
    const ok = { user, session: as.check ? as.check(session) : session, refreshToken: child, clientId: as.clientId };
    return tokenInTransaction(deps, tx, ok);
  });
  return tokenAfterCommit(deps, pending);
}
