// POST /token?grant_type=web3 (GoTrue: api/web3.go Web3Grant): a wallet signs a Sign-In With
// Solana or EIP-4361 message; authsvc checks the signature and then the message — its URI and
// domain against SITE_URL / URI_ALLOW_LIST, its validity window, the Ethereum chain id — takes
// it once, and signs in the identity `web3:<chain>:<address>`, an account with no email.
import { sha256Hex } from '../crypto/encoding.ts';
import { deleteExpiredWeb3Messages, useWeb3Message } from '../db/web3-messages.ts';
import type { Deps } from '../deps.ts';
import { ApiError, badRequest, OAuthApiError, validationFailed } from '../core/errors.ts';
import { isRedirectAllowed } from '../http/redirect.ts';
import { errorFields } from '../telemetry/logger.ts';
import { type Chain, MessageError, parseSignInMessage, type SignInMessage } from '../web3/message.ts';
import { signInExternal } from '../accounts/external-accounts.ts';
import { externalGrant } from './external-grant.ts';
import type { RequestMeta, TokenResponse } from '../accounts/issued-session.ts';

export interface Web3Params {
  chain?: string;
  message?: string;
  signature?: string;
}

const NAMES: Record<Chain, string> = { solana: 'Solana', ethereum: 'Ethereum' };
const disabled = (msg: string) => new ApiError(422, 'web3_provider_disabled', msg);
const grantError = (msg: string) => new OAuthApiError('invalid_grant', msg);

/** Before the body is read: GoTrue answers both chains off without looking at the request. */
export function web3Enabled(deps: Deps): void {
  const { solana, ethereum } = deps.config.web3;
  if (!solana.enabled && !ethereum.enabled) throw disabled('Web3 provider is disabled');
}

/** Base64 std or url, padded or not, of exactly 64 bytes (GoTrue's checks and texts). */
function solanaSignature(signature: string): Uint8Array {
  if (signature.length !== 86 && signature.length !== 88)
    throw validationFailed('signature must be 64 bytes encoded as base64 with or without padding');
  const url = signature.replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_');
  if (!/^[A-Za-z0-9_-]*$/.test(url) || url.length % 4 === 1)
    throw validationFailed('signature does not contain valid base64 characters');
  const bin = atob(url.replaceAll('-', '+').replaceAll('_', '/'));
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
}

/** A loopback name a message's domain may carry (DOMAIN_RE admits no IP address). */
const isLoopbackName = (hostname: string) => hostname === 'localhost' || hostname.endsWith('.localhost');

/**
 * The message's URI, domain and time checks, in GoTrue's order, then authsvc's chain-id pin.
 * Returns until when the message could be accepted (how long its use is remembered).
 */
function checkMessage(deps: Deps, chain: Chain, m: SignInMessage): Date {
  const name = NAMES[chain];
  const { siteUrl, uriAllowList } = deps.config;
  const allowed = (url: string) => isRedirectAllowed(url, siteUrl, uriAllowList);
  const local = m.uri.hostname === 'localhost';
  if (m.uri.scheme !== 'https' && !local)
    throw grantError(`Signed ${name} message is using URI which does not use HTTPS`);
  // A loopback URI passes only where SITE_URL is on loopback or the allow list names it (H3).
  if (!allowed(m.uri.text))
    throw grantError(
      `Signed ${name} message is using URI which is not allowed on this server, message was signed for another app`,
    );
  // The domain is what the wallet compares with the page asking for the signature: it must be
  // this site's (or a listed one) whatever the URI says. GoTrue skips this for a localhost URI;
  // authsvc keeps only GoTrue's other half of that exception (the URI's host may then differ).
  // A loopback domain is a local web page, so it may be listed with http.
  const domainHost = m.domain.replace(/:\d+$/, '').toLowerCase();
  const domainAllowed =
    allowed(`https://${m.domain}/`) || (isLoopbackName(domainHost) && allowed(`http://${m.domain}/`));
  if (!domainAllowed || (!local && m.uri.host !== m.domain)) {
    throw grantError(
      `Signed ${name} message is using a Domain that does not match the one in URI which is not allowed on this server`,
    );
  }
  const now = deps.now().getTime();
  if (m.notBefore && now < m.notBefore.getTime())
    throw grantError(`Signed ${name} message becomes valid in the future`);
  // GoTrue checks an Ethereum message's expiry only when it also has Not Before; authsvc always
  // does (an expired message is expired whatever else it says).
  if (m.expirationTime && now > m.expirationTime.getTime()) throw grantError(`Signed ${name} message is expired`);
  const { maxValidity } = chain === 'solana' ? deps.config.web3.solana : deps.config.web3.ethereum;
  const window = maxValidity * 1000;
  if (now > m.issuedAt.getTime() + window) throw grantError(`${name} message was issued too long ago`);
  if (now < m.issuedAt.getTime() - window) throw grantError(`${name} message was issued too far in the future`);
  const { chainIds } = deps.config.web3.ethereum;
  // The parser admitted only a positive decimal integer (or nothing) as an Ethereum Chain ID.
  if (
    chain === 'ethereum' &&
    chainIds.length > 0 &&
    !(m.chainId !== '' && chainIds.includes(BigInt(m.chainId).toString()))
  ) {
    throw grantError(`Signed ${name} message is using a Chain ID which is not allowed on this server`);
  }
  const latest = m.issuedAt.getTime() + window;
  return new Date(m.expirationTime ? Math.min(latest, m.expirationTime.getTime()) : latest);
}

