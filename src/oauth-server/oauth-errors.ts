// The OAuth server's own endpoints (/oauth/token, /oauth/revoke, /oauth/introspect) answer every
// error as RFC 6749 §5.2 says: `{error, error_description}`, never GoTrue's `{code, error_code,
// msg}` (authsvc; GoTrue v2.196 answers its own bodies there, which certified clients cannot
// read). Token answers, errors included, are never cached (OAuth 2.1 §3.2.3).
import type { Context } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { isDatabaseUnavailable } from '../db/database.ts';
import { ApiError, OAuthApiError } from '../core/errors.ts';

export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

/** What any failure at an OAuth endpoint becomes. */
export function asOAuthError(err: unknown): OAuthApiError {
  const headers = (e: OAuthApiError) => ({ ...NO_STORE, ...e.headers });
  if (err instanceof OAuthApiError)
    return new OAuthApiError(err.error, err.description, err.cause, { status: err.status, headers: headers(err) });
  if (err instanceof ApiError) {
    if (err.status === 503 || err.status === 504)
      return new OAuthApiError('temporarily_unavailable', err.message, err, { status: err.status, headers: NO_STORE });
    if (err.status >= 500)
      return new OAuthApiError('server_error', err.message, err, { status: err.status, headers: NO_STORE });
    if (err.status === 429)
      return new OAuthApiError('temporarily_unavailable', err.message, undefined, { status: 429, headers: NO_STORE });
    // A body that cannot be read (NUL, bad JSON, too large): the request is malformed.
    return new OAuthApiError('invalid_request', err.message, undefined, {
      status: err.status === 413 ? 413 : 400,
      headers: NO_STORE,
    });
  }
  if (isDatabaseUnavailable(err)) {
    return new OAuthApiError('temporarily_unavailable', 'The database is unavailable, try again later', err, {
      status: 503,
      headers: NO_STORE,
    });
  }
  return new OAuthApiError('server_error', 'Unexpected failure, please check server logs for more information', err, {
    status: 500,
    headers: NO_STORE,
  });
}

/** A handler whose every failure is answered in OAuth's form. */
export function oauthEndpoint(
  handler: (c: Context<AppEnv>) => Promise<Response>,
): (c: Context<AppEnv>) => Promise<Response> {
  return async (c) => {
    try {
      return await handler(c);
    } catch (err) {
      throw asOAuthError(err);
    }
  };
}

export const invalidGrant = (msg: string, cause?: unknown) => new OAuthApiError('invalid_grant', msg, cause);
export const invalidRequest = (msg: string) => new OAuthApiError('invalid_request', msg);
