// MFA recovery codes (issue 27 item 6; GoTrue added them after our reference, supabase/auth#2762,
// #2772, #2780): GET, POST and DELETE /factors/recovery-codes and POST …/regenerate. A user has
// at most one set. Codes are shown once, when made, and stored as SHA-256 of "<set id>:<code>".
// Not bcrypt: a code is 50 random bits, so there is no dictionary for a slow hash to slow down,
// and checking one typed code against up to 20 bcrypt hashes would cost about a second of CPU
// per attempt (a denial-of-service lever) where SHA-256 costs microseconds.
import type { AuthContext } from '../app-env.ts';
import { base32, sha256Hex } from '../crypto/encoding.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import { downgradeSessions } from '../db/mfa.ts';
import {
  deleteRecoverySet,
  findRecoverySet,
  insertRecoverySet,
  recoveryCodeCounts,
  replaceRecoveryCodes,
  updateRecoverySet,
} from '../db/mfa-recovery-codes.ts';
import { findUserById } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, forbidden, unprocessable, validationFailed } from '../core/errors.ts';
import { MAX_FRIENDLY_NAME } from './enroll.ts';
import { factorNotFound } from './load-factor.ts';

export const RECOVERY_CODE_TYPE = 'recovery_code';
export const RECOVERY_CODE_AMR = 'mfa/recovery_code';
const DEFAULT_NAME = 'Recovery codes';
/** 10 characters of lower-case base32: 50 bits each. */
const CODE_LENGTH = 10;
export const CODE_SHAPE = /^[a-z2-7]{10}$/;

export const hashRecoveryCode = (setId: string, code: string) => sha256Hex(`${setId}:${code}`);

/** What a user may type: any case, with dashes or spaces between groups. */
export const normaliseRecoveryCode = (raw: string) => raw.toLowerCase().replace(/[-\s]/g, '');

function newCodes(deps: Deps, count: number): string[] {
  const codes = new Set<string>();
  // 56 random bits per draw, the first 50 kept; a repeat within a set (about 1 in 10^13) is drawn again.
  while (codes.size < count) codes.add(base32(deps.randomBytes(7)).slice(0, CODE_LENGTH));
  return [...codes];
}

function requireAal2(auth: AuthContext, what: string) {
  const session = auth.session;
  if (!session)
    throw new ApiError(
      500,
      'unexpected_failure',
      `A valid session and a registered user are required to ${what} recovery codes`,
    );
  if (session.aal !== 'aal2') throw forbidden('insufficient_aal', `AAL2 required to ${what} recovery codes`);
}

function requireEnrollEnabled(deps: Deps) {
  if (!deps.config.mfa.recoveryCodes.enrollEnabled)
    throw unprocessable('mfa_recovery_codes_enroll_not_enabled', 'MFA enroll is disabled for recovery codes');
}

/** GET /factors/recovery-codes */
export async function recoveryCodeStatus(deps: Deps, auth: AuthContext): Promise<Record<string, unknown>> {
  const set = await findRecoverySet(deps.db, auth.user.id);
  if (!set) throw factorNotFound();
  const { total, remaining } = await recoveryCodeCounts(deps.db, set.id);
  return { id: set.id, type: RECOVERY_CODE_TYPE, total, remaining };
}

/** POST /factors/recovery-codes: a first set; a user who has one regenerates or deletes it. */
export async function generateRecoveryCodes(
  deps: Deps,
  auth: AuthContext,
  body: { friendly_name?: string },
  ip: string | undefined,
): Promise<Record<string, unknown>> {
  requireEnrollEnabled(deps);
  requireAal2(auth, 'generate');
  const friendlyName = body.friendly_name || DEFAULT_NAME;
  if (friendlyName.length > MAX_FRIENDLY_NAME)
    throw validationFailed(`friendly_name must be at most ${MAX_FRIENDLY_NAME} characters`);
  const codes = newCodes(deps, deps.config.mfa.recoveryCodes.count);
  const now = deps.now();
  const id = crypto.randomUUID();
  await transaction(deps.db, async (tx) => {
    const user = await findUserById(tx, auth.user.id, { forUpdate: true });
    if (!user) throw forbidden('user_not_found', 'User from sub claim in JWT does not exist');
    const set = await insertRecoverySet(tx, { id, userId: user.id, friendlyName, createdAt: now, updatedAt: now });
    if (!set)
      throw unprocessable(
        'mfa_verified_factor_exists',
        'Recovery codes already exist, regenerate or delete them to continue',
      );
    await replaceRecoveryCodes(
      tx,
      id,
      codes.map((c) => hashRecoveryCode(id, c)),
      now,
    );
    await insertAudit(tx, {
      actor: user,
      action: 'recovery_codes_generated',
      traits: { factor_id: id, total: codes.length },
      ip,
      now,
    });
  });
  return { id, type: RECOVERY_CODE_TYPE, friendly_name: friendlyName, total: codes.length, codes };
}

/** POST /factors/recovery-codes/regenerate: a new set under the same id; every earlier code dies, the lockout is lifted. */
export async function regenerateRecoveryCodes(
  deps: Deps,
  auth: AuthContext,
  ip: string | undefined,
): Promise<Record<string, unknown>> {
  requireEnrollEnabled(deps);
  requireAal2(auth, 'regenerate');
  const codes = newCodes(deps, deps.config.mfa.recoveryCodes.count);
  const now = deps.now();
  const set = await transaction(deps.db, async (tx) => {
    const found = await findRecoverySet(tx, auth.user.id, { forUpdate: true });
    if (!found) throw factorNotFound();
    await replaceRecoveryCodes(
      tx,
      found.id,
      codes.map((c) => hashRecoveryCode(found.id, c)),
      now,
    );
    await updateRecoverySet(tx, found.id, {
      failedVerificationCount: 0,
      verificationLockedUntil: null,
      updatedAt: now,
    });
    await insertAudit(tx, {
      actor: auth.user,
      action: 'recovery_codes_regenerated',
      traits: { factor_id: found.id, total: codes.length },
      ip,
      now,
    });
    return found;
  });
  return { id: set.id, type: RECOVERY_CODE_TYPE, friendly_name: set.friendlyName, total: codes.length, codes };
}

/** DELETE /factors/recovery-codes: sessions a recovery code upgraded go back to aal1, as after an unenrol. */
export async function deleteRecoveryCodes(
  deps: Deps,
  auth: AuthContext,
  ip: string | undefined,
): Promise<{ id: string }> {
  requireAal2(auth, 'delete');
  const now = deps.now();
  return transaction(deps.db, async (tx) => {
    const gone = await deleteRecoverySet(tx, auth.user.id);
    if (!gone) throw factorNotFound();
    await downgradeSessions(tx, gone.id, RECOVERY_CODE_AMR, now);
    await insertAudit(tx, {
      actor: auth.user,
      action: 'recovery_codes_deleted',
      traits: { factor_id: gone.id },
      ip,
      now,
    });
    return { id: gone.id };
  });
}
