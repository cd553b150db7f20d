// Input formats (GoTrue §6.7).
import { ApiError, validationFailed } from '../core/errors.ts';

const EMAIL_RE =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const PHONE_RE = /^[1-9][0-9]{1,14}$/;

/** Returns the lower-cased address or throws GoTrue's validation errors. */
export function validateEmail(email: string | undefined): string {
  if (!email) throw validationFailed('An email address is required');
  if (email.length > 255) throw validationFailed('An email address is too long');
  if (!EMAIL_RE.test(email)) throw validationFailed('Unable to validate email address: invalid format');
  return email.toLowerCase();
}

/** Strips `+` and spaces; GoTrue stores phones as digits only. */
export function formatPhone(phone: string): string {
  return phone.replace(/^\+/, '').replaceAll(' ', '');
}

export function validatePhone(phone: string): string {
  const p = formatPhone(phone);
  if (!PHONE_RE.test(p)) throw new ApiError(400, 'validation_failed', 'Invalid phone number format (E.164 required)');
  return p;
}
