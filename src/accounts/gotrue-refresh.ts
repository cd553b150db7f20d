// Refresh tokens GoTrue issued, after a move from GoTrue with the database (issue 31). They miss
// the SHA-256 look-up of accounts/session.ts (the fast path costs what it did) and come here inside
// its transaction. A live GoTrue token is *adopted*: it becomes an authsvc row under its SHA-256,
// which accounts/session.ts then rotates like any other, so the first refresh answers a child in
// authsvc's format and a retry of the GoTrue token inside the reuse interval gets that same
// child back. A GoTrue token that GoTrue itself had already rotated is answered here, under
// authsvc's reuse rules (DESIGN.md): only the immediate predecessor of the session's current
// token, only inside SECURITY_REFRESH_TOKEN_REUSE_INTERVAL, gets that token back; anything else
// is reuse and ends the session's tokens.
//
// Column meanings: refresh_tokens.token of length 12 is a legacy GoTrue token in clear; of length
// 64, a SHA-256 (authsvc) or the keyed digest `authsvc hash-refresh-tokens` writes. A session with
// refresh_token_counter set holds GoTrue's signing key in refresh_token_hmac_key (authsvc's own
// older sessions kept a child key there and never set the counter); a negative counter marks a
// signed session authsvc has adopted (-1 - the counter of the token it adopted).
import {
  checkSignedRefreshToken,
  encodeSignedRefreshToken,
  LEGACY_REFRESH_TOKEN_LENGTH,
  legacyRefreshDigest,
  parseSignedRefreshToken,
  type SignedRefreshToken,
} from '../crypto/gotrue-refresh-token.ts';
import { fromBase64url, sha256Hex } from '../crypto/encoding.ts';
import { DecryptionError, openSecret } from '../crypto/encrypted-string.ts';
import { CommitThenFail, type Executor } from '../db/database.ts';
import { findLegacyRefreshToken, rewriteRefreshToken, setRefreshTokenCounter } from '../db/gotrue-tokens.ts';
import {
  deleteSessions,
  findActiveRefreshToken,
  findRefreshToken,
  findSession,
  insertRefreshToken,
  type RefreshTokenRow,
  revokeSessionTokens,
  type SessionRow,
  touchSession,
} from '../db/sessions.ts';
import { findUserById, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, badRequest } from '../core/errors.ts';
import type { IssuedSession, RequestMeta } from './issued-session.ts';

export type GoTrueAdoption =
  /** The token is now an authsvc row under its SHA-256: rotate it as usual. */
  | { row: RefreshTokenRow }
  /**
   * A token GoTrue had rotated, or a signed one: the caller admits the refresh of `session` now
   * (ban, expiry, newer login, …), then hands this to finishGoTrueAdoption.
   */
  | { admit: PendingAdoption };

export type PendingAdoption = { session: SessionRow; user: UserRow; tokenUpdatedAt: Date | null } & (
  | { kind: 'legacy'; token: string; digest: string }
  | { kind: 'signed'; signed: SignedRefreshToken; key: Uint8Array }
);

export type AdoptionOutcome =
  | { row: RefreshTokenRow }
  /** A GoTrue-era retry: the child GoTrue had issued, answered again. */
  | { ok: IssuedSession };

// Reuse: the revocation commits, then the refresh is refused.
const alreadyUsed = () =>
  new CommitThenFail(badRequest('refresh_token_already_used', 'Invalid Refresh Token: Already Used'));

/** Undefined when `token` is not a refresh token GoTrue issued on this database. */
export async function adoptGoTrueToken(
  deps: Deps,
  tx: Executor,
  token: string,
  hash: string,
): Promise<GoTrueAdoption | undefined> {
  // GoTrue's rule: 12 characters is a legacy token, anything longer is parsed as a signed one.
  if (token.length === LEGACY_REFRESH_TOKEN_LENGTH) return adoptLegacy(deps, tx, token, hash);
  const signed = parseSignedRefreshToken(token);
  return signed ? adoptSigned(deps, tx, signed, hash) : undefined;
}

/** The rest of an adoption once the caller has admitted the refresh (GoTrue's reuse rules for its own tokens). */
export function finishGoTrueAdoption(
  deps: Deps,
  tx: Executor,
  p: PendingAdoption,
  hash: string,
  meta: RequestMeta,
): Promise<AdoptionOutcome | undefined> {
  return p.kind === 'legacy' ? finishLegacy(deps, tx, p, meta) : finishSigned(deps, tx, p, hash, meta);
}

async function adoptLegacy(deps: Deps, tx: Executor, token: string, hash: string): Promise<GoTrueAdoption | undefined> {
  const digest = legacyRefreshDigest(deps.keys.refreshChildKey, token);
  const first = await findLegacyRefreshToken(tx, token, digest);
  if (!first) {
    // A concurrent first use may have adopted it since the caller's look-up by hash.
    const adopted = await findRefreshToken(tx, hash);
    return adopted ? { row: adopted } : undefined;
  }
  // GoTrue: a token from before the sessions table has no session to refresh.
  if (!first.sessionId) throw badRequest('session_not_found', 'Invalid Refresh Token: No Valid Session Found');
  const session = await findSession(tx, first.sessionId, { forUpdate: true });
  if (!session) return undefined;
  // Under the session lock: a concurrent first use may have adopted (and rotated) it meanwhile.
  const adopted = await findRefreshToken(tx, hash);
  if (adopted) return { row: adopted };
  const row = await findLegacyRefreshToken(tx, token, digest);
  if (!row) return undefined;
  if (!row.revoked) {
    // The parent is a revoked GoTrue token: hashed too, so the row holds nothing usable.
    const parent = row.parent && row.parent.length === LEGACY_REFRESH_TOKEN_LENGTH ? sha256Hex(row.parent) : row.parent;
    await rewriteRefreshToken(tx, row.id, hash, parent);
    return { row: { ...row, token: hash, parent } };
  }
  const user = await findUserById(tx, session.userId);
  if (!user) return undefined;
  return { admit: { kind: 'legacy', session, user, tokenUpdatedAt: row.updatedAt, token, digest } };
}

