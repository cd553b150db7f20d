// GoTrue's loadFactor middleware: a malformed id is 404 validation_failed, a factor that is
// missing or another user's is 404 mfa_factor_not_found (the same answer: no probing for ids).
// An unverified factor past its time is deleted first, and so answers as a missing one.
import { parseUuid } from '../http/uuid.ts';
import type { AuthContext } from '../app-env.ts';
import type { Executor } from '../db/database.ts';
import { deleteExpiredFactors, type FactorRow, findFactor, hasVerifiedFactor } from '../db/mfa.ts';
import type { Deps } from '../deps.ts';
import { forbidden, notFound } from '../core/errors.ts';

export const factorNotFound = () => notFound('mfa_factor_not_found', 'Factor not found');

/** However it was challenged, an unverified factor goes after a day (or MFA_FACTOR_EXPIRY_DURATION when longer). */
export const UNVERIFIED_FACTOR_MAX_SECONDS = 24 * 3600;

export function factorIdParam(raw: string): string {
  const id = parseUuid(raw);
  if (!id) throw notFound('validation_failed', 'factor_id must be an UUID');
  return id;
}

/**
 * Deletes the user's unverified factors that can no longer be finished (db/mfa.ts
 * deleteExpiredFactors): a WebAuthn one once its last challenge expired (MFA_CHALLENGE_EXPIRY_DURATION;
 * a cancelled browser prompt) and it is older than MFA_FACTOR_EXPIRY_DURATION, any after a day;
 * at enrolment (`enrolling`) also GoTrue's never-challenged ones after MFA_FACTOR_EXPIRY_DURATION
 * (only there, as in GoTrue: a user may take a while to scan a TOTP QR code before the first challenge).
 */
export async function deleteStaleFactors(deps: Deps, ex: Executor, userId: string, enrolling = false): Promise<void> {
  const now = deps.now().getTime();
  const cfg = deps.config.mfa;
  const created = new Date(now - cfg.factorExpiry * 1000);
  await deleteExpiredFactors(ex, userId, {
    ...(enrolling ? { neverChallengedBefore: created } : {}),
    webauthnCreatedBefore: created,
    challengedBefore: new Date(now - cfg.challengeExpiry * 1000),
    anyBefore: new Date(now - Math.max(UNVERIFIED_FACTOR_MAX_SECONDS, cfg.factorExpiry) * 1000),
  });
}

/** The caller's factor `rawId`, stale unverified factors deleted first (only when the user has any unverified one). */
export async function loadFactor(deps: Deps, auth: AuthContext, rawId: string): Promise<FactorRow> {
  const id = factorIdParam(rawId);
  if (auth.factors.some((f) => f.status !== 'verified')) await deleteStaleFactors(deps, deps.db, auth.user.id);
  const factor = await findFactor(deps.db, id);
  if (!factor || factor.userId !== auth.user.id) throw factorNotFound();
  return factor;
}

/**
 * Security review 2026-12-01, H2: while the user has a verified factor, only an aal2 session may
 * challenge or verify an unverified one, as only aal2 may enrol one. Otherwise a password alone
 * would finish the owner's abandoned WebAuthn enrolment with the attacker's key, and be aal2.
 */
export async function requireAal2ToFinish(
  ex: Executor,
  auth: AuthContext,
  factor: FactorRow,
  what: 'challenge' | 'verify',
): Promise<void> {
  if (factor.status === 'verified' || auth.session?.aal === 'aal2') return;
  if (await hasVerifiedFactor(ex, auth.user.id))
    throw forbidden('insufficient_aal', `AAL2 required to ${what} an unverified factor`);
}
