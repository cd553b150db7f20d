// Emailed one-time tokens (GoTrue §6): a code and its hash, sha224(email + code), recorded on the
// user column of its kind and in one_time_tokens, then handed to the mailer. Called inside the
// caller's transaction, so a failed send leaves nothing behind.
import type { Deps } from '../deps.ts';
import type { Executor } from '../db/database.ts';
import { type OneTimeTokenType, putOneTimeToken } from '../db/one-time-tokens.ts';
import { insertFlowState } from '../db/flow-state.ts';
import { consume } from '../db/rate-limits.ts';
import type { Pkce } from './pkce.ts';
import { type NewUser, updateUser, type UserRow } from '../db/users.ts';
import { ApiError } from './errors.ts';
import type { MailKind } from './mailer.ts';
import { generateOtp, tokenHash } from './otp.ts';

// Magic links may be re-requested sooner than confirmation and recovery emails (DESIGN.md).
export const MAGIC_LINK_MAX_FREQUENCY = 60;

export type EmailTokenKind = 'confirmation' | 'invite' | 'recovery' | 'magic_link' | 'reauthentication';

/** flow_state.authentication_method of each kind (GoTrue's names). */
export const FLOW_METHOD: Record<EmailTokenKind, string> = {
  confirmation: 'email/signup', invite: 'invite', recovery: 'recovery', magic_link: 'magiclink', reauthentication: 'reauthentication',
};

interface KindSpec {
  ott: OneTimeTokenType;
  mail: MailKind;
  /** `type` in the link; none for reauthentication (the code is typed in). */
  linkType?: 'signup' | 'invite' | 'recovery' | 'magiclink';
  path?: 'confirmation' | 'invite' | 'recovery';
  sentAt: 'confirmationSentAt' | 'recoverySentAt' | 'reauthenticationSentAt';
  column: 'confirmationToken' | 'recoveryToken' | 'reauthenticationToken';
  /** Seconds between two sends to one user; undefined = no limit (invites). */
  frequency?: (deps: Deps) => number;
}

const KINDS: Record<EmailTokenKind, KindSpec> = {
  confirmation: { ott: 'confirmation_token', mail: 'confirmation', linkType: 'signup', path: 'confirmation', sentAt: 'confirmationSentAt', column: 'confirmationToken', frequency: (d) => d.config.smtp.maxFrequency },
  invite: { ott: 'confirmation_token', mail: 'invite', linkType: 'invite', path: 'invite', sentAt: 'confirmationSentAt', column: 'confirmationToken' },
  recovery: { ott: 'recovery_token', mail: 'recovery', linkType: 'recovery', path: 'recovery', sentAt: 'recoverySentAt', column: 'recoveryToken', frequency: (d) => d.config.smtp.maxFrequency },
  magic_link: { ott: 'recovery_token', mail: 'magic_link', linkType: 'magiclink', path: 'recovery', sentAt: 'recoverySentAt', column: 'recoveryToken', frequency: () => MAGIC_LINK_MAX_FREQUENCY },
  reauthentication: { ott: 'reauthentication_token', mail: 'reauthentication', sentAt: 'reauthenticationSentAt', column: 'reauthenticationToken', frequency: (d) => d.config.smtp.maxFrequency },
};

export function frequencyLimitError(sentAt: Date, maxFrequencySeconds: number, now: Date): ApiError | undefined {
  const left = sentAt.getTime() + maxFrequencySeconds * 1000 - now.getTime();
  if (left <= 0) return undefined;
  return new ApiError(429, 'over_email_send_rate_limit',
    `For security purposes, you can only request this after ${Math.floor(left / 1000)} seconds.`);
}

/** `<API_EXTERNAL_URL>` resolved against `<path>?token=…&type=…&redirect_to=…`, as GoTrue builds it. */
export function verificationLink(deps: Deps, path: string, hash: string, type: string, redirectTo: string): string {
  const escRedirect = /[&=#]/.test(redirectTo) ? encodeURIComponent(redirectTo) : redirectTo;
  const rel = `${path}?token=${encodeURIComponent(hash)}&type=${encodeURIComponent(type)}&redirect_to=${escRedirect}`;
  return new URL(rel, deps.config.api.externalUrl).toString();
}

/**
 * RATE_LIMIT_EMAIL_SENT, counted in Postgres inside the sending transaction: exact across
 * instances, and a send that fails rolls its count back. Skipped under MAILER_AUTOCONFIRM as
 * in GoTrue, except that a limit of 0 still blocks every email.
 */
export async function consumeEmailSend(deps: Deps, tx: Executor): Promise<void> {
  const limit = deps.config.rateLimit.emailSent;
  if (deps.config.mailer.autoconfirm && limit.count > 0) return;
  if (!(await consume(tx, 'email_sent', limit, deps.now()))) {
    throw new ApiError(429, 'over_email_send_rate_limit', 'email rate limit exceeded');
  }
}

export interface SendOptions {
  redirectTo: string;
  /** PKCE: a flow_state row is created, the stored token is `pkce_<hash>` and GET /verify answers with `?code=`. */
  pkce?: Pkce;
  /** Extra user columns written with the token (e.g. invited_at). */
  patch?: Partial<NewUser>;
}

export async function sendEmailToken(deps: Deps, tx: Executor, user: UserRow, kind: EmailTokenKind, opts: SendOptions): Promise<UserRow> {
  const spec = KINDS[kind];
  const now = deps.now();
  const cfg = deps.config;
  const last = user[spec.sentAt];
  if (last && spec.frequency) {
    const limited = frequencyLimitError(last, spec.frequency(deps), now);
    if (limited) throw limited;
  }
  await consumeEmailSend(deps, tx);
  const email = (user.email ?? '').toLowerCase();
  const otp = generateOtp(cfg.mailer.otpLength, deps.randomBytes);
  const hash = tokenHash(email, otp);
  const stored = opts.pkce ? `pkce_${hash}` : hash;
  if (opts.pkce) {
    await insertFlowState(tx, {
      userId: user.id, challenge: opts.pkce.challenge, method: opts.pkce.method, providerType: 'email',
      authenticationMethod: FLOW_METHOD[kind], now,
    });
  }
  const updated = await updateUser(tx, user.id, { [spec.column]: stored, [spec.sentAt]: now, ...opts.patch });
  await putOneTimeToken(tx, { userId: user.id, type: spec.ott, tokenHash: stored, relatesTo: email, now });
  const paths = cfg.mailer.urlPaths;
  const link = spec.linkType && spec.path ? verificationLink(deps, paths[spec.path], stored, spec.linkType, opts.redirectTo) : '';
  try {
    await deps.mailer.send({
      kind: spec.mail, to: email, token: otp, tokenHash: stored, confirmationUrl: link,
      siteUrl: cfg.siteUrl, redirectTo: opts.redirectTo, userMetadata: updated.rawUserMetaData ?? {},
    });
  } catch (err) {
    throw new ApiError(500, 'unexpected_failure', `Error sending ${spec.mail.replace('_', ' ')} email`, undefined, err);
  }
  return updated;
}

export async function sendConfirmation(deps: Deps, tx: Executor, user: UserRow, redirectTo: string, pkce?: Pkce): Promise<UserRow> {
  return sendEmailToken(deps, tx, user, 'confirmation', { redirectTo, pkce });
}
