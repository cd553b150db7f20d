// POST /oauth/introspect (RFC 7662; authsvc — GoTrue has none): whether a token is live, for an
// authenticated client (a resource server registers as a confidential client to ask). A token
// that is expired, revoked, of an ended session, of a banned or deleted user, an ID token, a
// user's own session token or not ours at all is `{"active": false}` and nothing more.
import { findOAuthClient, type OAuthClientRow } from '../db/oauth-clients.ts';
import type { Deps } from '../deps.ts';
import { OAuthApiError } from '../core/errors.ts';
import { publicClientId } from './clients.ts';
import { invalidRequest } from './oauth-errors.ts';
import { presentedToken } from './presented-token.ts';

export async function introspectToken(
  deps: Deps,
  client: OAuthClientRow,
  p: { token?: string; token_type_hint?: string },
): Promise<Record<string, unknown>> {
  // Knowing a token's scope and subject is for clients that can prove who they are.
  if (client.clientType !== 'confidential') {
    throw new OAuthApiError('invalid_client', 'token introspection requires a confidential client', undefined, {
      status: 401,
    });
  }
  if (!p.token) throw invalidRequest('token is required');
  const found = await presentedToken(deps, p.token, p.token_type_hint);
  if (!found) return { active: false };
  const { session, user } = found;
  const owner = await findOAuthClient(deps.db, session.oauthClientId!);
  if (!owner) return { active: false };
  const clientId = publicClientId(owner);
  const issuer = deps.config.jwt.issuer || undefined;
  if (found.kind === 'access_token') {
    const c = found.claims;
    return {
      active: true,
      scope: c.scope ?? '',
      client_id: clientId,
      sub: user.id,
      aud: c.aud,
      exp: c.exp,
      iat: c.iat,
      ...(issuer ? { iss: issuer } : {}),
      token_type: 'Bearer',
    };
  }
  if (found.row.revoked) return { active: false };
  return {
    active: true,
    scope: session.scopes ?? '',
    client_id: clientId,
    sub: user.id,
    aud: session.resource || (user.aud ?? ''),
    ...(session.notAfter ? { exp: Math.floor(session.notAfter.getTime() / 1000) } : {}),
    iat: Math.floor((found.row.createdAt ?? session.createdAt ?? deps.now()).getTime() / 1000),
    ...(issuer ? { iss: issuer } : {}),
    token_type: 'refresh_token',
  };
}
