// Passkey sign-in, no session needed — GoTrue: passkey_authentication.go. Discoverable login: the
// options name no user; the assertion's user handle (the user id) says whose passkey signed.
// The session is aal1 with AMR `passkey`, as GoTrue's. A passkey is a whole sign-in, so user
// verification is asked for as PASSKEY_USER_VERIFICATION says (`required` by default; GoTrue:
// `preferred`, with which a stolen security key without a PIN signs in alone).
import { parseUuid } from '../http/uuid.ts';
import { CeremonyError, newChallenge, parseAuthentication, TIMEOUT_MS, verifyAssertion } from '../crypto/webauthn.ts';
import { fromBase64url } from '../crypto/encoding.ts';
import { transaction } from '../db/database.ts';
import { findUserById, isBanned } from '../db/users.ts';
import {
  consumeWebauthnChallenge,
  insertWebauthnChallenge,
  lockPasskeyByCredentialId,
  updatePasskey,
} from '../db/webauthn.ts';
import type { Deps } from '../deps.ts';
import { createSession, tokenAfterCommit, tokenInTransaction } from '../accounts/session.ts';
import type { RequestMeta, TokenResponse } from '../accounts/issued-session.ts';
import { ApiError, forbidden } from '../core/errors.ts';
import { requireRelyingParty } from '../accounts/webauthn-rp.ts';
import { type CeremonyInput, challengeFrom, requiresUv, verificationFailed } from './challenge.ts';

export async function authenticationOptions(deps: Deps): Promise<Record<string, unknown>> {
  const rp = requireRelyingParty(deps);
  const uv = deps.config.passkey.userVerification;
  const now = deps.now();
  const expiresAt = new Date(now.getTime() + deps.config.webauthn.challengeExpiry * 1000);
  const challenge = newChallenge(deps.randomBytes);
  const id = crypto.randomUUID();
  await insertWebauthnChallenge(deps.db, {
    id,
    userId: null,
    kind: 'authentication',
    createdAt: now,
    expiresAt,
    sessionData: { challenge, rpId: rp.id, expires: expiresAt.toISOString(), userVerification: uv },
  });
  return {
    challenge_id: id,
    options: { challenge, timeout: TIMEOUT_MS, rpId: rp.id, userVerification: uv },
    expires_at: Math.floor(expiresAt.getTime() / 1000),
  };
}

function handleUserId(handle: string | undefined): string | undefined {
  if (!handle) return undefined;
  try {
    return parseUuid(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64url(handle))) ?? undefined;
  } catch {
    return undefined;
  }
}

export async function authenticationVerify(
  deps: Deps,
  input: CeremonyInput,
  meta: RequestMeta,
): Promise<TokenResponse> {
  const challengeId = challengeFrom(input);
  const now = deps.now();
  const challenge = await consumeWebauthnChallenge(deps.db, challengeId, 'authentication', null);
  if (!challenge) throw new ApiError(400, 'webauthn_challenge_not_found', 'Challenge not found or already used');
  if (now.getTime() > challenge.expiresAt.getTime())
    throw new ApiError(400, 'webauthn_challenge_expired', 'Challenge has expired');
  const response = parseAuthentication(input.credential);
  if (!response) throw new ApiError(400, 'webauthn_verification_failed', 'Invalid credential response');
  const rp = requireRelyingParty(deps);
  const expected = {
    challenge: String((challenge.sessionData as { challenge?: unknown }).challenge ?? ''),
    rp,
    requireUserVerification: requiresUv(deps),
  };

  const pending = await transaction(deps.db, async (tx) => {
    const userId = handleUserId(response.response.userHandle);
    const found = userId ? await findUserById(tx, userId) : undefined;
    // A soft-deleted user is a missing one (review M3): GoTrue's answer too, as its soft delete
    // removes the passkeys. Passkeys left by a soft delete made before authsvc removed them stay
    // refused here.
    const user = found?.deletedAt ? undefined : found;
    // The passkey row is locked: two assertions cannot both move its counter from one value.
    const passkey = user ? await lockPasskeyByCredentialId(tx, fromBase64url(response.rawId)) : undefined;
    if (!user || !passkey || passkey.userId !== user.id) {
      const reason = found?.deletedAt ? 'the user is soft-deleted' : 'unknown user or credential';
      throw verificationFailed(new CeremonyError(`assertion refused: ${reason}`));
    }
    let result: Awaited<ReturnType<typeof verifyAssertion>>;
    try {
      result = await verifyAssertion(response, expected, {
        id: passkey.credentialId,
        publicKey: passkey.publicKey,
        counter: passkey.signCount,
        backupEligible: passkey.backupEligible,
      });
    } catch (err) {
      throw err instanceof CeremonyError ? verificationFailed(err) : err;
    }
    if (user.email && !user.emailConfirmedAt) throw forbidden('email_not_confirmed', 'Email not confirmed');
    if (user.phone && !user.phoneConfirmedAt) throw forbidden('phone_not_confirmed', 'Phone not confirmed');
    if (isBanned(user, now)) throw forbidden('user_banned', 'User is banned');
    await updatePasskey(tx, passkey.id, {
      signCount: result.counter,
      backedUp: result.backedUp,
      lastUsedAt: now,
      updatedAt: now,
    });
    const login = { actor: user, action: 'login' as const, traits: { passkey_id: passkey.id }, ip: meta.ip, now };
    // With the custom access token hook, signed here: its refusal takes the session back.
    return tokenInTransaction(deps, tx, await createSession(deps, tx, user, 'passkey', meta, [login]));
  });
  return tokenAfterCommit(deps, pending);
}