export async function web3Grant(deps: Deps, p: Web3Params, aud: string, meta: RequestMeta): Promise<TokenResponse> {
  const chain = p.chain;
  if (chain !== 'solana' && chain !== 'ethereum') throw badRequest('web3_unsupported_chain', 'Unsupported chain');
  const { solana, ethereum } = deps.config.web3;
  if (!(chain === 'solana' ? solana.enabled : ethereum.enabled))
    throw disabled(`${NAMES[chain]} Web3 provider is disabled`);
  const message = p.message ?? '';
  const bytes = new TextEncoder().encode(message).length;
  if (bytes < 64) throw validationFailed('message is too short');
  if (bytes > 20 * 1024) throw validationFailed('message must not exceed 20KB');
  const signature = p.signature ?? '';
  let solanaSig: Uint8Array | undefined;
  if (chain === 'solana') solanaSig = solanaSignature(signature);
  else if (signature.replace(/^0x/, '').length !== 130) {
    throw validationFailed('signature must be 65 bytes long, encoded as a 130 character-long hexadecimal string');
  }
  let m: SignInMessage;
  try {
    m = parseSignInMessage(message, chain);
  } catch (err) {
    if (err instanceof MessageError) throw validationFailed(err.message);
    throw err;
  }
  let address = m.address;
  // The curve code is imported on the first Web3 sign-in, not at start (most deployments have none).
  const { checksumAddress, recoverEthereumAddress, verifySolana } = await import('../web3/signature.ts');
  if (chain === 'solana') {
    if (!verifySolana(message, m.domain, m.address, solanaSig!))
      throw grantError('Signature does not match address in message');
  } else {
    const signer = recoverEthereumAddress(message, signature);
    if (!signer || signer.toLowerCase() !== m.address.toLowerCase())
      throw grantError('Signature does not match address in message');
    // One wallet, one identity, whatever the letter case in the message: the EIP-55 form.
    address = checksumAddress(m.address);
  }
  const acceptedUntil = checkMessage(deps, chain, m);
  // One use per message (authsvc; GoTrue keeps none): the exact text the wallet signed, whatever
  // signature encoding carries it (an Ethereum signature has two valid forms, a Solana one two
  // base64 alphabets).
  const used = sha256Hex(`${chain}\n${message}`);
  const sub = `web3:${chain}:${address}`;
  const custom: Record<string, unknown> = {
    address,
    chain,
    network: m.chainId,
    domain: m.domain,
    statement: m.statement ?? '',
  };
  const identity = {
    provider: 'web3',
    emails: [],
    emailOptional: true,
    data: { sub, custom_claims: custom, email_verified: false, phone_verified: false },
  };
  // GoTrue: after user created once the new account and its session are committed; its error is the answer.
  // The use is recorded in the sign-in's transaction: a refused sign-in (signups off, a ban, a
  // hook) leaves the message unused, and of two concurrent uses the key lets one through.
  const token = await externalGrant(deps, aud, meta, 'web3', async (c) => {
    if (!(await useWeb3Message(c.tx, used, acceptedUntil)))
      throw grantError(`Signed ${NAMES[chain]} message has already been used`);
    return signInExternal(c, identity);
  });
  // Entries of messages that have expired anyway are of no more use (as SAML's used assertion ids).
  await deleteExpiredWeb3Messages(deps.db, deps.now()).catch((err) =>
    deps.logger.warn('could not delete expired Web3 message entries', errorFields(err)),
  );
  return token;
}
