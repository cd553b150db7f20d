// The admin user API (GoTrue: internal/api/admin.go): create, read, list, update, delete (hard
// or soft). Every write and its audit entry share one transaction. Admin actions are recorded
// as GoTrue records them: by an admin pseudo-user (nil id, the token's role as username).
import { sha256 } from '@noble/hashes/sha2.js';
import { base64url, utf8 } from '../crypto/encoding.ts';
import { assertPasswordLength, generatePassword } from '../crypto/password-policy.ts';
import { isSupportedPasswordHash } from '../crypto/password.ts';
import {
  deleteRefreshTokensOfUser,
  deleteSignInMaterial,
  deleteUserRow,
  findIdentity,
  listUsersInAudience,
  setIdentity,
} from '../db/admin-users.ts';
import { insertAudit } from '../db/audit.ts';
import type { Executor } from '../db/database.ts';
import { listFactors } from '../db/mfa.ts';
import { clearOneTimeTokens } from '../db/one-time-tokens.ts';
import { deleteProviderTokensOfUser } from '../db/provider-tokens.ts';
import { deleteSessions } from '../db/sessions.ts';
import { deleteUserPasskeys } from '../db/webauthn.ts';
import {
  findUserById,
  findUserByPhone,
  type IdentityRow,
  insertIdentity,
  insertUser,
  listIdentities,
  type NewUser,
  updateUser,
  type UserRow,
} from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { assertNewPassword } from '../accounts/password-check.ts';
import { mergeMetadata } from '../accounts/metadata.ts';
import { userJson } from '../models/user-json.ts';
import { emailExists, validationFailed } from '../core/errors.ts';
import { bannedUntil } from './ban-duration.ts';
import { type Page, pageBounds, toSafeNumber } from './pagination.ts';
import type { UserSearch } from './user-search.ts';
import {
  type AdminContext,
  type AdminUserInput,
  adminActor,
  checkText,
  emailTaken,
  idExists,
  inTransaction,
  type Json,
  keepProviders,
  newUserId,
  parseCommon,
  phoneExists,
  traits,
  userNotFound,
} from './user-input.ts';

export async function adminCreateUser(
  deps: Deps,
  input: AdminUserInput,
  ctx: AdminContext & { aud: string; pathId?: string },
): Promise<Json> {
  const cfg = deps.config;
  const aud = input.aud || ctx.aud;
  checkText('aud', aud);
  if (!input.email && !input.phone) throw validationFailed('Cannot create a user without either an email or phone');
  const { email, phone, role, ban } = parseCommon(input);
  if (input.password !== undefined && input.password_hash) {
    throw validationFailed('Only a password or a password hash should be provided');
  }
  let encryptedPassword: string;
  if (input.password_hash) {
    // Stored as given (GoTrue keeps imported hashes): only formats we can verify are accepted.
    if (input.password_hash.length > 255 || !isSupportedPasswordHash(input.password_hash)) {
      throw validationFailed(
        'Invalid password hash: only bcrypt, argon2i/argon2id (PHC) and Firebase scrypt hashes are supported',
      );
    }
    encryptedPassword = input.password_hash;
  } else {
    // No strength check on admin create (GoTrue); without a password the user gets a random one.
    const password = input.password || generatePassword(64);
    assertPasswordLength(password);
    encryptedPassword = await deps.hasher.hash(password);
  }
  const id = newUserId(ctx.pathId, input.id);
  return inTransaction(deps, async (tx) => {
    const now = deps.now();
    if (email && (await emailTaken(tx, email, aud))) throw emailExists();
    if (phone && (await findUserByPhone(tx, phone, aud))) throw phoneExists();
    if (await findUserById(tx, id)) throw idExists();
    const identities: { provider: string; data: Json }[] = [];
    if (email)
      identities.push({
        provider: 'email',
        data: { sub: id, email, email_verified: !!input.email_confirm, phone_verified: false },
      });
    if (phone)
      identities.push({
        provider: 'phone',
        data: { sub: id, phone, email_verified: false, phone_verified: !!input.phone_confirm },
      });
    const providers = identities.map((i) => i.provider);
    const base: Json = { provider: providers[0], providers };
    const userMeta: Json = { ...(input.user_metadata ?? {}) };
    if (input.email_confirm) userMeta.email_verified = true;
    const user = await insertUser(tx, {
      id,
      aud,
      role: role ?? cfg.jwt.defaultGroupName,
      email: email ?? null,
      phone: phone ?? null,
      encryptedPassword,
      // GoTrue's Confirm/ConfirmPhone set the timestamps whether or not the user has that contact.
      emailConfirmedAt: input.email_confirm ? now : null,
      phoneConfirmedAt: input.phone_confirm ? now : null,
      rawUserMetaData: userMeta,
      rawAppMetaData: keepProviders(
        input.app_metadata ? mergeMetadata(base, input.app_metadata) : base,
        base,
        identities,
      ),
      bannedUntil: ban === undefined ? null : bannedUntil(ban, now),
      createdAt: now,
      updatedAt: now,
    });
    const rows: IdentityRow[] = [];
    for (const i of identities) {
      rows.push(
        await insertIdentity(tx, {
          providerId: id,
          userId: id,
          provider: i.provider,
          identityData: i.data,
          createdAt: now,
          updatedAt: now,
        }),
      );
    }
    // GoTrue logs an admin-created signup as the admin's action.
    await insertAudit(tx, { actor: adminActor(ctx), action: 'user_signedup', traits: traits(user), ip: ctx.ip, now });
    return userJson(user, rows);
  });
}

