// The phone half of sign-up and sign-in (GoTrue: signup.go's phone branch, otp.go SmsOtp,
// resend.go, verify.go smsVerify): codes texted by the SMS provider, checked here by hash (or by
// Twilio Verify), each consumed once under the user's row lock.
import { storedPasswordHash } from '../accounts/stored-password.ts';
import { timingSafeEqual } from '../crypto/encoding.ts';
import { tokenHash } from '../crypto/otp.ts';
import { generatePassword } from '../crypto/password-policy.ts';
import { type AuditEntry, insertAudit } from '../db/audit.ts';
import { isUniqueViolation, transaction } from '../db/database.ts';
import { clearOneTimeTokens } from '../db/one-time-tokens.ts';
import { deleteSessions } from '../db/sessions.ts';
import {
  deleteUnconfirmedUser,
  findUserById,
  findUserByPhone,
  findUserByPhoneChange,
  insertIdentity,
  insertUser,
  isBanned,
  listIdentities,
  type NewUser,
  updateIdentityData,
  updateUser,
  type UserRow,
} from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, forbidden, unprocessable } from '../core/errors.ts';
import type { SmsChannel } from '../sms/provider.ts';
import { takeCodeAttempt } from '../accounts/code-attempts.ts';
import { type Notification, notifyAll } from '../accounts/notify.ts';
import { transactionThenSend } from '../accounts/outbox.ts';
import { queuePhoneToken, testOtp } from '../accounts/phone-tokens.ts';
import { createSession, tokenResponse } from '../accounts/session.ts';
import type { RequestMeta, TokenResponse } from '../accounts/issued-session.ts';
import { type SignupResult, afterSignup, fakeUser } from './signup.ts';
import { userJson } from '../models/user-json.ts';
import { beforeUserCreated } from '../hooks/user-created.ts';

export interface PhoneSignup {
  /** Validated: E.164 digits without `+`. */
  phone: string;
  password: string;
  data: Record<string, unknown>;
  aud: string;
  channel: SmsChannel;
  meta: RequestMeta;
}

const tokenInvalid = () => forbidden('otp_expired', 'Token has expired or is invalid');
// The spec's rule 2 for a duplicate phone signup under autoconfirm: status 400 (GoTrue answers 422).
const userAlreadyExists = () => new ApiError(400, 'user_already_exists', 'User already registered');

/**
 * POST /signup with a phone. As the email signup: a confirmed number gets a fabricated user (or
 * 400 user_already_exists under autoconfirm, the spec's rule 2); a repeated signup of an
 * unconfirmed number stores its own password with the new code, so the password in force is the
 * one whose code was typed.
 */
