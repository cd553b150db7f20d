// WebAuthn ceremonies shared by MFA factors (mfa/webauthn*.ts) and passkeys (passkeys/): the
// options a browser is given, the shape a response must have, and its verification by
// @simplewebauthn/server (WebCrypto only: docs/decisions/webauthn-library.md). Everything a
// ceremony is refused for becomes a CeremonyError, whose message is logged, never sent.
// The library (with its ASN.1 and X.509 dependencies, about 600 KB of code) is imported on the
// first ceremony, not at start: most deployments never run one (docs/runtimes.md, footprint).
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import * as z from 'zod';
import type { Config } from '../config/types.ts';
import { base64url, fromBase64url } from './encoding.ts';

type Library = typeof import('@simplewebauthn/server');
let library: Promise<Library> | undefined;
const loadLibrary = (): Promise<Library> => (library ??= import('@simplewebauthn/server'));

/** Refused: the response does not prove what it must. */
export class CeremonyError extends Error {}
/** The relying party is not configured (WEBAUTHN_RP_ID, _RP_DISPLAY_NAME, _RP_ORIGINS). */
export class RelyingPartyMissing extends Error {}

export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

export function relyingParty(cfg: Config['webauthn']): RelyingParty {
  if (!cfg.rpId || !cfg.rpDisplayName || cfg.rpOrigins.length === 0) {
    throw new RelyingPartyMissing(
      'WEBAUTHN_RP_ID, WEBAUTHN_RP_DISPLAY_NAME and WEBAUTHN_RP_ORIGINS must all be set for WebAuthn',
    );
  }
  return { id: cfg.rpId, name: cfg.rpDisplayName, origins: cfg.rpOrigins };
}

/** GoTrue's (go-webauthn's) offer, ES256 first; every one of them is verified here too. */
export const ALGORITHMS = [-7, -35, -36, -257, -258, -259, -37, -38, -39, -8];
export const PUB_KEY_CRED_PARAMS = ALGORITHMS.map((alg) => ({ type: 'public-key', alg }));
/** go-webauthn's default ceremony timeout, in milliseconds. */
export const TIMEOUT_MS = 300_000;
/** WebAuthn §5.1.3: a credential id is at most 1023 bytes. */
const MAX_CREDENTIAL_ID = 1023;

export function newChallenge(randomBytes: (n: number) => Uint8Array): string {
  return base64url(randomBytes(32));
}

/** A user handle as GoTrue's: the user id's 36 ASCII characters, base64url. */
export const userHandle = (userId: string): string => base64url(new TextEncoder().encode(userId));

// Base64url without padding, as browsers and auth-js send every binary field. The bounds keep a
// hostile body's decoding small (a body is at most 1 MiB anyway).
// A length of 4n+1 characters decodes to no whole byte: not base64url.
const b64u = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_-]*$/)
    .refine((v) => v.length % 4 !== 1);
const common = {
  id: b64u(2048),
  rawId: b64u(2048),
  type: z.literal('public-key'),
  clientExtensionResults: z.record(z.string(), z.unknown()).optional().default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional().catch(undefined),
};
const RegistrationShape = z.object({
  ...common,
  response: z.object({
    clientDataJSON: b64u(16_384),
    attestationObject: b64u(262_144),
    transports: z.array(z.string().max(32)).max(16).optional(),
  }),
});
const AuthenticationShape = z.object({
  ...common,
  response: z.object({
    clientDataJSON: b64u(16_384),
    authenticatorData: b64u(65_536),
    signature: b64u(16_384),
    userHandle: z
      .string()
      .max(1024)
      .regex(/^[A-Za-z0-9_-]*$/)
      .nullish(),
  }),
});

/** A RegistrationResponseJSON, or undefined when it is not one (→ "Invalid credential response"). */
export function parseRegistration(raw: unknown): RegistrationResponseJSON | undefined {
  const r = RegistrationShape.safeParse(raw);
  return r.success ? (r.data as RegistrationResponseJSON) : undefined;
}

