// POST /factors/{id}/verify — GoTrue: mfa.go VerifyFactor (verifyTOTPFactor, verifyPhoneFactor)
// and token.go updateMFASessionAndClaims. One transaction holds the challenge and factor rows:
// two verifies of one challenge, or one TOTP code sent twice, cannot both win.
import type { AuthContext } from '../app-env.ts';
import { sha256Hex, timingSafeEqual } from '../crypto/encoding.ts';
import { base32 } from '../crypto/encoding.ts';
import { fromBase32, matchTotp } from '../crypto/totp.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import {
  type ChallengeRow, deleteChallenge, deleteLowAalSessions, deleteOtherUnverifiedFactors, type FactorRow, findFactor,
  lockChallenge, markChallengeVerified, setSessionAal, updateFactor, upsertAmrClaim,
} from '../db/mfa.ts';
import { findSession, insertRefreshToken, revokeSessionTokens } from '../db/sessions.ts';
import type { Deps } from '../deps.ts';
import { takeCodeAttempt } from '../flows/code-attempts.ts';
import { type TokenResponse, tokenResponse } from '../flows/session.ts';
import { ApiError, forbidden, unprocessable, validationFailed } from '../http/errors.ts';
import { SmsSendError } from '../sms/provider.ts';
import { requireVerifyEnabled, UNKNOWN_IP } from './challenge.ts';
import { mfaVerificationAttempt } from './hook.ts';

export interface VerifyInput {
  challengeId: string | undefined;
  code: string | undefined;
}

const challengeNotFound = () => unprocessable('mfa_factor_not_found', 'MFA factor with the provided challenge ID not found');
const ipMismatch = () => unprocessable('mfa_ip_address_mismatch', 'Challenge and verify IP addresses mismatch.');
const challengeExpired = (id: string) =>
  unprocessable('mfa_challenge_expired', `MFA challenge ${id} has expired, verify against another challenge or create a new challenge.`);

const AMR_METHOD = { totp: 'totp', phone: 'mfa/phone' } as const;

/** GoTrue's validateChallenge: the same checks before counting the attempt and again under the lock. */
function challengeRefusal(deps: Deps, c: ChallengeRow | undefined, ip: string): ApiError | 'expired' | undefined {
  if (!c) return challengeNotFound();
  if (c.verifiedAt || c.ipAddress !== ip) return ipMismatch();
  if (deps.now().getTime() > c.createdAt.getTime() + deps.config.mfa.challengeExpiry * 1000) return 'expired';
  return undefined;
}

export async function verifyFactor(
  deps: Deps, auth: AuthContext, factor: FactorRow, input: VerifyInput, ipIn: string | undefined,
): Promise<TokenResponse['body']> {
  const code = input.code ?? '';
  if (code === '' && factor.factorType !== 'webauthn') throw validationFailed('Code needs to be non-empty');
  requireVerifyEnabled(deps, factor);
  const type = factor.factorType as 'totp' | 'phone';
  const session = auth.session;
  if (!session) throw new ApiError(500, 'unexpected_failure', 'A valid session and a registered user are required to verify a factor');
  const ip = ipIn ?? UNKNOWN_IP;
  const challengeId = input.challengeId;
  if (!challengeId) throw challengeNotFound();

  // Checked before the attempt is counted: a stranger's id or a dead challenge costs no attempt.
  const seen = await lockChallenge(deps.db, challengeId, factor.id);
  const refusal = challengeRefusal(deps, seen, ip);
  if (refusal === 'expired') {
    await deleteChallenge(deps.db, challengeId);
    throw challengeExpired(challengeId);
  }
  if (refusal) throw refusal;
  // Counted first, outside the transaction: parallel guesses still get MAX_CODE_ATTEMPTS in all.
  if (!(await takeCodeAttempt(deps, auth.user.id, `mfa:${challengeId}`, seen!.createdAt))) {
    await deleteChallenge(deps.db, challengeId);
    throw challengeExpired(challengeId);
  }
  // Twilio Verify makes and checks phone codes itself (GoTrue: VerifyOTP).
  let verifiedByProvider = false;
  if (type === 'phone' && deps.sms?.verifiesCodes && deps.sms.verifyCode) {
    try {
      await deps.sms.verifyCode(factor.phone ?? '', code);
      verifiedByProvider = true;
    } catch (err) {
      if (err instanceof SmsSendError) throw forbidden('otp_expired', 'Token has expired or is invalid');
      throw err;
    }
  }

  const now = deps.now();
  const refreshToken = base32(deps.randomBytes(20));
  const outcome = await transaction(deps.db, async (tx) => {
    const challenge = await lockChallenge(tx, challengeId, factor.id);
    const again = challengeRefusal(deps, challenge, ip);
    if (again === 'expired') return { expired: true } as const;
    if (again) throw again;
    const locked = await findFactor(tx, factor.id, { forUpdate: true });
    if (!locked) throw challengeNotFound();
    let step: number | undefined;
    let valid: boolean;
    if (type === 'totp') {
      const key = locked.secret ? fromBase32(locked.secret) : undefined;
      step = key ? matchTotp(key, code, now) : undefined;
      // A code is good once: its step must be later than the last one accepted (RFC 6238 §5.2).
      valid = step !== undefined && (locked.lastTotpStep === null || step > locked.lastTotpStep);
    } else {
      valid = verifiedByProvider || (challenge!.otpCode !== null && timingSafeEqual(challenge!.otpCode, code));
    }
    const decision = await mfaVerificationAttempt(deps, { factorId: factor.id, factorType: type, userId: auth.user.id, valid });
    if (decision.decision === 'reject') throw forbidden('mfa_verification_rejected', decision.message);
    if (!valid) {
      throw unprocessable('mfa_verification_failed', type === 'totp' ? 'Invalid TOTP code entered' : 'Invalid MFA Phone code entered');
    }
    const current = await findSession(tx, session.id, { forUpdate: true });
    if (!current) throw forbidden('session_not_found', 'Session from session_id claim in JWT does not exist');
    await insertAudit(tx, {
      actor: auth.user, action: 'verification_attempted', ip: ipIn, now,
      traits: { factor_id: factor.id, challenge_id: challengeId, factor_type: type },
    });
    await markChallengeVerified(tx, challengeId, now);
    await updateFactor(tx, factor.id, { status: 'verified', updatedAt: now, ...(step !== undefined ? { lastTotpStep: step } : {}) });
    await upsertAmrClaim(tx, session.id, AMR_METHOD[type], now);
    await setSessionAal(tx, session.id, 'aal2', factor.id, now);
    // The pre-MFA refresh token must not refresh into aal2: the session gets a fresh one.
    await revokeSessionTokens(tx, session.id, now);
    await insertRefreshToken(tx, { tokenHash: sha256Hex(refreshToken), parentHash: null, userId: auth.user.id, sessionId: session.id, now });
    await deleteLowAalSessions(tx, auth.user.id);
    await deleteOtherUnverifiedFactors(tx, auth.user.id, type, factor.id);
    return { session: (await findSession(tx, session.id))! } as const;
  });
  if ('expired' in outcome) {
    await deleteChallenge(deps.db, challengeId);
    throw challengeExpired(challengeId);
  }
  const issued = await tokenResponse(deps, deps.db, { user: auth.user, session: outcome.session, refreshToken });
  return issued.body;
}
