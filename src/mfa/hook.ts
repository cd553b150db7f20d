// The seam for GoTrue's MFA verification attempt hook (a later issue): it runs before a TOTP,
// phone or recovery code's validity decides the answer, and may reject the attempt (403
// mfa_verification_rejected). Until hooks exist every attempt continues.
import type { Deps } from '../deps.ts';

export interface VerificationAttempt {
  factorId: string;
  /** `recovery_code`: factorId is the recovery-code set's id. */
  factorType: 'totp' | 'phone' | 'recovery_code';
  userId: string;
  valid: boolean;
}

export type AttemptDecision = { decision: 'continue' } | { decision: 'reject'; message: string };

export async function mfaVerificationAttempt(_deps: Deps, _attempt: VerificationAttempt): Promise<AttemptDecision> {
  return { decision: 'continue' };
}