async function finishLegacy(
  deps: Deps,
  tx: Executor,
  p: PendingAdoption & { kind: 'legacy' },
  meta: RequestMeta,
): Promise<AdoptionOutcome> {
  const { session, user, token, digest } = p;
  const now = deps.now();
  const active = await findActiveRefreshToken(tx, session.id);
  const isImmediateChild =
    active !== undefined &&
    (active.parent === token || active.parent === digest) &&
    active.token?.length === LEGACY_REFRESH_TOKEN_LENGTH;
  if (isImmediateChild && withinReuseInterval(deps, p.tokenUpdatedAt, now)) {
    await touchRefreshed(tx, session.id, now, meta);
    return { ok: { user, session, refreshToken: active.token! } };
  }
  if (deps.config.security.refreshTokenRotationEnabled) await revokeSessionTokens(tx, session.id, now);
  throw alreadyUsed();
}

async function adoptSigned(
  deps: Deps,
  tx: Executor,
  signed: SignedRefreshToken,
  hash: string,
): Promise<GoTrueAdoption | undefined> {
  const session = await findSession(tx, signed.sessionId, { forUpdate: true });
  // GoTrue: a session not set up for signed tokens is as if it did not exist.
  if (!session || session.refreshTokenHmacKey == null || session.refreshTokenCounter == null) return undefined;
  const adopted = await findRefreshToken(tx, hash);
  if (adopted) return { row: adopted };
  const key = await gotrueSessionKey(deps, session);
  if (!checkSignedRefreshToken(signed, key)) return undefined;
  const user = await findUserById(tx, session.userId);
  if (!user) return undefined;
  return { admit: { kind: 'signed', session, user, tokenUpdatedAt: null, signed, key } };
}

async function finishSigned(
  deps: Deps,
  tx: Executor,
  p: PendingAdoption & { kind: 'signed' },
  hash: string,
  meta: RequestMeta,
): Promise<AdoptionOutcome | undefined> {
  const { session, user, signed, key } = p;
  const now = deps.now();
  // adoptSigned checked the counter is set.
  const counter = session.refreshTokenCounter!;
  const notIssued = () => badRequest('validation_failed', 'Invalid Refresh Token: Not Issued By This Server');
  if (counter < 0) {
    // Adopted at counter -counter - 1 (below): that token is found by its hash before this, so a
    // signed token here is an older one (reuse) or one GoTrue never issued. The key is still in
    // the row, so a dump must not be able to mint a "current" token: there is none any more.
    if (signed.counter > -counter - 1) throw notIssued();
    return reuse(deps, tx, session, user);
  }
  const behind = counter - signed.counter;
  if (behind < 0) throw notIssued();
  if (behind === 0) {
    // The session's current token becomes an authsvc row (rotated by the caller), and the
    // counter records where: negative, which GoTrue never writes, so no signed token of the
    // session is current any more and older ones are reuse.
    await setRefreshTokenCounter(tx, session.id, -counter - 1);
    await insertRefreshToken(tx, { tokenHash: hash, parentHash: null, userId: user.id, sessionId: session.id, now });
    const row = await findRefreshToken(tx, hash);
    return row ? { row } : undefined;
  }
  // GoTrue answered the next counter but the client did not keep it (and authsvc has not
  // rotated the session yet): inside the interval the same token again.
  const lastRefresh = session.refreshedAt ?? session.createdAt;
  if (behind === 1 && withinReuseInterval(deps, lastRefresh, now) && !(await findActiveRefreshToken(tx, session.id))) {
    await touchRefreshed(tx, session.id, now, meta);
    return { ok: { user, session, refreshToken: encodeSignedRefreshToken(session.id, counter, key) } };
  }
  return reuse(deps, tx, session, user);
}

// GoTrue's answer to reuse of a signed token: the session goes (its signed tokens have no rows
// to revoke).
async function reuse(deps: Deps, tx: Executor, session: SessionRow, user: UserRow): Promise<AdoptionOutcome> {
  if (deps.config.security.refreshTokenRotationEnabled) await deleteSessions(tx, user.id, 'local', session.id);
  throw alreadyUsed();
}

/** GoTrue's Session.GetRefreshTokenHmacKey: base64url, possibly sealed with SECURITY_DB_ENCRYPTION_*. */
async function gotrueSessionKey(deps: Deps, session: SessionRow): Promise<Uint8Array> {
  try {
    const { value } = await openSecret(deps.config.security.dbEncryption, session.id, session.refreshTokenHmacKey!);
    return fromBase64url(value);
  } catch (err) {
    if (err instanceof DecryptionError || err instanceof DOMException || err instanceof TypeError) {
      throw new ApiError(500, 'unexpected_failure', 'failed to load session from database');
    }
    throw err;
  }
}

// An interval of 0 means no window at all, as in accounts/session.ts.
function withinReuseInterval(deps: Deps, since: Date | null, now: Date): boolean {
  const interval = deps.config.security.refreshTokenReuseInterval;
  return interval > 0 && now.getTime() <= (since?.getTime() ?? 0) + interval * 1000;
}

async function touchRefreshed(tx: Executor, sessionId: string, now: Date, meta: RequestMeta): Promise<void> {
  await touchSession(tx, sessionId, {
    refreshedAt: now,
    updatedAt: now,
    ...(meta.userAgent ? { userAgent: meta.userAgent } : {}),
    ...(meta.ip ? { ip: meta.ip } : {}),
  });
}
