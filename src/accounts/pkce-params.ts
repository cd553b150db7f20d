// The PKCE pair a request may carry (GoTrue §5.4): checked when the email or redirect is asked for,
// compared with the verifier when the code is traded. Shared by the email flows, SSO and OAuth.
import { base64url, utf8 } from '../crypto/encoding.ts';
import { validationFailed } from '../core/errors.ts';

export interface Pkce {
  challenge: string;
  method: 's256' | 'plain';
}

const CHALLENGE_RE = /^[A-Za-z0-9._~-]{43,128}$/;

/** Validates the pair; undefined when the request does not use PKCE. */
export function parsePkce(b: { code_challenge?: string; code_challenge_method?: string }): Pkce | undefined {
  if (!b.code_challenge && !b.code_challenge_method) return undefined;
  if (!b.code_challenge || !b.code_challenge_method)
    throw validationFailed('PKCE flow requires code_challenge_method and code_challenge');
  const method = b.code_challenge_method.toLowerCase();
  if (method !== 's256' && method !== 'plain') throw validationFailed('code challenge method not supported');
  if (!CHALLENGE_RE.test(b.code_challenge))
    throw validationFailed('code challenge has to be between 43 and 128 characters');
  return { challenge: b.code_challenge, method };
}

export async function challengeOf(verifier: string, method: string): Promise<string> {
  if (method === 'plain') return verifier;
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(verifier))));
}
