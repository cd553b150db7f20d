// The otpauth:// URI exactly as GoTrue's pquerna/otp totp.Generate writes it: the label through
// Go's path escaping, the query keys sorted and their values through url.PathEscape (%20, not +).
const UNRESERVED = /[A-Za-z0-9\-_.~]/;

function goEscape(s: string, keep: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(s)) {
    const ch = String.fromCharCode(byte);
    out +=
      byte < 0x80 && (UNRESERVED.test(ch) || keep.includes(ch))
        ? ch
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Go's url.URL path escaping (encodePath): `$&+,/:;=@` stay. */
const escapePath = (s: string) => goEscape(s, '$&+,/:;=@');
/** Go's url.PathEscape (encodePathSegment): `$&+:=@` stay. */
const escapeSegment = (s: string) => goEscape(s, '$&+:=@');

export function totpUri(issuer: string, account: string, secret: string): string {
  const query: [string, string][] = [
    ['algorithm', 'SHA1'],
    ['digits', '6'],
    ['issuer', issuer],
    ['period', '30'],
    ['secret', secret],
  ];
  const q = query.map(([k, v]) => `${k}=${escapeSegment(v)}`).join('&');
  return `otpauth://totp/${escapePath(`${issuer}:${account}`)}?${q}`;
}
