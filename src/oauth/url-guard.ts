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

function ipv4(host: string): number[] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  return parts.every((n) => n <= 255) ? parts : undefined;
}

function v4Refusal([a, b]: number[]): string | undefined {
  if (a === 127) return 'URL cannot resolve to loopback addresses';
  if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168))
    return 'URL cannot resolve to private network addresses';
  if (a === 169 && b === 254) return 'URL cannot resolve to link-local addresses';
  if (a! >= 224 && a! <= 239) return 'URL cannot resolve to multicast addresses';
  // 0.0.0.0/8 ("this network"; Linux connects 0.0.0.0 to the local host), and 100.64/10
  // (carrier-grade NAT, an operator's internal space as often as not): stricter than Go's checks.
  if (a === 0) return 'URL cannot resolve to unspecified addresses';
  if (a === 100 && b! >= 64 && b! <= 127) return 'URL cannot resolve to private network addresses';
  return undefined;
}

/** Expands an IPv6 literal (no brackets) to eight 16-bit groups; undefined when it is not one. */
function ipv6Groups(host: string): number[] | undefined {
  if (!host.includes(':')) return undefined;
  let text = host.toLowerCase();
  // A dotted IPv4 tail (::ffff:10.0.0.1) becomes its two hex groups.
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4(dotted[1]!);
    if (!v4) return undefined;
    text = `${text.slice(0, dotted.index + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const read = (s: string) =>
    s === '' ? [] : s.split(':').map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? Number.parseInt(g, 16) : Number.NaN));
  const head = read(halves[0]!);
  const rest = halves.length === 2 ? read(halves[1]!) : [];
  const fill = 8 - head.length - rest.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return undefined;
  const groups = [...head, ...new Array<number>(fill).fill(0), ...rest];
  return groups.every((g) => Number.isInteger(g)) ? groups : undefined;
}

function v6Refusal(g: number[]): string | undefined {
  if (g.every((x) => x === 0)) return 'URL cannot resolve to unspecified addresses';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'URL cannot resolve to loopback addresses';
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible addresses carry an IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0))
    return v4Refusal([g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255]);
  if ((g[0]! & 0xfe00) === 0xfc00) return 'URL cannot resolve to private network addresses';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'URL cannot resolve to link-local addresses';
  if ((g[0]! & 0xff00) === 0xff00) return 'URL cannot resolve to multicast addresses';
  return undefined;
}

/** Why an address must not be reached, or undefined when it may. */
export function addressRefusal(address: string): string | undefined {
  const v4 = ipv4(address);
  if (v4) return v4Refusal(v4);
  const v6 = ipv6Groups(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (v6) return v6Refusal(v6);
  return undefined;
}

const LOCALHOST = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0', '::', '[::]']);

/** The URL's host:port as CUSTOM_OAUTH_TRUSTED_HOSTS spells it (default ports made explicit). */
function hostPort(u: URL): string {
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
  if (ipv4(host) || host.startsWith('[') || !guard.resolve) return;
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
