// POST /factors/{id}/verify — GoTrue: mfa.go VerifyFactor (verifyTOTPFactor, verifyPhoneFactor;
// WebAuthn factors in webauthn.ts) and the session upgrade of upgrade-session.ts. One transaction holds the challenge and factor rows:
// two verifies of one challenge, or one TOTP code sent twice, cannot both win, and wrong codes are
// counted on the factor one after the other (failure-lock.ts: the fifth in a row locks it).
import type { AuthContext } from '../app-env.ts';
import { timingSafeEqual } from '../crypto/encoding.ts';
import { DecryptionError, openSecret, sealSecret } from '../crypto/encrypted-string.ts';
import { fromBase32, matchTotp } from '../crypto/totp.ts';
import { insertAudit } from '../db/audit.ts';
import { deleteSessions } from '../db/sessions.ts';
import { CommitThenFail, transaction } from '../db/database.ts';
import {
  deleteChallenge,
  deleteOtherUnverifiedFactors,
  type FactorRow,
  findFactor,
  lockChallenge,
  markChallengeVerified,
  setChallengeOtpCode,
  updateFactor,
} from '../db/mfa.ts';
import type { Deps } from '../deps.ts';
import { takeCodeAttempt } from '../accounts/code-attempts.ts';
import { notify } from '../accounts/notify.ts';
import { tokenAfterCommit, tokenInTransaction } from '../accounts/session.ts';
import type { TokenResponse } from '../accounts/issued-session.ts';
import { ApiError, forbidden, unprocessable, validationFailed } from '../core/errors.ts';
import { SmsSendError } from '../sms/provider.ts';
import { requireVerifyEnabled, UNKNOWN_IP } from './challenge.ts';
import { challengeExpired, challengeNotFound, challengeRefusal, liveChallenge } from './challenge-checks.ts';
import {
  afterFailure,
  FACTOR_FIRST_LOCK_SECONDS,
  factorLocked,
  lockSecondsLeft,
  RESET_FAILURES,
} from './failure-lock.ts';
import { mfaVerificationAttempt } from './hook.ts';
import { requireAal2ToFinish } from './load-factor.ts';
import { upgradeSessionToAal2 } from './upgrade-session.ts';
import { verifyWebAuthnFactor, type WebauthnVerifyInput } from './webauthn.ts';

export interface VerifyInput extends WebauthnVerifyInput {
  code: string | undefined;
}

const AMR_METHOD = { totp: 'totp', phone: 'mfa/phone' } as const;

/**
 * A factor secret or phone code as stored: in clear, plain or GoTrue's encrypted string. One that
 * does not open (its key id is not in SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS, or the wrong key)
 * answers as GoTrue does: 500 "Database error verifying MFA TOTP secret", the cause (key id and
 * row id only) logged.
 */
async function openStored(deps: Deps, id: string, stored: string): Promise<{ value: string; reEncrypt: boolean }> {
  try {
    return await openSecret(deps.config.security.dbEncryption, id, stored);
  } catch (err) {
    if (err instanceof DecryptionError)
      throw new ApiError(500, 'unexpected_failure', 'Database error verifying MFA TOTP secret', undefined, err);
    throw err;
  }
}

