// redirect_to validation (GoTrue §9): SITE_URL's site, or a URI_ALLOW_LIST glob; anything else
// falls back to SITE_URL silently. Loopback targets (localhost, *.localhost, 127.0.0.0/8, [::1])
// only while SITE_URL itself is on loopback (local development) or when the list names them.
import type { Context } from 'hono';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0', '::', '[::]']);
const HOST_RE = /^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/;

function isLoopbackName(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || host.endsWith('.localhost');
}

/** A loopback target: the names and addresses that reach this machine. */
function isLoopbackHost(host: string): boolean {
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

function isIpLiteral(host: string): boolean {
  return host.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(host);
}

/** gobwas/glob with separators `.` and `/`: `*` stops at them, `**` crosses them. */
export function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) {
      re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    } else if (ch === '*') {
      if (pattern[i + 1] === '*') {
        re += '.*';
        i++;
      } else re += '[^./]*';
    } else if (ch === '?') {
      re += '[^./]';
    } else if (ch === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) {
        re += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      if (body.startsWith('!')) body = '^' + body.slice(1);
      re += `[${body.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (ch === '{') {
      const end = pattern.indexOf('}', i + 1);
      if (end < 0) {
        re += '\\{';
        continue;
      }
      const alts = pattern
        .slice(i + 1, end)
        .split(',')
        .map((a) => globToRegExp(a).source.slice(1, -1));
      re += `(?:${alts.join('|')})`;
      i = end;
    } else {
      re += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  return new RegExp(`^${re}$`);
}

const SCHEME_PREFIX_RE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
/** A plain host (name, dotted quad or bracketed IPv6) with an optional port: no userinfo, no `%`. */
const AUTHORITY_RE = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d+)?$/;
/** Schemes whose authority WHATWG rewrites (slashes skipped, `\` as `/`): an empty one is refused. */
const SPECIAL_SCHEMES = new Set(['http', 'https', 'ws', 'wss', 'ftp', 'file']);

/**
 * Go's url.Parse refuses what WHATWG's URL silently repairs (tabs and newlines stripped, `。` read
 * as `.`, `%2e` decoded in hosts, `https:evil.com` and `https:\\evil.com` read as
 * `https://evil.com/`): refuse all of that here, so that the host checked is the host the browser
 * will visit. Returns the parsed URL and whether the raw text ends with its authority (but for a
 * fragment): no path, no query.
 */
function parseCandidate(candidate: string): { url: URL; bareOrigin: boolean } | null {
  // Control characters, spaces and backslashes anywhere (non-ASCII is refused in the authority below).
  if (/[\x00-\x20\x7f\\]/.test(candidate)) return null;
  const m = SCHEME_PREFIX_RE.exec(candidate);
  if (!m) return null;
  const rest = candidate.slice(m[0].length);
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  if (authority === '' ? SPECIAL_SCHEMES.has(m[1]!.toLowerCase()) : !AUTHORITY_RE.test(authority)) return null;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return null;
  }
  // WHATWG also rewrites IPv4 shorthands (`127.1`, `0x7f.1`, `2130706433`, `1.2.3.4.`): the host
  // must be the raw one, case aside (IPv6 literals are only compressed).
  const rawHost = authority.startsWith('[') ? authority.slice(0, authority.indexOf(']') + 1) : authority.split(':')[0]!;
  if (!rawHost.startsWith('[') && rawHost.toLowerCase() !== url.hostname.toLowerCase()) return null;
  return { url, bareOrigin: end < 0 || rest[end] === '#' };
}

interface PatternParts {
  scheme: string;
  authority: string;
  path: string;
}

/**
 * Splits an allow-list glob into scheme, authority (host and port) and path-with-query, at its
 * `://` and the first `/` after it that is not escaped or inside `{…}` / `[…]`. A pattern without
 * `scheme://` has no host to match and allows nothing. Hosts compare case-insensitively: the
 * scheme and authority are lower-cased, the path is not.
 */
function splitPattern(pattern: string): PatternParts | null {
  const sep = pattern.indexOf('://');
  if (sep < 0) return null;
  const rest = pattern.slice(sep + 3);
  let depth = 0;
  let cut = rest.length;
  for (let i = 0; i < rest.length; i++) {
    const ch = rest[i]!;
    if (ch === '\\') i++;
    else if (ch === '{' || ch === '[') depth++;
    else if ((ch === '}' || ch === ']') && depth > 0) depth--;
    else if (ch === '/' && depth === 0) {
      cut = i;
      break;
    }
  }
  return {
    scheme: pattern.slice(0, sep).toLowerCase(),
    authority: rest.slice(0, cut).toLowerCase(),
    path: rest.slice(cut),
  };
}

export function isRedirectAllowed(candidate: string, siteUrl: string, allowList: string[]): boolean {
  const parsed = parseCandidate(candidate);
  if (!parsed) return false;
  const { url, bareOrigin } = parsed;
  let site: URL;
  try {
    site = new URL(siteUrl);
  } catch {
    return false;
  }
  const host = url.hostname.toLowerCase();
  if (host === site.hostname && url.protocol === site.protocol && (url.port === site.port || isLoopbackName(host)))
    return true;
  if (/^\d+$/.test(host)) return false;
  const isHttp = url.protocol === 'http:' || url.protocol === 'https:';
  // Local development (SITE_URL on loopback): any loopback web page, whatever the port. Otherwise
  // a loopback target must be listed: a production site never sends a session to whatever listens
  // on the visitor's machine (GoTrue accepts loopback IPs always; authsvc is stricter).
  const loopback = isLoopbackHost(host);
  if (loopback && isHttp && isLoopbackHost(site.hostname)) return true;
  if (!loopback && isIpLiteral(host)) return false;
  if (!loopback && isHttp && !HOST_RE.test(host)) return false;
  // Match what the browser will load, not the raw text, and part by part: a wildcard in a
  // pattern's scheme or host (even `**`) then cannot reach into the path or query. The fragment
  // is dropped, as in GoTrue; `https://x.com` (no path at all) keeps matching `https://x.com`.
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  const authority = url.host.toLowerCase();
  const path =
    bareOrigin && (url.pathname === '/' || url.pathname === '') && url.search === ''
      ? ''
      : `${url.pathname}${url.search}`;
  return allowList.some((p) => {
    const parts = splitPattern(p);
    return (
      !!parts &&
      globToRegExp(parts.scheme).test(scheme) &&
      globToRegExp(parts.authority).test(authority) &&
      globToRegExp(parts.path).test(path)
    );
  });
}

/** GoTrue's GetReferrer: header, then query `redirect_to`, then Referer; else SITE_URL. */
export function redirectTarget(c: Context, siteUrl: string, allowList: string[], bodyValue?: string): string {
  const candidates = [c.req.header('redirect_to'), c.req.query('redirect_to'), bodyValue, c.req.header('referer')];
  for (const cand of candidates) {
    if (cand && isRedirectAllowed(cand, siteUrl, allowList)) return cand;
  }
  return siteUrl;
}
