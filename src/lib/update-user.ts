// PUT /user — GoTrue: api.UserUpdate (metadata, password; email and phone changes arrive
// with the email-flows and phone work).
import type { Deps } from '../deps.ts';
import type { AuthContext } from '../app-env.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import { clearOneTimeTokens } from '../db/one-time-tokens.ts';
import { deleteSessions } from '../db/sessions.ts';
import { findUserById, listIdentities, updateUser, type NewUser } from '../db/users.ts';
import { ApiError, badRequest } from './errors.ts';
import { tokenHash } from './otp.ts';
import { assertPasswordLength, assertPasswordStrength } from './password-policy.ts';
import { timingSafeEqual } from './encoding.ts';
import { userJson } from './user-json.ts';
import { requestEmailChange } from './email-change.ts';
import { parsePkce } from './pkce.ts';
import { formatPhone, validateEmail } from './validate.ts';

export interface UserUpdate {
  code_challenge?: string;
  code_challenge_method?: string;
  email?: string;
  phone?: string;
  password?: string;
  nonce?: string;
  data?: Record<string, unknown>;
  app_metadata?: Record<string, unknown>;
}

/** `data` merges into the map; a null value deletes the key. */
export function mergeMetadata(base: Record<string, unknown> | null, patch: Record<string, unknown>): Record<string, unknown> {
  const out = { ...(base ?? {}) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

function checkNonce(deps: Deps, auth: AuthContext, nonce: string | undefined): void {
  const u = auth.user;
  if (!nonce) throw badRequest('reauthentication_needed', 'Password update requires reauthentication');
  const target = u.email || u.phone || '';
  const sentAt = u.reauthenticationSentAt;
  const exp = u.email ? deps.config.mailer.otpExp : deps.config.sms.otpExp;
  const valid = !!u.reauthenticationToken && !!sentAt
    && deps.now().getTime() <= sentAt.getTime() + exp * 1000
    && timingSafeEqual(u.reauthenticationToken, tokenHash(target, nonce));
  if (!valid) throw new ApiError(422, 'reauthentication_not_valid', 'Nonce has expired or is invalid');
}

export async function updateCurrentUser(deps: Deps, auth: AuthContext, p: UserUpdate, meta: { ip?: string; redirectTo: string }): Promise<Record<string, unknown>> {
  const ip = meta.ip;
  const cfg = deps.config;
  const user = auth.user;
  if (p.app_metadata && !(user.role === cfg.jwt.adminGroupName && user.aud === cfg.jwt.aud)) {
    throw new ApiError(403, 'not_admin', 'Updating app_metadata requires admin privileges');
  }
  if (p.phone && formatPhone(p.phone) !== (user.phone ?? '')) {
    // A phone change needs an SMS provider, which authsvc does not have yet.
    throw new ApiError(422, 'sms_send_failed', 'Error sending phone change OTP to provider: no SMS provider is configured');
  }
  const newEmail = p.email ? validateEmail(p.email) : undefined;
  const changeEmail = newEmail !== undefined && newEmail !== (user.email ?? '');
  const pkce = parsePkce(p);
  let encryptedPassword: string | undefined;
  if (p.password !== undefined) {
    if (user.isAnonymous && !user.email && !user.phone && !newEmail) {
      throw new ApiError(422, 'validation_failed', 'Updating password of an anonymous user without an email or phone is not allowed');
    }
    assertPasswordLength(p.password);
    assertPasswordStrength(p.password, cfg.password);
    if (user.encryptedPassword && (await deps.hasher.verify(p.password, user.encryptedPassword))) {
      throw new ApiError(422, 'same_password', 'New password should be different from the old password.');
    }
    if (cfg.security.updatePasswordRequireReauthentication) checkNonce(deps, auth, p.nonce);
    encryptedPassword = await deps.hasher.hash(p.password);
  }
  return transaction(deps.db, async (tx) => {
    const now = deps.now();
    const current = (await findUserById(tx, user.id, { forUpdate: true }))!;
    const patch: Partial<NewUser> = { updatedAt: now };
    if (p.data) patch.rawUserMetaData = mergeMetadata(current.rawUserMetaData, p.data);
    if (p.app_metadata) patch.rawAppMetaData = mergeMetadata(current.rawAppMetaData, p.app_metadata);
    if (encryptedPassword) {
      Object.assign(patch, {
        encryptedPassword, reauthenticationToken: '', reauthenticationSentAt: null,
        confirmationToken: '', recoveryToken: '', emailChangeTokenCurrent: '', emailChangeTokenNew: '', phoneChangeToken: '',
      });
      await clearOneTimeTokens(tx, user.id);
      // A new password signs the user out everywhere else.
      await deleteSessions(tx, user.id, 'others', auth.session?.id);
      await insertAudit(tx, { actor: current, action: 'user_updated_password', ip, now });
    }
    let updated = await updateUser(tx, user.id, patch);
    if (changeEmail) updated = await requestEmailChange(deps, tx, updated, newEmail, meta.redirectTo, ip, pkce);
    await insertAudit(tx, { actor: updated, action: 'user_modified', ip, now });
    return userJson(updated, await listIdentities(tx, [user.id]));
  });
}
