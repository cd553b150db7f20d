// The one HTTP call every SMS provider makes: a form-encoded POST (keys sorted, as Go's
// url.Values.Encode sends them), bounded by the provider timeout and the caller's signal, with
// every failure turned into an SmsSendError whose text is safe to show (no credentials).
import { SmsSendError } from './provider.ts';

export interface FormPost {
  fetch: typeof fetch;
  url: string;
  fields: Record<string, string>;
  headers?: Record<string, string>;
  /** GoTrue's GOTRUE_INTERNAL_HTTP_TIMEOUT (10 s by default). */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Names the provider in error texts. */
  provider: string;
}

export interface FormAnswer {
  status: number;
  /** The decoded JSON body; GoTrue decodes every answer as JSON, so anything else is an error. */
  body: Record<string, unknown>;
}

/** Basic credentials as Go's SetBasicAuth builds them (UTF-8, then base64). */
export function basicAuth(user: string, password: string): string {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return `Basic ${btoa(s)}`;
}

export async function postForm(p: FormPost): Promise<FormAnswer> {
  const form = new URLSearchParams(
    Object.keys(p.fields)
      .sort()
      .map((k) => [k, p.fields[k]!]),
  );
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), p.timeoutMs);
  const stop = () => abort.abort();
  p.signal?.addEventListener('abort', stop, { once: true });
  let res: Response;
  try {
    res = await p.fetch(p.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...p.headers },
      body: form.toString(),
      signal: abort.signal,
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new SmsSendError(`${p.provider} answered HTTP ${res.status} with a body that is not JSON`);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new SmsSendError(`${p.provider} answered HTTP ${res.status} with an unexpected body`);
    }
    return { status: res.status, body: body as Record<string, unknown> };
  } catch (err) {
    if (err instanceof SmsSendError) throw err;
    const why = abort.signal.aborted
      ? p.signal?.aborted
        ? 'cancelled'
        : `no answer within ${p.timeoutMs} ms`
      : 'the request failed';
    throw new SmsSendError(`request to ${p.provider} failed: ${why}`, { cause: err });
  } finally {
    clearTimeout(timer);
    p.signal?.removeEventListener('abort', stop);
  }
}

export const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** Twilio's error answer (twilioErrResponse.Error): "<message> More information: <more_info>". */
export function twilioError(body: Record<string, unknown>): SmsSendError {
  return new SmsSendError(`${str(body.message)} More information: ${str(body.more_info)}`);
}

/** The base URL without a trailing slash, so paths join cleanly. */
export const trimBase = (url: string): string => url.replace(/\/+$/, '');
