import { describe, expect, test } from 'vitest';
import { isRedirectAllowed } from '../src/lib/redirect.ts';

const SITE = 'https://app.example.com';

describe('redirect_to validation (GoTrue §9)', () => {
  test.each([
    ['https://app.example.com/any/path?x=1', [], true],
    ['http://app.example.com/', [], false], // other scheme
    ['https://app.example.com:8443/', [], false], // other port
    ['http://localhost:5173/cb', [], true], // loopback, any port
    ['http://127.0.0.1:9/x', [], true],
    ['http://[::1]:9/x', [], true],
    ['http://10.0.0.1/x', ['http://10.0.0.1/**'], false], // non-loopback IPs never
    ['https://evil.example/', [], false],
    ['https://preview-1.example.org/cb', ['https://*.example.org/cb'], true],
    ['https://a.b.example.org/cb', ['https://*.example.org/cb'], false], // * does not cross .
    ['https://x.com/page', ['https://x.com/*'], true],
    ['https://x.com/a/b', ['https://x.com/*'], false], // * does not cross /
    ['https://x.com/a/b?c=d', ['https://x.com/**'], true], // ** crosses
    ['https://x.com', ['https://x.com/*'], false],
    ['https://x.com/cb#frag', ['https://x.com/cb'], true], // the fragment is ignored
    ['https://a.com/cb', ['https://{a,b}.com/cb'], true],
    ['https://c.com/cb', ['https://{a,b}.com/cb'], false],
    ['not a url', ['**'], false],
  ])('%s with %j → %s', (candidate, allow, expected) => {
    expect(isRedirectAllowed(candidate, SITE, allow)).toBe(expected);
  });
});
