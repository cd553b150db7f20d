// Arbitraries for the values inside requests: hostile strings, emails, phones, passwords,
// metadata objects, wrong JSON types. A `~~kind.N~~` string is replaced, when the request is
// sent, by the Nth value of that kind in the pool (real tokens, ids, emails: see setup.ts).
import fc from 'fast-check';
import { FUZZ_PASSWORD } from './setup.ts';

export const ref = (kind: string) => fc.nat(1000).map((n) => `~~${kind}.${n}~~`);

export const MIB = 1024 * 1024;
const lazy = <T>(make: () => T) => {
  let v: T | undefined;
  return () => (v ??= make());
};
/** Strings sized around the limits; built once. */
export const big = {
  underBody: lazy(() => 'a'.repeat(MIB - 64)),
  overBody: lazy(() => 'a'.repeat(MIB + 1)),
  k64: lazy(() => 'z'.repeat(65_536)),
};

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 20 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      'a\u0000b',
      '\ud800',
      'x\udc00',
      '\udc00\ud800',
      '😀',
      '\u202e',
      '\ufeff',
      '\u2028',
      '\t\r\n',
      'null',
      'undefined',
      'true',
      '0',
      '-1',
      '1e309',
      'NaN',
      '[]',
      '{}',
      '__proto__',
      'constructor',
      'toString',
      "' OR 1=1 --",
      '%s%n',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell probe, sent as the literal text
      '${jndi:ldap://x}',
      '<script>',
      '../../etc/passwd',
      'a'.repeat(255),
      'a'.repeat(256),
      'é'.repeat(128),
      'x'.repeat(4096),
      '\\',
      '"',
      '\u00ff\u00fe',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('k64').map(() => big.k64()) },
);

export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -0, [], {}, [null], [''], { a: 1 }),
  fc.integer(),
  fc.double(),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 2 }),
);

const localPart = fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,15}$/);
export const email: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(localPart, fc.nat(1_000_000)).map(([l, n]) => `${l}${n}@example.com`) },
  { weight: 3, arbitrary: ref('email') },
  { weight: 1, arbitrary: ref('email').map((e) => e.toUpperCase()) },
  { weight: 1, arbitrary: fc.emailAddress() },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'zoë@example.com',
      'user@bücher.example',
      'user@xn--bcher-kva.example',
      '用户@例子.广告',
      'пользователь@пример.рф',
      'a@b',
      '@example.com',
      'a@',
      'a@@example.com',
      'a b@example.com',
      '"a b"@example.com',
      'a@[127.0.0.1]',
      'a@example.com.',
      '.a@example.com',
      'a..b@example.com',
      ' a@example.com ',
      'A@EXAMPLE.COM',
      'a@example.com\n',
      'a+tag@example.com',
      'a@localhost',
      'a@-example.com',
      'a@exa_mple.com',
      '😀@example.com',
      'a@example.😀',
      `${'a'.repeat(64)}@example.com`,
      `${'a'.repeat(65)}@example.com`,
      `${'a'.repeat(243)}@example.com`,
      `${'a'.repeat(244)}@example.com`,
      `${'a'.repeat(300)}@example.com`,
      `a@${'b'.repeat(63)}.com`,
      `a@${'b'.repeat(64)}.com`,
      'a\u0000@example.com',
      'a\ud800@example.com',
    ),
  },
  { weight: 1, arbitrary: hostileString },
);

export const phone: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1_000_000, max: 9_999_999 }).map((n) => `1555${n}`) },
  { weight: 2, arbitrary: ref('phone') },
  { weight: 1, arbitrary: fc.stringMatching(/^\+?[0-9 ()\-.]{0,20}$/) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '+15555550100',
      '15555550100',
      '+1 (555) 555-0100',
      '1-555-555-0100',
      '+1.555.555.0100',
      '0',
      '',
      '+',
      '++1555',
      'abc',
      '1'.repeat(15),
      '1'.repeat(16),
      '1'.repeat(7),
      '1'.repeat(8),
      '0015555550100',
      'tel:+15555550100',
      '١٥٥٥٥٥٥٠١٠٠',
      '１５５５５５５０１００',
      '+1555555\u00000100',
      '+1555\ud800',
      ' 15555550100 ',
      '+0000000000',
      '-15555550100',
      '1e10',
      '15555550100x123',
      '+44 20 7946 0958',
      '+8613800138000',
      '9'.repeat(300),
    ),
  },
  { weight: 1, arbitrary: hostileString },
);