export async function signupWithPhone(deps: Deps, s: PhoneSignup): Promise<SignupResult> {
  const cfg = deps.config;
  const autoconfirm = cfg.sms.autoconfirm;
  const encryptedPassword = await deps.hasher.hash(s.password);
  try {
    return await afterSignup(
      deps,
      await transactionThenSend(deps, async (tx, out) => {
        const now = deps.now();
        const found = await findUserByPhone(tx, s.phone, s.aud);
        const existing = found && (await findUserById(tx, found.id, { forUpdate: true }));
        const traits = { provider: 'phone' };
        if (existing?.phoneConfirmedAt) {
          await insertAudit(tx, { actor: existing, action: 'user_repeated_signup', traits, ip: s.meta.ip, now });
          if (autoconfirm || cfg.mailer.autoconfirm) throw userAlreadyExists();
          return { kind: 'user', body: fakeUser(deps, { aud: s.aud, data: s.data, phone: s.phone }) };
        }
        let user: UserRow;
        if (existing) {
          if (autoconfirm) {
            const ok = existing.encryptedPassword
              ? await deps.hasher.verify(s.password, await storedPasswordHash(deps, existing))
              : false;
            if (!ok) throw userAlreadyExists();
          }
          user = existing;
        } else {
          const id = crypto.randomUUID();
          // GoTrue's phone identity claims: sub and the two flags, then the signup's data.
          const identityData: Record<string, unknown> = { sub: id, email_verified: false, phone_verified: false };
          for (const [k, v] of Object.entries(s.data)) if (!(k in identityData)) identityData[k] = v;
          user = await insertUser(tx, {
            id,
            aud: s.aud,
            role: cfg.jwt.defaultGroupName,
            phone: s.phone,
            encryptedPassword,
            phoneConfirmedAt: autoconfirm ? now : null,
            rawAppMetaData: { provider: 'phone', providers: ['phone'] },
            rawUserMetaData: identityData,
            createdAt: now,
            updatedAt: now,
          });
          await insertIdentity(tx, {
            providerId: id,
            userId: id,
            identityData,
            provider: 'phone',
            createdAt: now,
            updatedAt: now,
            lastSignInAt: now,
          });
          await beforeUserCreated(deps, tx, user, s.meta.ip);
          out.undo((u) => deleteUnconfirmedUser(u, id));
        }
        if (autoconfirm) {
          const audits: AuditEntry[] = [{ actor: user, action: 'login', traits, ip: s.meta.ip, now }];
          if (existing) user = await updateUser(tx, user.id, { phoneConfirmedAt: now, confirmationToken: '' });
          else
            audits.unshift({
              actor: user,
              action: 'user_signedup',
              traits: { ...traits, channel: s.channel },
              ip: s.meta.ip,
              now,
            });
          const issued = await createSession(deps, tx, user, 'password', s.meta, audits);
          return { kind: 'session', token: await tokenResponse(deps, tx, issued) };
        }
        await insertAudit(tx, { actor: user, action: 'user_confirmation_requested', traits, ip: s.meta.ip, now });
        user = await queuePhoneToken(deps, tx, out, user, 'confirmation', s.phone, s.channel, {
          patch: existing ? { encryptedPassword } : undefined,
        });
        return { kind: 'user', body: userJson(user, await listIdentities(tx, [user.id])), userId: user.id };
      }),
    );
  } catch (err) {
    if (isUniqueViolation(err)) {
      if (autoconfirm) throw userAlreadyExists();
      return { kind: 'user', body: fakeUser(deps, { aud: s.aud, data: s.data, phone: s.phone }) };
    }
    throw err;
  }
}

export interface SmsOtpRequest {
  phone: string;
  aud: string;
  channel: SmsChannel;
  createUser: boolean;
  data: Record<string, unknown>;
  meta: RequestMeta;
}

/**
 * POST /otp with a phone (GoTrue: SmsOtp). A number without a confirmed user is signed up with a
 * random password (its confirmation code is the OTP); otherwise a login code is texted.
 * Answers `{}`, or `{"message_id":"test-otp"}` for an SMS_TEST_OTP number: GoTrue never returns
 * the provider's message id here (sendPhoneConfirmation shadows it), and the spec says `{}`.
 */
export async function requestSmsOtp(deps: Deps, r: SmsOtpRequest): Promise<Record<string, string>> {
  const found = await findUserByPhone(deps.db, r.phone, r.aud);
  if (!found && !r.createUser) throw unprocessable('otp_disabled', 'Signups not allowed for otp');
  // Under SMS_AUTOCONFIRM an unconfirmed number (made before it was switched on, or by an admin)
  // just gets the code: typing it confirms the number.
  if (!found || (!found.phoneConfirmedAt && !deps.config.sms.autoconfirm)) {
    if (deps.config.disableSignup) throw unprocessable('signup_disabled', 'Signups not allowed for this instance');
    const password = generatePassword(64, deps.config.password.requiredCharacters);
    const result = await signupWithPhone(deps, {
      phone: r.phone,
      password,
      data: r.data,
      aud: r.aud,
      channel: r.channel,
      meta: r.meta,
    });
    // Under SMS_AUTOCONFIRM the new user is confirmed: GoTrue then texts a login code at once.
    if (result.kind !== 'session') return {};
  }
  return sendLoginCode(deps, r);
}

