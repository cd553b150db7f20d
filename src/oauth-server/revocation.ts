// POST /oauth/revoke (RFC 7009; authsvc — GoTrue has none). A client revokes a token it holds:
// the OAuth session behind it ends, with every refresh and access token of it. An unknown token,
// or one issued to another client, is answered 200 all the same and left alone (§2.2: the client
// learns nothing about tokens it does not own).
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import type { OAuthClientRow } from '../db/oauth-clients.ts';
import { deleteSessions } from '../db/sessions.ts';
import type { Deps } from '../deps.ts';
import type { RequestMeta } from '../accounts/issued-session.ts';
import { invalidRequest } from './oauth-errors.ts';
import { presentedToken } from './presented-token.ts';

export async function revokeToken(
  deps: Deps,
  client: OAuthClientRow,
  p: { token?: string; token_type_hint?: string },
  meta: RequestMeta,
): Promise<void> {
  if (!p.token) throw invalidRequest('token is required');
  const found = await presentedToken(deps, p.token, p.token_type_hint);
  if (!found || found.session.oauthClientId !== client.id) return;
  const { session, user } = found;
  await transaction(deps.db, async (tx) => {
    const now = deps.now();
    await deleteSessions(tx, user.id, 'local', session.id);
    await insertAudit(tx, {
      actor: user,
      action: 'token_revoked',
      traits: { oauth_client_id: client.id, action: 'revoke_oauth_token' },
      ip: meta.ip,
      now,
    });
  });
}
