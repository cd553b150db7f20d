// /admin/users — GoTrue: adminUsers, adminUserCreate, adminUserGet, adminUserUpdate, adminUserDelete
import type { Context } from 'hono';
import { Hono } from 'hono';
import { decodeJwt } from 'jose';
import * as z from 'zod';
import { paginationHeaders, parsePage, parseSort } from '../admin/pagination.ts';
import { adminListSessions } from '../admin/sessions.ts';
import { adminSignOutUser } from '../admin/sign-out.ts';
import { type AdminContext, adminCreateUser, adminDeleteUser, adminGetUser, adminListUsers, adminUpdateUser } from '../admin/users.ts';
import { userIdParam } from '../http/uuid.ts';
import type { AppEnv } from '../app-env.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { bearerToken } from '../http/auth.ts';
import { optBool, optRecord, optStr, readJson, readOptionalJson } from '../http/read-json.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';

export const AdminUserBody = z.object({
  id: optStr, aud: optStr, role: optStr, email: optStr, phone: optStr, password: optStr, password_hash: optStr,
  email_confirm: optBool, phone_confirm: optBool, user_metadata: optRecord, app_metadata: optRecord, ban_duration: optStr,
});
export const DeleteBody = z.object({ should_soft_delete: optBool });

/** The admin pseudo-user of audit entries: requireAdmin has verified the token, so decoding is enough. */
function admin(c: Context<AppEnv>): AdminContext {
  const role = decodeJwt(bearerToken(c)).role;
  return { role: typeof role === 'string' ? role : '', ip: requestMeta(c).ip };
}

export const adminUsersRoutes = new Hono<AppEnv>();

adminUsersRoutes.get('/admin/users', requireAdmin, async (c) => {
  const page = parsePage(c.req.query('page'), c.req.query('per_page'));
  const ascending = parseSort(c.req.queries('sort') ?? []);
  const aud = requestAud(c);
  const { body, total } = await adminListUsers(c.get('deps'), { aud, page, ascending, filter: c.req.query('filter') || undefined });
  const headers = paginationHeaders(c.req.url, page, total);
  c.header('Link', headers.link);
  c.header('X-Total-Count', headers.totalCount);
  return c.json(body);
});

adminUsersRoutes.post('/admin/users', requireAdmin, async (c) => {
  const body = await readJson(c, AdminUserBody);
  return c.json(await adminCreateUser(c.get('deps'), body, { ...admin(c), aud: requestAud(c) }));
});

// Not a GoTrue route: the spec's "create the user named by user_id".
adminUsersRoutes.post('/admin/users/:user_id', requireAdmin, async (c) => {
  const pathId = userIdParam(c.req.param('user_id'));
  const body = await readJson(c, AdminUserBody);
  return c.json(await adminCreateUser(c.get('deps'), body, { ...admin(c), aud: requestAud(c), pathId }));
});

adminUsersRoutes.get('/admin/users/:user_id', requireAdmin, async (c) => {
  return c.json(await adminGetUser(c.get('deps'), userIdParam(c.req.param('user_id'))));
});

adminUsersRoutes.put('/admin/users/:user_id', requireAdmin, async (c) => {
  const id = userIdParam(c.req.param('user_id'));
  const body = await readJson(c, AdminUserBody);
  return c.json(await adminUpdateUser(c.get('deps'), id, body, admin(c)));
});

adminUsersRoutes.delete('/admin/users/:user_id', requireAdmin, async (c) => {
  const id = userIdParam(c.req.param('user_id'));
  const body = await readOptionalJson(c, DeleteBody);
  await adminDeleteUser(c.get('deps'), id, body.should_soft_delete ?? false, admin(c));
  return c.json({});
});

// Not a GoTrue route: end every session of the user (admin/sign-out.ts). The console's "Sign out everywhere".
adminUsersRoutes.post('/admin/users/:user_id/logout', requireAdmin, async (c) => {
  await adminSignOutUser(c.get('deps'), userIdParam(c.req.param('user_id')), admin(c));
  return c.body(null, 204);
});

// Not a GoTrue route: the user's sessions (admin/sessions.ts), for the console's user page.
adminUsersRoutes.get('/admin/users/:user_id/sessions', requireAdmin, async (c) => {
  return c.json(await adminListSessions(c.get('deps'), userIdParam(c.req.param('user_id'))));
});