async function sendLoginCode(deps: Deps, r: SmsOtpRequest): Promise<Record<string, string>> {
  let test = false;
  await transactionThenSend(deps, async (tx, out) => {
    const found = await findUserByPhone(tx, r.phone, r.aud);
    const user = found && (await findUserById(tx, found.id, { forUpdate: true }));
    if (!user) throw tokenInvalid();
    await insertAudit(tx, {
      actor: user,
      action: 'user_recovery_requested',
      traits: { channel: r.channel },
      ip: r.meta.ip,
      now: deps.now(),
    });
    test = testOtp(deps, r.phone, deps.now()) !== undefined;
    await queuePhoneToken(deps, tx, out, user, 'confirmation', r.phone, r.channel);
  });
  return test ? { message_id: 'test-otp' } : {};
}

/** POST /resend for `sms` and `phone_change` (GoTrue: Resend). Nothing pending: `{}`, as GoTrue. */
export async function resendPhoneCode(
  deps: Deps,
  type: 'sms' | 'phone_change',
  phone: string,
  aud: string,
  meta: RequestMeta,
): Promise<Record<string, string>> {
  let messageId = '';
  await transactionThenSend(deps, async (tx, out) => {
    const found = await findUserByPhone(tx, phone, aud);
    const user = found && (await findUserById(tx, found.id, { forUpdate: true }));
    if (!user) return;
    if (type === 'sms') {
      if (user.phoneConfirmedAt) return;
      await insertAudit(tx, { actor: user, action: 'user_recovery_requested', ip: meta.ip, now: deps.now() });
    } else if (!user.phoneChange) {
      return;
    }
    const to = type === 'sms' ? phone : user.phoneChange!;
    if (testOtp(deps, to, deps.now()) !== undefined) messageId = 'test-otp';
    await queuePhoneToken(deps, tx, out, user, type === 'sms' ? 'confirmation' : 'phone_change', to, 'sms', {
      sent: (id) => {
        messageId = id;
      },
    });
  });
  return messageId ? { message_id: messageId } : {};
}

export interface PhoneVerifyInput {
  type: 'sms' | 'phone_change';
  phone: string;
  token: string;
  aud: string;
}

/** The code's column for the verify type, and the number its hash was made with. */
function expected(
  user: UserRow,
  input: PhoneVerifyInput,
): { stored: string; sentAt: Date | null; phone: string; ott: string } {
  return input.type === 'sms'
    ? {
        stored: user.confirmationToken ?? '',
        sentAt: user.confirmationSentAt,
        phone: input.phone,
        ott: 'confirmation_token',
      }
    : {
        stored: user.phoneChangeToken ?? '',
        sentAt: user.phoneChangeSentAt,
        phone: user.phoneChange ?? '',
        ott: 'phone_change_token',
      };
}

/** Whether `token` is the user's pending code (GoTrue: verifyUserAndToken's phone branch). */
async function codeIsRight(deps: Deps, user: UserRow, input: PhoneVerifyInput): Promise<boolean> {
  const e = expected(user, input);
  if (!e.stored || !e.sentAt) return false;
  const test = testOtp(deps, input.phone, deps.now());
  if (test !== undefined && timingSafeEqual(test, input.token)) return true;
  if (deps.sms?.verifiesCodes && deps.sms.verifyCode) {
    try {
      await deps.sms.verifyCode(e.phone, input.token);
      return true;
    } catch {
      return false;
    }
  }
  if (deps.now().getTime() > e.sentAt.getTime() + deps.config.sms.otpExp * 1000) return false;
  // Counted before it is compared: a code dies after its attempts (code-attempts.ts).
  if (!(await takeCodeAttempt(deps, user.id, e.ott, e.sentAt))) return false;
  const hash = tokenHash(e.phone, input.token);
  return timingSafeEqual(e.stored, hash) || timingSafeEqual(e.stored, `pkce_${hash}`);
}

