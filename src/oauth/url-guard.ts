// No SSRF through custom providers (GoTrue: utilities/url_validator.go ValidateOAuthURL). An
// operator types issuer and endpoint URLs, and a discovery document names more; authsvc then
// fetches them from inside the operator's network. Every such URL must be https, must not name
// localhost, and must not be (or resolve to) a loopback, private, link-local, multicast or
// unspecified address — checked when a provider is saved and again before every request, redirects
// included. CUSTOM_OAUTH_TRUSTED_HOSTS (ours) names host:port pairs allowed anyway, over http too.
//
// Left open, as in GoTrue: a host whose DNS answer changes between the check and the connection
// (rebinding). Where no resolver exists (Workers), only literal addresses are checked; the
// platform's fetch does not reach private networks there.

import ipaddr from 'ipaddr.js';

/** The host's addresses (Node, Bun, Deno: node:dns in the adapter). */
export type ResolveHost = (hostname: string) => Promise<string[]>;

export interface UrlGuard {
  /** CUSTOM_OAUTH_TRUSTED_HOSTS, as `host:port` lower-case. */
  trustedHosts: readonly string[];
  resolve?: ResolveHost;
}

/** A URL refused by the guard; the message is GoTrue's and safe to show the admin. */
export class UnsafeUrl extends Error {
  override name = 'UnsafeUrl';
}

const REFUSED: Record<string, string> = {
  loopback: 'URL cannot resolve to loopback addresses',
  private: 'URL cannot resolve to private network addresses',
  // 100.64/10 (carrier-grade NAT) and fc00::/7 (unique local): an operator's internal space as
  // often as not; stricter than Go's checks.
  carrierGradeNat: 'URL cannot resolve to private network addresses',
  uniqueLocal: 'URL cannot resolve to private network addresses',
  linkLocal: 'URL cannot resolve to link-local addresses',
  multicast: 'URL cannot resolve to multicast addresses',
  // 0.0.0.0/8 ("this network"; Linux connects 0.0.0.0 to the local host) and ::.
  unspecified: 'URL cannot resolve to unspecified addresses',
};

function v4Refusal(address: ipaddr.IPv4): string | undefined {
  return REFUSED[address.range()];
}

/**
 * Why an address must not be reached, or undefined when it may (or it is no address). Parsed and
 * classified by ipaddr.js; an IPv6 address that carries an IPv4 one (IPv4-mapped ::ffff:a.b.c.d,
 * or the deprecated IPv4-compatible ::a.b.c.d) is judged by that IPv4 address.
 */
export function addressRefusal(address: string): string | undefined {
  const host = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return v4Refusal(ipaddr.IPv4.parse(host));
  if (!ipaddr.IPv6.isValid(host)) return undefined;
  const v6 = ipaddr.IPv6.parse(host);
  if (v6.isIPv4MappedAddress()) return v4Refusal(v6.toIPv4Address());
  const p = v6.parts;
  const compatible = p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1);
  if (compatible) return v4Refusal(ipaddr.IPv4.parse(`${p[6]! >> 8}.${p[6]! & 255}.${p[7]! >> 8}.${p[7]! & 255}`));
  return REFUSED[v6.range()];
}

const LOCALHOST = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0', '::', '[::]']);

/** The URL's host:port as CUSTOM_OAUTH_TRUSTED_HOSTS spells it (default ports made explicit). */
export function hostPort(u: URL): string {
  const port = u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
  return `${u.hostname.toLowerCase()}:${port}`;
}

/** Throws UnsafeUrl when the URL may not be fetched (ValidateOAuthURL, plus the trusted hosts). */
export async function checkProviderUrl(raw: string, guard: UrlGuard): Promise<void> {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UnsafeUrl('Invalid URL format');
  }
  const trusted = guard.trustedHosts.includes(hostPort(u));
  if (trusted && (u.protocol === 'https:' || u.protocol === 'http:')) return;
  if (u.protocol !== 'https:') throw new UnsafeUrl('URL must use HTTPS');
  const host = u.hostname.toLowerCase();
  if (!host) throw new UnsafeUrl('URL must have a valid hostname');
  if (LOCALHOST.has(host) || host.endsWith('.localhost'))
    throw new UnsafeUrl('URL cannot point to localhost or loopback addresses');
  const literal = addressRefusal(host);
  if (literal) throw new UnsafeUrl(literal);
  if (ipaddr.isValid(host.replace(/^\[|\]$/g, '')) || !guard.resolve) return;
  let addresses: string[];
  try {
    addresses = await guard.resolve(host);
  } catch {
    throw new UnsafeUrl('Unable to resolve hostname');
  }
  if (addresses.length === 0) throw new UnsafeUrl('Unable to resolve hostname');
  for (const a of addresses) {
    const why = addressRefusal(a);
    if (why) throw new UnsafeUrl(why);
  }
}

const MAX_REDIRECTS = 5;

/**
 * A fetch that checks every URL it is asked for, and every redirect it would follow, against the
 * guard (GoTrue's ssrfProtectedTransport re-validates each request). Redirects are followed by
 * hand for GET and HEAD only; any other 3xx answer is returned as it came.
 */
export function guardedFetch(inner: typeof fetch, guard: UrlGuard): typeof fetch {
  return (async (input: RequestInfo | URL, init: RequestInit = {}) => {
    let url = input instanceof Request ? input.url : String(input);
    for (let hop = 0; ; hop++) {
      await checkProviderUrl(url, guard);
      const res = await inner(url, { ...init, redirect: 'manual' });
      const method = (init.method ?? 'GET').toUpperCase();
      const location = res.headers.get('location');
      if (res.status < 300 || res.status > 399 || !location || (method !== 'GET' && method !== 'HEAD')) return res;
      if (hop >= MAX_REDIRECTS) throw new UnsafeUrl('too many redirects');
      await res.body?.cancel();
      url = new URL(location, url).toString();
    }
  }) as typeof fetch;
}
