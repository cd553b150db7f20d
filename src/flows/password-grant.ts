// grant_type=password — GoTrue: api.ResourceOwnerPasswordGrant
import { deleteSessions } from '../db/sessions.ts';
import { findUserByEmail, findUserByPhone, isBanned } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { passwordAttemptDecision } from '../hooks/verification-attempts.ts';
import { ApiError, badRequest, validationFailed } from '../core/errors.ts';
import { passwordWeakness } from '../accounts/password-check.ts';
import { storedPasswordHash } from '../accounts/stored-password.ts';
import { createSession, inHookTransaction, tokenResponse } from '../accounts/session.ts';
import type { RequestMeta, TokenResponse } from '../accounts/issued-session.ts';
import { formatPhone } from '../accounts/validate.ts';

const invalidCredentials = () => badRequest('invalid_credentials', 'Invalid login credentials');

// A real bcrypt cost-10 hash of a random string: unknown users cost as much as known ones.
const DUMMY_HASH = '$2a$10$nTlQXtNXspo.kNIF3HVtZesQkxcCd5ctW.k15Maydhl4KwJ52e72W';

export async function passwordGrant(
  deps: Deps,
  p: { email?: string; phone?: string; password?: string },
  aud: string,
  meta: RequestMeta,
): Promise<TokenResponse> {
  const cfg = deps.config;
  if (p.email && p.phone) throw validationFailed('Only an email address or phone number should be provided on login.');
  if (!p.email && !p.phone) throw validationFailed('missing email or phone');
  if (p.email && !cfg.external.email.enabled)
    throw new ApiError(422, 'email_provider_disabled', 'Email logins are disabled');
  if (p.phone && !cfg.external.phone.enabled)
    throw new ApiError(422, 'phone_provider_disabled', 'Phone logins are disabled');
  const password = p.password ?? '';
  const user = p.email
    ? await findUserByEmail(deps.db, p.email, aud)
    : await findUserByPhone(deps.db, formatPhone(p.phone!), aud);
  // Every way of failing costs one hash verification, so the answer's timing does not tell
  // whether the account exists, has a password, or was asked about with an empty one.
  if (!user?.encryptedPassword || !password) {
    await deps.hasher.verify(password, DUMMY_HASH);
    throw invalidCredentials();
  }
  // Banned is answered before the password is checked (GoTrue), but after as much work.
  if (isBanned(user, deps.now())) {
    await deps.hasher.verify(password, DUMMY_HASH);
    throw badRequest('user_banned', 'User is banned');
  }
  const valid = await deps.hasher.verify(password, await storedPasswordHash(deps, user));
  if (cfg.hooks.PASSWORD_VERIFICATION_ATTEMPT.enabled) {
    const decision = await passwordAttemptDecision(deps, { userId: user.id, valid, ip: meta.ip });
    if (decision.reject) {
      // GoTrue's models.Logout when the hook asks for it.
      if (decision.logout) await deleteSessions(deps.db, user.id, 'global');
      throw badRequest('invalid_credentials', decision.message);
    }
  }
  if (!valid) throw invalidCredentials();
  if (p.email && !user.emailConfirmedAt) throw badRequest('email_not_confirmed', 'Email not confirmed');
  if (p.phone && !user.phoneConfirmedAt) throw badRequest('phone_not_confirmed', 'Phone not confirmed');
  const weak = await passwordWeakness(deps, password, { failOpen: true });
  const login = {
    actor: user,
    action: 'login' as const,
    traits: { provider: p.email ? 'email' : 'phone' },
    ip: meta.ip,
    now: deps.now(),
  };
  // GoTrue always serialises weak_password on this grant: null when the password is fine.
  const extra = { weak_password: weak ? { message: weak.message, reasons: weak.reasons } : null };
  // With the custom access token hook, in one transaction with it: its refusal leaves no session.
  return inHookTransaction(deps, async (ex) =>
    tokenResponse(deps, ex, await createSession(deps, ex, user, 'password', meta, [login]), extra),
  );
}
