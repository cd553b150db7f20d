// users.encrypted_password as GoTrue may have stored it: a hash, or, under
// SECURITY_DB_ENCRYPTION_ENCRYPT, that hash in GoTrue's encrypted-string format under the user's
// id (models/user.go Authenticate). A database taken over from such a GoTrue keeps its passwords.
// authsvc writes plain hashes, which GoTrue reads too.
import { DecryptionError, decryptString, parseEncryptedString } from '../crypto/encrypted-string.ts';
import type { UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';

/** The user's password hash in clear ('' when there is none); a hash no key opens is a 500, as GoTrue. */
export async function storedPasswordHash(deps: Deps, user: UserRow): Promise<string> {
  const stored = user.encryptedPassword ?? '';
  const es = parseEncryptedString(stored);
  if (!es) return stored;
  try {
    return await decryptString(es, user.id, deps.config.security.dbEncryption.decryptionKeys);
  } catch (err) {
    if (err instanceof DecryptionError)
      throw new ApiError(500, 'unexpected_failure', 'Database error verifying password', undefined, err);
    throw err;
  }
}
