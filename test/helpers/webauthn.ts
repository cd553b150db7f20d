// A software WebAuthn authenticator with a browser's side of the ceremony: it answers creation
// options with a CBOR attestation object (fmt "none") and request options with an assertion
// signed by its own key (P-256 with a DER signature, RSA PKCS#1 v1.5, or Ed25519), all through
// WebCrypto. Every field a test may want wrong (origin, RP ID, flags, counter, key) can be set.
import { createHash } from 'node:crypto';

// ---- a small CBOR encoder (RFC 8949): unsigned/negative ints, byte and text strings, arrays, maps
function head(major: number, n: number): number[] {
  if (n < 24) return [(major << 5) | n];
  if (n < 0x100) return [(major << 5) | 24, n];
  if (n < 0x10000) return [(major << 5) | 25, n >> 8, n & 0xff];
  return [(major << 5) | 26, (n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
}

export type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor>;

export function cbor(v: Cbor): Uint8Array {
  const out: number[] = [];
  const put = (x: Cbor) => {
    if (typeof x === 'number') out.push(...(x >= 0 ? head(0, x) : head(1, -1 - x)));
    else if (typeof x === 'string') {
      const b = new TextEncoder().encode(x);
      out.push(...head(3, b.length), ...b);
    } else if (x instanceof Uint8Array) out.push(...head(2, x.length), ...x);
    else if (Array.isArray(x)) {
      out.push(...head(4, x.length));
      x.forEach(put);
    } else {
      out.push(...head(5, x.size));
      for (const [k, val] of x) {
        put(k);
        put(val);
      }
    }
  };
  put(v);
  return Uint8Array.from(out);
}

export const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => new Uint8Array(createHash('sha256').update(b).digest());
const concat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));
const u32 = (n: number) => Uint8Array.from([(n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);

/** WebCrypto's P1363 r‖s as the DER SEQUENCE of two INTEGERs WebAuthn carries. */
export function derSignature(raw: Uint8Array): Uint8Array {
  const int = (b: Uint8Array) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    const v = b.subarray(i);
    const body = v[0]! & 0x80 ? concat(Uint8Array.of(0), v) : v;
    return concat(Uint8Array.of(0x02, body.length), body);
  };
  const half = raw.length / 2;
  const seq = concat(int(raw.subarray(0, half)), int(raw.subarray(half)));
  return concat(Uint8Array.of(0x30, seq.length), seq);
}

export type Alg = 'ES256' | 'RS256' | 'EdDSA';
export const FLAG = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const;

export interface Key {
  alg: Alg;
  pair: CryptoKeyPair;
  cose: Uint8Array;
}

export async function newKey(alg: Alg = 'ES256'): Promise<Key> {
  if (alg === 'ES256') {
    const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
      'verify',
    ])) as CryptoKeyPair;
    const jwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
    const cose = cbor(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    return { alg, pair, cose };
  }
  if (alg === 'RS256') {
    const pair = (await crypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: Uint8Array.of(1, 0, 1), hash: 'SHA-256' },
      true,
      ['sign', 'verify'],
    )) as CryptoKeyPair;
    const jwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
    const cose = cbor(
      new Map<Cbor, Cbor>([
        [1, 3],
        [3, -257],
        [-1, Buffer.from(jwk.n!, 'base64url')],
        [-2, Buffer.from(jwk.e!, 'base64url')],
      ]),
    );
    return { alg, pair, cose };
  }
  const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
  const cose = cbor(
    new Map<Cbor, Cbor>([
      [1, 1],
      [3, -8],
      [-1, 6],
      [-2, Buffer.from(jwk.x!, 'base64url')],
    ]),
  );
  return { alg, pair, cose };
}

async function sign(key: Key, bytes: Uint8Array): Promise<Uint8Array> {
  const data = new Uint8Array(bytes);
  if (key.alg === 'ES256')
    return derSignature(
      new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key.pair.privateKey, data)),
    );
  if (key.alg === 'RS256')
    return new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key.pair.privateKey, data));
  return new Uint8Array(await crypto.subtle.sign('Ed25519', key.pair.privateKey, data));
}

export interface Overrides {
  origin?: string;
  rpId?: string;
  flags?: number;
  counter?: number;
  challenge?: string;
  type?: string;
  /** Sign with this key instead of the credential's own. */
  signWith?: Key;
  userHandle?: string | null;
  credentialId?: Uint8Array;
}

/** One credential of the software authenticator: its id, key, counter and user handle. */
export class SoftAuthenticator {
  counter = 0;
  userHandle?: string;
  constructor(
    readonly key: Key,
    readonly id: Uint8Array,
    readonly origin: string,
    readonly aaguid = new Uint8Array(16),
  ) {}

  static async create(origin = 'http://localhost:5173', alg: Alg = 'ES256'): Promise<SoftAuthenticator> {
    return new SoftAuthenticator(await newKey(alg), crypto.getRandomValues(new Uint8Array(32)), origin);
  }

  private clientData(type: string, challenge: string, o: Overrides): Uint8Array {
    return new TextEncoder().encode(
      JSON.stringify({
        type: o.type ?? type,
        challenge: o.challenge ?? challenge,
        origin: o.origin ?? this.origin,
        crossOrigin: false,
      }),
    );
  }

  /** navigator.credentials.create() → RegistrationResponseJSON. `options` is publicKey creation options. */
  async register(options: Record<string, any>, o: Overrides = {}): Promise<Record<string, unknown>> {
    this.userHandle = options.user?.id;
    const id = o.credentialId ?? this.id;
    const rpId = o.rpId ?? options.rp.id;
    const flags = o.flags ?? FLAG.UP | FLAG.UV | FLAG.AT;
    const attested = concat(this.aaguid, Uint8Array.of(id.length >> 8, id.length & 0xff), id, this.key.cose);
    const authData = concat(sha256(rpId), Uint8Array.of(flags), u32(o.counter ?? this.counter), attested);
    const attestationObject = cbor(
      new Map<Cbor, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'cross-platform',
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge, o)),
        attestationObject: b64url(attestationObject),
        transports: ['usb'],
      },
    };
  }

  /** navigator.credentials.get() → AuthenticationResponseJSON; the counter moves on by one. */
  async assert(options: Record<string, any>, o: Overrides = {}): Promise<Record<string, unknown>> {
    const id = o.credentialId ?? this.id;
    if (o.counter === undefined) this.counter += 1;
    const rpId = o.rpId ?? options.rpId;
    const authData = concat(sha256(rpId), Uint8Array.of(o.flags ?? FLAG.UP | FLAG.UV), u32(o.counter ?? this.counter));
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, o);
    const signature = await sign(o.signWith ?? this.key, concat(authData, sha256(clientDataJSON)));
    const handle = o.userHandle === undefined ? this.userHandle : o.userHandle;
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'cross-platform',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(handle ? { userHandle: handle } : {}),
      },
    };
  }
}
