// /admin/users — GoTrue: adminUsers, adminUserCreate, adminUserGet, adminUserUpdate, adminUserDelete
import type { Context } from 'hono';
import { decodeJwt } from 'jose';
import * as z from 'zod';
import { paginationHeaders, parsePage, parseSort } from '../admin/pagination.ts';
import { adminListSessions } from '../admin/sessions.ts';
import { adminEndSession, adminSignOutUser } from '../admin/sign-out.ts';
import type { AdminContext } from '../admin/user-input.ts';
import { parseUserSearch } from '../admin/user-search.ts';
import { adminCreateUser, adminDeleteUser, adminGetUser, adminListUsers, adminUpdateUser } from '../admin/users.ts';
import { notFound } from '../core/errors.ts';
import { parseUuid, userIdParam } from '../http/uuid.ts';
import type { AppEnv } from '../app-env.ts';
import { bearerToken } from '../http/auth.ts';
import { optBool, optRecord, optStr } from '../http/read-json.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';
import { routeGroup } from '../http/route.ts';
import { empty, json, paging, pagingHeaders } from '../openapi/parts.ts';

export const AdminUserBody = z.object({
  id: optStr,
  aud: optStr,
  role: optStr,
  email: optStr,
  phone: optStr,
  password: optStr,
  password_hash: optStr,
  email_confirm: optBool,
  phone_confirm: optBool,
  user_metadata: optRecord,
  app_metadata: optRecord,
  ban_duration: optStr,
});
export const DeleteBody = z.object({ should_soft_delete: optBool });

/** The admin pseudo-user of audit entries: requireAdmin has verified the token, so decoding is enough. */
function admin(c: Context<AppEnv>): AdminContext {
  const role = decodeJwt(bearerToken(c)).role;
  return { role: typeof role === 'string' ? role : '', ip: requestMeta(c).ip };
}

export const adminUsersRoutes = routeGroup('admin');

adminUsersRoutes.route(
  {
    method: 'get',
    path: '/admin/users',
    summary: 'List users',
    gotrue: 'adminUsers',
    auth: 'admin',
    query: [
      ...paging,
      { name: 'sort', description: '`created_at [asc|desc]`.' },
      { name: 'filter', description: 'Substring of the email or name.' },
      {
        name: 'email',
        description: "Not GoTrue's: the user with exactly this address, case aside. Not with `filter` or `phone`.",
      },
      {
        name: 'phone',
        description:
          "Not GoTrue's: the user with exactly this number (E.164; `+` and spaces ignored). Not with `filter` or `email`.",
      },
    ],
    replies: {
      200: { ...json('UserList'), headers: pagingHeaders },
      400: { description: '`validation_failed`: bad paging or sort, or two of filter, email and phone.', error: true },
    },
  },
  async (c) => {
    const page = parsePage(c.req.query('page'), c.req.query('per_page'));
    const ascending = parseSort(c.req.queries('sort') ?? []);
    const aud = requestAud(c);
    const { body, total } = await adminListUsers(c.get('deps'), {
      aud,
      page,
      ascending,
      search: parseUserSearch({
        filter: c.req.query('filter'),
        email: c.req.query('email'),
        phone: c.req.query('phone'),
      }),
    });
    const headers = paginationHeaders(c.req.url, page, total);
    c.header('Link', headers.link);
    c.header('X-Total-Count', headers.totalCount);
    return c.json(body);
  },
);

adminUsersRoutes.route(
  {
    method: 'post',
    path: '/admin/users',
    summary: 'Create a user',
    gotrue: 'adminUserCreate',
    auth: 'admin',
    body: AdminUserBody,
    replies: { 200: json('User') },
  },
  async (c, body) => {
    return c.json(await adminCreateUser(c.get('deps'), body, { ...admin(c), aud: requestAud(c) }));
  },
);

