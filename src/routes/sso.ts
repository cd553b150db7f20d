// /sso — GoTrue: SingleSignOn, SAMLMetadata, SamlAcs, behind requireSAMLEnabled (404
// saml_provider_disabled before anything else, body unread).
import { Hono, type MiddlewareHandler } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { errorRedirect, oauthErrorParams } from '../flows/external.ts';
import { CaptchaFields, requireCaptcha } from '../http/captcha.ts';
import { ApiError, notFound } from '../core/errors.ts';
import { enforceRateLimit } from '../http/rate-limit.ts';
import { optBool, optStr, readForm, readJson } from '../http/read-json.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';
import { errorFields } from '../telemetry/logger.ts';
import { handleAcs } from '../sso/acs.ts';
import { notSupported } from '../sso/runtime.ts';
import { spMetadata } from '../sso/sp.ts';
import { startSso } from '../sso/start.ts';

export const ssoRoutes = new Hono<AppEnv>();

const samlEnabled: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get('deps').config.saml.enabled) throw notFound('saml_provider_disabled', 'SAML 2.0 is disabled');
  await next();
};
ssoRoutes.use('/sso', samlEnabled);
ssoRoutes.use('/sso/*', samlEnabled);

export const SsoBody = z.object({
  provider_id: optStr, domain: optStr, redirect_to: optStr, skip_http_redirect: optBool,
  code_challenge: optStr, code_challenge_method: optStr, ...CaptchaFields,
});

// GoTrue: SingleSignOn (auth-js signInWithSSO).
ssoRoutes.post('/sso', async (c) => {
  await enforceRateLimit(c, 'sso');
  const body = await readJson(c, SsoBody);
  await requireCaptcha(c, body);
  const url = await startSso(c.get('deps'), body);
  if (body.skip_http_redirect) return c.json({ url });
  return c.redirect(url, 303);
});

// GoTrue: SAMLMetadata.
ssoRoutes.get('/sso/saml/metadata', async (c) => {
  const deps = c.get('deps');
  const download = c.req.query('download') === 'true';
  const { xml, rotating } = await spMetadata(deps.config, deps.now(), download);
  const headers: Record<string, string> = {
    'Content-Type': 'application/xml', 'Cache-Control': rotating ? 'public, max-age=60' : 'public, max-age=600',
  };
  if (download) headers['Content-Disposition'] = 'attachment; filename="metadata.xml"';
  return c.body(xml, 200, headers);
});

// GoTrue: SamlAcs. Every failure of the flow goes to SITE_URL with error, error_code and
// error_description in the query (303); a body over the limit or a runtime without SAML is JSON.
ssoRoutes.post('/sso/saml/acs', async (c) => {
  await enforceRateLimit(c, 'saml_assertion');
  const deps = c.get('deps');
  if (!deps.samlXml) throw notSupported();
  const form = await readForm(c);
  try {
    const location = await handleAcs(deps, {
      SAMLResponse: form.get('SAMLResponse') ?? undefined, RelayState: form.get('RelayState') ?? undefined, SAMLart: form.get('SAMLart') ?? undefined,
    }, requestAud(c), requestMeta(c));
    return c.redirect(location, 302);
  } catch (err) {
    const log = c.get('logger');
    if (err instanceof ApiError) log.info(err.message, { error_code: err.errorCode, ...(err.cause ? { cause: errorFields(err.cause) } : {}) });
    else log.error('SAML ACS failed', errorFields(err));
    return c.redirect(errorRedirect(deps.config.siteUrl, oauthErrorParams(err), false), 303);
  }
});
