// PUT /user — GoTrue: api.UserUpdate (metadata, password, email change, phone change).
import { storedPasswordHash } from '../accounts/stored-password.ts';
import type { AuthContext } from '../app-env.ts';
import { timingSafeEqual } from '../crypto/encoding.ts';
import { tokenHash } from '../crypto/otp.ts';
import { insertAudit } from '../db/audit.ts';
import { isUniqueViolation, transaction } from '../db/database.ts';
import { listFactors } from '../db/mfa.ts';
import { OTT_TYPES, clearOneTimeTokens } from '../db/one-time-tokens.ts';
import { deleteSessions } from '../db/sessions.ts';
import { findUserById, findUserByPhone, listIdentities, updateUser, type NewUser, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, badRequest } from '../core/errors.ts';
import type { SmsChannel } from '../sms/provider.ts';
import { requireAal2WhenMfa } from '../accounts/aal2-rule.ts';
import { takeCodeAttempt } from '../accounts/code-attempts.ts';
import { requestEmailChange } from './email-change.ts';
import { type Notification, notifyAll } from '../accounts/notify.ts';
import { transactionThenSend } from '../accounts/outbox.ts';
import { assertNewPassword } from '../accounts/password-check.ts';
import { parseChannel, queuePhoneToken } from '../accounts/phone-tokens.ts';
import { phoneChangeNotices, phoneIdentityAfterChange } from './phone.ts';
import { parsePkce } from '../accounts/pkce-params.ts';
import { userJson } from '../models/user-json.ts';
import { validateEmail, validatePhone } from '../accounts/validate.ts';

import { mergeMetadata } from '../accounts/metadata.ts';
export interface UserUpdate {
  code_challenge?: string;
  code_challenge_method?: string;
  email?: string;
  phone?: string;
  channel?: string;
  password?: string;
  current_password?: string;
  nonce?: string;
  data?: Record<string, unknown>;
  app_metadata?: Record<string, unknown>;
}

const nonceInvalid = () => new ApiError(422, 'reauthentication_not_valid', 'Nonce has expired or is invalid');

/** Whether `nonce` is the user's current reauthentication code, unexpired (a pure check on the row given). */
function nonceMatches(deps: Deps, u: UserRow, nonce: string): boolean {
  const target = u.email || u.phone || '';
  const sentAt = u.reauthenticationSentAt;
  const exp = u.email ? deps.config.mailer.otpExp : deps.config.sms.otpExp;
  return (
    !!u.reauthenticationToken &&
    !!sentAt &&
    deps.now().getTime() <= sentAt.getTime() + exp * 1000 &&
    timingSafeEqual(u.reauthenticationToken, tokenHash(target, nonce))
  );
}

/** GoTrue's Session.IsRecovery: signed in by a code or link (otp, magiclink, recovery), when the old password may be forgotten. */
function isRecoverySession(auth: AuthContext): boolean {
  const amr = Array.isArray(auth.claims.amr) ? auth.claims.amr : [];
  return amr.some((e: unknown) => {
    const method = typeof e === 'string' ? e : (e as { method?: unknown } | null)?.method;
    return method === 'otp' || method === 'magiclink' || method === 'recovery';
  });
}

/** The password half of PUT /user: every check GoTrue makes before it writes, then the new hash. */
async function newPasswordHash(
  deps: Deps,
  auth: AuthContext,
  p: UserUpdate,
  password: string,
  newEmail: string | undefined,
): Promise<string> {
  const cfg = deps.config;
  const user = auth.user;
  if (user.isAnonymous && !user.email && !user.phone && !newEmail) {
    throw new ApiError(
      422,
      'validation_failed',
      'Updating password of an anonymous user without an email or phone is not allowed',
    );
  }
  await assertNewPassword(deps, password);
  if (cfg.security.updatePasswordRequireReauthentication) {
    if (!p.nonce) throw badRequest('reauthentication_needed', 'Password update requires reauthentication');
    // Every nonce typed in counts against the code (code-attempts.ts); it is consumed under the row lock later.
    const sentAt = user.reauthenticationSentAt;
    if (
      !sentAt ||
      !(await takeCodeAttempt(deps, user.id, 'reauthentication_token', sentAt)) ||
      !nonceMatches(deps, user, p.nonce)
    ) {
      throw nonceInvalid();
    }
  }
  if (user.encryptedPassword) {
    const current = await storedPasswordHash(deps, user);
    // SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD, except in a session opened by a code or
    // link (the user may be recovering a forgotten password), as in GoTrue.
    if (cfg.security.updatePasswordRequireCurrentPassword && !isRecoverySession(auth)) {
      const message = 'Current password required when setting new password.';
      if (!p.current_password) throw badRequest('current_password_required', message);
      if (!(await deps.hasher.verify(p.current_password, current)))
        throw badRequest('current_password_invalid', message);
    }
    if (await deps.hasher.verify(password, current)) {
      throw new ApiError(422, 'same_password', 'New password should be different from the old password.');
    }
  }
  return deps.hasher.hash(password);
}

