// Facts about the caller: client IP (Sb-Forwarded-For when enabled, then X-Forwarded-For, as
// GoTrue's utilities.GetIPAddress), user agent.
import type { Context } from 'hono';
import type { AppEnv } from '../app-env.ts';

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const IPV6_CHARS = /^[0-9A-Fa-f:.]{2,45}$/;

/** IPv4 dotted quad, or an IPv6 address as the WHATWG URL parser accepts it (what Postgres `inet` takes). */
export function isIp(s: string): boolean {
  if (IPV4.test(s)) return true;
  if (!s.includes(':') || !IPV6_CHARS.test(s)) return false;
  try {
    new URL(`http://[${s}]/`);
    return true;
  } catch {
    return false;
  }
}

function peerAddress(c: Context): string | undefined {
  // Adapters put the socket peer where they can: node-server's `incoming`, or `env.remoteAddr`.
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } }; remoteAddr?: string } | undefined;
  const addr = env?.remoteAddr ?? env?.incoming?.socket?.remoteAddress;
  if (!addr) return undefined;
  return addr.startsWith('::ffff:') && IPV4.test(addr.slice(7)) ? addr.slice(7) : addr;
}

export function clientIp(c: Context<AppEnv>): string | undefined {
  if (c.get('deps')?.config.security.sbForwardedForEnabled) {
    const sb = c.req.header('sb-forwarded-for')?.split(',')[0]?.trim();
    if (sb && isIp(sb)) return sb;
  }
  const xff = c.req.header('x-forwarded-for');
  if (xff) {
    for (const part of xff.split(',')) {
      const ip = part.trim();
      if (isIp(ip)) return ip;
    }
  }
  const peer = peerAddress(c);
  return peer && isIp(peer) ? peer : undefined;
}

export function requestMeta(c: Context<AppEnv>): { ip?: string; userAgent?: string } {
  return { ip: clientIp(c), userAgent: c.req.header('user-agent') };
}
