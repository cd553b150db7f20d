// How an external sign-in's failure goes back to the app (GoTrue: getErrorQueryString and
// redirectErrors): GoTrue's OAuth error triple, in the redirect's query and fragment. Shared by
// the OAuth callback (external.ts) and the SAML ACS (routes/sso.ts).
import { ApiError } from '../core/errors.ts';
import { fragment } from '../http/fragment.ts';

/** The provider said no (`error` on the callback): its words go back as they came. */
export class ProviderRefusal extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

const OAUTH_ERROR: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized_client',
  403: 'access_denied',
  500: 'server_error',
  503: 'temporarily_unavailable',
};
const DENIED = new Set(['signup_disabled', 'user_banned', 'provider_email_needs_verification']);

/** getErrorQueryString: GoTrue's OAuth error triple for an error of the callback. */
export function oauthErrorParams(err: unknown): Record<string, string> {
  if (err instanceof ProviderRefusal) return { error: err.error, error_description: err.description };
  if (err instanceof ApiError) {
    return {
      error: DENIED.has(err.errorCode) ? 'access_denied' : (OAUTH_ERROR[err.status] ?? 'server_error'),
      error_code: err.errorCode,
      error_description: err.message,
    };
  }
  return { error: 'server_error', error_code: 'unexpected_failure', error_description: 'Unexpected failure' };
}

/** redirectErrors: the triple in the query (the target's own query kept) and in the fragment, with `sb`. */
export function errorRedirect(base: string, params: Record<string, string>, withFragment: boolean): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  url.hash = withFragment ? fragment(params) : '';
  return url.toString();
}
