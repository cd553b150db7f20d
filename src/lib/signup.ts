// POST /signup with email and password, and anonymous sign-in (GoTrue: api.Signup,
// api.SignupAnonymously). Everything a signup writes happens in one transaction.
import type { Deps } from '../deps.ts';
import { type AuditEntry, insertAudit } from '../db/audit.ts';
import { isUniqueViolation, transaction } from '../db/database.ts';
import {
  findUserByEmail, insertEmailUser, insertUser, listIdentities, updateIdentityData, updateUser, type UserRow,
} from '../db/users.ts';
import { sendConfirmation } from './email-tokens.ts';
import { ApiError } from './errors.ts';
import { type RequestMeta, type TokenResponse, createSession, tokenResponse } from './session.ts';
import { userJson } from './user-json.ts';
import type { Pkce } from './pkce.ts';

export type SignupResult =
  | { kind: 'session'; token: TokenResponse }
  | { kind: 'user'; body: Record<string, unknown> }
  /** With `noSession`: the user was created or found and confirmed, no session issued. */
  | { kind: 'confirmed'; user: UserRow };

export interface EmailSignup {
  email: string;
  password: string;
  data: Record<string, unknown>;
  aud: string;
  redirectTo: string;
  meta: RequestMeta;
  /** /otp and /magiclink sign new users up but answer with an email, not a session. */
  noSession?: boolean;
  pkce?: Pkce;
}

const userAlreadyExists = () => new ApiError(422, 'user_already_exists', 'User already registered');

/** The anti-enumeration answer for a confirmed address (GoTrue's sanitizeUser). */
function fakeUser(deps: Deps, s: EmailSignup): Record<string, unknown> {
  const now = deps.now().toISOString();
  return {
    id: crypto.randomUUID(), aud: s.aud, role: '', email: s.email, phone: '',
    confirmation_sent_at: now,
    app_metadata: { provider: 'email', providers: ['email'] },
    user_metadata: s.data, identities: [], created_at: now, updated_at: now, is_anonymous: false,
  };
}

async function confirmEmail(tx: Parameters<typeof updateUser>[0], user: UserRow, now: Date): Promise<UserRow> {
  const meta = { ...(user.rawUserMetaData ?? {}), email_verified: true };
  await updateIdentityData(tx, user.id, 'email', { ...meta });
  return updateUser(tx, user.id, { emailConfirmedAt: now, rawUserMetaData: meta, updatedAt: now });
}

export async function signupWithEmail(deps: Deps, s: EmailSignup): Promise<SignupResult> {
  const cfg = deps.config;
  const autoconfirm = cfg.mailer.autoconfirm;
  // Hashed before the transaction (no connection held during bcrypt), and for duplicates
  // too, so a repeated signup takes as long as a new one.
  const encryptedPassword = await deps.hasher.hash(s.password);
  try {
    return await transaction(deps.db, async (tx) => {
      const now = deps.now();
      const existing = await findUserByEmail(tx, s.email, s.aud);
      if (existing?.emailConfirmedAt) {
        await insertAudit(tx, { actor: existing, action: 'user_repeated_signup', traits: { provider: 'email' }, ip: s.meta.ip, now });
        if (autoconfirm || cfg.sms.autoconfirm) throw userAlreadyExists();
        return { kind: 'user', body: fakeUser(deps, s) };
      }
      let user: UserRow;
      if (existing) {
        // Unconfirmed: the caller's identity is unproven, so the record is not changed.
        // Under autoconfirm only the account's own password may confirm it.
        if (autoconfirm) {
          const ok = existing.encryptedPassword ? await deps.hasher.verify(s.password, existing.encryptedPassword) : false;
          if (!ok) throw userAlreadyExists();
        }
        user = existing;
      } else {
        // Under autoconfirm the row is written confirmed, as confirmEmail would leave it.
        const id = crypto.randomUUID();
        const identityData: Record<string, unknown> = { sub: id, email: s.email, email_verified: autoconfirm, phone_verified: false };
        for (const [k, v] of Object.entries(s.data)) if (!(k in identityData)) identityData[k] = v;
        user = await insertEmailUser(tx, {
          id, aud: s.aud, role: cfg.jwt.defaultGroupName, email: s.email,
          encryptedPassword, emailConfirmedAt: autoconfirm ? now : null,
          appMetaData: { provider: 'email', providers: ['email'] }, metaData: identityData, now,
        });
      }
      if (autoconfirm) {
        const traits = { provider: 'email' };
        const audits: AuditEntry[] = existing ? [] : [{ actor: user, action: 'user_signedup', traits, ip: s.meta.ip, now }];
        if (existing) user = await confirmEmail(tx, user, now);
        if (s.noSession) {
          for (const a of audits) await insertAudit(tx, a);
          return { kind: 'confirmed', user };
        }
        audits.push({ actor: user, action: 'login', traits, ip: s.meta.ip, now });
        const issued = await createSession(deps, tx, user, 'password', s.meta, audits);
        return { kind: 'session', token: await tokenResponse(deps, tx, issued) };
      }
      await insertAudit(tx, { actor: user, action: 'user_confirmation_requested', traits: { provider: 'email' }, ip: s.meta.ip, now });
      user = await sendConfirmation(deps, tx, user, s.redirectTo, s.pkce);
      return { kind: 'user', body: userJson(user, await listIdentities(tx, [user.id])) };
    });
  } catch (err) {
    // A concurrent signup of the same address won the insert: answer as for a duplicate.
    if (isUniqueViolation(err)) {
      if (autoconfirm) throw userAlreadyExists();
      return { kind: 'user', body: fakeUser(deps, s) };
    }
    throw err;
  }
}

export async function signupAnonymously(deps: Deps, data: Record<string, unknown>, aud: string, meta: RequestMeta): Promise<TokenResponse> {
  return transaction(deps.db, async (tx) => {
    const now = deps.now();
    const user = await insertUser(tx, {
      id: crypto.randomUUID(), aud, role: deps.config.jwt.defaultGroupName, isAnonymous: true,
      rawAppMetaData: {}, rawUserMetaData: data, createdAt: now, updatedAt: now,
    });
    const signedUp: AuditEntry = { actor: user, action: 'user_signedup', traits: { provider: 'anonymous' }, ip: meta.ip, now };
    return tokenResponse(deps, tx, await createSession(deps, tx, user, 'anonymous', meta, [signedUp]));
  });
}
