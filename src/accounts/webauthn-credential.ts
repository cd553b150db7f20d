// The JSON GoTrue keeps for a WebAuthn factor (go-webauthn's Credential in
// mfa_factors.web_authn_credential; SessionData in mfa_challenges.web_authn_session_data), written
// and read here so factors move between GoTrue and authsvc. Go encodes []byte as standard
// base64 with padding.
import type { NewCredential, StoredCredential } from '../crypto/webauthn.ts';

export function stdBase64(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

function fromStdBase64(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

const uuidBytes = (uuid: string) =>
  Uint8Array.from((uuid.replaceAll('-', '').match(/../g) ?? []).map((h) => Number.parseInt(h, 16)));

/** go-webauthn's Credential for a newly registered key. */
export function goCredential(c: NewCredential, userPresent: boolean): Record<string, unknown> {
  return {
    id: stdBase64(c.id),
    publicKey: stdBase64(c.publicKey),
    attestationType: c.attestationType,
    transport: c.transports,
    flags: { userPresent, userVerified: c.userVerified, backupEligible: c.backupEligible, backupState: c.backedUp },
    authenticator: {
      AAGUID: stdBase64(uuidBytes(c.aaguid)),
      signCount: c.counter,
      cloneWarning: false,
      attachment: '',
    },
  };
}

interface GoCredential {
  id?: unknown;
  publicKey?: unknown;
  flags?: { backupEligible?: unknown };
  authenticator?: { signCount?: unknown };
}

/** The key and counter of a stored credential; undefined when the JSON is not one. */
export function storedCredential(json: unknown): StoredCredential | undefined {
  const c = json as GoCredential | null;
  if (!c || typeof c.id !== 'string' || typeof c.publicKey !== 'string') return undefined;
  try {
    const count = c.authenticator?.signCount;
    return {
      id: fromStdBase64(c.id),
      publicKey: fromStdBase64(c.publicKey),
      counter: typeof count === 'number' ? count : 0,
      backupEligible: c.flags?.backupEligible === true,
    };
  } catch {
    return undefined;
  }
}

/** The stored credential with the counter (and backup state) of its latest assertion. */
export function withSignCount(json: unknown, counter: number, backedUp: boolean): Record<string, unknown> {
  const c = json as Record<string, Record<string, unknown>>;
  return {
    ...c,
    flags: { ...c.flags, backupState: backedUp },
    authenticator: { ...c.authenticator, signCount: counter },
  };
}
