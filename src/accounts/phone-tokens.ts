// Texted one-time codes (GoTrue: phone.go sendPhoneConfirmation): the code's hash,
// sha224(phone + code), on the user column of its kind and in one_time_tokens, and the SMS
// queued on the request's outbox, sent after the commit; a failed send takes the writes back.
import { generateOtp, tokenHash } from '../crypto/otp.ts';
import type { Executor } from '../db/database.ts';
import { type OneTimeTokenType, putOneTimeToken, restoreOneTimeToken } from '../db/one-time-tokens.ts';
import { consume, release } from '../db/rate-limits.ts';
import { type NewUser, restoreUserColumns, type TokenColumn, updateUser, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, validationFailed } from '../core/errors.ts';
import type { SmsChannel } from '../sms/provider.ts';
import type { Outbox } from './outbox.ts';

export type PhoneTokenKind = 'confirmation' | 'phone_change' | 'reauthentication';

interface KindSpec {
  ott: OneTimeTokenType;
  column: TokenColumn & ('confirmationToken' | 'phoneChangeToken' | 'reauthenticationToken');
  sentAt: 'confirmationSentAt' | 'phoneChangeSentAt' | 'reauthenticationSentAt';
}

const KINDS: Record<PhoneTokenKind, KindSpec> = {
  confirmation: { ott: 'confirmation_token', column: 'confirmationToken', sentAt: 'confirmationSentAt' },
  phone_change: { ott: 'phone_change_token', column: 'phoneChangeToken', sentAt: 'phoneChangeSentAt' },
  reauthentication: {
    ott: 'reauthentication_token',
    column: 'reauthenticationToken',
    sentAt: 'reauthenticationSentAt',
  },
};

const INVALID_CHANNEL =
  "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.";

/** GoTrue's `channel` (IsValidMessageChannel): `sms` when absent; `whatsapp` only with Twilio and Twilio Verify. */
export function parseChannel(deps: Deps, raw: string | undefined): SmsChannel {
  const channel = raw || 'sms';
  // The send SMS hook delivers the code itself: it takes WhatsApp whatever SMS_PROVIDER says.
  const whatsapp =
    deps.config.hooks.SEND_SMS.enabled ||
    deps.config.sms.provider === 'twilio' ||
    deps.config.sms.provider === 'twilio_verify';
  if (channel === 'sms' || (channel === 'whatsapp' && whatsapp)) return channel;
  throw validationFailed(INVALID_CHANNEL);
}

/**
 * SMS_TEST_OTP: the fixed code of a test number strictly before SMS_TEST_OTP_VALID_UNTIL (GoTrue's
 * GetTestOTP: `now.Before(validUntil)`); from that instant on the number is an ordinary one.
 */
export function testOtp(deps: Deps, phone: string, now: Date): string | undefined {
  const sms = deps.config.sms;
  const code = sms.testOtp[phone];
  if (code === undefined) return undefined;
  if (sms.testOtpValidUntil && now.getTime() >= Date.parse(sms.testOtpValidUntil)) return undefined;
  return code;
}

/** GoTrue's generateSMSFromTemplate: `{{ .Code }}` (spacing as in Go templates) becomes the code. */
export function renderSms(template: string, code: string): string {
  return template.replace(/\{\{-?\s*\.Code\s*-?\}\}/g, code);
}

function smsFrequencyError(sentAt: Date, seconds: number, now: Date): ApiError | undefined {
  const left = sentAt.getTime() + seconds * 1000 - now.getTime();
  if (left <= 0) return undefined;
  return new ApiError(
    429,
    'over_sms_send_rate_limit',
    `For security purposes, you can only request this after ${Math.floor(left / 1000)} seconds.`,
  );
}

/**
 * Checks SMS_MAX_FREQUENCY and RATE_LIMIT_SMS_SENT, stores a new code of `kind` for `phone` (for
 * phone_change also `phone_change` itself) and queues the SMS. A test number gets its fixed code
 * and no SMS, and does not count against RATE_LIMIT_SMS_SENT (as in GoTrue).
 */
export async function queuePhoneToken(
  deps: Deps,
  tx: Executor,
  out: Outbox,
  user: UserRow,
  kind: PhoneTokenKind,
  phone: string,
  channel: SmsChannel,
  opts: { patch?: Partial<NewUser>; sent?: (messageId: string) => void } = {},
): Promise<UserRow> {
  const spec = KINDS[kind];
  const cfg = deps.config.sms;
  const now = deps.now();
  const last = user[spec.sentAt];
  if (last) {
    const limited = smsFrequencyError(last, cfg.maxFrequency, now);
    if (limited) throw limited;
  }
  let otp = testOtp(deps, phone, now);
  if (otp === undefined) {
    // Every real text counts, SMS_AUTOCONFIRM or not: GoTrue skips the hourly cap under
    // autoconfirm, where POST /otp then texts ever-new numbers without bound (SMS pumping,
    // review 2026-11-25 M3).
    const limit = deps.config.rateLimit.smsSent;
    if (!(await consume(tx, 'sms_sent', limit, now))) {
      throw new ApiError(429, 'over_sms_send_rate_limit', 'SMS rate limit exceeded');
    }
    out.undo((u) => release(u, 'sms_sent', limit, now));
    otp = generateOtp(cfg.otpLength, deps.randomBytes);
    out.sms({
      kind,
      message: { phone, message: renderSms(cfg.template, otp), channel, otp },
      sent: opts.sent,
      userId: user.id,
    });
  }
  const hash = tokenHash(phone, otp);
  const patch: Partial<NewUser> = { [spec.column]: hash, [spec.sentAt]: now, ...opts.patch };
  if (kind === 'phone_change') patch.phoneChange = phone;
  const before = Object.fromEntries(
    Object.keys(patch).map((k) => [k, user[k as keyof UserRow] ?? null]),
  ) as Partial<NewUser>;
  const updated = await updateUser(tx, user.id, patch);
  out.undo((u) => restoreUserColumns(u, user.id, before, { column: spec.column, value: hash }));
  const previous = await putOneTimeToken(tx, {
    userId: user.id,
    type: spec.ott,
    tokenHash: hash,
    relatesTo: phone,
    now,
  });
  out.undo((u) => restoreOneTimeToken(u, user.id, spec.ott, hash, previous));
  return updated;
}
