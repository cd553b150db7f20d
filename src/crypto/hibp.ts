// Have I Been Pwned's range API (k-anonymity): only the first five hex digits of the password's
// SHA-1 leave the server; the answer lists every known suffix with that prefix. GoTrue's
// PASSWORD_HIBP_* settings, plus PASSWORD_HIBP_API_URL (a mirror, or a test's fake).
import { sha1 } from '@noble/hashes/legacy.js';
import { hex, utf8 } from './encoding.ts';

export interface HibpOptions {
  apiUrl: string;
  userAgent: string;
  fetch: typeof fetch;
  /** GoTrue gives the look-up 5 s. */
  timeoutMs?: number;
}

/** Whether the password appears in a breach. Throws when the service cannot answer. */
export async function isPwnedPassword(password: string, opts: HibpOptions): Promise<boolean> {
  const digest = hex(sha1(utf8(password))).toUpperCase();
  const prefix = digest.slice(0, 5);
  const suffix = digest.slice(5);
  const res = await opts.fetch(`${opts.apiUrl.replace(/\/+$/, '')}/range/${prefix}`, {
    headers: { 'user-agent': opts.userAgent, 'add-padding': 'true' },
    signal: AbortSignal.timeout(opts.timeoutMs ?? 5_000),
  });
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`Have I Been Pwned answered ${res.status}`);
  }
  for (const line of (await res.text()).split('\n')) {
    const [candidate, count] = line.trim().split(':');
    // With Add-Padding, made-up suffixes come with a count of 0.
    if (candidate?.toUpperCase() === suffix && Number(count) > 0) return true;
  }
  return false;
}