// ---------------------------------------------------------------------------------------------
// PUT /admin/users/{user_id} — GoTrue: adminUserUpdate

/**
 * Email and phone changes apply at once (no verification), as in GoTrue. GoTrue reports any
 * failure inside its transaction as 500 "Error updating user" — a taken email or phone included;
 * here those are checked and answered as 422 email_exists / phone_exists instead.
 */
export async function adminUpdateUser(
  deps: Deps,
  userId: string,
  input: AdminUserInput,
  ctx: AdminContext,
): Promise<Json> {
  const { email, phone, role, ban } = parseCommon(input);
  let encryptedPassword: string | undefined;
  if (input.password !== undefined) {
    await assertNewPassword(deps, input.password);
    encryptedPassword = await deps.hasher.hash(input.password);
  }
  return inTransaction(deps, async (tx) => {
    const now = deps.now();
    const user = await findUserById(tx, userId, { forUpdate: true });
    // A soft-deleted user stays deleted: a new email and password would let it sign in again.
    if (!user || user.deletedAt) throw userNotFound();
    const patch: Partial<NewUser> = { updatedAt: now };
    let userMeta: Json = { ...(user.rawUserMetaData ?? {}) };
    if (role) patch.role = role;
    if (input.email_confirm) {
      Object.assign(patch, { confirmationToken: '', emailConfirmedAt: now });
      userMeta.email_verified = true;
    }
    if (input.phone_confirm) Object.assign(patch, { confirmationToken: '', phoneConfirmedAt: now });
    if (input.email_confirm || input.phone_confirm) await clearOneTimeTokens(tx, user.id);
    if (encryptedPassword) {
      // A new password invalidates whatever the old one vouched for: pending tokens and every session.
      Object.assign(patch, {
        encryptedPassword,
        confirmationToken: '',
        confirmationSentAt: null,
        recoveryToken: '',
        recoverySentAt: null,
        emailChangeTokenCurrent: '',
        emailChangeTokenNew: '',
        emailChangeSentAt: null,
        phoneChangeToken: '',
        phoneChangeSentAt: null,
        reauthenticationToken: '',
        reauthenticationSentAt: null,
      });
      await clearOneTimeTokens(tx, user.id);
      await deleteSessions(tx, user.id, 'global');
    }
    let identitiesChanged = false;
    if (email) {
      if (await emailTaken(tx, email, user.aud ?? '', user.id)) throw emailExists();
      identitiesChanged =
        (await upsertContactIdentity(tx, user, 'email', { email, email_verified: !!input.email_confirm }, now)) ||
        identitiesChanged;
      patch.email = email;
    } else if (input.email_confirm) {
      await mergeIdentityData(tx, user.id, 'email', { email_verified: true }, now);
    }
    if (phone) {
      const holder = await findUserByPhone(tx, phone, user.aud ?? '');
      if (holder && holder.id !== user.id) throw phoneExists();
      identitiesChanged =
        (await upsertContactIdentity(tx, user, 'phone', { phone, phone_verified: !!input.phone_confirm }, now)) ||
        identitiesChanged;
      patch.phone = phone;
    } else if (input.phone_confirm) {
      await mergeIdentityData(tx, user.id, 'phone', { phone_verified: true }, now);
    }
    if (user.isAnonymous && ((email && input.email_confirm) || (phone && input.phone_confirm)))
      patch.isAnonymous = false;
    if (input.app_metadata || identitiesChanged) {
      const before = user.rawAppMetaData ?? {};
      const merged = input.app_metadata ? mergeMetadata(before, input.app_metadata) : before;
      patch.rawAppMetaData = keepProviders(merged, before, await listIdentities(tx, [user.id]));
    }
    if (input.user_metadata) userMeta = mergeMetadata(userMeta, input.user_metadata);
    if (input.email_confirm || input.user_metadata) patch.rawUserMetaData = userMeta;
    if (ban !== undefined) patch.bannedUntil = bannedUntil(ban, now);
    const updated = await updateUser(tx, user.id, patch);
    await insertAudit(tx, {
      actor: adminActor(ctx),
      action: 'user_modified',
      traits: traits(updated),
      ip: ctx.ip,
      now,
    });
    return userJson(updated, await listIdentities(tx, [user.id]), await listFactors(tx, user.id));
  });
}

