// Sign-In With Solana and Sign-In With Ethereum (EIP-4361) messages, parsed as GoTrue parses them
// (utilities/siws/parser.go, utilities/siwe/parser.go): line 1 names the domain, line 2 the
// address, line 3 is empty, an optional statement and empty line follow, then `Key: value`
// lines. Errors carry GoTrue's texts (they are answered as 400 validation_failed).

export type Chain = 'solana' | 'ethereum';

export interface SignInMessage {
  raw: string;
  domain: string;
  address: string;
  statement?: string;
  /** `URI:` as given, and its parts (scheme without the colon; '' for a bare path). */
  uri: { text: string; scheme: string; hostname: string; host: string };
  version: string;
  chainId: string;
  nonce: string;
  issuedAt: Date;
  expirationTime?: Date;
  notBefore?: Date;
  requestId?: string;
  resources: string[];
}

export class MessageError extends Error {
  override name = 'MessageError';
}

const SPEC = {
  solana: {
    tag: 'siws',
    account: 'Solana',
    address: /^[a-zA-Z0-9]{32,44}$/,
    addressError: 'wallet address is not in base58 format',
  },
  ethereum: {
    tag: 'siwe',
    account: 'Ethereum',
    address: /^0x[a-fA-F0-9]{40}$/,
    addressError: 'wallet address is not a valid Ethereum address',
  },
} as const;

const DOMAIN_RE = /^(localhost|(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,})(?::\d{1,5})?$/;
const SOLANA_NETWORK_RE = /^solana:(main|dev|test|local)net$/;
// Go's time.Parse(time.RFC3339): a full date, a time with optional fraction, Z or an offset.
const RFC3339_RE = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

function time(value: string): Date | undefined {
  if (!RFC3339_RE.test(value)) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** Go's url.ParseRequestURI: an absolute URI, or an absolute path. */
function requestUri(value: string): SignInMessage['uri'] | undefined {
  if (value.startsWith('/')) return /\s/.test(value) ? undefined : { text: value, scheme: '', hostname: '', host: '' };
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(value)) return undefined;
  try {
    const u = new URL(value);
    return {
      text: value,
      scheme: u.protocol.slice(0, -1).toLowerCase(),
      hostname: u.hostname.replace(/^\[|\]$/g, ''),
      host: u.host,
    };
  } catch {
    return undefined;
  }
}

export function parseSignInMessage(raw: string, chain: Chain): SignInMessage {
  const spec = SPEC[chain];
  const fail = (why: string) => new MessageError(`${spec.tag}: ${why}`);
  const lines = raw.split('\n');
  if (lines.length < 6) throw fail('message needs at least 6 lines');
  const suffix = ` wants you to sign in with your ${spec.account} account:`;
  if (!lines[0]!.endsWith(suffix)) throw fail(`message first line does not end in "${suffix}"`);
  const domain = lines[0]!.slice(0, -suffix.length).trim();
  if (!DOMAIN_RE.test(domain)) throw fail('domain in first line of message is not valid');
  const address = lines[1]!.trim();
  if (!spec.address.test(address)) throw fail(spec.addressError);
  if (lines[2] !== '') throw fail('third line must be empty');

  let statement: string | undefined;
  let start = 3;
  if (lines[3] !== '' && lines[4] === '') {
    statement = lines[3];
    start = 5;
  }
  let uri: SignInMessage['uri'] | undefined;
  let version = '';
  let chainId = '';
  let nonce = '';
  let issuedAt: Date | undefined;
  let expirationTime: Date | undefined;
  let notBefore: Date | undefined;
  let requestId: string | undefined;
  const resources: string[] = [];
  let inResources = false;
  for (let i = start; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (inResources) {
      if (line.startsWith('- ')) {
        const r = line.slice(2).trim();
        if (!requestUri(r)) throw fail(`Resource at position ${resources.length} has invalid URI`);
        resources.push(r);
        continue;
      }
      inResources = false;
    }
    if (line === 'Resources:') {
      inResources = true;
      continue;
    }
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon < 0) throw fail(`encountered unparsable line at index ${i}`);
    const key = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    switch (key) {
      case 'URI':
        uri = requestUri(value);
        if (!uri) throw fail('URI is not valid');
        break;
      case 'Version':
        version = value;
        break;
      case 'Chain ID': {
        const ok =
          chain === 'solana'
            ? value === '' || SOLANA_NETWORK_RE.test(value)
            : /^[+-]?\d+$/.test(value) && Number(value) > 0;
        if (!ok) throw fail('Chain ID is not valid');
        chainId = value;
        break;
      }
      case 'Nonce':
        nonce = value;
        break;
      case 'Issued At':
        issuedAt = time(value);
        if (!issuedAt) throw fail('Issued At is not a valid ISO8601 timestamp');
        break;
      case 'Expiration Time':
        expirationTime = time(value);
        if (!expirationTime) throw fail('Expiration Time is not a valid ISO8601 timestamp');
        break;
      case 'Not Before':
        notBefore = time(value);
        if (!notBefore) throw fail('Not Before is not a valid ISO8601 timestamp');
        break;
      case 'Request ID':
        requestId = value;
        break;
    }
  }
  if (version !== '1') throw fail(`Version value is not supported, expected 1 got ${JSON.stringify(version)}`);
  if (!issuedAt) throw fail('Issued At is not specified');
  if (!uri) throw fail('URI is not specified');
  if (expirationTime && issuedAt > expirationTime) throw fail('Issued At is after Expiration Time');
  if (notBefore && expirationTime && notBefore > expirationTime) throw fail('Not Before is after Expiration Time');
  return {
    raw,
    domain,
    address,
    statement,
    uri,
    version,
    chainId,
    nonce,
    issuedAt,
    expirationTime,
    notBefore,
    requestId,
    resources,
  };
}
