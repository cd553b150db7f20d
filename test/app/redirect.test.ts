import { describe, expect, test } from 'vitest';
import { isRedirectAllowed } from '../../src/http/redirect.ts';

const SITE = 'https://app.example.com';

describe('redirect_to validation (GoTrue §9)', () => {
  test.each([
    ['https://app.example.com/any/path?x=1', [], true],
    ['http://app.example.com/', [], false], // other scheme
    ['https://app.example.com:8443/', [], false], // other port
    // Loopback under a non-loopback SITE_URL: only when listed (issue 39; see below).
    ['http://localhost:5173/cb', ['http://localhost:*/**'], true],
    ['http://127.0.0.1:9/x', ['http://127.0.0.1:*/**'], true],
    ['http://[::1]:9/x', ['http://\\[::1\\]:*/**'], true],
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

// Issue 11: the host is read the way the browser reads it, and the allow list is matched against
// the parsed URL, so a `*` in a pattern's host cannot stretch over `%2e`, `?`, `\`, `@`, `:port`…
const ANY_PATH = ['https://*.example.com/**'];
const NO_PATH = ['https://*.example.com'];

describe('redirect_to: hosts the browser would read differently are refused (issue 11)', () => {
  test.each([
    // Percent-encoded or ideographic dots, `?` / `\` / `:port` ending the host early.
    ['https://evil%2ecom?.example.com/?x=1', ANY_PATH, false],
    ['https://evil%2Ecom\\.example.com/?x=1', ANY_PATH, false],
    ['https://evil\u3002com?.example.com/?x=1', ANY_PATH, false],
    ['https://ai?.example.com/', ANY_PATH, false], // host `ai`
    ['https://evilcom:1?.example.com/', ANY_PATH, false],
    ['https://evil%2ecom?.example.com', NO_PATH, false],
    ['https://evil\u3002com?.example.com', NO_PATH, false],
    ['https://evilcom?.example.com', NO_PATH, false],
    ['https://ai?.example.com', NO_PATH, false],
    ['https://ex%C3%A4mple.com/', ['https://*.com/**'], false],
    // `#` ends the host.
    ['https://evil.com#.example.com/', ANY_PATH, false],
    ['https://evilcom#.example.com', NO_PATH, false],
    // Userinfo.
    ['https://app.example.com@evil.com/', ANY_PATH, false],
    ['https://app.example.com@evil.com/', ['https://**'], false],
    ['https://x@a.example.com/', ANY_PATH, false],
    ['https://x@app.example.com/', [], false],
    // Backslashes (WHATWG reads `\` as `/` in http(s) URLs).
    ['https://evilcom\\.example.com/', ANY_PATH, false],
    ['https://evil.com\\.example.com/', ANY_PATH, false],
    ['https://a.example.com\\@evil.com/', ANY_PATH, false],
    ['https:\\\\app.example.com/cb', [], false],
    ['https:/\\app.example.com/cb', [], false],
    // Tabs and newlines, which WHATWG strips silently.
    ['https://evil\t.example.com/', ANY_PATH, false],
    ['https://ai\t?.example.com/', ANY_PATH, false],
    ['https://evilcom\n?.example.com', NO_PATH, false],
    ['https://app.exam\nple.com/cb', [], false],
    // No `//` after the scheme, or nothing between `//` and the path.
    ['https:evil.com', ['https://**'], false],
    ['https:app.example.com/cb', [], false],
    ['https:/evil.com', ANY_PATH, false],
    ['https:/app.example.com/cb', [], false],
    ['https:///app.example.com/cb', [], false],
    // IPv4 shorthands WHATWG rewrites into loopback addresses (GoTrue refuses them too).
    ['http://2130706433/x', [], false],
    ['http://127.1/x', [], false],
    ['http://[0:0:0:0:0:0:0:1]:9/x', ['http://\\[::1\\]:*/**'], true],
    // IDN: Unicode is refused, punycode is an ordinary label.
    ['https://ex\u00e4mple.com/', ['https://*.com/**'], false],
    ['https://xn--exmple-cua.example.com/', ANY_PATH, true],
    // Non-ASCII outside the authority is fine: the browser percent-encodes it.
    ['https://app.example.com/café?q=ü', ANY_PATH, true],
    // Hosts compare case-insensitively (pattern or candidate); paths do not.
    ['https://FOO.Example.COM/cb', ['https://*.example.com/cb'], true],
    ['HTTPS://foo.example.com/cb', ['https://*.example.com/cb'], true],
    ['https://foo.example.com/cb', ['https://*.Example.COM/cb'], true],
    ['https://FOO.Example.COM', NO_PATH, true],
    ['https://foo.example.com/CB', ['https://*.example.com/cb'], false],
    // Ports: a port the pattern does not name is refused; the default port is no port.
    ['https://a.example.com:8443/cb', ['https://*.example.com/cb'], false],
    ['https://a.example.com:8443/cb', ANY_PATH, false],
    ['https://a.example.com:443/cb', ['https://*.example.com/cb'], true],
    ['http://foo:12345/x', ['http://*:12345/*'], true],
    // Patterns without a trailing slash keep matching a candidate without a path.
    ['https://a.example.com', NO_PATH, true],
    ['https://a.example.com#f', NO_PATH, true],
    ['https://a.example.com/', NO_PATH, false],
    ['https://a.example.com/cb', ANY_PATH, true],
    ['https://a.example.com/cb?x=1#f', ANY_PATH, true],
    // The path is the one the browser loads: dot segments cannot climb out of an allowed prefix.
    ['https://a.example.com/x/%2e%2e/admin', ['https://a.example.com/x/**'], false],
    ['https://a.example.com/x/../admin', ['https://a.example.com/x/**'], false],
    ['https://a.example.com/x/y/../cb', ['https://a.example.com/x/**'], true],
    // Mobile deep links.
    ['com.example.app://login-callback', ['com.example.app://login-callback'], true],
    ['myapp:///cb', ['myapp:///cb'], true],
    ['myapp:///other', ['myapp:///cb'], false],
    ['com.example.app:/login-callback', ['com.example.app:/login-callback'], false], // `://` required
    ['com.example.app://evil%2ecom', ['com.example.app://**'], false],
  ] as [string, string[], boolean][])('%j with %j → %s', (candidate, allow, expected) => {
    expect(isRedirectAllowed(candidate, SITE, allow)).toBe(expected);
  });
});

// Issue 11: each pattern is matched part by part (scheme, host:port, path+query), so even a `**`
// in the host stays in the host.
describe("redirect_to: a `**` in a pattern's host cannot reach into the path (issue 11)", () => {
  test.each([
    ['https://evil.com/x.example.com', ['https://**.example.com'], false],
    ['https://evil.com/.example.com/', ['https://**.example.com/**'], false],
    ['https://evil.com/?.example.com/', ['https://**.example.com/**'], false],
    ['https://evil.com/a.example.com/cb', ['https://**.example.com/cb'], false],
    ['https://evil.com/x.example.com', ['**.example.com'], false], // no `scheme://`: nothing to split, nothing allowed
    ['https://evil.com/x', ['https://**'], false], // any host, but no path
    ['https://evil.com', ['https://**'], true],
    ['https://evil.com/x', ['https://**/**'], true],
    ['https://evil.com:8443/cb', ['https://**.example.com/**'], false],
    ['https://a.b.example.com', ['https://**.example.com'], true],
    ['https://a.b.example.com/cb', ['https://**.example.com/**'], true],
    ['https://a.b.example.com/cb?x=1', ['https://**.example.com/**'], true],
    ['https://A.B.Example.com/cb', ['https://**.example.com/cb'], true],
    ['https://a.b.example.com:8443/cb', ['https://**.example.com:8443/**'], true],
    ['https://a.b.example.com/cb', ['https://{**.example.com,x.org}/cb'], true],
    ['https://evil.com/x.org/cb', ['https://{**.example.com,x.org}/**'], false],
    ['com.example.app://a.b/cb', ['com.example.app://**/cb'], true],
    ['com.example.app://evil/x/cb', ['com.example.app://**/cb'], false],
  ] as [string, string[], boolean][])('%j with %j → %s', (candidate, allow, expected) => {
    expect(isRedirectAllowed(candidate, SITE, allow)).toBe(expected);
  });
});

// Issue 39 (security review 2026-12-01, H3 and section 5): a loopback target is allowed only while
// SITE_URL itself is on loopback (local development) or when URI_ALLOW_LIST names it. GoTrue
// accepts loopback IPs always and localhost when configured; authsvc is stricter.
describe('redirect_to: loopback only for a loopback SITE_URL or when listed (issue 39)', () => {
  const LOCAL = 'http://localhost:3000';
  test.each([
    // A production SITE_URL: nothing on loopback unless listed.
    ['http://localhost:9999/steal', SITE, [], false],
    ['http://localhost/', SITE, [], false],
    ['https://localhost:8443/', SITE, [], false],
    ['http://foo.localhost:1/', SITE, [], false],
    ['http://127.0.0.1:9/x', SITE, [], false],
    ['http://127.5.6.7/x', SITE, [], false],
    ['http://[::1]:9/x', SITE, [], false],
    ['http://[0:0:0:0:0:0:0:1]/x', SITE, [], false],
    ['http://localhost:1', SITE, [], false],
    ['http://localhost:9999/steal', SITE, ['https://*.example.com/**'], false],
    ['http://localhost:9999/steal', SITE, ['http://localhost:3000/**'], false], // another port
    ['http://localhost:3000/cb', SITE, ['http://localhost:3000/**'], true],
    ['http://localhost:1', SITE, ['http://localhost:*'], true],
    ['myapp://localhost/cb', SITE, ['myapp://localhost/cb'], true],
    // Local development: any loopback web page, whatever the port.
    ['http://localhost:5173/cb', LOCAL, [], true],
    ['https://localhost:8443/', LOCAL, [], true],
    ['http://127.0.0.1:9/x', LOCAL, [], true],
    ['http://[::1]:9/x', LOCAL, [], true],
    ['http://app.localhost/x', LOCAL, [], true],
    ['http://localhost:9/x', 'http://127.0.0.1:3000', [], true],
    ['http://localhost:9/x', 'http://[::1]:3000', [], true],
    // …but web pages only: other schemes must be listed, and non-loopback addresses never pass.
    ['javascript://localhost/%0aalert(1)', LOCAL, [], false],
    ['myapp://localhost/cb', LOCAL, [], false],
    ['http://10.0.0.1/x', LOCAL, [], false],
    ['http://0.0.0.0:9/x', LOCAL, [], false],
    ['http://127.1/x', LOCAL, [], false],
    ['https://evil.example/', LOCAL, [], false],
  ] as [string, string, string[], boolean][])(
    '%j under SITE_URL %j with %j → %s',
    (candidate, site, allow, expected) => {
      expect(isRedirectAllowed(candidate, site, allow)).toBe(expected);
    },
  );
});
