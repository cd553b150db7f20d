// redirect_to validation (GoTrue §9): SITE_URL's site, loopback hosts, or a URI_ALLOW_LIST
// glob; anything else falls back to SITE_URL silently.
import type { Context } from 'hono';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0', '::', '[::]']);
const HOST_RE = /^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/;

function isLoopbackName(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || host.endsWith('.localhost');
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
      if (pattern[i + 1] === '*') { re += '.*'; i++; } else re += '[^./]*';
    } else if (ch === '?') {
      re += '[^./]';
    } else if (ch === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) { re += '\\['; continue; }
      let body = pattern.slice(i + 1, end);
      if (body.startsWith('!')) body = '^' + body.slice(1);
      re += `[${body.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (ch === '{') {
      const end = pattern.indexOf('}', i + 1);
      if (end < 0) { re += '\\{'; continue; }
      const alts = pattern.slice(i + 1, end).split(',').map((a) => globToRegExp(a).source.slice(1, -1));
      re += `(?:${alts.join('|')})`;
      i = end;
    } else {
      re += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  return new RegExp(`^${re}$`);
}

export function isRedirectAllowed(candidate: string, siteUrl: string, allowList: string[]): boolean {
  let url: URL;
  let site: URL;
  try {
    url = new URL(candidate);
    site = new URL(siteUrl);
  } catch {
    return false;
  }
  const host = url.hostname;
  if (host === site.hostname && url.protocol === site.protocol && (url.port === site.port || isLoopbackName(host))) return true;
  if (/^\d+$/.test(host)) return false;
  // Loopback is always allowed (local development), whatever the port.
  if (host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return true;
  if (isIpLiteral(host)) return false;
  if ((url.protocol === 'http:' || url.protocol === 'https:') && !HOST_RE.test(host)) return false;
  const withoutFragment = candidate.split('#')[0]!;
  return allowList.some((p) => globToRegExp(p).test(withoutFragment));
}

/** GoTrue's GetReferrer: header, then query `redirect_to`, then Referer; else SITE_URL. */
export function redirectTarget(c: Context, siteUrl: string, allowList: string[], bodyValue?: string): string {
  const candidates = [c.req.header('redirect_to'), c.req.query('redirect_to'), bodyValue, c.req.header('referer')];
  for (const cand of candidates) {
    if (cand && isRedirectAllowed(cand, siteUrl, allowList)) return cand;
  }
  return siteUrl;
}
