// POST /admin/generate_link — GoTrue: api.adminGenerateLink (admin roles only)
import { Hono } from 'hono';
import { decodeJwt } from 'jose';
import * as z from 'zod';
import { generateLink } from '../admin/generate-link.ts';
import type { AppEnv } from '../app-env.ts';
import { validateEmail } from '../accounts/validate.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { bearerToken } from '../http/auth.ts';
import { optRecord, optStr, readJson } from '../http/read-json.ts';
import { isRedirectAllowed, redirectTarget } from '../http/redirect.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';

export const GenerateLinkBody = z.object({
  type: optStr, email: optStr, new_email: optStr, password: optStr, data: optRecord, redirect_to: optStr,
});

export const adminGenerateLinkRoutes = new Hono<AppEnv>();

adminGenerateLinkRoutes.post('/admin/generate_link', requireAdmin, async (c) => {
  const deps = c.get('deps');
  const cfg = deps.config;
  const b = await readJson(c, GenerateLinkBody);
  const email = validateEmail(b.email);
  // A valid body redirect_to wins over the usual header/query/Referer candidates.
  const redirectTo = b.redirect_to && isRedirectAllowed(b.redirect_to, cfg.siteUrl, cfg.uriAllowList)
    ? b.redirect_to : redirectTarget(c, cfg.siteUrl, cfg.uriAllowList);
  const role = String(decodeJwt(bearerToken(c)).role);
  const body = await generateLink(deps, {
    type: b.type ?? '', email, newEmail: b.new_email, password: b.password, data: b.data ?? {},
    aud: requestAud(c), redirectTo, adminRole: role, meta: requestMeta(c),
  });
  return c.json(body);
});
