// An ApiError in GoTrue's wire shapes: the legacy `{code, error_code, msg}` body, or `{code,
// message}` when the client asks for API version 2024-01-01.
import { ApiError } from '../core/errors.ts';

export const API_VERSION_2024 = '2024-01-01';

/** GoTrue: a `YYYY-MM-DD` value ≥ 2024-01-01 selects the 2024 error shape. */
export function wantsApiVersion2024(header: string | undefined): boolean {
  if (!header || !/^\d{4}-\d{2}-\d{2}$/.test(header)) return false;
  return header >= API_VERSION_2024;
}

/** An error without a code (a hook's error object) answers GoTrue's `unexpected_failure` for 500, else `unknown`. */
export const wireErrorCode = (err: ApiError): string =>
  err.errorCode || (err.status === 500 ? 'unexpected_failure' : 'unknown');

export function errorBody(err: ApiError, v2024: boolean, requestId?: string): Record<string, unknown> {
  const code = wireErrorCode(err);
  if (v2024) return { code, message: err.message, ...err.extra };
  const body: Record<string, unknown> = { code: err.status, error_code: code, msg: err.message, ...err.extra };
  if (err.status >= 500 && requestId) body.error_id = requestId;
  return body;
}

export const unexpectedFailure = () =>
  new ApiError(500, 'unexpected_failure', 'Unexpected failure, please check server logs for more information');

/**
 * The database cannot be reached (refused, reset, timed out, shutting down). GoTrue has no code
 * for this (it answers 500 unexpected_failure with a "Database error …" message); a known outage
 * gets 503, which supabase-js treats as retryable (AuthRetryableFetchError: a refresh is retried
 * and the session kept), and its own code.
 */
export const databaseUnavailable = () =>
  new ApiError(
    503,
    'database_unavailable',
    'Database error: the database cannot be reached, please retry after a moment.',
  );
