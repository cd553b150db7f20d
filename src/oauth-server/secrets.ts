// Client secrets in GoTrue's format: 32 random bytes as unpadded base64url, stored as
// base64url(SHA-256(secret)); checked in constant time.
import { sha256 } from '@noble/hashes/sha2.js';
import { base64url, timingSafeEqual, utf8 } from '../crypto/encoding.ts';

export function newClientSecret(randomBytes: (n: number) => Uint8Array): { secret: string; hash: string } {
  const secret = base64url(randomBytes(32));
  return { secret, hash: hashClientSecret(secret) };
}

export const hashClientSecret = (secret: string): string => base64url(sha256(utf8(secret)));

export function clientSecretMatches(provided: string, storedHash: string | null): boolean {
  if (!storedHash) return false;
  return timingSafeEqual(hashClientSecret(provided), storedHash);
}
