// POST /signup with email and password, and anonymous sign-in (GoTrue: api.Signup,
// api.SignupAnonymously). Everything a signup writes happens in one transaction; the
// confirmation email goes out after it commits (outbox.ts).
import { storedPasswordHash } from '../accounts/stored-password.ts';
import { type AuditEntry, insertAudit } from '../db/audit.ts';
import { type Executor, isUniqueViolation, transaction } from '../db/database.ts';
import {
  deleteUnconfirmedUser,
  findUserByEmail,
  findUserById,
  insertEmailUser,
  insertUser,
  listIdentities,
  markEmailIdentityVerified,
  updateUser,
  type UserRow,
} from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';
import { queueEmailToken } from '../accounts/email-tokens.ts';
import { type Outbox, transactionThenSend } from '../accounts/outbox.ts';
import type { Pkce } from '../accounts/pkce-params.ts';
import { createSession, tokenResponse } from '../accounts/session.ts';
import type { RequestMeta, TokenResponse } from '../accounts/issued-session.ts';
import { userJson } from '../models/user-json.ts';
import { afterUserCreated, beforeUserCreated } from '../hooks/user-created.ts';

export type SignupResult =
  | { kind: 'session'; token: TokenResponse }
  /** `userId`: the account the answer shows (not for the anti-enumeration stand-in). */
  | { kind: 'user'; body: Record<string, unknown>; userId?: string }
  /** With `onConfirmed`: the user was created or found and confirmed, no session issued. */
  | { kind: 'confirmed'; user: UserRow };

export interface EmailSignup {
  email: string;
  password: string;
  data: Record<string, unknown>;
  aud: string;
  redirectTo: string;
  meta: RequestMeta;
  /**
   * /otp and /magiclink sign new users up but answer with an email, not a session: under
   * autoconfirm this runs in the signup's transaction with the confirmed user instead.
   */
  onConfirmed?: (tx: Executor, out: Outbox, user: UserRow) => Promise<void>;
  pkce?: Pkce;
}

export const userAlreadyExists = () => new ApiError(422, 'user_already_exists', 'User already registered');

/** The anti-enumeration answer for a confirmed address or number (GoTrue's sanitizeUser). */
export function fakeUser(
  deps: Deps,
  s: { aud: string; data: Record<string, unknown>; email?: string; phone?: string },
): Record<string, unknown> {
  const now = deps.now().toISOString();
  const provider = s.phone ? 'phone' : 'email';
  return {
    id: crypto.randomUUID(),
    aud: s.aud,
    role: '',
    email: s.email ?? '',
    phone: s.phone ?? '',
    confirmation_sent_at: now,
    app_metadata: { provider, providers: [provider] },
    user_metadata: s.data,
    identities: [],
    created_at: now,
    updated_at: now,
    is_anonymous: false,
  };
}

async function confirmEmail(tx: Parameters<typeof updateUser>[0], user: UserRow, now: Date): Promise<UserRow> {
  const meta = { ...(user.rawUserMetaData ?? {}), email_verified: true };
  await markEmailIdentityVerified(tx, user.id, now);
  return updateUser(tx, user.id, { emailConfirmedAt: now, rawUserMetaData: meta, updatedAt: now });
}