const enc = new TextEncoder();
export const password: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(FUZZ_PASSWORD) },
  { weight: 2, arbitrary: fc.string({ minLength: 6, maxLength: 30 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      'short',
      'a'.repeat(71),
      'a'.repeat(72),
      'a'.repeat(73),
      'é'.repeat(36),
      'é'.repeat(37),
      '😀'.repeat(18),
      '😀'.repeat(19),
      'a'.repeat(1000),
      '      ',
      'pass\u0000word',
      'pässwörd-1',
      'x\ud800yyyyyy',
    ),
  },
  { weight: 1, arbitrary: hostileString.filter((s) => enc.encode(s).length < 200) },
);

const protoObjects = [
  '{"__proto__":{"isAdmin":true,"role":"service_role"}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"__proto__":null}',
  '{"__proto__":[]}',
  '{"prototype":"x","toString":1,"hasOwnProperty":"y"}',
  '{"provider":"google","providers":["x"],"role":"service_role"}',
  '{"a":{"__proto__":{"b":1}}}',
  '{"":""}',
  '{"sub":"00000000-0000-0000-0000-000000000000","email":"other@example.com","email_verified":true}',
].map((s) => JSON.parse(s) as Record<string, unknown>);

const key = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'role', 'provider', 'providers', 'sub'),
);
export const record: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }) },
  { weight: 3, arbitrary: fc.constantFrom(...protoObjects) },
  { weight: 1, arbitrary: fc.constant({ big: 'x'.repeat(200_000) }) },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.string({ unit: 'binary', maxLength: 4 }), fc.string({ unit: 'binary', maxLength: 4 }), {
      maxKeys: 3,
    }),
  },
);

export const redirect = fc.oneof(
  fc.constantFrom(
    'http://localhost:3000',
    'http://localhost:3000/cb?x=1#frag',
    'https://evil.example.com',
    'javascript:alert(1)',
    '//evil.example.com',
    'http://localhost:3000@evil.com',
    '',
    '/relative',
    'http://[::1',
    'data:text/html,x',
    'http://%zz',
  ),
  fc.webUrl(),
  hostileString,
);

export const emailTypes = ['signup', 'invite', 'recovery', 'magiclink', 'email', 'email_change', 'sms', 'phone_change'];
export const otpType = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...emailTypes) },
  { weight: 1, arbitrary: fc.constantFrom('SIGNUP', 'reauthentication', 'email_change_current', '', 'x') },
  { weight: 1, arbitrary: hostileString },
);

export const uuidish = fc.oneof(
  { weight: 3, arbitrary: ref('uid') },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: ref('uid').map((u) => u.toUpperCase()) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'not-a-uuid',
      '0',
      '00000000-0000-0000-0000-000000000000',
      'x'.repeat(300),
      '%00',
      '%ZZ',
      '%ED%A0%80',
      '..%2F..',
      '%E2%82%AC',
      'null',
      '{}',
    ),
  },
);

/** `good` most of the time, otherwise a hostile string or a value of the wrong JSON type. */
export function field(good: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 5, arbitrary: good },
    { weight: 2, arbitrary: hostileString },
    { weight: 2, arbitrary: wrongType },
  );
}

/** encodeURIComponent, but a lone surrogate becomes its WTF-8 bytes (%ED%A0%80) instead of throwing. */
export function queryEncode(v: string): string {
  let out = '';
  for (const ch of v) {
    const u = ch.codePointAt(0)!;
    out +=
      u >= 0xd800 && u <= 0xdfff
        ? `%ED%${(0x80 | ((u >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (u & 0x3f)).toString(16).toUpperCase()}`
        : encodeURIComponent(ch);
  }
  return out;
}
