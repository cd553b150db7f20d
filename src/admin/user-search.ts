// GET /admin/users' search: GoTrue's `filter` (a substring), or authsvc's exact look-ups `email`
// (case aside) and `phone` (normalised as every stored phone is: no `+`, no spaces). One at most.
import { formatPhone } from '../accounts/validate.ts';
import { validationFailed } from '../core/errors.ts';

export interface UserSearch {
  filter?: string;
  /** Lower-cased. */
  email?: string;
  /** Digits as stored. */
  phone?: string;
}

/** The search a request asks for; empty values count as absent. 400 validation_failed for two at once. */
export function parseUserSearch(raw: { filter?: string; email?: string; phone?: string }): UserSearch {
  const given = (['filter', 'email', 'phone'] as const).filter((k) => raw[k]);
  if (given.length > 1)
    throw validationFailed(`Only one of filter, email and phone may be given, not ${given.join(' and ')}`);
  if (raw.email) return { email: raw.email.trim().toLowerCase() };
  if (raw.phone) return { phone: formatPhone(raw.phone.trim()) };
  return raw.filter ? { filter: raw.filter } : {};
}
