// POST /logout?scope=global|local|others — GoTrue: api.Logout
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import { deleteSessions, type LogoutScope } from '../db/sessions.ts';
import { validationFailed } from '../core/errors.ts';
import { requestMeta } from '../http/request-meta.ts';
import { routeGroup } from '../http/route.ts';

const SCOPES = new Set<LogoutScope>(['global', 'local', 'others']);

export const logoutRoutes = routeGroup('auth');

logoutRoutes.route(
  {
    method: 'post',
    path: '/logout',
    summary: 'Sign out',
    gotrue: 'Logout',
    auth: 'user',
    query: [{ name: 'scope', schema: { enum: ['global', 'local', 'others'], default: 'global' } }],
    replies: { 204: { description: 'Signed out.' } },
  },
  async (c) => {
    const deps = c.get('deps');
    const raw = c.req.query('scope') || 'global';
    if (!SCOPES.has(raw as LogoutScope)) throw validationFailed(`Unsupported logout scope "${raw}"`);
    const { user, session } = c.get('auth');
    await transaction(deps.db, async (tx) => {
      await deleteSessions(tx, user.id, raw as LogoutScope, session?.id);
      await insertAudit(tx, { actor: user, action: 'logout', ip: requestMeta(c).ip, now: deps.now() });
    });
    return c.body(null, 204);
  },
);
