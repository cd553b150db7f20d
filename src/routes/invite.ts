// POST /invite — GoTrue: api.Invite (admin roles only)
import { decodeJwt } from 'jose';
import * as z from 'zod';
import { inviteUser } from '../flows/invite.ts';
import { validateEmail } from '../accounts/validate.ts';
import { optRecord, optStr } from '../http/read-json.ts';
import { redirectTarget } from '../http/redirect.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';
import { routeGroup } from '../http/route.ts';
import { json, redirectTo } from '../openapi/parts.ts';

export const InviteBody = z.object({ email: optStr, data: optRecord });

export const inviteRoutes = routeGroup('admin');

inviteRoutes.route(
  {
    method: 'post',
    path: '/invite',
    summary: 'Invite a user by email',
    gotrue: 'Invite',
    auth: 'admin',
    body: InviteBody,
    query: [redirectTo],
    replies: { 200: json('User') },
  },
  async (c, b) => {
    const cfg = c.get('deps').config;
    const email = validateEmail(b.email);
    const role = String(decodeJwt(c.req.header('authorization')!.slice(7)).role);
    const user = await inviteUser(c.get('deps'), {
      email,
      data: b.data ?? {},
      aud: requestAud(c),
      adminRole: role,
      meta: requestMeta(c),
      redirectTo: redirectTarget(c, cfg.siteUrl, cfg.uriAllowList),
    });
    return c.json(user);
  },
);
