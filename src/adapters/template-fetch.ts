// How email templates are fetched (MAILER_TEMPLATES_*, per locale too): through the outbound-request guard
// (src/oauth/url-guard.ts) with the host of each configured template URL trusted, since the
// operator named it (GoTrue fetches them with no guard at all, often from an internal host over
// http). A redirect, or anything else, must then pass the guard: https to a public address, so a
// template server cannot send authsvc to a cloud metadata endpoint or another internal service.
import type { Config } from '../config/types.ts';
import { templateUrlOf } from '../mail/render.ts';
import { guardedFetch, hostPort, type ResolveHost } from '../oauth/url-guard.ts';

export function templateFetch(config: Config, inner: typeof fetch, resolve?: ResolveHost): typeof fetch {
  const hosts: string[] = [];
  const localized = Object.values(config.mailer.localized.templates).flatMap((byLocale) => Object.values(byLocale));
  for (const url of [...Object.values(config.mailer.templates), ...localized]) {
    if (!url) continue;
    try {
      hosts.push(hostPort(new URL(templateUrlOf(url, config.siteUrl))));
    } catch {
      // An unusable URL fails its fetch and the built-in template is used.
    }
  }
  return guardedFetch(inner, { trustedHosts: [...config.customOAuth.trustedHosts, ...hosts], resolve });
}

/** GoTrue's template cache settings, as the renderer takes them. */
export function templateOptions(config: Config) {
  const m = config.mailer;
  return {
    siteUrl: config.siteUrl,
    maxBytes: m.templateMaxSize,
    ttlMs: m.templateMaxAge * 1000,
    failureTtlMs: m.templateRetryInterval * 1000,
  };
}
