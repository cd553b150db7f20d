// POST /recover, /magiclink, /otp (email) and /resend — GoTrue: api.Recover, api.MagicLink,
// api.Otp, api.Resend. Unknown addresses get the same answer as known ones where GoTrue's do.
import { generatePassword } from '../crypto/password-policy.ts';
import { insertAudit } from '../db/audit.ts';
import type { Executor } from '../db/database.ts';
import { findUserByEmail, findUserById, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';
import { type EmailTokenKind, queueEmailToken } from '../accounts/email-tokens.ts';
import { type Outbox, transactionThenSend } from '../accounts/outbox.ts';
import type { Pkce } from '../accounts/pkce-params.ts';
import type { RequestMeta } from '../accounts/issued-session.ts';
import { signupWithEmail } from './signup.ts';

export interface EmailRequest {
  email: string;
  aud: string;
  redirectTo: string;
  meta: RequestMeta;
  pkce?: Pkce;
}

/** Queues the email of `kind` for a locked user, with its audit entry. */
async function queueWithAudit(
  deps: Deps,
  tx: Executor,
  out: Outbox,
  user: UserRow,
  kind: EmailTokenKind,
  r: EmailRequest,
): Promise<void> {
  await queueEmailToken(deps, tx, out, user, kind, { redirectTo: r.redirectTo, pkce: r.pkce });
  const action = kind === 'confirmation' ? 'user_confirmation_requested' : 'user_recovery_requested';
  await insertAudit(tx, { actor: user, action, ip: r.meta.ip, now: deps.now() });
}

async function sendToExisting(deps: Deps, userId: string, kind: EmailTokenKind, r: EmailRequest): Promise<void> {
  await transactionThenSend(deps, async (tx, out) => {
    const user = await findUserById(tx, userId, { forUpdate: true });
    if (user) await queueWithAudit(deps, tx, out, user, kind, r);
  });
}

export async function requestRecovery(deps: Deps, r: EmailRequest): Promise<void> {
  const user = await findUserByEmail(deps.db, r.email, r.aud);
  if (!user) return;
  await sendToExisting(deps, user.id, 'recovery', r);
}

/**
 * A confirmed user gets a magic link; a new or unconfirmed one is signed up and gets a
 * confirmation. Under MAILER_AUTOCONFIRM a new user is signed up confirmed and an unconfirmed
 * one (e.g. invited) is left as it is: both get a magic link, whose use confirms the address
 * (GoTrue signs the unconfirmed one up again, confirming it before the link is even followed).
 */
export async function requestMagicLink(
  deps: Deps,
  r: EmailRequest & { data: Record<string, unknown>; createUser: boolean },
): Promise<void> {
  const cfg = deps.config;
  if (!cfg.external.email.enabled) throw new ApiError(422, 'email_provider_disabled', 'Email logins are disabled');
  if (!cfg.external.email.magicLinkEnabled)
    throw new ApiError(422, 'email_provider_disabled', 'Login with magic link is disabled');
  const user = await findUserByEmail(deps.db, r.email, r.aud);
  if (!user && !r.createUser) throw new ApiError(422, 'otp_disabled', 'Signups not allowed for otp');
  if (!user || (!user.emailConfirmedAt && !cfg.mailer.autoconfirm)) {
    if (!user && cfg.disableSignup) throw new ApiError(422, 'signup_disabled', 'Signups not allowed for this instance');
    // Under autoconfirm the new user's magic link is queued in the signup's own transaction, so
    // a failed send takes the new user back too; otherwise the confirmation email is the link.
    await signupWithEmail(deps, {
      email: r.email,
      password: generatePassword(33, cfg.password.requiredCharacters),
      data: r.data,
      aud: r.aud,
      redirectTo: r.redirectTo,
      meta: r.meta,
      pkce: r.pkce,
      onConfirmed: (tx, out, confirmed) => queueWithAudit(deps, tx, out, confirmed, 'magic_link', r),
    });
    return;
  }
  await sendToExisting(deps, user.id, 'magic_link', r);
}

/** POST /resend type=signup: only an unconfirmed user gets another confirmation. */
export async function resendConfirmation(deps: Deps, r: EmailRequest): Promise<void> {
  const user = await findUserByEmail(deps.db, r.email, r.aud);
  if (!user || user.emailConfirmedAt) return;
  await sendToExisting(deps, user.id, 'confirmation', r);
}
