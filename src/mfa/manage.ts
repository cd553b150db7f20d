// Removing and renaming factors: DELETE /factors/{id} (GoTrue: mfa.go UnenrollFactor) and the
// admin API's factor routes (admin.go adminUserGetFactors, adminUserUpdateFactor,
// adminUserDeleteFactor). A removed factor takes the aal2 of the sessions it upgraded with it,
// and the user's last verified factor takes the recovery codes too (security review 2026-12-01).
import type { AuthContext } from '../app-env.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import {
  deleteFactor,
  downgradeSessions,
  type FactorRow,
  hasVerifiedFactor,
  listFactors,
  updateFactor,
} from '../db/mfa.ts';
import { deleteRecoverySet } from '../db/mfa-recovery-codes.ts';
import { findUserById, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { notify } from '../accounts/notify.ts';
import { validatePhone } from '../accounts/validate.ts';
import { notFound, unprocessable } from '../core/errors.ts';
import { noSession } from './enroll.ts';
import { factorJson } from '../models/factor-json.ts';
import { deleteStaleFactors, factorIdParam, factorNotFound } from './load-factor.ts';
import { RECOVERY_CODE_AMR } from './recovery-codes.ts';

const AMR_METHOD: Record<FactorRow['factorType'], string> = {
  totp: 'totp',
  phone: 'mfa/phone',
  webauthn: 'mfa/webauthn',
};

export async function unenrollFactor(
  deps: Deps,
  auth: AuthContext,
  factor: FactorRow,
  ip: string | undefined,
): Promise<{ id: string }> {
  const session = auth.session;
  if (!session) throw noSession('unenroll');
  if (factor.status === 'verified' && session.aal !== 'aal2') {
    throw unprocessable('insufficient_aal', 'AAL2 required to unenroll verified factor');
  }
  await removeFactor(
    deps,
    factor,
    auth.user,
    {
      action: 'factor_unenrolled',
      traits: { factor_id: factor.id, factor_status: factor.status, session_id: session.id },
    },
    ip,
  );
  // GoTrue tells the user of any factor they remove, verified or not; the admin API's removal tells nobody.
  await notify(deps, { kind: 'mfa_factor_unenrolled', user: auth.user, factorType: factor.factorType }, ip);
  return { id: factor.id };
}

async function removeFactor(
  deps: Deps,
  factor: FactorRow,
  actor: Pick<UserRow, 'id' | 'email' | 'phone' | 'rawUserMetaData'> | null,
  audit: { action: 'factor_unenrolled' | 'factor_deleted'; traits: Record<string, unknown> },
  ip: string | undefined,
): Promise<FactorRow> {
  const now = deps.now();
  return transaction(deps.db, async (tx) => {
    // The user's row lock serialises removals: of two factors removed at once, the later sees the
    // earlier gone and takes the recovery codes with it.
    await findUserById(tx, factor.userId, { forUpdate: true });
    const gone = await deleteFactor(tx, factor.id);
    if (!gone) throw factorNotFound();
    await insertAudit(tx, { actor, action: audit.action, traits: audit.traits, ip, now });
    await downgradeSessions(tx, factor.id, AMR_METHOD[factor.factorType], now);
    // Codes kept past the last factor would be an aal2 key again once a factor is enrolled.
    const codes = !(await hasVerifiedFactor(tx, factor.userId))
      ? await deleteRecoverySet(tx, factor.userId)
      : undefined;
    if (codes) {
      await downgradeSessions(tx, codes.id, RECOVERY_CODE_AMR, now);
      await insertAudit(tx, {
        actor,
        action: 'recovery_codes_deleted',
        traits: { factor_id: codes.id, last_factor_removed: factor.id },
        ip,
        now,
      });
    }
    return gone;
  });
}

/** GoTrue's loadUser then loadFactor: the user is looked up before the factor id is even parsed. */
async function adminUserFactor(
  deps: Deps,
  userId: string,
  rawFactorId: string,
): Promise<{ user: UserRow; factor: FactorRow }> {
  const user = await findUserById(deps.db, userId);
  if (!user) throw notFound('user_not_found', 'User not found');
  const factorId = factorIdParam(rawFactorId);
  await deleteStaleFactors(deps, deps.db, user.id);
  const factor = (await listFactors(deps.db, user.id)).find((f) => f.id === factorId);
  if (!factor) throw factorNotFound();
  return { user, factor };
}

/** GET /admin/users/{id}/factors: `[]`, never null, for a user without factors. */
export async function adminListFactors(deps: Deps, userId: string): Promise<Record<string, unknown>[]> {
  const user = await findUserById(deps.db, userId);
  if (!user) throw notFound('user_not_found', 'User not found');
  await deleteStaleFactors(deps, deps.db, user.id);
  return (await listFactors(deps.db, user.id)).map(factorJson);
}

export async function adminUpdateFactor(
  deps: Deps,
  userId: string,
  factorId: string,
  body: { friendly_name?: string; phone?: string },
  admin: UserRow | null,
  ip: string | undefined,
): Promise<Record<string, unknown>> {
  const { factor } = await adminUserFactor(deps, userId, factorId);
  const patch: Parameters<typeof updateFactor>[2] = {};
  if (body.friendly_name) patch.friendlyName = body.friendly_name;
  if (body.phone && factor.factorType === 'phone') patch.phone = validatePhone(body.phone);
  const now = deps.now();
  const updated = await transaction(deps.db, async (tx) => {
    const row =
      Object.keys(patch).length > 0 ? await updateFactor(tx, factor.id, { ...patch, updatedAt: now }) : factor;
    if (!row) throw factorNotFound();
    await insertAudit(tx, { actor: admin, action: 'factor_updated', traits: { factor_id: factor.id }, ip, now });
    return row;
  });
  return factorJson(updated);
}

export async function adminDeleteFactor(
  deps: Deps,
  userId: string,
  factorId: string,
  admin: UserRow | null,
  ip: string | undefined,
): Promise<Record<string, unknown>> {
  const { user, factor } = await adminUserFactor(deps, userId, factorId);
  const gone = await removeFactor(
    deps,
    factor,
    admin,
    { action: 'factor_deleted', traits: { user_id: user.id, factor_id: factor.id } },
    ip,
  );
  return factorJson(gone);
}
