// GoTrue's provider.Claims: the identity_data and user_metadata keys a provider fills. Turned into
// a plain object as GoTrue's structs.Map does: empty strings and zero numbers are left out,
// email_verified and phone_verified are always there.

export interface Claims {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  iat?: number;
  exp?: number;
  name?: string;
  family_name?: string;
  given_name?: string;
  middle_name?: string;
  nickname?: string;
  preferred_username?: string;
  profile?: string;
  picture?: string;
  website?: string;
  gender?: string;
  birthdate?: string;
  zoneinfo?: string;
  locale?: string;
  updated_at?: string;
  email?: string;
  email_verified?: boolean;
  phone?: string;
  phone_verified?: boolean;
  /** Provider-specific extras. */
  custom_claims?: Record<string, unknown>;
  // GoTrue keeps these for older clients.
  full_name?: string;
  avatar_url?: string;
  slug?: string;
  provider_id?: string;
  user_name?: string;
}

/** The claims as GoTrue stores them in identity_data. */
export function claimsToData(c: Claims): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(c)) {
    if (v === undefined || v === null || v === '' || v === 0) continue;
    if (k === 'custom_claims' && typeof v === 'object' && Object.keys(v as object).length === 0) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    out[k] = v;
  }
  out.email_verified = c.email_verified === true;
  out.phone_verified = c.phone_verified === true;
  return out;
}

/** A string from an untrusted JSON value ('' for anything else); numbers become their decimal text. */
export function str(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return Number.isInteger(v) ? String(v) : String(v);
  return '';
}

/** An object from an untrusted JSON value ({} for anything else). */
export function obj(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
