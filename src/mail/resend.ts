// Email over Resend's HTTP API: plain fetch, so it runs on every runtime (Workers has no SMTP
// sockets by default). https://resend.com/docs/api-reference/emails/send-email
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
        },
        body: JSON.stringify({ from: formatAddress(m.from, m.fromName), to: [m.to], subject: m.subject, html: m.html, text: m.text }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) throw new Error(`Resend API answered ${res.status}: ${redact(await errorMessage(res))}`);
      await res.body?.cancel().catch(() => undefined);
    },
  };
}
