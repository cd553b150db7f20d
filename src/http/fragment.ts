// The `#…` a redirect carries back to the app: tokens after a verified link, or the error.
import type { ApiError } from '../core/errors.ts';

/** GoTrue's redirect fragments: form-encoded, keys sorted, always with an empty `sb`. */
export function fragment(params: Record<string, string | number>): string {
  const entries = Object.entries({ ...params, sb: '' }).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString();
}

const OAUTH_ERROR: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized_client',
  403: 'access_denied',
  500: 'server_error',
  503: 'temporarily_unavailable',
};

export function errorFragment(err: ApiError): string {
  return fragment({
    error: OAUTH_ERROR[err.status] ?? 'server_error',
    error_code: err.errorCode,
    error_description: err.message,
  });
}
