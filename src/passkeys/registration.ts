// Passkey registration for a signed-in user — GoTrue: passkey_registration.go
// (PasskeyRegistrationOptions, PasskeyRegistrationVerify). The credential must be discoverable
// (residentKey "required"): it is what signs in later with no user named.
import type { AuthContext } from '../app-env.ts';
import { hasVerifiedFactor } from '../db/mfa.ts';
import {
  CeremonyError,
  newChallenge,
  parseRegistration,
  PUB_KEY_CRED_PARAMS,
  TIMEOUT_MS,
  userHandle,
  verifyRegistration,
} from '../crypto/webauthn.ts';
import { base64url } from '../crypto/encoding.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import type { UserRow } from '../db/users.ts';
import {
  consumeWebauthnChallenge,
  countPasskeys,
  insertPasskey,
  insertWebauthnChallenge,
  listPasskeys,
} from '../db/webauthn.ts';
import type { Deps } from '../deps.ts';
import { notify } from '../accounts/notify.ts';
import { ApiError, forbidden, unprocessable } from '../core/errors.ts';
import { requireRelyingParty } from '../accounts/webauthn-rp.ts';
import { stdBase64 } from '../accounts/webauthn-credential.ts';
import { type CeremonyInput, challengeFrom, requiresUv, verificationFailed } from './challenge.ts';

const tooMany = () => unprocessable('too_many_passkeys', 'Maximum number of passkeys reached');

/** GoTrue's requirePasskeyManagementAAL: with MFA on, adding or removing a passkey needs aal2. */
export async function requirePasskeyAal(deps: Deps, auth: AuthContext): Promise<void> {
  if (auth.session?.aal === 'aal2') return;
  if (await hasVerifiedFactor(deps.db, auth.user.id)) {
    throw forbidden('insufficient_aal', 'AAL2 session is required to manage passkeys when MFA is enabled');
  }
}

async function requireMayRegister(deps: Deps, auth: AuthContext): Promise<void> {
  if (auth.user.isSsoUser) throw unprocessable('validation_failed', 'SSO users cannot register passkeys');
  await requirePasskeyAal(deps, auth);
}

/** go-webauthn's user entity: name = email, else phone; display name = user_metadata.name, else name. */
function userEntity(user: UserRow): { name: string; displayName: string; id: string } {
  const name = user.email || user.phone || '';
  const meta = user.rawUserMetaData as Record<string, unknown> | null;
  const displayName = typeof meta?.name === 'string' && meta.name !== '' ? meta.name : name;
  return { name, displayName, id: userHandle(user.id) };
}

export async function registrationOptions(deps: Deps, auth: AuthContext): Promise<Record<string, unknown>> {
  await requireMayRegister(deps, auth);
  const existing = await listPasskeys(deps.db, auth.user.id);
  if (existing.length >= deps.config.passkey.maxPerUser) throw tooMany();
  const rp = requireRelyingParty(deps);
  const now = deps.now();
  const expiresAt = new Date(now.getTime() + deps.config.webauthn.challengeExpiry * 1000);
  const challenge = newChallenge(deps.randomBytes);
  const options: Record<string, unknown> = {
    rp: { name: rp.name, id: rp.id },
    user: userEntity(auth.user),
    challenge,
    pubKeyCredParams: PUB_KEY_CRED_PARAMS,
    timeout: TIMEOUT_MS,
  };
  if (existing.length > 0)
    options.excludeCredentials = existing.map((p) => ({ type: 'public-key', id: base64url(p.credentialId) }));
  const uv = deps.config.passkey.userVerification;
  options.authenticatorSelection = { residentKey: 'required', userVerification: uv };
  options.attestation = 'none';
  const id = crypto.randomUUID();
  await insertWebauthnChallenge(deps.db, {
    id,
    userId: auth.user.id,
    kind: 'registration',
    createdAt: now,
    expiresAt,
    sessionData: {
      challenge,
      rpId: rp.id,
      user_id: stdBase64(new TextEncoder().encode(auth.user.id)),
      expires: expiresAt.toISOString(),
      userVerification: uv,
    },
  });
  return { challenge_id: id, options, expires_at: Math.floor(expiresAt.getTime() / 1000) };
}

export async function registrationVerify(
  deps: Deps,
  auth: AuthContext,
  input: CeremonyInput,
  ip: string | undefined,
): Promise<Record<string, unknown>> {
  await requireMayRegister(deps, auth);
  const challengeId = challengeFrom(input);
  const now = deps.now();
  const challenge = await consumeWebauthnChallenge(deps.db, challengeId, 'registration', auth.user.id);
  if (!challenge) throw new ApiError(400, 'webauthn_challenge_not_found', 'Challenge not found or already used');
  if (now.getTime() > challenge.expiresAt.getTime())
    throw new ApiError(400, 'webauthn_challenge_expired', 'Challenge has expired');
  const response = parseRegistration(input.credential);
  if (!response) throw new ApiError(400, 'webauthn_verification_failed', 'Invalid credential response');
  const rp = requireRelyingParty(deps);
  const expected = {
    challenge: String((challenge.sessionData as { challenge?: unknown }).challenge ?? ''),
    rp,
    requireUserVerification: requiresUv(deps),
  };
  let credential: Awaited<ReturnType<typeof verifyRegistration>>;
  try {
    credential = await verifyRegistration(response, expected);
  } catch (err) {
    if (err instanceof CeremonyError) throw verificationFailed(err);
    throw err;
  }
  const row = await transaction(deps.db, async (tx) => {
    if ((await countPasskeys(tx, auth.user.id)) >= deps.config.passkey.maxPerUser) throw tooMany();
    const inserted = await insertPasskey(tx, {
      id: crypto.randomUUID(),
      userId: auth.user.id,
      credentialId: credential.id,
      publicKey: credential.publicKey,
      attestationType: credential.attestationType,
      aaguid: credential.aaguid,
      signCount: credential.counter,
      transports: credential.transports,
      backupEligible: credential.backupEligible,
      backedUp: credential.backedUp,
      friendlyName: 'Passkey',
      createdAt: now,
      updatedAt: now,
    });
    if (!inserted) throw unprocessable('webauthn_credential_exists', 'This credential is already registered');
    await insertAudit(tx, {
      actor: auth.user,
      action: 'passkey_created',
      traits: { passkey_id: inserted.id },
      ip,
      now,
    });
    return inserted;
  });
  // After the commit; never fails the registration (accounts/notify.ts). Review L3.
  await notify(deps, { kind: 'passkey_added', user: auth.user }, ip);
  return { id: row.id, friendly_name: row.friendlyName, created_at: row.createdAt.toISOString() };
}
