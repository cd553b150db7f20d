// POST /factors/recovery-codes/verify (supabase/auth#2764): an aal1 session becomes aal2 with AMR
// `mfa/recovery_code`. The set's row lock serialises verifications: of two uses of one code
// exactly one wins, and parallel guesses are all counted. Five wrong codes in a row lock the set
// for fifteen minutes, the next five for thirty, and so on up to a day (failure-lock.ts, as TOTP
// and phone factors; a right code then is refused too); a right code or a regeneration resets.
import type { AuthContext } from '../app-env.ts';
import { timingSafeEqual } from '../crypto/encoding.ts';
import { insertAudit } from '../db/audit.ts';
import { CommitThenFail, transaction } from '../db/database.ts';
import { hasVerifiedFactor } from '../db/mfa.ts';
import { findRecoverySet, unusedRecoveryCodes, updateRecoverySet, useRecoveryCode } from '../db/mfa-recovery-codes.ts';
import type { Deps } from '../deps.ts';
import { tokenAfterCommit, tokenInTransaction } from '../accounts/session.ts';
import type { TokenResponse } from '../accounts/issued-session.ts';
import { ApiError, forbidden, unprocessable, validationFailed } from '../core/errors.ts';
import { afterFailure, lockSecondsLeft, RESET_FAILURES } from './failure-lock.ts';
import { mfaVerificationAttempt } from './hook.ts';
import { factorNotFound } from './load-factor.ts';
import {
  CODE_SHAPE,
  hashRecoveryCode,
  normaliseRecoveryCode,
  RECOVERY_CODE_AMR,
  RECOVERY_CODE_TYPE,
} from './recovery-codes.ts';
import { upgradeSessionToAal2 } from './upgrade-session.ts';

/** The first lock of a recovery-code set. */
export const RECOVERY_LOCK_SECONDS = 15 * 60;

const locked = (seconds: number) =>
  new ApiError(
    429,
    'over_request_rate_limit',
    `Too many invalid recovery codes. For security purposes, you can only try again after ${seconds} seconds.`,
  );

export async function verifyRecoveryCode(
  deps: Deps,
  auth: AuthContext,
  codeIn: string | undefined,
  ip: string | undefined,
): Promise<TokenResponse['body']> {
  if (!deps.config.mfa.recoveryCodes.verifyEnabled)
    throw unprocessable('mfa_recovery_codes_verify_not_enabled', 'MFA verification is disabled for recovery codes');
  const code = normaliseRecoveryCode(codeIn ?? '');
  if (code === '') throw validationFailed('Code needs to be non-empty');
  const session = auth.session;
  if (!session)
    throw new ApiError(
      500,
      'unexpected_failure',
      'A valid session and a registered user are required to verify a recovery code',
    );
  const now = deps.now();
  const pending = await transaction(deps.db, async (tx) => {
    const set = await findRecoverySet(tx, auth.user.id, { forUpdate: true });
    // Codes left from before their user's last factor went (since issue 39 they go with it) lift nothing.
    if (!set || !(await hasVerifiedFactor(tx, auth.user.id))) throw factorNotFound();
    const wait = lockSecondsLeft(set, now);
    if (wait > 0) throw locked(wait);
    // Every unused code is compared (constant time each): no look-up by hash, no early exit.
    const hash = CODE_SHAPE.test(code) ? hashRecoveryCode(set.id, code) : '';
    let match: string | undefined;
    for (const c of await unusedRecoveryCodes(tx, set.id))
      if (timingSafeEqual(c.codeHash, hash) && hash !== '') match = c.id;
    const decision = await mfaVerificationAttempt(deps, tx, {
      factorId: set.id,
      factorType: RECOVERY_CODE_TYPE,
      userId: auth.user.id,
      valid: match !== undefined,
    });
    if (decision.decision === 'reject') throw forbidden('mfa_verification_rejected', decision.message);
    await insertAudit(tx, {
      actor: auth.user,
      action: 'verification_attempted',
      ip,
      now,
      traits: { factor_id: set.id, factor_type: RECOVERY_CODE_TYPE, success: match !== undefined },
    });
    if (match === undefined || !(await useRecoveryCode(tx, match, now))) {
      // The count is committed, then the code refused.
      await updateRecoverySet(tx, set.id, { ...afterFailure(set, RECOVERY_LOCK_SECONDS, now), updatedAt: now });
      throw new CommitThenFail(unprocessable('mfa_verification_failed', 'Invalid recovery code entered'));
    }
    await updateRecoverySet(tx, set.id, { ...RESET_FAILURES, updatedAt: now });
    const upgraded = await upgradeSessionToAal2(deps, tx, {
      userId: auth.user.id,
      sessionId: session.id,
      factorId: set.id,
      method: RECOVERY_CODE_AMR,
      now,
    });
    // With the custom access token hook, signed here: its refusal takes the upgrade back.
    return tokenInTransaction(deps, tx, { user: auth.user, ...upgraded, method: RECOVERY_CODE_AMR });
  });
  return (await tokenAfterCommit(deps, pending)).body;
}
