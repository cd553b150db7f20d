// The WebAuthn relying party of MFA factors and passkeys alike, from the WEBAUTHN_RP_* settings.
import { type RelyingParty, relyingParty, RelyingPartyMissing } from '../crypto/webauthn.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';

/** GoTrue answers a missing relying party with a 500; the log says which settings are missing. */
export function requireRelyingParty(deps: Deps): RelyingParty {
  try {
    return relyingParty(deps.config.webauthn);
  } catch (err) {
    if (err instanceof RelyingPartyMissing)
      throw new ApiError(500, 'unexpected_failure', 'Failed to initialize WebAuthn', undefined, err);
    throw err;
  }
}
