// GoTrue's MFA verification attempt hook at the verify call sites: it runs once a TOTP or phone
// code's validity is known and may reject the attempt (403 mfa_verification_rejected, and the
// caller signs the user out everywhere). GoTrue calls it for TOTP and phone factors only, so a
// recovery code's attempt always continues.
import type { Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { mfaAttemptDecision } from '../hooks/verification-attempts.ts';

export interface VerificationAttempt {
  factorId: string;
  /** `recovery_code`: factorId is the recovery-code set's id. */
  factorType: 'totp' | 'phone' | 'recovery_code';
  userId: string;
  valid: boolean;
  ip?: string;
}

export type AttemptDecision = { decision: 'continue' } | { decision: 'reject'; message: string };

const CONTINUE: AttemptDecision = { decision: 'continue' };

/** `tx`: the verification's transaction (a Postgres-function hook runs in it). */
export async function mfaVerificationAttempt(
  deps: Deps,
  tx: Executor,
  attempt: VerificationAttempt,
): Promise<AttemptDecision> {
  if (!deps.config.hooks.MFA_VERIFICATION_ATTEMPT.enabled || attempt.factorType === 'recovery_code') return CONTINUE;
  const d = await mfaAttemptDecision(deps, tx, attempt);
  return d.reject ? { decision: 'reject', message: d.message } : CONTINUE;
}
