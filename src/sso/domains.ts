// An SSO provider vouches only for the addresses of its own domains (review 2026-12-01 L4). Its
// users' addresses are confirmed on its word and reach every relying party of the OAuth server
// as `email_verified: true`, the app's own JWT `email` claim and its RLS policies: so an
// assertion naming an address of another domain (another customer's, or gmail.com) is refused,
// not kept unconfirmed. `allow_any_email_domain` opts an IdP out, for one that legitimately
// asserts other domains (a tenant's guests, a subsidiary's addresses). GoTrue checks nothing.
import type { SsoProvider } from '../db/sso.ts';
import { forbidden } from '../core/errors.ts';

/** The part after the last `@`, lower-cased; '' without one. */
export function emailDomain(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? '' : email.slice(at + 1).toLowerCase();
}

/** Whether `provider` may assert `email`: its domain is one of the provider's (exactly: subdomains are domains of their own), or the switch is on. */
export function vouchesFor(provider: SsoProvider, email: string): boolean {
  if (provider.provider.allowAnyEmailDomain === true) return true;
  const domain = emailDomain(email);
  return domain !== '' && provider.domains.some((d) => d.domain.toLowerCase() === domain);
}

/** 403 `saml_email_domain_not_allowed` unless the provider vouches for `email` (the asserted address, or the account's). */
export function assertVouched(provider: SsoProvider, email: string): void {
  if (vouchesFor(provider, email)) return;
  const domain = emailDomain(email);
  throw forbidden(
    'saml_email_domain_not_allowed',
    provider.domains.length === 0
      ? 'SSO provider has no domains: it may assert no email address until domains are added, or allow_any_email_domain is set'
      : `Email address of the domain ${domain || '(none)'} is not one of this SSO provider's domains`,
  );
}
