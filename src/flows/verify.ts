// POST/GET /verify for the email types (GoTrue: api.Verify). A token is consumed inside one
// transaction holding the user's row lock, so each token works exactly once.
import { timingSafeEqual } from '../crypto/encoding.ts';
import { tokenHash } from '../crypto/otp.ts';
import { generatePassword } from '../crypto/password-policy.ts';
import { insertAudit } from '../db/audit.ts';
import { type Executor, isUniqueViolation, transaction } from '../db/database.ts';
import { latestFlowState, markAuthCodeIssued } from '../db/flow-state.ts';
import { clearOneTimeTokens, findOneTimeTokensByAddress, type OneTimeTokenType } from '../db/one-time-tokens.ts';
import { deleteIdentitiesExcept, findUsersByEmails, providersOfUser } from '../db/identities.ts';
import { deleteSessions } from '../db/sessions.ts';
import {
  findUserByEmail,
  findUserById,
  insertIdentity,
  isBanned,
  markEmailIdentityVerified,
  type NewUser,
  updateUser,
  type UserRow,
} from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, forbidden } from '../core/errors.ts';
import { takeCodeAttempt } from '../accounts/code-attempts.ts';
import { emailExists } from '../core/errors.ts';
import { findLinkedTokens } from '../accounts/link-tokens.ts';
import { createSession, tokenResponse } from '../accounts/session.ts';
import type { RequestMeta, TokenResponse } from '../accounts/issued-session.ts';

export const EMAIL_VERIFY_TYPES = ['signup', 'invite', 'recovery', 'magiclink', 'email'] as const;
export type EmailVerifyType = (typeof EMAIL_VERIFY_TYPES)[number];
type Resolved = 'signup' | 'invite' | 'recovery' | 'magiclink';

const CANDIDATES: Record<EmailVerifyType, { ott: OneTimeTokenType; resolved: Resolved }[]> = {
  signup: [{ ott: 'confirmation_token', resolved: 'signup' }],
  invite: [{ ott: 'confirmation_token', resolved: 'invite' }],
  recovery: [{ ott: 'recovery_token', resolved: 'recovery' }],
  magiclink: [{ ott: 'recovery_token', resolved: 'magiclink' }],
  // `email` (an OTP typed in) may be a signup confirmation or a magic link.
  email: [
    { ott: 'confirmation_token', resolved: 'signup' },
    { ott: 'recovery_token', resolved: 'magiclink' },
  ],
};

const COLUMN = {
  confirmation_token: ['confirmationToken', 'confirmationSentAt'],
  recovery_token: ['recoveryToken', 'recoverySentAt'],
} as const;

export function isEmailVerifyType(t: string): t is EmailVerifyType {
  return (EMAIL_VERIFY_TYPES as readonly string[]).includes(t);
}

export interface VerifyInput {
  type: EmailVerifyType;
  aud: string;
  /** The code and the address it was sent to… */
  token?: string;
  email?: string;
  /** …or the hash carried by the link. */
  tokenHash?: string;
  /** The request's rate-limit client key: an old-format link's miss is spent from its share (link-tokens.ts). */
  client?: string;
}

export type Verified =
  | { type: Resolved; token: TokenResponse; authCode?: undefined }
  /** A link created by a PKCE request, followed with `issueCode`: the code for grant_type=pkce. */
  | { type: Resolved; authCode: string; token?: undefined };

const FLOW_METHOD: Record<Resolved, string> = {
  signup: 'email/signup',
  invite: 'invite',
  recovery: 'recovery',
  magiclink: 'magiclink',
};

const tokenInvalid = () => forbidden('otp_expired', 'Token has expired or is invalid');
const linkInvalid = () => forbidden('otp_expired', 'Email link is invalid or has expired');

function matches(stored: string | null, hash: string): boolean {
  if (!stored) return false;
  return timingSafeEqual(stored, hash) || timingSafeEqual(stored, `pkce_${hash}`);
}

function fresh(deps: Deps, sentAt: Date | null): boolean {
  return !!sentAt && deps.now().getTime() <= sentAt.getTime() + deps.config.mailer.otpExp * 1000;
}

