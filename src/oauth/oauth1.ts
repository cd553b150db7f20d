// OAuth 1.0a request signing (RFC 5849, HMAC-SHA1), as github.com/mrjones/oauth does it for
// GoTrue's Twitter provider: the oauth_* parameters go in the Authorization header, the base string
// covers them and the query.
import { hmac } from '@noble/hashes/hmac.js';
import { sha1 } from '@noble/hashes/legacy.js';
import { base64url, utf8 } from '../crypto/encoding.ts';

/** RFC 3986 percent-encoding (unreserved characters only are kept). */
export function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function base64(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

export interface OAuth1Request {
  method: 'GET' | 'POST';
  /** Without query. */
  url: string;
  /** Query parameters (signed too). */
  query?: Record<string, string>;
  consumerKey: string;
  consumerSecret: string;
  token?: string;
  tokenSecret?: string;
  /** Extra oauth_* parameters (oauth_callback, oauth_verifier). */
  oauth?: Record<string, string>;
  now: Date;
  nonce: string;
}

export function signatureBase(method: string, url: string, params: [string, string][]): string {
  const pairs = params
    .map(([k, v]) => [rfc3986(k), rfc3986(v)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return [method.toUpperCase(), rfc3986(url), rfc3986(pairs.map(([k, v]) => `${k}=${v}`).join('&'))].join('&');
}

export function hmacSha1Signature(base: string, consumerSecret: string, tokenSecret: string): string {
  return base64(hmac(sha1, utf8(`${rfc3986(consumerSecret)}&${rfc3986(tokenSecret)}`), utf8(base)));
}

/** The Authorization header value of a signed request. */
export function oauth1Header(r: OAuth1Request): string {
  const oauth: Record<string, string> = {
    ...r.oauth,
    oauth_consumer_key: r.consumerKey,
    oauth_nonce: r.nonce,
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: String(Math.floor(r.now.getTime() / 1000)),
    oauth_version: '1.0',
  };
  if (r.token) oauth.oauth_token = r.token;
  const base = signatureBase(r.method, r.url, [...Object.entries(oauth), ...Object.entries(r.query ?? {})]);
  oauth.oauth_signature = hmacSha1Signature(base, r.consumerSecret, r.tokenSecret ?? '');
  return `OAuth ${Object.keys(oauth)
    .sort()
    .map((k) => `${rfc3986(k)}="${rfc3986(oauth[k]!)}"`)
    .join(', ')}`;
}

export function newNonce(randomBytes: (n: number) => Uint8Array): string {
  return base64url(randomBytes(16));
}
