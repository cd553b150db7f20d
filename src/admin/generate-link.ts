// POST /admin/generate_link (GoTrue: api.adminGenerateLink): writes the token an email would
// carry, through the same storeEmailToken as the mail flows (email-change halves as
// requestEmailChange writes them), and hands the link and the code to the admin instead of a
// mailer. No email, so no frequency limit and no RATE_LIMIT_EMAIL_SENT. One transaction.
import { generateOtp, newLinkToken, tokenHash } from '../crypto/otp.ts';
import { generatePassword } from '../crypto/password-policy.ts';
import { insertAudit } from '../db/audit.ts';
import { type Executor, isUniqueViolation, transaction } from '../db/database.ts';
import { clearOneTimeTokens, putOneTimeToken } from '../db/one-time-tokens.ts';
import {
  NIL_UUID,
  findUserByEmail,
  findUserById,
  insertIdentity,
  insertUser,
  listIdentities,
  type NewUser,
  updateUser,
  type UserRow,
} from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { emailExists } from '../core/errors.ts';
import { type EmailTokenKind, storeEmailToken, verificationLink } from '../accounts/email-tokens.ts';
import { assertNewPassword } from '../accounts/password-check.ts';
import type { RequestMeta } from '../accounts/issued-session.ts';
import { mergeMetadata } from '../accounts/metadata.ts';
import { userJson } from '../models/user-json.ts';
import { validateEmail } from '../accounts/validate.ts';
import { notFound, validationFailed } from '../core/errors.ts';
import { afterUserCreated, beforeUserCreated } from '../hooks/user-created.ts';

export const GENERATE_LINK_TYPES = [
  'signup',
  'invite',
  'magiclink',
  'recovery',
  'email_change_current',
  'email_change_new',
] as const;
export type GenerateLinkType = (typeof GENERATE_LINK_TYPES)[number];

export interface GenerateLinkRequest {
  type: string;
  /** Validated and lower-cased. */
  email: string;
  newEmail?: string;
  password?: string;
  data: Record<string, unknown>;
  aud: string;
  redirectTo: string;
  /** The admin's JWT role: GoTrue's admin pseudo-user in the audit log. */
  adminRole: string;
  meta: RequestMeta;
}

interface Issued {
  user: UserRow;
  /** What the link carries (`hashed_token`): the random link token, never the code's hash. */
  linkToken: string;
  link: string;
}

const isLinkType = (t: string): t is GenerateLinkType => (GENERATE_LINK_TYPES as readonly string[]).includes(t);

const adminActor = (role: string) => ({ id: NIL_UUID, email: role, phone: null, rawUserMetaData: null });

/**
 * A new unconfirmed email user with its email identity, as GoTrue's adminGenerateLink makes one
 * (signup with a password, invite without): user_metadata is exactly the `data` sent, and the
 * identity carries the address claims (unlike /signup, which copies them into user_metadata).
 */
async function createEmailUser(
  deps: Deps,
  tx: Executor,
  p: GenerateLinkRequest,
  encryptedPassword: string | undefined,
  now: Date,
): Promise<UserRow> {
  const id = crypto.randomUUID();
  const identityData: Record<string, unknown> = {
    sub: id,
    email: p.email,
    email_verified: false,
    phone_verified: false,
  };
  const user = await insertUser(tx, {
    id,
    aud: p.aud,
    role: deps.config.jwt.defaultGroupName,
    email: p.email,
    encryptedPassword,
    rawAppMetaData: { provider: 'email', providers: ['email'] },
    rawUserMetaData: p.data,
    createdAt: now,
    updatedAt: now,
  });
  await insertIdentity(tx, {
    providerId: id,
    userId: id,
    identityData,
    provider: 'email',
    createdAt: now,
    updatedAt: now,
  });
  await beforeUserCreated(deps, tx, user, p.meta.ip);
  return user;
}

