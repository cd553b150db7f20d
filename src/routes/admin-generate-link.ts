// POST /admin/generate_link — GoTrue: api.adminGenerateLink (admin roles only)
import { decodeJwt } from 'jose';
import * as z from 'zod';
import { generateLink } from '../admin/generate-link.ts';
import { validateEmail } from '../accounts/validate.ts';
import { bearerToken } from '../http/auth.ts';
import { optRecord, optStr } from '../http/read-json.ts';
import { isRedirectAllowed, redirectTarget } from '../http/redirect.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';
import { routeGroup } from '../http/route.ts';
import { json } from '../openapi/parts.ts';

export const GenerateLinkBody = z.object({
  type: optStr,
  email: optStr,
  new_email: optStr,
  password: optStr,
  data: optRecord,
  redirect_to: optStr,
});

export const adminGenerateLinkRoutes = routeGroup('admin');

adminGenerateLinkRoutes.route(
  {
    method: 'post',
    path: '/admin/generate_link',
    summary: 'Generate an email link without sending it',
    gotrue: 'adminGenerateLink',
    auth: 'admin',
    body: GenerateLinkBody,
    replies: { 200: json('GeneratedLink') },
  },
  async (c, b) => {
    const deps = c.get('deps');
    const cfg = deps.config;
    const email = validateEmail(b.email);
    // A valid body redirect_to wins over the usual header/query/Referer candidates.
    const redirectTo =
      b.redirect_to && isRedirectAllowed(b.redirect_to, cfg.siteUrl, cfg.uriAllowList)
        ? b.redirect_to
        : redirectTarget(c, cfg.siteUrl, cfg.uriAllowList);
    const role = String(decodeJwt(bearerToken(c)).role);
    const body = await generateLink(deps, {
      type: b.type ?? '',
      email,
      newEmail: b.new_email,
      password: b.password,
      data: b.data ?? {},
      aud: requestAud(c),
      redirectTo,
      adminRole: role,
      meta: requestMeta(c),
    });
    return c.json(body);
  },
);