export async function verifyFactor(
  deps: Deps,
  auth: AuthContext,
  factor: FactorRow,
  input: VerifyInput,
  ipIn: string | undefined,
): Promise<TokenResponse['body']> {
  const code = input.code ?? '';
  if (factor.factorType === 'webauthn') return verifyWebAuthnFactor(deps, auth, factor, input, ipIn ?? UNKNOWN_IP);
  if (code === '') throw validationFailed('Code needs to be non-empty');
  requireVerifyEnabled(deps, factor);
  const type = factor.factorType as 'totp' | 'phone';
  const session = auth.session;
  if (!session)
    throw new ApiError(
      500,
      'unexpected_failure',
      'A valid session and a registered user are required to verify a factor',
    );
  await requireAal2ToFinish(deps.db, auth, factor, 'verify');
  const ip = ipIn ?? UNKNOWN_IP;
  // Checked before the attempt is counted (and again under the lock): a stranger's id or a dead
  // challenge costs no attempt.
  const seen = await liveChallenge(deps, input.challengeId, factor.id, ip);
  const challengeId = seen.id;
  // Counted first, outside the transaction: parallel guesses still get MAX_CODE_ATTEMPTS in all.
  if (!(await takeCodeAttempt(deps, auth.user.id, `mfa:${challengeId}`, seen!.createdAt))) {
    await deleteChallenge(deps.db, challengeId);
    throw challengeExpired(challengeId);
  }
  // Twilio Verify makes and checks phone codes itself (GoTrue: VerifyOTP), asked under the
  // factor's lock below so that its answers are counted like ours.
  const provider = type === 'phone' && deps.sms?.verifiesCodes ? deps.sms : undefined;

  const now = deps.now();
  const encryption = deps.config.security.dbEncryption;
  const outcome = await transaction(deps.db, async (tx) => {
    const challenge = await lockChallenge(tx, challengeId, factor.id);
    const again = challengeRefusal(deps, challenge, ip);
    if (again === 'expired') return { expired: true } as const;
    if (again) throw again;
    const locked = await findFactor(tx, factor.id, { forUpdate: true });
    if (!locked) throw challengeNotFound();
    // Even the right code is refused while the factor is locked, and not compared.
    const wait = lockSecondsLeft(locked, now);
    if (wait > 0) throw factorLocked(wait);
    const countFailure = async () =>
      void (await updateFactor(tx, factor.id, afterFailure(locked, FACTOR_FIRST_LOCK_SECONDS, now)));
    let step: number | undefined;
    let valid: boolean;
    // The stored secret in clear, and a write that re-encrypts it under the current key when due.
    let reseal: (() => Promise<void>) | undefined;
    if (type === 'totp') {
      const secret = locked.secret ? await openStored(deps, factor.id, locked.secret) : undefined;
      if (secret?.reEncrypt) {
        const plain = secret.value;
        reseal = async () =>
          void (await updateFactor(tx, factor.id, {
            secret: await sealSecret(encryption, factor.id, plain, deps.randomBytes),
          }));
      }
      const key = secret ? fromBase32(secret.value) : undefined;
      step = key ? matchTotp(key, code, now) : undefined;
      // A code is good once: its step must be later than the last one accepted (RFC 6238 §5.2).
      valid = step !== undefined && (locked.lastTotpStep === null || step > locked.lastTotpStep);
    } else if (provider?.verifyCode) {
      try {
        await provider.verifyCode(factor.phone ?? '', code);
        valid = true;
      } catch (err) {
        if (!(err instanceof SmsSendError)) throw err;
        // GoTrue answers before its hook is asked; the failure counts all the same.
        await countFailure();
        throw new CommitThenFail(forbidden('otp_expired', 'Token has expired or is invalid'));
      }
    } else {
      const otp = challenge!.otpCode !== null ? await openStored(deps, challengeId, challenge!.otpCode) : undefined;
      // GoTrue re-encrypts a phone code only when the code was wrong: a right one is spent.
      if (otp?.reEncrypt) {
        const plain = otp.value;
        reseal = async () =>
          setChallengeOtpCode(tx, challengeId, await sealSecret(encryption, challengeId, plain, deps.randomBytes));
      }
      valid = otp !== undefined && timingSafeEqual(otp.value, code);
      if (valid) reseal = undefined;
    }
    const decision = await mfaVerificationAttempt(deps, tx, {
      factorId: factor.id,
      factorType: type,
      userId: auth.user.id,
      valid,
      ip: ipIn,
    });
    // Returned, not thrown: the sign-out below must not be rolled back with the attempt.
    if (decision.decision === 'reject') return { rejected: decision.message } as const;
    await reseal?.();
    if (!valid) {
      await countFailure();
      // Committed: the count, and the re-encryption above (GoTrue writes it on a wrong code too).
      throw new CommitThenFail(
        unprocessable(
          'mfa_verification_failed',
          type === 'totp' ? 'Invalid TOTP code entered' : 'Invalid MFA Phone code entered',
        ),
      );
    }
    await insertAudit(tx, {
      actor: auth.user,
      action: 'verification_attempted',
      ip: ipIn,
      now,
      traits: { factor_id: factor.id, challenge_id: challengeId, factor_type: type },
    });
    await markChallengeVerified(tx, challengeId, now);
    await updateFactor(tx, factor.id, {
      status: 'verified',
      updatedAt: now,
      ...RESET_FAILURES,
      ...(step !== undefined ? { lastTotpStep: step } : {}),
    });
    const upgraded = await upgradeSessionToAal2(deps, tx, {
      userId: auth.user.id,
      sessionId: session.id,
      factorId: factor.id,
      method: AMR_METHOD[type],
      now,
    });
    await deleteOtherUnverifiedFactors(tx, auth.user.id, type, factor.id);
    // With the custom access token hook, signed here: its refusal takes the upgrade back.
    return { pending: await tokenInTransaction(deps, tx, { user: auth.user, ...upgraded, method: AMR_METHOD[type] }) };
  });
  if ('rejected' in outcome && outcome.rejected !== undefined) {
    // GoTrue's models.Logout: every session of the user ends.
    await deleteSessions(deps.db, auth.user.id, 'global');
    throw forbidden('mfa_verification_rejected', outcome.rejected);
  }
  if ('expired' in outcome) {
    await deleteChallenge(deps.db, challengeId);
    throw challengeExpired(challengeId);
  }
  const { body } = await tokenAfterCommit(deps, outcome.pending);
  // The factor's first verification enrols it (GoTrue: MAILER_NOTIFICATIONS_MFA_FACTOR_ENROLLED_ENABLED).
  if (factor.status !== 'verified')
    await notify(deps, { kind: 'mfa_factor_enrolled', user: auth.user, factorType: type }, ipIn);
  return body;
}
