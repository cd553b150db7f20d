// The checks every factor's verify makes of its challenge (GoTrue's validateChallenge), shared by
// the code factors (verify.ts) and WebAuthn factors (webauthn.ts).
import { type ChallengeRow, deleteChallenge, lockChallenge } from '../db/mfa.ts';
import type { Deps } from '../deps.ts';
import { type ApiError, unprocessable } from '../core/errors.ts';

export const challengeNotFound = () =>
  unprocessable('mfa_factor_not_found', 'MFA factor with the provided challenge ID not found');
const ipMismatch = () => unprocessable('mfa_ip_address_mismatch', 'Challenge and verify IP addresses mismatch.');
export const challengeExpired = (id: string) =>
  unprocessable(
    'mfa_challenge_expired',
    `MFA challenge ${id} has expired, verify against another challenge or create a new challenge.`,
  );

/**
 * Why `c` cannot be verified from `ip` now, or undefined. `webauthn`: the row must hold the
 * ceremony's session data (a WebAuthn challenge).
 */
export function challengeRefusal(
  deps: Deps,
  c: ChallengeRow | undefined,
  ip: string,
  webauthn = false,
): ApiError | 'expired' | undefined {
  if (!c || (webauthn && !c.webAuthnSessionData)) return challengeNotFound();
  if (c.verifiedAt || c.ipAddress !== ip) return ipMismatch();
  if (deps.now().getTime() > c.createdAt.getTime() + deps.config.mfa.challengeExpiry * 1000) return 'expired';
  return undefined;
}

/** The factor's challenge `challengeId`, locked; a missing, foreign or dead one is refused (an expired one deleted first). */
export async function liveChallenge(
  deps: Deps,
  challengeId: string | undefined,
  factorId: string,
  ip: string,
  webauthn = false,
): Promise<ChallengeRow> {
  if (!challengeId) throw challengeNotFound();
  const seen = await lockChallenge(deps.db, challengeId, factorId);
  const refusal = challengeRefusal(deps, seen, ip, webauthn);
  if (refusal === 'expired') {
    await deleteChallenge(deps.db, challengeId);
    throw challengeExpired(challengeId);
  }
  if (refusal) throw refusal;
  return seen!;
}
