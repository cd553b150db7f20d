// POST /invite — GoTrue: api.Invite (admin roles only)
import { decodeJwt } from 'jose';
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { inviteUser } from '../flows/invite.ts';
import { validateEmail } from '../accounts/validate.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { optRecord, optStr, readJson } from '../http/read-json.ts';
import { redirectTarget } from '../http/redirect.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';

export const InviteBody = z.object({ email: optStr, data: optRecord });

export const inviteRoutes = new Hono<AppEnv>();

inviteRoutes.post('/invite', requireAdmin, async (c) => {
  const cfg = c.get('deps').config;
  const b = await readJson(c, InviteBody);
  const email = validateEmail(b.email);
  const role = String(decodeJwt(c.req.header('authorization')!.slice(7)).role);
  const user = await inviteUser(c.get('deps'), {
    email, data: b.data ?? {}, aud: requestAud(c), adminRole: role, meta: requestMeta(c),
    redirectTo: redirectTarget(c, cfg.siteUrl, cfg.uriAllowList),
  });
  return c.json(user);
});