interface Located {
  user: UserRow;
  ott: OneTimeTokenType;
  resolved: Resolved;
  stored: string;
  /**
   * The address is not yet the user's: an OAuth account whose provider did not vouch for it waits
   * for this confirmation to take it (accounts/external-accounts.ts, review H2).
   */
  pending?: string;
}

/** The address an emailed token of this user was sent to: the user's own, or a pending provider address (signup only). */
function mailedAddress(user: UserRow, resolved: Resolved): { address: string; pending?: string } {
  if (user.email) return { address: user.email.toLowerCase() };
  const pending = resolved === 'signup' ? (user.emailChange ?? '').toLowerCase() : '';
  return pending ? { address: pending, pending } : { address: '' };
}

/** The user waiting to take `email` as a pending provider address (no address of their own yet). */
async function pendingAddressOwner(deps: Deps, email: string, aud: string): Promise<UserRow | undefined> {
  for (const row of await findOneTimeTokensByAddress(deps.db, email, ['confirmation_token'])) {
    const user = await findUserById(deps.db, row.userId);
    if (user && user.aud === aud && !user.email && (user.emailChange ?? '').toLowerCase() === email) return user;
  }
  return undefined;
}

/** Finds which candidate the presented token is, without changing anything. */
async function locate(deps: Deps, input: VerifyInput): Promise<Located> {
  const candidates = CANDIDATES[input.type];
  if (input.token !== undefined) {
    const email = (input.email ?? '').toLowerCase();
    const user =
      (await findUserByEmail(deps.db, email, input.aud)) ?? (await pendingAddressOwner(deps, email, input.aud));
    if (!user) throw tokenInvalid();
    const hash = tokenHash(email, input.token);
    for (const c of candidates) {
      const [col, sent] = COLUMN[c.ott as keyof typeof COLUMN];
      const sentAt = user[sent];
      const { address, pending } = mailedAddress(user, c.resolved);
      if (address !== email || !user[col] || !sentAt || !fresh(deps, sentAt)) continue;
      // Counted before it is compared: a code dies after its attempts (code-attempts.ts).
      if (!(await takeCodeAttempt(deps, user.id, c.ott, sentAt))) continue;
      if (matches(user[col], hash)) return { user, ott: c.ott, resolved: c.resolved, stored: user[col]!, pending };
    }
    throw tokenInvalid();
  }
  // A link: found by its own random value, never by anything computed from the address and code.
  const rows = await findLinkedTokens(
    deps,
    input.tokenHash ?? '',
    candidates.map((c) => c.ott),
    input.client,
  );
  for (const c of candidates) {
    const row = rows.find((r) => r.tokenType === c.ott);
    if (!row) continue;
    const user = await findUserById(deps.db, row.userId);
    if (!user || user.aud !== input.aud) continue;
    const [col, sent] = COLUMN[c.ott as keyof typeof COLUMN];
    // Emailed tokens only: a texted code shares the column, never the channel (review H1).
    const { address, pending } = mailedAddress(user, c.resolved);
    if (!address || row.relatesTo !== address) continue;
    if (user[col] !== row.tokenHash || !fresh(deps, user[sent])) continue;
    // The link and the code are one token: a code that has had its attempts is dead here too.
    if (!(await takeCodeAttempt(deps, user.id, c.ott, user[sent]!))) continue;
    return { user, ott: c.ott, resolved: c.resolved, stored: row.tokenHash, pending };
  }
  throw linkInvalid();
}