// Not a GoTrue route: the spec's "create the user named by user_id".
adminUsersRoutes.route(
  {
    method: 'post',
    path: '/admin/users/{user_id}',
    summary: 'Create the user with this id (not a GoTrue route)',
    auth: 'admin',
    body: AdminUserBody,
    replies: { 200: json('User') },
  },
  async (c, body) => {
    const pathId = userIdParam(c.req.param('user_id'));
    return c.json(await adminCreateUser(c.get('deps'), body, { ...admin(c), aud: requestAud(c), pathId }));
  },
);

adminUsersRoutes.route(
  {
    method: 'get',
    path: '/admin/users/{user_id}',
    summary: 'Get a user',
    gotrue: 'adminUserGet',
    auth: 'admin',
    replies: { 200: json('User') },
  },
  async (c) => {
    return c.json(await adminGetUser(c.get('deps'), userIdParam(c.req.param('user_id'))));
  },
);

adminUsersRoutes.route(
  {
    method: 'put',
    path: '/admin/users/{user_id}',
    summary: 'Update a user',
    gotrue: 'adminUserUpdate',
    auth: 'admin',
    body: AdminUserBody,
    replies: { 200: json('User') },
  },
  async (c, body) => {
    const id = userIdParam(c.req.param('user_id'));
    return c.json(await adminUpdateUser(c.get('deps'), id, body, admin(c)));
  },
);

adminUsersRoutes.route(
  {
    method: 'delete',
    path: '/admin/users/{user_id}',
    summary: 'Delete a user (hard, or soft with should_soft_delete)',
    gotrue: 'adminUserDelete',
    auth: 'admin',
    body: DeleteBody,
    bodyOptional: true,
    replies: { 200: empty },
  },
  async (c, body) => {
    const id = userIdParam(c.req.param('user_id'));
    await adminDeleteUser(c.get('deps'), id, body.should_soft_delete ?? false, admin(c));
    return c.json({});
  },
);

// Not a GoTrue route: end every session of the user (admin/sign-out.ts). The console's "Sign out everywhere".
adminUsersRoutes.route(
  {
    method: 'post',
    path: '/admin/users/{user_id}/logout',
    summary: 'End every session of the user (not a GoTrue route)',
    auth: 'admin',
    replies: { 204: { description: 'Signed out.' }, 404: { description: '`user_not_found`.', error: true } },
  },
  async (c) => {
    await adminSignOutUser(c.get('deps'), userIdParam(c.req.param('user_id')), admin(c));
    return c.body(null, 204);
  },
);

// Not a GoTrue route: end one session of the user (admin/sign-out.ts). The console's "End session".
adminUsersRoutes.route(
  {
    method: 'delete',
    path: '/admin/users/{user_id}/sessions/{session_id}',
    summary: 'End one session of the user (not a GoTrue route)',
    auth: 'admin',
    replies: {
      204: { description: 'The session and its refresh tokens are gone.' },
      404: {
        description: "`user_not_found`, or `session_not_found` when the session is not this user's.",
        error: true,
      },
    },
  },
  async (c) => {
    const sessionId = parseUuid(c.req.param('session_id'));
    if (!sessionId) throw notFound('validation_failed', 'session_id must be an UUID');
    await adminEndSession(c.get('deps'), userIdParam(c.req.param('user_id')), sessionId, admin(c));
    return c.body(null, 204);
  },
);

// Not a GoTrue route: the user's sessions (admin/sessions.ts), for the console's user page.
adminUsersRoutes.route(
  {
    method: 'get',
    path: '/admin/users/{user_id}/sessions',
    summary: "The user's sessions, newest first (not a GoTrue route; no tokens or keys)",
    auth: 'admin',
    replies: {
      200: {
        description:
          'Sessions: id, created_at, updated_at, refreshed_at, aal, factor_id, not_after, user_agent, ip, oauth_client_id, tag.',
        schema: { type: 'array', items: { type: 'object' } },
      },
      404: { description: '`user_not_found`.', error: true },
    },
  },
  async (c) => {
    return c.json(await adminListSessions(c.get('deps'), userIdParam(c.req.param('user_id'))));
  },
);