export async function updateCurrentUser(
  deps: Deps,
  auth: AuthContext,
  p: UserUpdate,
  meta: { ip?: string; redirectTo: string },
): Promise<Record<string, unknown>> {
  const ip = meta.ip;
  const cfg = deps.config;
  const user = auth.user;
  if (p.app_metadata && !(user.role === cfg.jwt.adminGroupName && user.aud === cfg.jwt.aud)) {
    throw new ApiError(403, 'not_admin', 'Updating app_metadata requires admin privileges');
  }
  const newPhone = p.phone ? validatePhone(p.phone) : undefined;
  const changePhone = newPhone !== undefined && newPhone !== (user.phone ?? '');
  const channel = newPhone !== undefined ? parseChannel(deps, p.channel) : 'sms';
  const newEmail = p.email ? validateEmail(p.email) : undefined;
  const changeEmail = newEmail !== undefined && newEmail !== (user.email ?? '');
  // GoTrue's UserUpdate: with MFA on, an aal1 session cannot take over the account's sign-in details.
  if (p.password || changeEmail || changePhone)
    await requireAal2WhenMfa(deps.db, user.id, auth.session?.aal, 'update email or password');
  // GoTrue: an SSO account's sign-in details belong to its IdP.
  if (user.isSsoUser && (p.password || changeEmail || changePhone || p.nonce)) {
    throw new ApiError(
      422,
      'user_sso_managed',
      'Updating email, phone, password of a SSO account only possible via SSO',
    );
  }
  if (changePhone && (await findUserByPhone(deps.db, newPhone, user.aud ?? ''))) {
    throw new ApiError(422, 'phone_exists', 'A user with this phone number has already been registered');
  }
  const pkce = parsePkce(p);
  const encryptedPassword =
    p.password !== undefined ? await newPasswordHash(deps, auth, p, p.password, newEmail) : undefined;
  // The email change goes first, in its own transaction: its mails must be out before anything
  // else is written, so that a failed send leaves nothing behind (outbox.ts).
  if (changeEmail) {
    await transactionThenSend(deps, async (tx, out) => {
      const locked = (await findUserById(tx, user.id, { forUpdate: true }))!;
      return requestEmailChange(deps, tx, out, locked, newEmail, meta.redirectTo, ip, pkce);
    });
  }
  // The phone change likewise: a code to the new number (or, under SMS_AUTOCONFIRM, the change itself).
  const notices = changePhone ? await requestPhoneChange(deps, user.id, newPhone, channel, ip) : [];
  let passwordChanged: UserRow | undefined;
  const body = await transaction(deps.db, async (tx) => {
    const now = deps.now();
    const current = (await findUserById(tx, user.id, { forUpdate: true }))!;
    const patch: Partial<NewUser> = { updatedAt: now };
    if (p.data) patch.rawUserMetaData = mergeMetadata(current.rawUserMetaData, p.data);
    if (p.app_metadata) patch.rawAppMetaData = mergeMetadata(current.rawAppMetaData, p.app_metadata);
    if (encryptedPassword) {
      // Checked again under the row lock, where it is also used up: of two requests with the same
      // nonce, only one finds it still there.
      if (cfg.security.updatePasswordRequireReauthentication && !nonceMatches(deps, current, p.nonce ?? ''))
        throw nonceInvalid();
      // A new password voids every pending code, except those of the email change this same
      // request has just sent (GoTrue changes the password first, then requests the change).
      Object.assign(patch, {
        encryptedPassword,
        reauthenticationToken: '',
        reauthenticationSentAt: null,
        confirmationToken: '',
        recoveryToken: '',
        phoneChangeToken: '',
        ...(changeEmail ? {} : { emailChangeTokenCurrent: '', emailChangeTokenNew: '' }),
      });
      await clearOneTimeTokens(
        tx,
        user.id,
        changeEmail ? OTT_TYPES.filter((t) => !t.startsWith('email_change')) : undefined,
      );
      // A new password signs the user out everywhere else.
      await deleteSessions(tx, user.id, 'others', auth.session?.id);
      await insertAudit(tx, { actor: current, action: 'user_updated_password', ip, now });
    }
    const updated = await updateUser(tx, user.id, patch);
    await insertAudit(tx, { actor: updated, action: 'user_modified', ip, now });
    if (encryptedPassword) passwordChanged = updated;
    return userJson(updated, await listIdentities(tx, [user.id]), await listFactors(tx, user.id));
  }).catch(async (err: unknown) => {
    // A phone change made under SMS_AUTOCONFIRM stands even when the rest is refused (a wrong nonce): say so.
    await notifyAll(deps, notices, ip);
    throw err;
  });
  if (passwordChanged) notices.push({ kind: 'password_changed', user: passwordChanged });
  await notifyAll(deps, notices, ip);
  return body;
}

/** GoTrue: sendPhoneConfirmation(phone_change), or smsVerify at once under SMS_AUTOCONFIRM (returns the notifications of the change made). */
async function requestPhoneChange(
  deps: Deps,
  userId: string,
  phone: string,
  channel: SmsChannel,
  ip: string | undefined,
): Promise<Notification[]> {
  try {
    return await transactionThenSend(deps, async (tx, out): Promise<Notification[]> => {
      const locked = (await findUserById(tx, userId, { forUpdate: true }))!;
      if (!deps.config.sms.autoconfirm) {
        await queuePhoneToken(deps, tx, out, locked, 'phone_change', phone, channel);
        return [];
      }
      const now = deps.now();
      await insertAudit(tx, { actor: locked, action: 'user_modified', ip, now });
      const identity = await phoneIdentityAfterChange(tx, locked, phone, now);
      await clearOneTimeTokens(tx, userId);
      const updated = await updateUser(tx, userId, {
        ...identity.patch,
        phone,
        phoneChange: '',
        phoneChangeToken: '',
        phoneConfirmedAt: now,
        updatedAt: now,
      });
      return phoneChangeNotices(locked, updated, identity.created);
    });
  } catch (err) {
    // Taken by someone else between the check and the write (users_phone_key).
    if (isUniqueViolation(err))
      throw new ApiError(422, 'phone_exists', 'A user with this phone number has already been registered');
    throw err;
  }
}
