// WebAuthn factors — GoTrue: mfa.go challengeWebAuthnFactor and verifyWebAuthnFactor. An
// unverified factor is challenged to register a key ("create"), a verified one to sign with it
// ("request"); a verified ceremony makes the session aal2 with AMR `mfa/webauthn`.
import type { AuthContext } from '../app-env.ts';
import {
  CeremonyError,
  newChallenge,
  parseAuthentication,
  parseRegistration,
  PUB_KEY_CRED_PARAMS,
  TIMEOUT_MS,
  userHandle,
  verifyAssertion,
  verifyRegistration,
} from '../crypto/webauthn.ts';
import { insertAudit } from '../db/audit.ts';
import { CommitThenFail, type Executor, transaction } from '../db/database.ts';
import {
  type ChallengeRow,
  deleteChallenge,
  deleteOtherUnverifiedFactors,
  type FactorRow,
  findFactor,
  listFactors,
  lockChallenge,
  updateFactor,
} from '../db/mfa.ts';
import { factorCredentialTaken } from '../db/webauthn.ts';
import type { Deps } from '../deps.ts';
import { notify } from '../accounts/notify.ts';
import { tokenAfterCommit, tokenInTransaction } from '../accounts/session.ts';
import type { TokenResponse } from '../accounts/issued-session.ts';
import { ApiError, unprocessable, validationFailed } from '../core/errors.ts';
import { challengeNotFound, challengeRefusal, liveChallenge } from './challenge-checks.ts';
import { requireAal2ToFinish } from './load-factor.ts';
import { upgradeSessionToAal2 } from './upgrade-session.ts';
import { goCredential, stdBase64, storedCredential, withSignCount } from '../accounts/webauthn-credential.ts';

import { requireRelyingParty } from '../accounts/webauthn-rp.ts';
const verifiedWebauthn = (factors: FactorRow[]) =>
  factors.filter((f) => f.factorType === 'webauthn' && f.status === 'verified' && f.webAuthnCredential);

export interface WebauthnChallenge {
  sessionData: Record<string, unknown>;
  answer: { type: 'create' | 'request'; credential_options: { publicKey: Record<string, unknown> } };
}

/** The options of a factor's next ceremony, and the session data kept to check its answer. */
export async function webauthnChallenge(
  deps: Deps,
  ex: Executor,
  auth: AuthContext,
  factor: FactorRow,
  now: Date,
): Promise<WebauthnChallenge> {
  const rp = requireRelyingParty(deps);
  const challenge = newChallenge(deps.randomBytes);
  const keys = verifiedWebauthn(await listFactors(ex, auth.user.id)).map(
    (f) => (f.webAuthnCredential as { id: string }).id,
  );
  const sessionData: Record<string, unknown> = {
    challenge,
    rpId: rp.id,
    user_id: stdBase64(new TextEncoder().encode(auth.user.id)),
    expires: new Date(now.getTime() + deps.config.mfa.challengeExpiry * 1000).toISOString(),
    userVerification: '',
  };
  const descriptor = (id: string) => ({
    type: 'public-key',
    id: id.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, ''),
  });
  if (factor.status !== 'verified') {
    const email = auth.user.email ?? '';
    const publicKey: Record<string, unknown> = {
      rp: { name: rp.name, id: rp.id },
      user: { name: email, displayName: email, id: userHandle(auth.user.id) },
      challenge,
      pubKeyCredParams: PUB_KEY_CRED_PARAMS,
      timeout: TIMEOUT_MS,
    };
    if (keys.length > 0)
      publicKey.excludeCredentials = keys.map((id) => ({ ...descriptor(id), transports: ['usb', 'nfc'] }));
    publicKey.authenticatorSelection = {};
    return { sessionData, answer: { type: 'create', credential_options: { publicKey } } };
  }
  sessionData.allowed_credentials = keys;
  const publicKey = { challenge, timeout: TIMEOUT_MS, rpId: rp.id, allowCredentials: keys.map(descriptor) };
  return { sessionData, answer: { type: 'request', credential_options: { publicKey } } };
}

export interface WebauthnVerifyInput {
  challengeId: string | undefined;
  webauthn: { type?: string; credential_response?: unknown } | undefined;
}

// GoTrue answers a refused ceremony with a 500; a client's failed proof is a 4xx here.
const refused = (err: CeremonyError) =>
  new ApiError(422, 'mfa_verification_failed', 'WebAuthn verification failed', undefined, err);

/**
 * A refusal's reason as logged: the library quotes challenges and credential ids in its messages
 * ("Unexpected … challenge "<value>", expected "<value>""); any quoted base64 run is left out.
 */
export const ceremonyReason = (err: CeremonyError) => err.message.replace(/"[A-Za-z0-9+/_-]{16,}={0,2}"/g, '"…"');

