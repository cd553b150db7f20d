// OAuth / OIDC scopes the server grants (GoTrue: models/oauth_scope.go).
export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'phone', 'offline_access'] as const;

/** A space-separated scope string as its tokens, blanks dropped. */
export function parseScopes(scope: string | null | undefined): string[] {
  return (scope ?? '')
    .trim()
    .split(' ')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export const isSupportedScope = (s: string): boolean => (SUPPORTED_SCOPES as readonly string[]).includes(s);

export const hasAllScopes = (granted: string[], requested: string[]): boolean =>
  requested.every((s) => granted.includes(s));
