// A token a client presents to the revocation or introspection endpoint, traced back to the OAuth
// session it belongs to: an access token by its signature and session_id, a refresh token by its
// hash. Anything else (expired, malformed, an ID token, a user's own session) is no OAuth token.
import { sha256Hex } from '../crypto/encoding.ts';
import { verifyJwt } from '../crypto/jwt.ts';
import { findRefreshToken, findSession, type RefreshTokenRow, type SessionRow } from '../db/sessions.ts';
import { findUserById, isBanned, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ID_TOKEN_TYP } from '../http/auth.ts';

export type PresentedToken =
  | { kind: 'access_token'; claims: Record<string, unknown>; session: SessionRow; user: UserRow }
  | { kind: 'refresh_token'; row: RefreshTokenRow; session: SessionRow; user: UserRow };

const REFRESH_TOKEN_RE = /^[A-Za-z0-9_-]{12,128}$/;
const JWT_RE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** The OAuth session behind `token`, whoever holds it; undefined when there is none (RFC 7662 `active: false`). */
export async function presentedToken(deps: Deps, token: string, hint?: string): Promise<PresentedToken | undefined> {
  const order = hint === 'refresh_token' ? [asRefreshToken, asAccessToken] : [asAccessToken, asRefreshToken];
  for (const look of order) {
    const found = await look(deps, token);
    if (found) return found;
  }
  return undefined;
}

async function asAccessToken(deps: Deps, token: string): Promise<PresentedToken | undefined> {
  if (!JWT_RE.test(token)) return undefined;
  const claims = (await verifyJwt(deps.keys, token, deps.now()).catch(() => undefined)) as
    | Record<string, unknown>
    | undefined;
  if (!claims || claims.typ === ID_TOKEN_TYP || typeof claims.session_id !== 'string' || typeof claims.sub !== 'string')
    return undefined;
  const found = await oauthSession(deps, claims.session_id);
  if (!found || found.user.id !== claims.sub.toLowerCase()) return undefined;
  return { kind: 'access_token', claims, ...found };
}

async function asRefreshToken(deps: Deps, token: string): Promise<PresentedToken | undefined> {
  if (!REFRESH_TOKEN_RE.test(token)) return undefined;
  const row = await findRefreshToken(deps.db, sha256Hex(token));
  if (!row?.sessionId) return undefined;
  const found = await oauthSession(deps, row.sessionId);
  return found ? { kind: 'refresh_token', row, ...found } : undefined;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A live OAuth session and its user, who still exists and is not banned. */
async function oauthSession(
  deps: Deps,
  sessionId: string,
): Promise<{ session: SessionRow; user: UserRow } | undefined> {
  if (!UUID_RE.test(sessionId)) return undefined;
  const session = await findSession(deps.db, sessionId.toLowerCase());
  if (!session?.oauthClientId) return undefined;
  const now = deps.now();
  if (session.notAfter && now.getTime() > session.notAfter.getTime()) return undefined;
  const user = await findUserById(deps.db, session.userId);
  if (!user || user.deletedAt || isBanned(user, now)) return undefined;
  return { session, user };
}
