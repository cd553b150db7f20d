// The body both passkey verify endpoints read, checked in GoTrue's order (passkey_*.go).
import { parseUuid } from '../http/uuid.ts';
import type { CeremonyError } from '../crypto/webauthn.ts';
import type { Deps } from '../deps.ts';
import { ApiError, validationFailed } from '../core/errors.ts';

export interface CeremonyInput {
  challenge_id?: string;
  credential?: unknown;
}

export function challengeFrom(input: CeremonyInput): string {
  if (!input.challenge_id) throw validationFailed('challenge_id is required');
  if (input.credential === undefined || input.credential === null) throw validationFailed('credential is required');
  const id = parseUuid(input.challenge_id);
  if (!id) throw validationFailed('challenge_id must be a valid UUID');
  return id;
}

/** A refused ceremony: the reason is logged with the error, never sent. */
export const verificationFailed = (err: CeremonyError) =>
  new ApiError(400, 'webauthn_verification_failed', 'Credential verification failed', undefined, err);

/** PASSKEY_USER_VERIFICATION `required`: a response without the UV flag is refused (review, section 5). */
export const requiresUv = (deps: Deps): boolean => deps.config.passkey.userVerification === 'required';
