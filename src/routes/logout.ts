// POST /logout?scope=global|local|others — GoTrue: api.Logout
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import { deleteSessions, type LogoutScope } from '../db/sessions.ts';
import { requireAuth } from '../http/auth.ts';
import { validationFailed } from '../core/errors.ts';
import { requestMeta } from '../http/request-meta.ts';

const SCOPES = new Set<LogoutScope>(['global', 'local', 'others']);

export const logoutRoutes = new Hono<AppEnv>();

logoutRoutes.post('/logout', requireAuth, async (c) => {
  const deps = c.get('deps');
  const raw = c.req.query('scope') || 'global';
  if (!SCOPES.has(raw as LogoutScope)) throw validationFailed(`Unsupported logout scope "${raw}"`);
  const { user, session } = c.get('auth');
  await transaction(deps.db, async (tx) => {
    await deleteSessions(tx, user.id, raw as LogoutScope, session?.id);
    await insertAudit(tx, { actor: user, action: 'logout', ip: requestMeta(c).ip, now: deps.now() });
  });
  return c.body(null, 204);
});
