// Standard Webhooks signatures (https://www.standardwebhooks.com), as GoTrue's hookshttp sends
// them: `v1,` + base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")) for each
// `v1,whsec_<base64 key>` secret, joined by ", " so the receiver can rotate secrets. The HMAC is
// crypto/encoding's (@noble/hashes, synchronous, the same on every runtime); the tests check the
// result with the `standardwebhooks` package's verifier (docs/decisions/hooks-signing.md).
import { hmacSha256, utf8 } from '../crypto/encoding.ts';
import { ApiError } from '../core/errors.ts';

const SYMMETRIC_PREFIX = 'v1,';

function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

function fromBase64(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

/**
 * The `webhook-signature` header value. An asymmetric (`v1a,`) secret cannot sign here, as in
 * GoTrue: every call of such a hook fails with 500 "Error generating signatures: invalid signature format".
 */
export function webhookSignature(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  const signatures: string[] = [];
  for (const secret of secrets) {
    if (!secret.startsWith(SYMMETRIC_PREFIX)) {
      throw new ApiError(500, 'unexpected_failure', 'Error generating signatures: invalid signature format');
    }
    const encoded = secret.slice(SYMMETRIC_PREFIX.length).replace(/^whsec_/, '');
    let key: Uint8Array;
    try {
      key = fromBase64(encoded);
    } catch {
      // The secret itself never goes into the message.
      throw new ApiError(500, 'unexpected_failure', 'Error generating signatures: illegal base64 data');
    }
    signatures.push(`v1,${toBase64(hmacSha256(key, utf8(`${id}.${timestamp}.${body}`)))}`);
  }
  return signatures.join(', ');
}
