// POST /recover, /magiclink, /otp (email) and /resend — GoTrue: api.Recover, api.MagicLink,
// api.Otp, api.Resend. Unknown addresses get the same answer as known ones where GoTrue's do.
import type { Deps } from '../deps.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import { findUserByEmail, findUserById } from '../db/users.ts';
import { type EmailTokenKind, sendEmailToken } from './email-tokens.ts';
import { ApiError } from './errors.ts';
import { generatePassword } from './password-policy.ts';
import type { RequestMeta } from './session.ts';
import { signupWithEmail } from './signup.ts';
import type { Pkce } from './pkce.ts';

export interface EmailRequest {
  email: string;
  aud: string;
  redirectTo: string;
  meta: RequestMeta;
  pkce?: Pkce;
}

async function sendToExisting(deps: Deps, userId: string, kind: EmailTokenKind, r: EmailRequest): Promise<void> {
  await transaction(deps.db, async (tx) => {
    const user = await findUserById(tx, userId, { forUpdate: true });
    if (!user) return;
    await sendEmailToken(deps, tx, user, kind, { redirectTo: r.redirectTo, pkce: r.pkce });
    const action = kind === 'confirmation' ? 'user_confirmation_requested' : 'user_recovery_requested';
    await insertAudit(tx, { actor: user, action, ip: r.meta.ip, now: deps.now() });
  });
}

export async function requestRecovery(deps: Deps, r: EmailRequest): Promise<void> {
  const user = await findUserByEmail(deps.db, r.email, r.aud);
  if (!user) return;
  await sendToExisting(deps, user.id, 'recovery', r);
}

/** A confirmed user gets a magic link; a new or unconfirmed one is signed up and gets a confirmation. */
export async function requestMagicLink(deps: Deps, r: EmailRequest & { data: Record<string, unknown>; createUser: boolean }): Promise<void> {
  const cfg = deps.config;
  if (!cfg.external.email.enabled) throw new ApiError(422, 'email_provider_disabled', 'Email logins are disabled');
  if (!cfg.external.email.magicLinkEnabled) throw new ApiError(422, 'email_provider_disabled', 'Login with magic link is disabled');
  let user = await findUserByEmail(deps.db, r.email, r.aud);
  if (!user && !r.createUser) throw new ApiError(422, 'otp_disabled', 'Signups not allowed for otp');
  if (!user || !user.emailConfirmedAt) {
    if (!user && cfg.disableSignup) throw new ApiError(422, 'signup_disabled', 'Signups not allowed for this instance');
    const result = await signupWithEmail(deps, {
      email: r.email, password: generatePassword(33, cfg.password.requiredCharacters), data: r.data, aud: r.aud,
      redirectTo: r.redirectTo, meta: r.meta, noSession: true, pkce: r.pkce,
    });
    if (result.kind !== 'confirmed') return; // a confirmation email went out
    user = result.user;
  }
  await sendToExisting(deps, user.id, 'magic_link', r);
}

/** POST /resend type=signup: only an unconfirmed user gets another confirmation. */
export async function resendConfirmation(deps: Deps, r: EmailRequest): Promise<void> {
  const user = await findUserByEmail(deps.db, r.email, r.aud);
  if (!user || user.emailConfirmedAt) return;
  await sendToExisting(deps, user.id, 'confirmation', r);
}