export async function verifyEmailToken(
  deps: Deps,
  input: VerifyInput,
  meta: RequestMeta,
  opts: { issueCode?: boolean } = {},
): Promise<Verified> {
  const found = await locate(deps, input);
  if (isBanned(found.user, deps.now())) throw forbidden('user_banned', 'User is banned');
  const [col] = COLUMN[found.ott as keyof typeof COLUMN];
  const invalid = input.token !== undefined ? tokenInvalid : linkInvalid;
  // Pre-account takeover: only the signup's own confirmation vouches for the password stored
  // before it. Any other link or code that confirms the address (recovery, magic link, email
  // OTP, invite) proves who owns it, not who chose that password: it is cleared (below).
  const clearsPassword = found.resolved !== 'signup' && !found.user.emailConfirmedAt;
  // A random password for an invited user who has none: the app then asks for a real one.
  const invitePassword =
    found.resolved === 'invite' && (!found.user.encryptedPassword || clearsPassword)
      ? await deps.hasher.hash(generatePassword(64))
      : undefined;
  return transaction(deps.db, async (tx) => {
    const now = deps.now();
    const user = await findUserById(tx, found.user.id, { forUpdate: true });
    // Re-checked under the lock: a concurrent verify of the same token has already used it.
    if (!user || user[col] !== found.stored) throw invalid();
    const patch: Partial<NewUser> = { [col]: '', updatedAt: now };
    if (found.pending) {
      // The mailbox owner confirms the address an OAuth sign-in claimed: it becomes the account's
      // now, unless someone took it meanwhile.
      if (user.email || (user.emailChange ?? '').toLowerCase() !== found.pending) throw invalid();
      if ((await findUsersByEmails(tx, [found.pending])).some((u) => u.id !== user.id)) throw emailExists();
      Object.assign(patch, { email: found.pending, emailChange: '' });
    }
    if (!user.emailConfirmedAt) {
      patch.emailConfirmedAt = now;
      const meta2 = { ...(user.rawUserMetaData ?? {}), email_verified: true };
      patch.rawUserMetaData = meta2;
      await markEmailIdentityVerified(tx, user.id, now);
      // An account of which nothing was proven yet: provider identities attached before (GoTrue
      // data, or rows from before authsvc kept unverified provider addresses off users.email) are
      // whoever's signed in with them, not the mailbox owner's; they go, as the password does (H2).
      if (
        !found.pending &&
        !user.phoneConfirmedAt &&
        (await deleteIdentitiesExcept(tx, user.id, ['email', 'phone'])) > 0
      ) {
        patch.rawAppMetaData = await asEmailAccount(tx, user, now);
      }
      // Confirming proves who owns the address: any session opened before that, by whoever
      // signed it up, ends here (pre-account takeover; the password is the confirmed signup's).
      await deleteSessions(tx, user.id, 'global');
      // No password in force until the owner sets one (PUT /user, as after a recovery).
      if (found.resolved !== 'signup') patch.encryptedPassword = null;
    }
    if (invitePassword) patch.encryptedPassword = invitePassword;
    await clearOneTimeTokens(tx, user.id);
    const updated = await updateUser(tx, user.id, patch).catch((err: unknown) => {
      throw isUniqueViolation(err) ? emailExists() : err;
    });
    const action =
      found.resolved === 'signup' ? 'user_signedup' : found.resolved === 'invite' ? 'invite_accepted' : 'login';
    await insertAudit(tx, { actor: updated, action, traits: { provider: 'email' }, ip: meta.ip, now });
    if (opts.issueCode && found.stored.startsWith('pkce_')) {
      const flow = await latestFlowState(tx, user.id, FLOW_METHOD[found.resolved]);
      if (!flow) throw new ApiError(404, 'flow_state_not_found', 'no valid flow state found for user.');
      await markAuthCodeIssued(tx, flow.id, now);
      return { type: found.resolved, authCode: flow.authCode! };
    }
    const issued = await createSession(deps, tx, updated, 'otp', meta);
    return { type: found.resolved, token: await tokenResponse(deps, tx, issued) };
  });
}

/** The account is the mailbox owner's now: an email identity (made if missing) and app_metadata from the identities left. */
async function asEmailAccount(tx: Executor, user: UserRow, now: Date): Promise<Record<string, unknown>> {
  const providers = await providersOfUser(tx, user.id);
  if (!providers.includes('email')) {
    await insertIdentity(tx, {
      providerId: user.id,
      userId: user.id,
      provider: 'email',
      createdAt: now,
      updatedAt: now,
      lastSignInAt: now,
      identityData: { sub: user.id, email: user.email, email_verified: true, phone_verified: false },
    });
    providers.unshift('email');
  }
  return { ...(user.rawAppMetaData ?? {}), provider: providers[0], providers };
}
