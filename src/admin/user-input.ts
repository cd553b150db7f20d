// What the admin user API's operations share (admin/users.ts): the request body, who acts, the
// checks of a new user's id and fields, the admin pseudo-user of the audit entries, and the
// unique violations that slip past the checks, answered as GoTrue's 422s.
import { findUserIdsByIdentityEmail } from '../db/admin-users.ts';
import { type Executor, isUniqueViolation, transaction } from '../db/database.ts';
import { NIL_UUID, findUserByEmail, findUserById, type IdentityRow, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { validateEmail, validatePhone } from '../accounts/validate.ts';
import { type ApiError, emailExists, notFound, unprocessable, validationFailed } from '../core/errors.ts';
import { parseUuid } from '../http/uuid.ts';
import { parseBanDuration } from './ban-duration.ts';

/** The admin body (GoTrue's AdminUserParams); `id`, `aud` and `password_hash` count on create only. */
export interface AdminUserInput {
  id?: string;
  aud?: string;
  role?: string;
  email?: string;
  phone?: string;
  password?: string;
  password_hash?: string;
  email_confirm?: boolean;
  phone_confirm?: boolean;
  user_metadata?: Record<string, unknown>;
  app_metadata?: Record<string, unknown>;
  ban_duration?: string;
}

/** Who acts: the admin token's role, and the client IP for the audit entry. */
export interface AdminContext {
  role: string;
  ip?: string;
}

export type Json = Record<string, unknown>;

export const phoneExists = () => unprocessable('phone_exists', 'Phone number already registered by another user');
// GoTrue inserts blindly and answers 500; a taken id is the caller's mistake, so it gets a 422.
export const idExists = () => unprocessable('user_already_exists', 'A user with this ID already exists');
export const userNotFound = () => notFound('user_not_found', 'User not found');

// ---------------------------------------------------------------------------------------------
// Input checks

/** The id of a new user: the path's, else the body's; GoTrue's messages for malformed and nil ids. */
export function newUserId(pathId: string | undefined, bodyId: string | undefined): string {
  let id: string | undefined;
  if (bodyId) {
    id = parseUuid(bodyId) ?? undefined;
    if (!id) throw validationFailed('ID must conform to the uuid v4 format');
  }
  if (pathId !== undefined) {
    if (id !== undefined && id !== pathId)
      throw validationFailed('The id in the body does not match the user_id in the path');
    id = pathId;
  }
  if (id === NIL_UUID) throw validationFailed('ID cannot be a nil uuid');
  return id ?? crypto.randomUUID();
}

/** Columns are varchar(255): say so instead of failing with a 500. (NUL never gets here: readJson refuses it.) */
export function checkText(field: string, value: string): void {
  if (value.length > 255) throw validationFailed(`${field} is too long (max 255 characters)`);
}

export function parseCommon(input: AdminUserInput) {
  const email = input.email ? validateEmail(input.email) : undefined;
  const phone = input.phone ? validatePhone(input.phone) : undefined;
  const role = input.role?.trim() || undefined;
  if (role) checkText('role', role);
  const ban = input.ban_duration ? parseBanDuration(input.ban_duration) : undefined;
  return { email, phone, role, ban };
}

// ---------------------------------------------------------------------------------------------
// Shared pieces

export function adminActor(ctx: AdminContext) {
  return { id: NIL_UUID, email: ctx.role, phone: null, rawUserMetaData: null };
}

export function traits(u: UserRow): Json {
  return { user_id: u.id, user_email: u.email ?? '', user_phone: u.phone ?? '' };
}

/**
 * `provider`/`providers` describe the user's identities, so admin metadata cannot overwrite
 * them: they are rebuilt from the identities (keeping the earlier order and primary provider),
 * or restored as they were when the user has no identities.
 */
export function keepProviders(merged: Json, before: Json, identities: Pick<IdentityRow, 'provider'>[]): Json {
  const out = { ...merged };
  if (identities.length === 0) {
    for (const k of ['provider', 'providers']) {
      if (k in before) out[k] = before[k];
      else delete out[k];
    }
    return out;
  }
  const have = new Set(identities.map((i) => i.provider));
  const earlier = Array.isArray(before.providers)
    ? before.providers.filter((p): p is string => typeof p === 'string' && have.has(p))
    : [];
  const providers = [...new Set([...earlier, ...identities.map((i) => i.provider)])];
  out.providers = providers;
  out.provider = typeof before.provider === 'string' && have.has(before.provider) ? before.provider : providers[0];
  return out;
}

/** Whether an email is taken by another user of the audience (GoTrue's IsDuplicatedEmail). */
export async function emailTaken(tx: Executor, email: string, aud: string, exceptUserId?: string): Promise<boolean> {
  for (const id of await findUserIdsByIdentityEmail(tx, email, exceptUserId)) {
    if ((await findUserById(tx, id))?.aud === aud) return true;
  }
  const byEmail = await findUserByEmail(tx, email, aud);
  return byEmail !== undefined && byEmail.id !== exceptUserId;
}

/** A unique violation that slipped past the checks (a concurrent request, another audience). */
function conflict(err: unknown): ApiError | undefined {
  if (!isUniqueViolation(err)) return undefined;
  let constraint = '';
  for (let e: unknown = err, i = 0; e && i < 4 && !constraint; i++) {
    const c = (e as { constraint?: unknown }).constraint;
    if (typeof c === 'string') constraint = c;
    e = (e as { cause?: unknown }).cause;
  }
  if (constraint.includes('phone')) return phoneExists();
  if (constraint.includes('email')) return emailExists();
  if (constraint === 'users_pkey') return idExists();
  return undefined;
}

export async function inTransaction<T>(deps: Deps, fn: (tx: Executor) => Promise<T>): Promise<T> {
  try {
    return await transaction(deps.db, fn);
  } catch (err) {
    throw conflict(err) ?? err;
  }
}

// ---------------------------------------------------------------------------------------------
// POST /admin/users and POST /admin/users/{user_id} — GoTrue: adminUserCreate