/** POST /factors/{id}/verify for a WebAuthn factor (the type gate and body checks in GoTrue's order). */
export async function verifyWebAuthnFactor(
  deps: Deps,
  auth: AuthContext,
  factor: FactorRow,
  input: WebauthnVerifyInput,
  ip: string,
): Promise<TokenResponse['body']> {
  if (!deps.config.mfa.webauthn.verifyEnabled)
    throw unprocessable('mfa_webauthn_enroll_not_enabled', 'MFA verification is disabled for WebAuthn');
  const params = input.webauthn;
  if (!params) throw validationFailed('WebAuthn config required');
  if (params.type !== 'create' && params.type !== 'request')
    throw validationFailed('WebAuthn type must be create or request');
  if (params.credential_response === undefined || params.credential_response === null)
    throw validationFailed('credential_response required');
  const session = auth.session;
  if (!session)
    throw new ApiError(
      500,
      'unexpected_failure',
      'A valid session and a registered user are required to verify a factor',
    );
  await requireAal2ToFinish(deps.db, auth, factor, 'verify');
  const rp = requireRelyingParty(deps);
  const seen = await liveChallenge(deps, input.challengeId, factor.id, ip, true);
  const challengeId = seen.id;
  const expected = {
    challenge: String((seen!.webAuthnSessionData as { challenge?: unknown }).challenge ?? ''),
    rp,
    requireUserVerification: false,
  };
  // The factor's state decides the ceremony: a key is registered once, then only signs.
  const create = factor.status !== 'verified';
  if ((params.type === 'create') !== create)
    throw unprocessable(
      'mfa_verification_failed',
      `WebAuthn type must be ${create ? 'create' : 'request'} for this factor`,
    );

  const now = deps.now();
  const registration = create ? parseRegistration(params.credential_response) : undefined;
  const assertion = create ? undefined : parseAuthentication(params.credential_response);
  if (!registration && !assertion) throw validationFailed('Invalid credential_response');

  /** Checks the ceremony and stores its outcome on the factor that answered it. */
  const prove = async (tx: Executor): Promise<string> => {
    if (registration) {
      const credential = await verifyRegistration(registration, expected);
      const stored = goCredential(credential, true);
      if (await factorCredentialTaken(tx, stored.id as string, factor.id))
        throw new CeremonyError('registration refused: credential id already registered');
      await updateFactor(tx, factor.id, {
        status: 'verified',
        webAuthnCredential: stored,
        webAuthnAaguid: credential.aaguid,
        updatedAt: now,
        lastWebauthnChallengeData: lastChallenge(seen!, 'create', registration),
      });
      return factor.id;
    }
    // GoTrue offers all the user's WebAuthn keys; the one that signed is the factor recorded.
    const rawId = toStd(assertion!.rawId);
    const owner = verifiedWebauthn(await listFactors(tx, auth.user.id)).find(
      (f) => (f.webAuthnCredential as { id?: unknown }).id === rawId,
    );
    // Locked: two assertions cannot both move the counter on from the same value.
    const locked = owner ? await findFactor(tx, owner.id, { forUpdate: true }) : undefined;
    const stored = locked ? storedCredential(locked.webAuthnCredential) : undefined;
    if (!locked || !stored) throw new CeremonyError('assertion refused: unknown credential');
    const result = await verifyAssertion(assertion!, expected, stored);
    await updateFactor(tx, locked.id, {
      webAuthnCredential: withSignCount(locked.webAuthnCredential, result.counter, result.backedUp),
      updatedAt: now,
      lastWebauthnChallengeData: lastChallenge(seen!, 'request', assertion),
    });
    return locked.id;
  };

  const pending = await transaction(deps.db, async (tx) => {
    // Consumed by any attempt, proven or not: a challenge answers one ceremony.
    const challenge = await lockChallenge(tx, challengeId, factor.id);
    if (challengeRefusal(deps, challenge, ip, true)) throw challengeNotFound();
    await deleteChallenge(tx, challengeId);
    let factorId: string;
    try {
      factorId = await prove(tx);
    } catch (err) {
      if (!(err instanceof CeremonyError)) throw err;
      // The reason only: neither the challenge nor the credential (docs/mfa.md).
      deps.logger.warn('WebAuthn verification refused', {
        user_id: auth.user.id,
        factor_id: factor.id,
        ceremony: create ? 'create' : 'request',
        reason: ceremonyReason(err),
      });
      // The challenge's deletion is committed.
      throw new CommitThenFail(refused(err));
    }
    await insertAudit(tx, {
      actor: auth.user,
      action: 'verification_attempted',
      ip,
      now,
      traits: { factor_id: factorId, challenge_id: challengeId, factor_type: 'webauthn' },
    });
    const upgraded = await upgradeSessionToAal2(deps, tx, {
      userId: auth.user.id,
      sessionId: session.id,
      factorId,
      method: 'mfa/webauthn',
      now,
    });
    await deleteOtherUnverifiedFactors(tx, auth.user.id, 'webauthn', factorId);
    // With the custom access token hook, signed here: its refusal takes the upgrade back.
    return tokenInTransaction(deps, tx, {
      user: auth.user,
      session: upgraded.session,
      refreshToken: upgraded.refreshToken,
    });
  });
  const issued = await tokenAfterCommit(deps, pending);
  if (create) await notify(deps, { kind: 'mfa_factor_enrolled', user: auth.user, factorType: 'webauthn' }, ip);
  return issued.body;
}

const toStd = (b64url: string) => {
  const s = b64url.replaceAll('-', '+').replaceAll('_', '/');
  return s + '='.repeat((4 - (s.length % 4)) % 4);
};

/** GoTrue's last_webauthn_challenge_data: the challenge row, the ceremony type and the response. */
function lastChallenge(c: ChallengeRow, type: 'create' | 'request', response: unknown): Record<string, unknown> {
  return {
    challenge: {
      challenge_id: c.id,
      factor_id: c.factorId,
      created_at: c.createdAt.toISOString(),
      ip_address: c.ipAddress,
      web_authn_session_data: c.webAuthnSessionData,
    },
    type,
    credential_response: response,
  };
}
