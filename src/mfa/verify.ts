// POST /factors/{id}/verify — GoTrue: mfa.go VerifyFactor (verifyTOTPFactor, verifyPhoneFactor)
// and the session upgrade of upgrade-session.ts. One transaction holds the challenge and factor rows:
// two verifies of one challenge, or one TOTP code sent twice, cannot both win.
import type { AuthContext } from '../app-env.ts';
import { timingSafeEqual } from '../crypto/encoding.ts';
import { fromBase32, matchTotp } from '../crypto/totp.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import {
  type ChallengeRow, deleteChallenge, deleteOtherUnverifiedFactors, type FactorRow, findFactor, lockChallenge,
  markChallengeVerified, updateFactor,
} from '../db/mfa.ts';
import type { Deps } from '../deps.ts';
import { takeCodeAttempt } from '../flows/code-attempts.ts';
import { type TokenResponse, tokenResponse } from '../flows/session.ts';
import { ApiError, forbidden, unprocessable, validationFailed } from '../http/errors.ts';
import { SmsSendError } from '../sms/provider.ts';
import { requireVerifyEnabled, UNKNOWN_IP } from './challenge.ts';
import { mfaVerificationAttempt } from './hook.ts';
import { upgradeSessionToAal2 } from './upgrade-session.ts';

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
    await insertAudit(tx, {
      actor: auth.user, action: 'verification_attempted', ip: ipIn, now,
      traits: { factor_id: factor.id, challenge_id: challengeId, factor_type: type },
    });
    await markChallengeVerified(tx, challengeId, now);
    await updateFactor(tx, factor.id, { status: 'verified', updatedAt: now, ...(step !== undefined ? { lastTotpStep: step } : {}) });
    const upgraded = await upgradeSessionToAal2(deps, tx, { userId: auth.user.id, sessionId: session.id, factorId: factor.id, method: AMR_METHOD[type], now });
    await deleteOtherUnverifiedFactors(tx, auth.user.id, type, factor.id);
    return upgraded;
  });
  if ('expired' in outcome) {
    await deleteChallenge(deps.db, challengeId);
    throw challengeExpired(challengeId);
  }
  const issued = await tokenResponse(deps, deps.db, { user: auth.user, session: outcome.session, refreshToken: outcome.refreshToken });
  return issued.body;
}