async function mergeIdentityData(
  tx: Executor,
  userId: string,
  provider: string,
  data: Json,
  now: Date,
): Promise<boolean> {
  const identity = await findIdentity(tx, userId, provider);
  if (!identity) return false;
  await setIdentity(tx, identity.id, { identityData: { ...identity.identityData, ...data }, updatedAt: now });
  return true;
}

/** Updates the email/phone identity, or creates it (GoTrue's admin update does the same). True when created. */
async function upsertContactIdentity(
  tx: Executor,
  user: UserRow,
  provider: 'email' | 'phone',
  data: Json,
  now: Date,
): Promise<boolean> {
  if (await mergeIdentityData(tx, user.id, provider, data, now)) return false;
  const identityData = { sub: user.id, email_verified: false, phone_verified: false, ...data };
  await insertIdentity(tx, {
    providerId: user.id,
    userId: user.id,
    provider,
    identityData,
    createdAt: now,
    updatedAt: now,
  });
  return true;
}

// ---------------------------------------------------------------------------------------------
// DELETE /admin/users/{user_id} — GoTrue: adminUserDelete

export async function adminDeleteUser(
  deps: Deps,
  userId: string,
  softDelete: boolean,
  ctx: AdminContext,
): Promise<void> {
  await inTransaction(deps, async (tx) => {
    const now = deps.now();
    const user = await findUserById(tx, userId, { forUpdate: true });
    if (!user) throw userNotFound();
    // Recorded even when a soft delete finds the user already deleted, as GoTrue does.
    await insertAudit(tx, { actor: adminActor(ctx), action: 'user_deleted', traits: traits(user), ip: ctx.ip, now });
    if (!softDelete) return deleteUserRow(tx, user.id);
    if (user.deletedAt) return;
    await softDeleteUser(tx, user, now);
  });
}

/** base64url(SHA-256(user id + value)): GoTrue's obfuscation, so the row keeps its shape but no contact data. */
function obfuscate(userId: string, value: string): string {
  return base64url(sha256(utf8(userId + value)));
}

/**
 * GoTrue's SoftDeleteUser + SoftDeleteUserIdentities + the rest of its adminUserDelete: contact
 * fields hashed (empty ones too, as there), password and tokens cleared, metadata emptied,
 * identities anonymised; sessions, one-time tokens, MFA factors, passkeys removed. The row
 * stays, so the id remains taken. Beyond GoTrue (review M3): the confirmation times are cleared
 * (the contact data they vouched for is gone), and so are recovery codes and flow states.
 */
async function softDeleteUser(tx: Executor, user: UserRow, now: Date): Promise<void> {
  await updateUser(tx, user.id, {
    email: obfuscate(user.id, user.email ?? ''),
    phone: obfuscate(user.id, user.phone ?? '').slice(0, 15),
    emailChange: obfuscate(user.id, user.emailChange ?? ''),
    phoneChange: obfuscate(user.id, user.phoneChange ?? '').slice(0, 15),
    encryptedPassword: null,
    confirmationToken: '',
    recoveryToken: '',
    emailChangeTokenCurrent: '',
    emailChangeTokenNew: '',
    phoneChangeToken: '',
    reauthenticationToken: '',
    emailConfirmedAt: null,
    phoneConfirmedAt: null,
    rawUserMetaData: {},
    rawAppMetaData: {},
    deletedAt: now,
    updatedAt: now,
  });
  await clearOneTimeTokens(tx, user.id);
  await deleteSignInMaterial(tx, user.id);
  await deleteUserPasskeys(tx, user.id);
  // The rows stay with their identities (anonymised below), so a provider's refresh token would too.
  await deleteProviderTokensOfUser(tx, user.id);
  for (const identity of await listIdentities(tx, [user.id])) {
    await setIdentity(tx, identity.id, {
      identityData: {},
      providerId: obfuscate(identity.userId, `${identity.provider}:${identity.providerId}`),
      updatedAt: now,
    });
  }
  await deleteSessions(tx, user.id, 'global');
  await deleteRefreshTokensOfUser(tx, user.id);
}

// ---------------------------------------------------------------------------------------------
// GET /admin/users/{user_id}, GET /admin/users — GoTrue: adminUserGet, adminUsers

export async function adminGetUser(deps: Deps, userId: string): Promise<Json> {
  const user = await findUserById(deps.db, userId);
  if (!user) throw userNotFound();
  return userJson(user, await listIdentities(deps.db, [user.id]), await listFactors(deps.db, user.id));
}

export async function adminListUsers(
  deps: Deps,
  q: { aud: string; page: Page; ascending: boolean; search: UserSearch },
): Promise<{ body: Json; total: number }> {
  const { limit, offset } = pageBounds(q.page);
  const { rows, total } = await listUsersInAudience(deps.db, {
    aud: q.aud,
    ...q.search,
    ascending: q.ascending,
    limit: toSafeNumber(limit),
    offset: toSafeNumber(offset),
  });
  // Users in the list are not eager-loaded: `identities` is null, as in GoTrue.
  return { body: { users: rows.map((u) => userJson(u, null)), aud: q.aud }, total };
}
