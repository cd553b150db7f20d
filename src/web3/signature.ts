// Wallet signatures (GoTrue: siws.VerifySignature, siwe.VerifySignature) by audited libraries:
// ed25519 over the message (or over Ledger's off-chain-message envelope) for Solana; for Ethereum
// the EIP-191 personal_sign hash, the secp256k1 public key recovered from r‖s‖v, and its address
// (the last 20 bytes of its Keccak-256) compared with the message's.
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { base58 } from '@scure/base';
import { hex, utf8 } from '../crypto/encoding.ts';

/** Solana's off-chain message envelope (version 0, ASCII format, one signer) around the raw text. */
function offchainEnvelope(domain: string, pubKey: Uint8Array, message: Uint8Array): Uint8Array | undefined {
  if (message.length > 0xffff) return undefined;
  const prefix = new Uint8Array([0xff, ...utf8('solana offchain')]);
  const domainBytes = new Uint8Array(32);
  domainBytes.set(utf8(domain).slice(0, 32));
  const len = new Uint8Array([message.length & 0xff, message.length >> 8]);
  return concatBytes(prefix, new Uint8Array([0]), domainBytes, new Uint8Array([0, 1]), pubKey, len, message);
}

export function verifySolana(raw: string, domain: string, address: string, signature: Uint8Array): boolean {
  let pubKey: Uint8Array;
  try {
    pubKey = base58.decode(address);
  } catch {
    return false;
  }
  if (pubKey.length !== 32 || signature.length !== 64) return false;
  const message = utf8(raw);
  const verify = (m: Uint8Array) => {
    try {
      return ed25519.verify(signature, m, pubKey);
    } catch {
      return false;
    }
  };
  if (verify(message)) return true;
  const envelope = offchainEnvelope(domain, pubKey, message);
  return envelope !== undefined && verify(envelope);
}

/** EIP-191 version 0x45: keccak256("\x19Ethereum Signed Message:\n" + length + message). */
export function personalMessageHash(raw: string): Uint8Array {
  const message = utf8(raw);
  const prefix = utf8(`\x19Ethereum Signed Message:\n${message.length}`);
  const all = new Uint8Array(prefix.length + message.length);
  all.set(prefix);
  all.set(message, prefix.length);
  return keccak_256(all);
}

/** EIP-55: the address with hex letters upper-cased where the Keccak-256 of its lower-case form says so. */
export function checksumAddress(address: string): string {
  const lower = address.toLowerCase().replace(/^0x/, '');
  const hash = hex(keccak_256(utf8(lower)));
  let out = '0x';
  for (let i = 0; i < lower.length; i++)
    out += Number.parseInt(hash[i]!, 16) >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  return out;
}

/**
 * The address that signed the message, or undefined. `signatureHex` must carry the 0x prefix (as
 * go-ethereum's hexutil.Decode requires) and be r‖s‖v with v 0, 1, 27 or 28.
 */
export function recoverEthereumAddress(raw: string, signatureHex: string): string | undefined {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signatureHex)) return undefined;
  const sig = Uint8Array.from(signatureHex.slice(2).match(/../g)!, (b) => Number.parseInt(b, 16));
  let v = sig[64]!;
  if (v >= 27) v -= 27;
  if (v > 1) return undefined;
  try {
    const recovered = new Uint8Array([v, ...sig.slice(0, 64)]);
    const pub = secp256k1.recoverPublicKey(recovered, personalMessageHash(raw), { prehash: false });
    const uncompressed = secp256k1.Point.fromBytes(pub).toBytes(false);
    return checksumAddress(`0x${hex(keccak_256(uncompressed.slice(1)).slice(12))}`);
  } catch {
    return undefined;
  }
}