export async function signupWithEmail(deps: Deps, s: EmailSignup): Promise<SignupResult> {
  const cfg = deps.config;
  const autoconfirm = cfg.mailer.autoconfirm;
  // Hashed before the transaction (no connection held during bcrypt), and for duplicates
  // too, so a repeated signup takes as long as a new one.
  const encryptedPassword = await deps.hasher.hash(s.password);
  try {
    return await afterSignup(
      deps,
      await transactionThenSend(deps, async (tx, out) => {
        const now = deps.now();
        const found = await findUserByEmail(tx, s.email, s.aud);
        const existing = found && (await findUserById(tx, found.id, { forUpdate: true }));
        if (existing?.emailConfirmedAt) {
          await insertAudit(tx, {
            actor: existing,
            action: 'user_repeated_signup',
            traits: { provider: 'email' },
            ip: s.meta.ip,
            now,
          });
          if (autoconfirm || cfg.sms.autoconfirm) throw userAlreadyExists();
          return { kind: 'user', body: fakeUser(deps, s) };
        }
        let user: UserRow;
        if (existing) {
          // Unconfirmed: the caller's identity is unproven, so nothing of the record changes but
          // the pending password (below). Under autoconfirm only the account's own password may confirm it.
          if (autoconfirm) {
            const ok = existing.encryptedPassword
              ? await deps.hasher.verify(s.password, await storedPasswordHash(deps, existing))
              : false;
            if (!ok) throw userAlreadyExists();
          }
          user = existing;
        } else {
          // Under autoconfirm the row is written confirmed, as confirmEmail would leave it.
          const id = crypto.randomUUID();
          const identityData: Record<string, unknown> = {
            sub: id,
            email: s.email,
            email_verified: autoconfirm,
            phone_verified: false,
          };
          for (const [k, v] of Object.entries(s.data)) if (!(k in identityData)) identityData[k] = v;
          user = await insertEmailUser(tx, {
            id,
            aud: s.aud,
            role: cfg.jwt.defaultGroupName,
            email: s.email,
            encryptedPassword,
            emailConfirmedAt: autoconfirm ? now : null,
            appMetaData: { provider: 'email', providers: ['email'] },
            metaData: identityData,
            now,
          });
          await beforeUserCreated(deps, tx, user, s.meta.ip);
          const created = user.id;
          out.undo((u) => deleteUnconfirmedUser(u, created));
        }
        if (autoconfirm) {
          const traits = { provider: 'email' };
          const audits: AuditEntry[] = existing
            ? []
            : [{ actor: user, action: 'user_signedup', traits, ip: s.meta.ip, now }];
          if (existing) user = await confirmEmail(tx, user, now);
          if (s.onConfirmed) {
            for (const a of audits) await insertAudit(tx, a);
            await s.onConfirmed(tx, out, user);
            return { kind: 'confirmed', user };
          }
          audits.push({ actor: user, action: 'login', traits, ip: s.meta.ip, now });
          const issued = await createSession(deps, tx, user, 'password', s.meta, audits);
          return { kind: 'session', token: await tokenResponse(deps, tx, issued) };
        }
        await insertAudit(tx, {
          actor: user,
          action: 'user_confirmation_requested',
          traits: { provider: 'email' },
          ip: s.meta.ip,
          now,
        });
        // Pre-account takeover: whoever signed this address up first chose the stored password. The
        // password in force after confirmation is the one of the signup whose link is followed, so
        // a repeated signup stores its own password with the new link (the older link stops working).
        user = await queueEmailToken(deps, tx, out, user, 'confirmation', {
          redirectTo: s.redirectTo,
          pkce: s.pkce,
          patch: existing ? { encryptedPassword } : undefined,
        });
        return { kind: 'user', body: userJson(user, await listIdentities(tx, [user.id])), userId: user.id };
      }),
    );
  } catch (err) {
    // A concurrent signup of the same address won the insert: answer as for a duplicate.
    if (isUniqueViolation(err)) {
      if (autoconfirm) throw userAlreadyExists();
      return { kind: 'user', body: fakeUser(deps, s) };
    }
    throw err;
  }
}

/**
 * HOOK_AFTER_USER_CREATED after a signup answered with its user, as GoTrue's /signup calls it:
 * for an unconfirmed account (a new one, or one signed up again before confirming), never under
 * autoconfirm (the answer is a session), and a failure is a plain 500 "Error invoking hook".
 */
export async function afterSignup(deps: Deps, result: SignupResult): Promise<SignupResult> {
  if (result.kind === 'user' && result.userId) await afterUserCreated(deps, result.userId, { wrap: true });
  return result;
}

export async function signupAnonymously(
  deps: Deps,
  data: Record<string, unknown>,
  aud: string,
  meta: RequestMeta,
): Promise<TokenResponse> {
  let userId = '';
  const token = await transaction(deps.db, async (tx) => {
    const now = deps.now();
    const user = await insertUser(tx, {
      id: crypto.randomUUID(),
      aud,
      role: deps.config.jwt.defaultGroupName,
      isAnonymous: true,
      rawAppMetaData: {},
      rawUserMetaData: data,
      createdAt: now,
      updatedAt: now,
    });
    await beforeUserCreated(deps, tx, user, meta.ip);
    userId = user.id;
    const signedUp: AuditEntry = {
      actor: user,
      action: 'user_signedup',
      traits: { provider: 'anonymous' },
      ip: meta.ip,
      now,
    };
    return tokenResponse(deps, tx, await createSession(deps, tx, user, 'anonymous', meta, [signedUp]));
  });
  // GoTrue: the hook's error is the answer; the user and its session stay.
  await afterUserCreated(deps, userId);
  return token;
}