/** POST /verify with type `sms` or `phone_change`: confirms the number (or the change) and opens a session. */
export async function verifyPhoneToken(deps: Deps, input: PhoneVerifyInput, meta: RequestMeta): Promise<TokenResponse> {
  const found =
    input.type === 'sms'
      ? await findUserByPhone(deps.db, input.phone, input.aud)
      : await findUserByPhoneChange(deps.db, input.phone, input.aud);
  if (!found) throw tokenInvalid();
  if (isBanned(found, deps.now())) throw forbidden('user_banned', 'User is banned');
  if (!(await codeIsRight(deps, found, input))) throw tokenInvalid();
  const seen = expected(found, input).stored;
  let notices: Notification[] = [];
  try {
    const answer = await transaction(deps.db, async (tx) => {
      const now = deps.now();
      const user = await findUserById(tx, found.id, { forUpdate: true });
      // Re-checked under the lock: a concurrent verify of the same code has already used it.
      if (!user || expected(user, input).stored !== seen) throw tokenInvalid();
      const patch: Partial<NewUser> = { updatedAt: now, isAnonymous: false };
      if (input.type === 'sms') {
        await insertAudit(tx, {
          actor: user,
          action: 'user_signedup',
          traits: { provider: 'phone' },
          ip: meta.ip,
          now,
        });
        // Typing the code proves who holds the number: sessions opened before, by whoever signed it up, end.
        if (!user.phoneConfirmedAt) await deleteSessions(tx, user.id, 'global');
        Object.assign(patch, { confirmationToken: '', phoneConfirmedAt: now });
      }
      let identityCreated = false;
      if (input.type === 'phone_change') {
        await insertAudit(tx, { actor: user, action: 'user_modified', ip: meta.ip, now });
        const identity = await phoneIdentityAfterChange(tx, user, input.phone, now);
        identityCreated = identity.created;
        Object.assign(patch, identity.patch, {
          phone: input.phone,
          phoneChange: '',
          phoneChangeToken: '',
          phoneConfirmedAt: now,
        });
      }
      await clearOneTimeTokens(tx, user.id);
      const updated = await updateUser(tx, user.id, patch);
      if (input.type === 'phone_change') notices = phoneChangeNotices(user, updated, identityCreated);
      return tokenResponse(deps, tx, await createSession(deps, tx, updated, 'otp', meta));
    });
    await notifyAll(deps, notices, meta.ip);
    return answer;
  } catch (err) {
    // The new number was registered by someone else meanwhile (users_phone_key).
    if (isUniqueViolation(err)) throw unprocessable('phone_exists', 'Phone number already registered by another user');
    throw err;
  }
}

/**
 * The phone identity follows a confirmed change (created if the user had none); returns the
 * app_metadata patch and whether the identity is new.
 */
export async function phoneIdentityAfterChange(
  tx: Parameters<typeof updateUser>[0],
  user: UserRow,
  phone: string,
  now: Date,
): Promise<{ patch: Partial<NewUser>; created: boolean }> {
  const identities = await listIdentities(tx, [user.id]);
  const existing = identities.find((i) => i.provider === 'phone');
  if (existing) {
    await updateIdentityData(tx, user.id, 'phone', { ...(existing.identityData ?? {}), phone, phone_verified: true });
    return { patch: {}, created: false };
  }
  await insertIdentity(tx, {
    providerId: user.id,
    userId: user.id,
    provider: 'phone',
    createdAt: now,
    updatedAt: now,
    lastSignInAt: now,
    identityData: { sub: user.id, phone, email_verified: false, phone_verified: true },
  });
  const app = { ...(user.rawAppMetaData ?? {}) };
  const providers = Array.isArray(app.providers) ? (app.providers as string[]) : [];
  if (!providers.includes('phone')) app.providers = [...providers, 'phone'];
  app.provider ??= 'phone';
  return { patch: { rawAppMetaData: app }, created: true };
}

/** GoTrue's notifications for a confirmed phone change: the number changed (there was one before), a phone identity linked. */
export function phoneChangeNotices(before: UserRow, after: UserRow, identityCreated: boolean): Notification[] {
  const notices: Notification[] = [];
  const old = before.phone ?? '';
  if (old && after.phone && old !== after.phone) notices.push({ kind: 'phone_changed', user: after, oldPhone: old });
  if (identityCreated) notices.push({ kind: 'identity_linked', user: after, provider: 'phone' });
  return notices;
}
