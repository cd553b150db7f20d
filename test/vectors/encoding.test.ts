// The core's byte encodings (src/crypto/encoding.ts), held to Node's Buffer codecs over every byte
// value and over inputs longer than one fromCharCode chunk (32 KiB).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { base32, base64url, fromBase64url, hex } from '../../src/crypto/encoding.ts';

const inputs = [
  new Uint8Array(0),
  Uint8Array.of(0),
  Uint8Array.of(0xff, 0xfe),
  Uint8Array.from({ length: 256 }, (_, i) => i),
  new Uint8Array(randomBytes(0x8000)),
  new Uint8Array(randomBytes(0x8000 + 1)),
  new Uint8Array(randomBytes(100_003)),
];

describe('encodings', () => {
  it('base64url and hex match Buffer for every byte value and long inputs; fromBase64url round-trips', () => {
    for (const bytes of inputs) {
      const b = Buffer.from(bytes);
      expect(base64url(bytes)).toBe(b.toString('base64url'));
      expect(hex(bytes)).toBe(b.toString('hex'));
      expect(fromBase64url(b.toString('base64url'))).toEqual(bytes);
    }
  });

  it('fromBase64url reads the unpadded forms of every length remainder and refuses non-alphabet input', () => {
    for (const n of [1, 2, 3, 4, 5]) {
      const bytes = new Uint8Array(randomBytes(n));
      expect(fromBase64url(Buffer.from(bytes).toString('base64url'))).toEqual(bytes);
    }
    expect(() => fromBase64url('ab$d')).toThrow();
  });

  it("base32: RFC 4648 section 10 vectors, lower case, without padding (GoTrue's refresh-token alphabet)", () => {
    const vectors: [string, string][] = [
      ['', ''],
      ['f', 'my'],
      ['fo', 'mzxq'],
      ['foo', 'mzxw6'],
      ['foob', 'mzxw6yq'],
      ['fooba', 'mzxw6ytb'],
      ['foobar', 'mzxw6ytboi'],
    ];
    for (const [text, encoded] of vectors) expect(base32(new TextEncoder().encode(text))).toBe(encoded);
    expect(base32(Uint8Array.from({ length: 256 }, (_, i) => i))).toMatch(/^[a-z2-7]{410}$/);
  });
});
