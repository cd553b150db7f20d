// Signup confirmation: a code and its hash recorded on the user and in one_time_tokens,
// then handed to the mailer. Called inside the signup transaction, so a failed send
// leaves nothing behind.
import type { Deps } from '../deps.ts';
import type { Executor } from '../db/database.ts';
import { putOneTimeToken } from '../db/one-time-tokens.ts';
import { updateUser, type UserRow } from '../db/users.ts';
import { ApiError } from './errors.ts';
import { generateOtp, tokenHash } from './otp.ts';

export function frequencyLimitError(sentAt: Date, maxFrequencySeconds: number, now: Date): ApiError | undefined {
  const left = sentAt.getTime() + maxFrequencySeconds * 1000 - now.getTime();
  if (left <= 0) return undefined;
  return new ApiError(429, 'over_email_send_rate_limit',
    `For security purposes, you can only request this after ${Math.floor(left / 1000)} seconds.`);
}

export function verificationLink(deps: Deps, path: string, hash: string, type: string, redirectTo: string): string {
  const escRedirect = /[&=#]/.test(redirectTo) ? encodeURIComponent(redirectTo) : redirectTo;
  const rel = `${path}?token=${encodeURIComponent(hash)}&type=${encodeURIComponent(type)}&redirect_to=${escRedirect}`;
  return new URL(rel, deps.config.api.externalUrl).toString();
}

export async function sendConfirmation(deps: Deps, tx: Executor, user: UserRow, redirectTo: string): Promise<UserRow> {
  const now = deps.now();
  const cfg = deps.config;
  if (user.confirmationSentAt) {
    const limited = frequencyLimitError(user.confirmationSentAt, cfg.smtp.maxFrequency, now);
    if (limited) throw limited;
  }
  const email = user.email ?? '';
  const otp = generateOtp(cfg.mailer.otpLength, deps.randomBytes);
  const hash = tokenHash(email, otp);
  const updated = await updateUser(tx, user.id, { confirmationToken: hash, confirmationSentAt: now });
  await putOneTimeToken(tx, { userId: user.id, type: 'confirmation_token', tokenHash: hash, relatesTo: email, now });
  try {
    await deps.mailer.send({
      kind: 'confirmation', to: email, token: otp, tokenHash: hash,
      confirmationUrl: verificationLink(deps, cfg.mailer.urlPaths.confirmation, hash, 'signup', redirectTo),
      siteUrl: cfg.siteUrl, redirectTo, userMetadata: updated.rawUserMetaData ?? {},
    });
  } catch (err) {
    throw new ApiError(500, 'unexpected_failure', 'Error sending confirmation email', undefined, err);
  }
  return updated;
}
