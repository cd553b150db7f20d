// What a signed-in user sees of the OAuth server (GoTrue: oauthserver/handlers.go
// OAuthUserInfo, UserListOAuthGrants, UserRevokeOAuthGrant).
import { transaction } from '../db/database.ts';
import { insertAudit } from '../db/audit.ts';
import { findActiveConsent, listGrants, revokeConsent } from '../db/oauth-authorizations.ts';
import { deleteOAuthSessions, findOAuthClientByMetadataUrl } from '../db/oauth-clients.ts';
import type { SessionRow } from '../db/sessions.ts';
import type { UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { notFound, OAuthApiError, validationFailed } from '../core/errors.ts';
import type { RequestMeta } from '../accounts/issued-session.ts';
import { isUuid, publicClientId } from './clients.ts';
import { profileClaims } from './id-token.ts';
import { parseScopes } from './scopes.ts';

/**
 * OIDC UserInfo: `sub`, and what the session's scopes grant (OIDC Core §5.4). GoTrue's own names
 * (`phone`, `phone_verified`, `user_metadata`) are kept beside the standard ones. A token of the
 * user's own session (no client) gets `sub` only, as GoTrue answers; a client's token needs the
 * `openid` scope (403 insufficient_scope).
 */
export function userInfo(user: UserRow, session: SessionRow | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { sub: user.id };
  if (!session?.oauthClientId) return out;
  const scopes = parseScopes(session.scopes);
  if (!scopes.includes('openid')) throw insufficientScope('openid');
  if (scopes.includes('email')) {
    if (user.email) out.email = user.email;
    out.email_verified = !!user.emailConfirmedAt;
  }
  if (scopes.includes('profile')) {
    Object.assign(out, profileClaims(user));
    if (user.rawUserMetaData) out.user_metadata = user.rawUserMetaData;
  }
  if (scopes.includes('phone')) {
    if (user.phone) {
      out.phone_number = user.phone;
      out.phone = user.phone;
    }
    out.phone_number_verified = !!user.phoneConfirmedAt;
    if (user.phoneConfirmedAt) out.phone_verified = true;
  }
  return out;
}

/** RFC 6750 §3.1: the token is fine, its scope is not enough. */
const insufficientScope = (scope: string) =>
  new OAuthApiError('insufficient_scope', `the token's scope does not include ${scope}`, undefined, {
    status: 403,
    headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
  });

export async function userGrants(deps: Deps, user: UserRow): Promise<Record<string, unknown>[]> {
  const rows = await listGrants(deps.db, user.id);
  return rows.map(({ consent, client }) => {
    const c: Record<string, unknown> = { id: publicClientId(client) };
    if (client.clientName) c.name = client.clientName;
    if (client.clientUri) c.uri = client.clientUri;
    if (client.logoUri) c.logo_uri = client.logoUri;
    return { client: c, scopes: parseScopes(consent.scopes), granted_at: consent.grantedAt.toISOString() };
  });
}

/** Revokes the user's consent to a client and ends every session the client holds for the user. */
export async function revokeGrant(
  deps: Deps,
  user: UserRow,
  clientId: string | undefined,
  meta: RequestMeta,
): Promise<void> {
  if (!clientId) throw validationFailed('client_id query parameter is required');
  // A metadata document's client goes by its URL.
  const byUrl = clientId.startsWith('https://') ? await findOAuthClientByMetadataUrl(deps.db, clientId) : undefined;
  if (!byUrl && !isUuid(clientId)) throw validationFailed('invalid client_id format');
  const id = byUrl?.id ?? clientId.toLowerCase();
  const consent = await findActiveConsent(deps.db, user.id, id);
  if (!consent) throw notFound('oauth_consent_not_found', 'No active grant found for this client');
  await transaction(deps.db, async (tx) => {
    const now = deps.now();
    await revokeConsent(tx, consent.id, now);
    await deleteOAuthSessions(tx, id, user.id);
    await insertAudit(tx, {
      actor: user,
      action: 'token_revoked',
      traits: { oauth_client_id: id, action: 'revoke_oauth_grant' },
      ip: meta.ip,
      now,
    });
  });
}
