// GoTrue's updateMFASessionAndClaims (token.go), shared by factor verification and recovery
// codes: the session becomes aal2 with the method's AMR row, gets a fresh refresh token (the
// pre-MFA one cannot refresh into aal2; presenting it counts as reuse), and the user's other
// aal1 sessions are deleted. Runs inside the caller's transaction.
import { base32, sha256Hex } from '../crypto/encoding.ts';
import type { Executor } from '../db/database.ts';
import { deleteLowAalSessions, setSessionAal, upsertAmrClaim } from '../db/mfa.ts';
import { findSession, insertRefreshToken, revokeSessionTokens, type SessionRow } from '../db/sessions.ts';
import type { Deps } from '../deps.ts';
import { forbidden } from '../core/errors.ts';

export interface Upgrade {
  userId: string;
  sessionId: string;
  /** Recorded in sessions.factor_id: removing the factor (or the recovery-code set) downgrades the session. */
  factorId: string;
  /** The AMR method: `totp`, `mfa/phone`, `mfa/recovery_code`. */
  method: string;
  now: Date;
}

export async function upgradeSessionToAal2(
  deps: Deps,
  tx: Executor,
  u: Upgrade,
): Promise<{ session: SessionRow; refreshToken: string }> {
  const current = await findSession(tx, u.sessionId, { forUpdate: true });
  if (!current) throw forbidden('session_not_found', 'Session from session_id claim in JWT does not exist');
  const refreshToken = base32(deps.randomBytes(20));
  await upsertAmrClaim(tx, u.sessionId, u.method, u.now);
  await setSessionAal(tx, u.sessionId, 'aal2', u.factorId, u.now);
  await revokeSessionTokens(tx, u.sessionId, u.now);
  await insertRefreshToken(tx, {
    tokenHash: sha256Hex(refreshToken),
    parentHash: null,
    userId: u.userId,
    sessionId: u.sessionId,
    now: u.now,
  });
  await deleteLowAalSessions(tx, u.userId);
  return { session: (await findSession(tx, u.sessionId))!, refreshToken };
}
