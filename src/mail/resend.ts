// Email over Resend's HTTP API: plain fetch, so it runs on every runtime (Workers has no SMTP
// sockets by default). https://resend.com/docs/api-reference/emails/send-email
import { hex, hmacSha256, utf8 } from '../crypto/encoding.ts';
import { type MailTransport, formatAddress } from './transport.ts';

export interface ResendTransportOptions {
  apiKey: string;
  /** https://api.resend.com unless a test or proxy stands in for it. */
  baseUrl: string;
  fetch: typeof fetch;
  timeoutMs?: number;
}

async function errorMessage(res: Response): Promise<string> {
  const raw = await res.text().catch(() => '');
  try {
    const body: unknown = JSON.parse(raw);
    if (body && typeof body === 'object') {
      const { message, name } = body as { message?: unknown; name?: unknown };
      if (typeof message === 'string') return typeof name === 'string' ? `${name}: ${message}` : message;
    }
  } catch {
    // Not JSON (a proxy's error page): fall through to the raw text.
  }
  return raw.slice(0, 200) || res.statusText;
}

/**
 * Resend's Idempotency-Key for one logical send: a request with a key Resend has seen in the last
 * 24 hours is answered as the first was, and nothing is sent again, so a send retried after a
 * timeout (by us, a proxy or the runtime) reaches the inbox once. Keyed with the API key, not a
 * bare hash: a 6-digit code hashed with a known address would be found by trying a million codes
 * in anyone's hands who reads the key (Resend's logs and dashboard); an HMAC needs the API key.
 * Letters, digits and hyphens only, 56 characters (Resend allows 256).
 */
export function resendIdempotencyKey(apiKey: string, sendIdentity: string): string {
  return `authsvc-${hex(hmacSha256(utf8(apiKey), utf8(`resend-idempotency\n${sendIdentity}`))).slice(0, 48)}`;
}

export function createResendTransport(opts: ResendTransportOptions): MailTransport {
  const endpoint = `${opts.baseUrl.replace(/\/+$/, '')}/emails`;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  // The key must never reach an error message, even if the API were to echo it back.
  const redact = (s: string) => (opts.apiKey ? s.split(opts.apiKey).join('[redacted]') : s);
  return {
    async deliver(m) {
      const res = await opts.fetch(endpoint, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${opts.apiKey}`,
          'content-type': 'application/json',
          // Resend refuses requests without a User-Agent, which Workers' fetch does not add.
          'user-agent': 'authsvc',
          ...(m.sendIdentity ? { 'idempotency-key': resendIdempotencyKey(opts.apiKey, m.sendIdentity) } : {}),
        },
        body: JSON.stringify({
          from: formatAddress(m.from, m.fromName),
          to: [m.to],
          subject: m.subject,
          html: m.html,
          text: m.text,
        }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) throw new Error(`Resend API answered ${res.status}: ${redact(await errorMessage(res))}`);
      await res.body?.cancel().catch(() => undefined);
    },
  };
}
