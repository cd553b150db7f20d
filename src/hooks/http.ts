// The HTTP(S) transport (GoTrue: hooks/hookshttp): a POST of the payload signed as Standard
// Webhooks, through deps.fetch (every runtime). One deadline of 5 s covers all attempts; up to
// 3 attempts: a network error retries after 2 s, a 429/503 with retry-after retries at once.
// Answers: 204 → no output; 200/202 → a JSON body of at most 200 KiB; anything else → GoTrue's errors.
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';
import { hookErrorOf } from './error-object.ts';
import { webhookSignature } from './signature.ts';

export const HTTP_HOOK_TIMEOUT_MS = 5000;
const BACKOFF_MS = 2000;
const ATTEMPTS = 3;
export const RESPONSE_LIMIT = 200 * 1024;

const internal = (message: string) => new ApiError(500, 'unexpected_failure', message);
const timedOut = () =>
  new ApiError(
    422,
    'hook_timeout',
    `Failed to reach hook within maximum time of ${(HTTP_HOOK_TIMEOUT_MS / 1000).toFixed(6)} seconds`,
  );
const invalidContentType = (message: string) => new ApiError(400, 'hook_payload_invalid_content_type', message);

/** Posts `body` to the hook; resolves to the answer's text, or undefined for 204. Throws GoTrue's ApiErrors. */
export async function callHttpHook(
  deps: Deps,
  url: string,
  secrets: readonly string[],
  body: string,
): Promise<string | undefined> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), HTTP_HOOK_TIMEOUT_MS);
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const id = crypto.randomUUID();
      const timestamp = Math.floor(deps.now().getTime() / 1000);
      const headers = {
        'content-type': 'application/json',
        'accept-encoding': 'identity',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': webhookSignature(secrets, id, timestamp, body),
      };
      let res: Response;
      try {
        // Redirects are not followed: the signed payload goes to the configured URL only.
        // Raced against the deadline too: a fetch that ignores its signal must not hold the request
        // (and, inside a transaction, its connection) beyond the 5 s.
        res = await Promise.race([
          deps.fetch(url, { method: 'POST', headers, body, signal: deadline.signal, redirect: 'manual' }),
          aborted(deadline.signal),
        ]);
      } catch {
        if (deadline.signal.aborted) throw timedOut();
        if (attempt === ATTEMPTS - 1)
          throw new ApiError(422, 'hook_timeout_after_retry', 'Failed to reach hook after maximum retries');
        if (!(await pause(BACKOFF_MS, deadline.signal))) throw timedOut();
        continue;
      }
      if (res.status === 204) {
        await discard(res);
        return undefined;
      }
      if (res.status === 200 || res.status === 202) return await readAnswer(res, deadline.signal);
      await discard(res);
      if (res.status === 429 || res.status === 503) {
        if (res.headers.get('retry-after')) continue;
        throw internal('Service currently unavailable due to hook');
      }
      if (res.status === 400) throw internal('Invalid payload sent to hook');
      if (res.status === 401) throw internal('Hook requires authorization token');
      throw internal(`Unexpected status code returned from hook: ${res.status}`);
    }
    throw internal('Service currently unavailable due to hook');
  } finally {
    clearTimeout(timer);
  }
}

/** Rejects once `signal` aborts. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(new Error('hook deadline passed'));
    signal.addEventListener('abort', () => reject(new Error('hook deadline passed')), { once: true });
  });
}

/** Waits `ms`; false when the deadline passes first. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort);
  });
}

async function discard(res: Response): Promise<void> {
  try {
    await res.body?.cancel();
  } catch {
    // Nothing to free.
  }
}

/** GoTrue's mime.ParseMediaType check, then the body up to RESPONSE_LIMIT, then the error object. */
async function readAnswer(res: Response, signal: AbortSignal): Promise<string> {
  const contentType = res.headers.get('content-type');
  if (!contentType) {
    await discard(res);
    throw invalidContentType('Invalid Content-Type: Missing Content-Type header');
  }
  const media = mediaType(contentType);
  if ('error' in media) {
    await discard(res);
    throw invalidContentType(`Invalid Content-Type header: ${media.error}`);
  }
  if (media.type !== 'application/json') {
    await discard(res);
    throw invalidContentType(`Invalid JSON response. Received content-type: ${contentType}`);
  }
  const text = await readLimited(res, signal);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the error-object check finds nothing; the hook's own decoding answers.
    return text;
  }
  const refused = hookErrorOf(parsed);
  if (refused) throw refused;
  return text;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function mediaType(header: string): { type: string } | { error: string } {
  const [main = ''] = header.split(';');
  const value = main.trim().toLowerCase();
  if (value === '') return { error: 'mime: no media type' };
  const slash = value.indexOf('/');
  if (slash < 0)
    return TOKEN.test(value)
      ? { error: 'mime: expected slash after first token' }
      : { error: 'mime: expected token after slash' };
  if (!TOKEN.test(value.slice(0, slash)) || !TOKEN.test(value.slice(slash + 1)))
    return { error: 'mime: expected token after slash' };
  return { type: value };
}

/** The body as text, refused once it passes RESPONSE_LIMIT bytes (never read further). */
async function readLimited(res: Response, signal: AbortSignal): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > RESPONSE_LIMIT) {
        await reader.cancel().catch(() => undefined);
        throw new ApiError(
          422,
          'hook_payload_over_size_limit',
          `Payload size exceeded size limit of ${RESPONSE_LIMIT} bytes`,
        );
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (signal.aborted) throw timedOut();
    throw err;
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}
