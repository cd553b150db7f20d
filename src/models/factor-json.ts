// A factor as GoTrue serialises it (models/factor.go Factor, field order included): the secret
// and the WebAuthn credential never leave the server.
import type { FactorRow } from '../db/mfa.ts';

export function factorJson(f: FactorRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: f.id,
    created_at: f.createdAt.toISOString(),
    updated_at: f.updatedAt.toISOString(),
    status: f.status,
  };
  if (f.friendlyName) out.friendly_name = f.friendlyName;
  out.factor_type = f.factorType;
  out.phone = f.phone ?? '';
  out.last_challenged_at = f.lastChallengedAt ? f.lastChallengedAt.toISOString() : null;
  if (f.webAuthnAaguid) out.web_authn_aaguid = f.webAuthnAaguid;
  if (f.lastWebauthnChallengeData) out.last_webauthn_challenge_data = f.lastWebauthnChallengeData;
  return out;
}