export function parseAuthentication(raw: unknown): AuthenticationResponseJSON | undefined {
  const r = AuthenticationShape.safeParse(raw);
  if (!r.success) return undefined;
  const { userHandle: handle, ...response } = r.data.response;
  return { ...r.data, response: handle ? { ...response, userHandle: handle } : response } as AuthenticationResponseJSON;
}

export interface NewCredential {
  id: Uint8Array;
  publicKey: Uint8Array;
  counter: number;
  /** The AAGUID as a UUID string (all zeros for most `none` attestations). */
  aaguid: string;
  transports: string[];
  attestationType: string;
  userVerified: boolean;
  backupEligible: boolean;
  backedUp: boolean;
}

export interface Expected {
  challenge: string;
  rp: RelyingParty;
  requireUserVerification: boolean;
}

/**
 * Registration: clientData type, challenge, origin ∈ RP origins, rpIdHash = SHA-256(RP ID),
 * user present (user verified when required), an offered algorithm, the attestation statement
 * (`none` and the signed formats), a credential id of at most 1023 bytes.
 */
export async function verifyRegistration(
  response: RegistrationResponseJSON,
  expected: Expected,
): Promise<NewCredential> {
  const { verifyRegistrationResponse } = await loadLibrary();
  let result: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    result = await verifyRegistrationResponse({
      response,
      expectedChallenge: expected.challenge,
      expectedOrigin: expected.rp.origins,
      expectedRPID: expected.rp.id,
      requireUserPresence: true,
      requireUserVerification: expected.requireUserVerification,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch (err) {
    throw new CeremonyError(`registration refused: ${(err as Error).message}`);
  }
  if (!result.verified) throw new CeremonyError('registration refused: not verified');
  const info = result.registrationInfo;
  const id = fromBase64url(info.credential.id);
  if (id.length > MAX_CREDENTIAL_ID)
    throw new CeremonyError('registration refused: credential id longer than 1023 bytes');
  if (info.credential.id !== response.id)
    throw new CeremonyError('registration refused: the credential id differs from the response id');
  return {
    id,
    publicKey: info.credential.publicKey,
    counter: info.credential.counter,
    aaguid: info.aaguid,
    transports: response.response.transports ?? [],
    attestationType: info.fmt,
    userVerified: info.userVerified,
    backupEligible: info.credentialDeviceType === 'multiDevice',
    backedUp: info.credentialBackedUp,
  };
}

export interface StoredCredential {
  id: Uint8Array;
  publicKey: Uint8Array;
  counter: number;
  backupEligible: boolean;
}

/**
 * Assertion: as registration, plus the signature over authenticatorData ‖ SHA-256(clientData)
 * with the stored key, and the sign counter: a counter that does not move forward (when either
 * side is non-zero) is refused, as is a credential whose backup eligibility changed.
 */
export async function verifyAssertion(
  response: AuthenticationResponseJSON,
  expected: Expected,
  stored: StoredCredential,
): Promise<{ counter: number; backedUp: boolean; userVerified: boolean }> {
  if (response.id !== base64url(stored.id)) throw new CeremonyError('assertion refused: not the expected credential');
  const { verifyAuthenticationResponse } = await loadLibrary();
  let result: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: expected.challenge,
      expectedOrigin: expected.rp.origins,
      expectedRPID: expected.rp.id,
      requireUserVerification: expected.requireUserVerification,
      credential: { id: base64url(stored.id), publicKey: new Uint8Array(stored.publicKey), counter: stored.counter },
    });
  } catch (err) {
    throw new CeremonyError(`assertion refused: ${(err as Error).message}`);
  }
  if (!result.verified) throw new CeremonyError('assertion refused: bad signature');
  const info = result.authenticationInfo;
  if ((info.credentialDeviceType === 'multiDevice') !== stored.backupEligible) {
    throw new CeremonyError('assertion refused: the backup-eligible flag changed since registration');
  }
  return { counter: info.newCounter, backedUp: info.credentialBackedUp, userVerified: info.userVerified };
}
