// Test wallets with real keys: an ed25519 Solana wallet (base58 address) and a secp256k1 Ethereum
// wallet (EIP-55 address, personal_sign signatures as r‖s‖v with v 27/28), and the messages
// supabase-js's signInWithWeb3 builds (SIWS / EIP-4361).
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { base58 } from '@scure/base';
import { keccak_256 } from '@noble/hashes/sha3.js';

// Written apart from src/web3/signature.ts, so a mistake there cannot cancel out here.
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function eip191(message: string): Uint8Array {
  const body = Buffer.from(message, 'utf8');
  return keccak_256(Buffer.concat([Buffer.from(`\u0019Ethereum Signed Message:\n${body.length}`, 'utf8'), body]));
}

function eip55(lowerHex: string): string {
  const hash = hex(keccak_256(Buffer.from(lowerHex, 'ascii')));
  return `0x${[...lowerHex].map((ch, i) => (Number.parseInt(hash[i]!, 16) > 7 ? ch.toUpperCase() : ch)).join('')}`;
}

export interface SolanaWallet {
  address: string;
  /** base64url, unpadded (86 characters), as supabase-js sends it. */
  sign(message: string): string;
  signBytes(bytes: Uint8Array): Uint8Array;
}

export function solanaWallet(): SolanaWallet {
  const { secretKey, publicKey } = ed25519.keygen();
  return {
    address: base58.encode(publicKey),
    sign: (message) => Buffer.from(ed25519.sign(new TextEncoder().encode(message), secretKey)).toString('base64url'),
    signBytes: (bytes) => ed25519.sign(bytes, secretKey),
  };
}

export interface EthereumWallet {
  address: string;
  /** 0x-prefixed r‖s‖v hex with v 27 or 28 (personal_sign). */
  sign(message: string): string;
}

export function ethereumWallet(secretKey = secp256k1.utils.randomSecretKey()): EthereumWallet {
  const uncompressed = secp256k1.getPublicKey(secretKey, false);
  return {
    address: eip55(hex(keccak_256(uncompressed.slice(1)).slice(12))),
    sign(message) {
      const rec = secp256k1.sign(eip191(message), secretKey, { prehash: false, format: 'recovered' });
      return `0x${hex(rec.slice(1))}${(rec[0]! + 27).toString(16)}`;
    },
  };
}

export interface MessageFields {
  domain?: string;
  address: string;
  statement?: string;
  uri?: string;
  chainId?: string;
  nonce?: string;
  issuedAt?: Date;
  expirationTime?: Date;
  notBefore?: Date;
}

/** The message supabase-js's signInWithWeb3 builds for the chain. */
export function signInMessage(chain: 'Solana' | 'Ethereum', f: MessageFields): string {
  const lines = [`${f.domain ?? 'localhost:3000'} wants you to sign in with your ${chain} account:`, f.address, ''];
  if (f.statement !== undefined) lines.push(f.statement, '');
  lines.push(`URI: ${f.uri ?? 'http://localhost:3000/login'}`, 'Version: 1');
  if (f.chainId !== undefined) lines.push(`Chain ID: ${f.chainId}`);
  lines.push(`Nonce: ${f.nonce ?? 'n0nce-1234567'}`, `Issued At: ${(f.issuedAt ?? new Date()).toISOString()}`);
  if (f.expirationTime) lines.push(`Expiration Time: ${f.expirationTime.toISOString()}`);
  if (f.notBefore) lines.push(`Not Before: ${f.notBefore.toISOString()}`);
  return lines.join('\n');
}
