// GoTrue's encrypted strings (internal/crypto/crypto.go, EncryptedString): secrets at rest are
// stored as the JSON `{"key_id":…,"alg":"aes-gcm-hkdf","data":<base64>,"nonce":<base64>}`.
// The AES-256-GCM key is HKDF-SHA256(master key, no salt, info = the row's id), so a value is
// bound to its row and each row has its own key; the master key is 32 bytes in unpadded
// base64url. Same format, so a GoTrue database with encrypted secrets reads unchanged.

export const ENCRYPTED_STRING_ALG = 'aes-gcm-hkdf';

/** SECURITY_DB_ENCRYPTION_*: keys are unpadded base64url of 32 bytes, checked at start-up. */
export interface DbEncryption {
  encrypt: boolean;
  encryptionKeyId: string;
  encryptionKey: string;
  /** key id → key. Used to read even when encrypt is false, as in GoTrue. */
  decryptionKeys: Record<string, string>;
}

export interface EncryptedString {
  keyId: string;
  data: Uint8Array<ArrayBuffer>;
  nonce: Uint8Array<ArrayBuffer>;
}

/** A stored value that is an encrypted string but cannot be opened (unknown key, wrong key, tampered). */
export class DecryptionError extends Error {}

const RAW_URL_KEY = /^[A-Za-z0-9_-]{43}$/;

/** A master key: unpadded base64url of exactly 256 bits (Go's base64.RawURLEncoding). */
export function decodeMasterKey(keyBase64Url: string): Uint8Array<ArrayBuffer> | undefined {
  if (!RAW_URL_KEY.test(keyBase64Url)) return undefined;
  const bin = atob(keyBase64Url.replaceAll('-', '+').replaceAll('_', '/') + '=');
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

// Go's encoding/json writes []byte as padded standard base64 and reads only that.
function fromBase64(s: unknown): Uint8Array<ArrayBuffer> | undefined {
  if (typeof s !== 'string' || !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s))
    return undefined;
  const bin = atob(s);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/**
 * The encrypted string in a stored value, or undefined when the value is plain (GoTrue's
 * ParseEncryptedString: it must start with "{", parse, and be complete with a 12-byte nonce).
 */
export function parseEncryptedString(stored: string): EncryptedString | undefined {
  if (!stored.startsWith('{')) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(stored);
  } catch {
    return undefined;
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const o = json as Record<string, unknown>;
  const data = fromBase64(o.data);
  const nonce = fromBase64(o.nonce);
  if (typeof o.key_id !== 'string' || o.key_id === '' || o.alg !== ENCRYPTED_STRING_ALG) return undefined;
  if (!data || data.length === 0 || !nonce || nonce.length !== 12) return undefined;
  return { keyId: o.key_id, data, nonce };
}

/** The JSON GoTrue writes (its field order). */
export function formatEncryptedString(es: EncryptedString): string {
  return JSON.stringify({
    key_id: es.keyId,
    alg: ENCRYPTED_STRING_ALG,
    data: toBase64(es.data),
    nonce: toBase64(es.nonce),
  });
}

async function rowKey(master: Uint8Array<ArrayBuffer>, id: string, usage: KeyUsage): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey('raw', master, 'HKDF', false, ['deriveKey']);
  // An empty salt is HKDF's default (a hash-length run of zeros), as Go's hkdf.New with nil.
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new TextEncoder().encode(id) },
    ikm,
    { name: 'AES-GCM', length: 256 },
    false,
    [usage],
  );
}

/** Encrypts `plain` for the row `id` under the master key `keyId`. */
export async function encryptString(
  id: string,
  plain: string,
  keyId: string,
  keyBase64Url: string,
  randomBytes: (n: number) => Uint8Array,
): Promise<string> {
  const master = decodeMasterKey(keyBase64Url);
  if (!master) throw new Error(`encryption key with ID "${keyId}" is not 256 bits of unpadded base64url`);
  const nonce = new Uint8Array(randomBytes(12));
  const key = await rowKey(master, id, 'encrypt');
  const data = new Uint8Array(
    await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce }, key, new TextEncoder().encode(plain)),
  );
  return formatEncryptedString({ keyId, data, nonce });
}

/** Opens an encrypted string of the row `id`; throws DecryptionError (naming the key id, never a key). */
export async function decryptString(
  es: EncryptedString,
  id: string,
  decryptionKeys: Record<string, string>,
): Promise<string> {
  const encoded = Object.hasOwn(decryptionKeys, es.keyId) ? decryptionKeys[es.keyId] : undefined;
  if (!encoded) throw new DecryptionError(`decryption key with ID "${es.keyId}" does not exist`);
  const master = decodeMasterKey(encoded);
  if (!master) throw new DecryptionError(`decryption key with ID "${es.keyId}" is not 256 bits`);
  const key = await rowKey(master, id, 'decrypt');
  try {
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: es.nonce }, key, es.data);
    return new TextDecoder('utf-8', { fatal: false }).decode(plain);
  } catch {
    throw new DecryptionError(`value of ${id} does not open with the key with ID "${es.keyId}"`);
  }
}

/** What to store for a secret of row `id`: encrypted when SECURITY_DB_ENCRYPTION_ENCRYPT is on (GoTrue's SetSecret / SetOtpCode). */
export async function sealSecret(
  cfg: DbEncryption,
  id: string,
  plain: string,
  randomBytes: (n: number) => Uint8Array,
): Promise<string> {
  return cfg.encrypt ? encryptString(id, plain, cfg.encryptionKeyId, cfg.encryptionKey, randomBytes) : plain;
}

/**
 * A stored secret in clear, and whether it should be written again under the current key: a plain
 * value when encryption is on, or one under another key id (GoTrue's GetSecret / ShouldReEncrypt).
 */
export async function openSecret(
  cfg: DbEncryption,
  id: string,
  stored: string,
): Promise<{ value: string; reEncrypt: boolean }> {
  const es = parseEncryptedString(stored);
  if (!es) return { value: stored, reEncrypt: cfg.encrypt };
  const value = await decryptString(es, id, cfg.decryptionKeys);
  return { value, reEncrypt: cfg.encrypt && es.keyId !== cfg.encryptionKeyId };
}
