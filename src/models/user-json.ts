// The user and identity objects exactly as GoTrue serialises them (field order included).
import type { FactorRow } from '../db/mfa.ts';
import type { IdentityRow, UserRow } from '../db/users.ts';
import { factorJson } from './factor-json.ts';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : undefined);

export function identityJson(i: IdentityRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    identity_id: i.id,
    id: i.providerId,
    user_id: i.userId,
  };
  if (i.identityData && Object.keys(i.identityData).length > 0) out.identity_data = i.identityData;
  out.provider = i.provider;
  if (i.lastSignInAt) out.last_sign_in_at = iso(i.lastSignInAt);
  out.created_at = iso(i.createdAt);
  out.updated_at = iso(i.updatedAt);
  if (i.email) out.email = i.email;
  return out;
}

/**
 * `identities`: an array when loaded, `null` when not (GoTrue's list endpoints). `factors`: the
 * user's MFA factors; the key is left out when there are none (GoTrue's omitempty).
 */
export function userJson(
  u: UserRow,
  identities: IdentityRow[] | null,
  factors: FactorRow[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: u.id,
    aud: u.aud ?? '',
    role: u.role ?? '',
    email: u.email ?? '',
  };
  const opt = (key: string, value: unknown) => {
    if (value !== undefined && value !== null && value !== '') out[key] = value;
  };
  opt('email_confirmed_at', iso(u.emailConfirmedAt));
  opt('invited_at', iso(u.invitedAt));
  out.phone = u.phone ?? '';
  opt('phone_confirmed_at', iso(u.phoneConfirmedAt));
  opt('confirmation_sent_at', iso(u.confirmationSentAt));
  opt('confirmed_at', iso(u.confirmedAt));
  opt('recovery_sent_at', iso(u.recoverySentAt));
  opt('new_email', u.emailChange);
  opt('email_change_sent_at', iso(u.emailChangeSentAt));
  opt('new_phone', u.phoneChange);
  opt('phone_change_sent_at', iso(u.phoneChangeSentAt));
  opt('reauthentication_sent_at', iso(u.reauthenticationSentAt));
  opt('last_sign_in_at', iso(u.lastSignInAt));
  out.app_metadata = u.rawAppMetaData ?? {};
  out.user_metadata = u.rawUserMetaData ?? {};
  out.identities = identities ? identities.map(identityJson) : null;
  out.created_at = iso(u.createdAt);
  out.updated_at = iso(u.updatedAt);
  opt('banned_until', iso(u.bannedUntil));
  opt('deleted_at', iso(u.deletedAt));
  out.is_anonymous = u.isAnonymous;
  if (factors.length > 0) out.factors = factors.map(factorJson);
  return out;
}