async function issue(
  deps: Deps,
  tx: Executor,
  p: GenerateLinkRequest & { type: GenerateLinkType },
  found: UserRow | undefined,
  encryptedPassword: string | undefined,
  otp: string,
): Promise<Issued> {
  const now = deps.now();
  let user = found ? await findUserById(tx, found.id, { forUpdate: true }) : undefined;
  if (found && !user) throw notFound('user_not_found', 'User with this email not found'); // deleted meanwhile
  const ip = p.meta.ip;

  const store = async (u: UserRow, kind: EmailTokenKind, patch: Partial<NewUser> = {}): Promise<Issued> => {
    const t = await storeEmailToken(deps, tx, u, kind, { redirectTo: p.redirectTo, otp, patch });
    return { user: t.user, linkToken: t.linkToken, link: t.link };
  };

  switch (p.type) {
    case 'magiclink':
    case 'recovery': {
      // GoTrue records these with the user as actor, although an admin asked.
      await insertAudit(tx, { actor: user!, action: 'user_recovery_requested', ip, now });
      return store(user!, p.type === 'magiclink' ? 'magic_link' : 'recovery');
    }
    case 'invite': {
      if (user?.emailConfirmedAt) throw emailExists();
      user ??= await createEmailUser(deps, tx, p, undefined, now);
      await insertAudit(tx, {
        actor: adminActor(p.adminRole),
        action: 'user_invited',
        ip,
        now,
        traits: { user_id: user.id, user_email: user.email ?? '' },
      });
      return store(user, 'invite', { invitedAt: now });
    }
    case 'signup': {
      if (user?.emailConfirmedAt) throw emailExists();
      if (user) {
        // Unconfirmed: only the metadata changes; the password given (if any) is ignored, as in GoTrue.
        if (Object.keys(p.data).length > 0)
          user = await updateUser(tx, user.id, { rawUserMetaData: mergeMetadata(user.rawUserMetaData, p.data) });
      } else {
        user = await createEmailUser(deps, tx, p, encryptedPassword, now);
        // Not in GoTrue (which records nothing here): the account was created by an admin, so
        // the log says so, in the shape of GoTrue's admin create-user entry.
        await insertAudit(tx, {
          actor: adminActor(p.adminRole),
          action: 'user_signedup',
          ip,
          now,
          traits: { user_id: user.id, user_email: user.email ?? '', user_phone: user.phone ?? '', provider: 'email' },
        });
      }
      return store(user, 'confirmation');
    }
    case 'email_change_current':
    case 'email_change_new': {
      const u = user!;
      if (p.type === 'email_change_current' && !deps.config.mailer.secureEmailChangeEnabled) {
        throw validationFailed('Enable secure email change to generate link for current email');
      }
      const newEmail = validateEmail(p.newEmail);
      const other = await findUserByEmail(tx, newEmail, u.aud ?? '');
      if (other && other.id !== u.id) throw emailExists();
      const current = p.type === 'email_change_current';
      // Each half's code is hashed with the address it belongs to, as verify expects; the link
      // carries a random token of its own (GoTrue returns sha224(current email + code) as
      // `hashed_token` for email_change_new, which matches nothing it stored).
      const stored = tokenHash(current ? p.email : newEmail, otp);
      const link = newLinkToken(deps.randomBytes, false);
      // The other half survives only if it belongs to this same change, so an admin can issue
      // both links of a secure change; a half for another address would confirm the wrong change.
      const sameChange = (u.emailChange ?? '').toLowerCase() === newEmail;
      const patch: Partial<NewUser> = {
        emailChange: newEmail,
        emailChangeSentAt: now,
        emailChangeConfirmStatus: 0,
        updatedAt: now,
      };
      if (current) patch.emailChangeTokenCurrent = stored;
      else patch.emailChangeTokenNew = stored;
      if (!sameChange) {
        if (current) patch.emailChangeTokenNew = '';
        else patch.emailChangeTokenCurrent = '';
        await clearOneTimeTokens(tx, u.id, current ? 'email_change_token_new' : 'email_change_token_current');
      }
      const updated = await updateUser(tx, u.id, patch);
      await putOneTimeToken(tx, {
        userId: u.id,
        type: current ? 'email_change_token_current' : 'email_change_token_new',
        tokenHash: stored,
        linkHash: link.hash,
        relatesTo: current ? p.email : newEmail,
        now,
      });
      return {
        user: updated,
        linkToken: link.token,
        link: verificationLink(deps, deps.config.mailer.urlPaths.emailChange, link.token, 'email_change', p.redirectTo),
      };
    }
  }
}

/** The response body: the user flattened at the top level, then the link properties (GoTrue's GenerateLinkResponse). */
export async function generateLink(deps: Deps, req: GenerateLinkRequest): Promise<Record<string, unknown>> {
  const cfg = deps.config;
  if (!isLinkType(req.type)) throw validationFailed(`Invalid email action link type requested: ${req.type}`);
  const p = { ...req, type: req.type as GenerateLinkType };
  const found = await findUserByEmail(deps.db, p.email, p.aud);
  let password = p.password;
  let generated = false;
  if (!found) {
    if (p.type === 'magiclink') {
      // GoTrue turns a magic link for an unknown address into a signup with a random password.
      p.type = 'signup';
      password = generatePassword(64, cfg.password.requiredCharacters);
      generated = true;
    } else if (p.type === 'recovery' || p.type === 'email_change_current' || p.type === 'email_change_new') {
      throw notFound('user_not_found', 'User with this email not found');
    }
  }
  let encryptedPassword: string | undefined;
  if (p.type === 'signup' && !found) {
    if (!password) throw validationFailed('Signup requires a valid password');
    if (!generated) await assertNewPassword(deps, password);
    // Hashed before the transaction: no connection is held during bcrypt.
    encryptedPassword = await deps.hasher.hash(password);
  }
  const otp = generateOtp(cfg.mailer.otpLength, deps.randomBytes);
  let body: Record<string, unknown>;
  try {
    body = await transaction(deps.db, async (tx) => {
      const issued = await issue(deps, tx, p, found, encryptedPassword, otp);
      return {
        ...userJson(issued.user, await listIdentities(tx, [issued.user.id])),
        action_link: issued.link,
        email_otp: otp,
        hashed_token: issued.linkToken,
        verification_type: p.type,
        redirect_to: p.redirectTo,
      };
    });
  } catch (err) {
    // A concurrent request created the same address (users_email_partial_key).
    if (isUniqueViolation(err)) throw emailExists();
    throw err;
  }
  // GoTrue: a signup or invite link that made the user calls the after user created hook; its
  // error is the answer (the user and the link stay).
  if (!found && (p.type === 'signup' || p.type === 'invite')) await afterUserCreated(deps, String(body.id));
  return body;
}
