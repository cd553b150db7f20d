// GoTrue's provider.Claims: the identity_data and user_metadata keys a provider fills. Turned into
// a plain object as GoTrue's structs.Map does: empty strings and zero numbers are left out,
// email_verified and phone_verified are always there.
import { MAX_JSON_DEPTH } from '../core/limits.ts';

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

/**
 * A copy of untrusted provider data that Postgres can store: NUL characters removed and unpaired
 * UTF-16 surrogates replaced by U+FFFD (as Go's JSON encoder does with invalid UTF-8), in keys and
 * strings alike. Undefined when it is nested too deep to store.
 */
export function storableData(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return v.replace(/\u0000/g, '').replace(/\p{Cs}/gu, '\uFFFD');
  if (v === null || typeof v !== 'object') return v;
  if (depth >= MAX_JSON_DEPTH) return undefined;
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) {
      const y = storableData(x, depth + 1);
      if (y === undefined && x !== undefined) return undefined;
      out.push(y);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const y = storableData(x, depth + 1);
    if (y === undefined && x !== undefined) return undefined;
    out[storableData(k) as string] = y;
  }
  return out;
}
