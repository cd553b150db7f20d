// /sso — GoTrue: SingleSignOn, SAMLMetadata, SamlAcs, behind requireSAMLEnabled (404
// saml_provider_disabled before anything else, body unread).
import type { MiddlewareHandler } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { errorRedirect, oauthErrorParams } from '../flows/external-errors.ts';
import { CaptchaFields } from '../http/captcha.ts';
import { ApiError, notFound } from '../core/errors.ts';
import { optBool, optStr, readForm } from '../http/read-json.ts';
import { requestAud } from '../http/request-aud.ts';
import { requestMeta } from '../http/request-meta.ts';
import { errorFields } from '../telemetry/logger.ts';
import { handleAcs } from '../sso/acs.ts';
import { notSupported } from '../sso/runtime.ts';
import { spMetadata } from '../sso/sp.ts';
import { startSso } from '../sso/start.ts';
import { routeGroup } from '../http/route.ts';
import { error, json, redirect, str } from '../openapi/parts.ts';

export const ssoRoutes = routeGroup('sso');
const off = 'While SAML_ENABLED is off: 404 `saml_provider_disabled`.';

const samlEnabled: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get('deps').config.saml.enabled) throw notFound('saml_provider_disabled', 'SAML 2.0 is disabled');
  await next();
};
ssoRoutes.app.use('/sso', samlEnabled);
ssoRoutes.app.use('/sso/*', samlEnabled);

export const SsoBody = z.object({
  provider_id: optStr,
  domain: optStr,
  redirect_to: optStr,
  skip_http_redirect: optBool,
  code_challenge: optStr,
  code_challenge_method: optStr,
  ...CaptchaFields,
});

// GoTrue: SingleSignOn (auth-js signInWithSSO).
ssoRoutes.route(
  {
    method: 'post',
    path: '/sso',
    summary: 'Start SAML SSO by provider id or email domain (auth-js signInWithSSO)',
    gotrue: 'SingleSignOn',
    rateLimit: 'sso',
    body: SsoBody,
    captcha: true,
    replies: {
      200: json(
        { type: 'object', properties: { url: str } },
        'With skip_http_redirect: the IdP URL with the signed AuthnRequest.',
      ),
      303: redirect('To the IdP with the signed AuthnRequest (HTTP-Redirect binding).'),
      400: error('`validation_failed`, `bad_json`, `captcha_failed`.'),
      404: error(`\`sso_provider_not_found\`, \`sso_provider_disabled\`. ${off}`),
      501: error('`saml_not_supported_on_runtime`.'),
    },
  },
  async (c, body) => {
    const url = await startSso(c.get('deps'), body);
    if (body.skip_http_redirect) return c.json({ url });
    return c.redirect(url, 303);
  },
);

// GoTrue: SAMLMetadata.
ssoRoutes.route(
  {
    method: 'get',
    path: '/sso/saml/metadata',
    summary: 'The SP metadata (EntityDescriptor)',
    gotrue: 'SAMLMetadata',
    query: [
      {
        name: 'download',
        description: '`true`: valid 5 years, as an attachment.',
        schema: { enum: ['true', 'false'] },
      },
    ],
    replies: { 200: { description: 'application/xml.' }, 404: error(off) },
  },
  async (c) => {
    const deps = c.get('deps');
    const download = c.req.query('download') === 'true';
    const { xml, rotating } = await spMetadata(deps.config, deps.now(), download);
    const headers: Record<string, string> = {
      'Content-Type': 'application/xml',
      'Cache-Control': rotating ? 'public, max-age=60' : 'public, max-age=600',
    };
    if (download) headers['Content-Disposition'] = 'attachment; filename="metadata.xml"';
    return c.body(xml, 200, headers);
  },
);

// GoTrue: SamlAcs. Every failure of the flow goes to SITE_URL with error, error_code and
// error_description in the query (303); a body over the limit or a runtime without SAML is JSON.
ssoRoutes.route(
  {
    method: 'post',
    path: '/sso/saml/acs',
    summary: 'SAML assertion consumer service (HTTP-POST binding)',
    gotrue: 'SamlAcs',
    rateLimit: 'saml_assertion',
    form: { type: 'object', properties: { SAMLResponse: str, RelayState: str } },
    replies: {
      302: redirect('To the redirect target with a session in the fragment, or `?code=` for PKCE.'),
      303: redirect(
        "To SITE_URL with `error`, `error_code`, `error_description` in the query (every refusal; `saml_email_domain_not_allowed` for an address outside the provider's domains).",
      ),
      404: error(off),
      413: error('`request_entity_too_large`.'),
      501: error('`saml_not_supported_on_runtime`.'),
    },
  },
  async (c) => {
    const deps = c.get('deps');
    if (!deps.samlXml) throw notSupported();
    const form = await readForm(c);
    try {
      const location = await handleAcs(
        deps,
        {
          SAMLResponse: form.get('SAMLResponse') ?? undefined,
          RelayState: form.get('RelayState') ?? undefined,
          SAMLart: form.get('SAMLart') ?? undefined,
        },
        requestAud(c),
        requestMeta(c),
      );
      return c.redirect(location, 302);
    } catch (err) {
      const log = c.get('logger');
      if (err instanceof ApiError)
        log.info(err.message, { error_code: err.errorCode, ...(err.cause ? { cause: errorFields(err.cause) } : {}) });
      else log.error('SAML ACS failed', errorFields(err));
      return c.redirect(errorRedirect(deps.config.siteUrl, oauthErrorParams(err), false), 303);
    }
  },
);
