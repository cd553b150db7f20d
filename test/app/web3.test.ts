// POST /token?grant_type=web3 (issue 32): Sign in with Solana (ed25519) and Ethereum (EIP-4361,
// secp256k1 recovery) with real wallet keys over valid and tampered messages, GoTrue's message
// checks and errors, the identity web3:<chain>:<address>, the gates and the rate limit.
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { checksumAddress } from '../../src/web3/signature.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { supabaseClientFor } from '../helpers/supabase.ts';
import { ethereumWallet, type MessageFields, signInMessage, solanaWallet } from '../helpers/wallets.ts';

type Json = Record<string, any>;
let db: Database;
let t: TestApp;
const ON = {
  AUTHSVC_EXTERNAL_WEB3_SOLANA_ENABLED: 'true',
  AUTHSVC_EXTERNAL_WEB3_ETHEREUM_ENABLED: 'true',
  AUTHSVC_URI_ALLOW_LIST: 'https://app.example.com/**',
};

beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, ON);
});
afterAll(async () => {
  await db?.close();
});

const grant = (app: TestApp, body: Json, headers: Record<string, string> = {}) =>
  app.request('POST', '/token?grant_type=web3', body, headers);

async function expectGrantError(res: Response, description: string): Promise<void> {
  expect(res.status).toBe(400);
  expect(await res.json()).toEqual({ error: 'invalid_grant', error_description: description });
}

async function expectValidation(res: Response, msg: string): Promise<void> {
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ error_code: 'validation_failed', msg });
}

describe('Solana', () => {
  test('a signed SIWS message signs in web3:solana:<address>; the next sign-in is the same user', async () => {
    const w = solanaWallet();
    const message = signInMessage('Solana', {
      address: w.address,
      statement: 'Sign in to Acme',
      chainId: 'solana:mainnet',
    });
    const res = await grant(t, { chain: 'solana', message, signature: w.sign(message) });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({
      token_type: 'bearer',
      user: { email: '', app_metadata: { provider: 'web3', providers: ['web3'] } },
    });
    expect(body.user.identities[0]).toMatchObject({
      provider: 'web3',
      id: `web3:solana:${w.address}`,
      identity_data: {
        sub: `web3:solana:${w.address}`,
        custom_claims: {
          address: w.address,
          chain: 'solana',
          network: 'solana:mainnet',
          domain: 'localhost:3000',
          statement: 'Sign in to Acme',
        },
      },
    });
    const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1], 'base64url').toString());
    expect(claims.amr).toEqual([expect.objectContaining({ method: 'web3' })]);
    // Padded standard base64 is accepted too, and the user is the same one.
    const again = signInMessage('Solana', { address: w.address });
    const padded = Buffer.from(w.sign(again), 'base64url').toString('base64');
    const second = await grant(t, { chain: 'solana', message: again, signature: padded });
    expect(second.status).toBe(200);
    expect(((await second.json()) as Json).user.id).toBe(body.user.id);
  });

  test("Ledger's off-chain message envelope is accepted", async () => {
    const w = solanaWallet();
    const message = signInMessage('Solana', { address: w.address });
    const raw = Buffer.from(message);
    const domain = Buffer.alloc(32);
    domain.write('localhost:3000');
    const len = Buffer.alloc(2);
    len.writeUInt16LE(raw.length);
    const envelope = Buffer.concat([
      Buffer.from([0xff]),
      Buffer.from('solana offchain'),
      Buffer.from([0]),
      domain,
      Buffer.from([0, 1]),
      Buffer.from(bs58Decode(w.address)),
      len,
      raw,
    ]);
    const res = await grant(t, {
      chain: 'solana',
      message,
      signature: Buffer.from(w.signBytes(envelope)).toString('base64url'),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  });

  test('a tampered message, another wallet\'s signature or a bit flipped: "Signature does not match address in message"', async () => {
    const w = solanaWallet();
    const message = signInMessage('Solana', { address: w.address });
    const sig = w.sign(message);
    await expectGrantError(
      await grant(t, { chain: 'solana', message: message.replace('Nonce: n0nce', 'Nonce: other'), signature: sig }),
      'Signature does not match address in message',
    );
    await expectGrantError(
      await grant(t, { chain: 'solana', message, signature: solanaWallet().sign(message) }),
      'Signature does not match address in message',
    );
    const flipped = Buffer.from(sig, 'base64url');
    flipped[10]! ^= 1;
    await expectGrantError(
      await grant(t, { chain: 'solana', message, signature: flipped.toString('base64url') }),
      'Signature does not match address in message',
    );
    const rows = await db.orm
      .select()
      .from(db.t.identities)
      .where(eq(db.t.identities.providerId, `web3:solana:${w.address}`));
    expect(rows).toEqual([]);
  });

  test("GoTrue's input checks", async () => {
    const w = solanaWallet();
    const message = signInMessage('Solana', { address: w.address });
    await expectValidation(
      await grant(t, { chain: 'solana', message: 'short', signature: w.sign('x') }),
      'message is too short',
    );
    await expectValidation(
      await grant(t, { chain: 'solana', message: 'x'.repeat(20 * 1024 + 1), signature: w.sign('x') }),
      'message must not exceed 20KB',
    );
    await expectValidation(
      await grant(t, { chain: 'solana', message, signature: 'abc' }),
      'signature must be 64 bytes encoded as base64 with or without padding',
    );
    await expectValidation(
      await grant(t, { chain: 'solana', message, signature: '!'.repeat(86) }),
      'signature does not contain valid base64 characters',
    );
    const noUri = message.replace(/URI: .*\n/, '');
    await expectValidation(
      await grant(t, { chain: 'solana', message: noUri, signature: w.sign(noUri) }),
      'siws: URI is not specified',
    );
    const badChain = signInMessage('Solana', { address: w.address, chainId: 'solana:moonnet' });
    await expectValidation(
      await grant(t, { chain: 'solana', message: badChain, signature: w.sign(badChain) }),
      'siws: Chain ID is not valid',
    );
    const v2 = message.replace('Version: 1', 'Version: 2');
    await expectValidation(
      await grant(t, { chain: 'solana', message: v2, signature: w.sign(v2) }),
      'siws: Version value is not supported, expected 1 got "2"',
    );
    const unsupported = await grant(t, { chain: 'bitcoin', message, signature: w.sign(message) });
    expect(unsupported.status).toBe(400);
    expect(await unsupported.json()).toMatchObject({ error_code: 'web3_unsupported_chain', msg: 'Unsupported chain' });
  });

  test('URI, domain and time checks', async () => {
    const w = solanaWallet();
    const signed = async (f: Omit<MessageFields, 'address'>) => {
      const message = signInMessage('Solana', { ...f, address: w.address });
      return grant(t, { chain: 'solana', message, signature: w.sign(message) });
    };
    await expectGrantError(
      await signed({ domain: 'app.example.com', uri: 'http://app.example.com/' }),
      'Signed Solana message is using URI which does not use HTTPS',
    );
    await expectGrantError(
      await signed({ domain: 'evil.example.org', uri: 'https://evil.example.org/' }),
      'Signed Solana message is using URI which is not allowed on this server, message was signed for another app',
    );
    await expectGrantError(
      await signed({ domain: 'evil.example.org', uri: 'https://app.example.com/login' }),
      'Signed Solana message is using a Domain that does not match the one in URI which is not allowed on this server',
    );
    expect((await signed({ domain: 'app.example.com', uri: 'https://app.example.com/login' })).status).toBe(200);
    const now = Date.now();
    await expectGrantError(
      await signed({ notBefore: new Date(now + 60_000), expirationTime: new Date(now + 120_000) }),
      'Signed Solana message becomes valid in the future',
    );
    await expectGrantError(
      await signed({ issuedAt: new Date(now - 120_000), expirationTime: new Date(now - 60_000) }),
      'Signed Solana message is expired',
    );
    await expectGrantError(
      await signed({ issuedAt: new Date(now - 11 * 60_000) }),
      'Solana message was issued too long ago',
    );
    await expectGrantError(
      await signed({ issuedAt: new Date(now + 11 * 60_000) }),
      'Solana message was issued too far in the future',
    );
  });
});

describe('Ethereum', () => {
  test('the wallet helper derives the known address of a known key (independent of src/)', () => {
    const key = Uint8Array.from(Buffer.from('ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80', 'hex'));
    expect(ethereumWallet(key).address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    // EIP-55's own examples.
    expect(checksumAddress('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed')).toBe(
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    );
    expect(checksumAddress('0xFB6916095CA1DF60BB79CE92CE3EA74C37C5D359')).toBe(
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    );
  });

  test('an EIP-4361 message signed with personal_sign signs in web3:ethereum:<EIP-55 address>, whatever the case in the message', async () => {
    const w = ethereumWallet();
    const message = signInMessage('Ethereum', { address: w.address, chainId: '1', statement: 'Hello' });
    const res = await grant(t, { chain: 'ethereum', message, signature: w.sign(message) });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.user.identities[0]).toMatchObject({
      provider: 'web3',
      id: `web3:ethereum:${w.address}`,
      identity_data: {
        custom_claims: {
          address: w.address,
          chain: 'ethereum',
          network: '1',
          domain: 'localhost:3000',
          statement: 'Hello',
        },
      },
    });
    const lower = signInMessage('Ethereum', { address: w.address.toLowerCase(), chainId: '1' });
    const again = await grant(t, { chain: 'ethereum', message: lower, signature: w.sign(lower) });
    expect(again.status).toBe(200);
    expect(((await again.json()) as Json).user.id).toBe(body.user.id);
  });

  test('tampered message, another signer, v without 27, or no 0x prefix: refused', async () => {
    const w = ethereumWallet();
    const message = signInMessage('Ethereum', { address: w.address, chainId: '1' });
    const sig = w.sign(message);
    await expectGrantError(
      await grant(t, { chain: 'ethereum', message: message.replace('Chain ID: 1', 'Chain ID: 5'), signature: sig }),
      'Signature does not match address in message',
    );
    await expectGrantError(
      await grant(t, { chain: 'ethereum', message, signature: ethereumWallet().sign(message) }),
      'Signature does not match address in message',
    );
    // v as 0/1 is normalised like 27/28.
    const v01 = `${sig.slice(0, 130)}${(Number.parseInt(sig.slice(130), 16) - 27).toString(16).padStart(2, '0')}`;
    expect((await grant(t, { chain: 'ethereum', message, signature: v01 })).status).toBe(200);
    // go-ethereum's hexutil.Decode needs the prefix: without it the signature never verifies.
    await expectGrantError(
      await grant(t, { chain: 'ethereum', message, signature: sig.slice(2) }),
      'Signature does not match address in message',
    );
    await expectValidation(
      await grant(t, { chain: 'ethereum', message, signature: '0x1234' }),
      'signature must be 65 bytes long, encoded as a 130 character-long hexadecimal string',
    );
    const badChain = signInMessage('Ethereum', { address: w.address, chainId: '0' });
    await expectValidation(
      await grant(t, { chain: 'ethereum', message: badChain, signature: w.sign(badChain) }),
      'siwe: Chain ID is not valid',
    );
    const badAddress = message.replace(w.address, '0x1234');
    await expectValidation(
      await grant(t, { chain: 'ethereum', message: badAddress, signature: sig }),
      'siwe: wallet address is not a valid Ethereum address',
    );
  });

  test('an expired message is refused even without Not Before (stricter than GoTrue)', async () => {
    const w = ethereumWallet();
    const now = Date.now();
    const message = signInMessage('Ethereum', {
      address: w.address,
      chainId: '1',
      issuedAt: new Date(now - 120_000),
      expirationTime: new Date(now - 60_000),
    });
    await expectGrantError(
      await grant(t, { chain: 'ethereum', message, signature: w.sign(message) }),
      'Signed Ethereum message is expired',
    );
  });
});

describe('supabase-js signInWithWeb3 with the messages it builds itself', () => {
  test('Solana: a wallet with signMessage and publicKey.toBase58()', async () => {
    const w = solanaWallet();
    const wallet = {
      publicKey: { toBase58: () => w.address },
      signMessage: async (bytes: Uint8Array) => w.signBytes(bytes),
    };
    const { data, error } = await supabaseClientFor(t.app).auth.signInWithWeb3({
      chain: 'solana',
      wallet,
      statement: 'Welcome to Acme',
      options: {
        url: 'http://localhost:3000/login',
        signInWithSolana: { chainId: 'solana:devnet', nonce: 'abc12345' },
      },
    } as never);
    expect(error).toBeNull();
    expect(data.user!.identities![0]).toMatchObject({
      id: `web3:solana:${w.address}`,
      identity_data: { custom_claims: { network: 'solana:devnet', statement: 'Welcome to Acme' } },
    });
  });

  test('Ethereum: an EIP-1193 wallet (eth_requestAccounts, eth_chainId, personal_sign)', async () => {
    const w = ethereumWallet();
    const wallet = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        if (method === 'eth_requestAccounts') return [w.address.toLowerCase()];
        if (method === 'eth_chainId') return '0x89';
        if (method === 'personal_sign') return w.sign(Buffer.from(String(params![0]).slice(2), 'hex').toString('utf8'));
        throw new Error(`unexpected ${method}`);
      },
    };
    const { data, error } = await supabaseClientFor(t.app).auth.signInWithWeb3({
      chain: 'ethereum',
      wallet,
      statement: 'Hi',
      options: { url: 'http://localhost:3000/login' },
    } as never);
    expect(error).toBeNull();
    expect(data.user!.identities![0]).toMatchObject({
      id: `web3:ethereum:${w.address}`,
      identity_data: { custom_claims: { network: '137' } },
    });
  });
});

describe('gates and limits', () => {
  test('both chains off: 422 before the body is read; one chain off: its own message', async () => {
    const off = await buildTestApp(db);
    const res = await grant(off, { chain: 'ethereum', message: 'm', signature: { not: 'a string' } });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error_code: 'web3_provider_disabled', msg: 'Web3 provider is disabled' });
    const solanaOnly = await buildTestApp(db, { AUTHSVC_EXTERNAL_WEB3_SOLANA_ENABLED: 'true' });
    const eth = await grant(solanaOnly, { chain: 'ethereum', message: 'm', signature: 's' });
    expect(eth.status).toBe(422);
    expect(await eth.json()).toMatchObject({
      error_code: 'web3_provider_disabled',
      msg: 'Ethereum Web3 provider is disabled',
    });
    const bad = await grant(solanaOnly, { chain: 'solana', message: 'm', signature: { not: 'a string' } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error_code: 'bad_json' });
  });

  test('RATE_LIMIT_WEB3 per IP, apart from the /token limiter; signups off refuse new wallets', async () => {
    const limited = await buildTestApp(db, { ...ON, AUTHSVC_RATE_LIMIT_HEADER: 'x-ip', AUTHSVC_RATE_LIMIT_WEB3: '1' });
    const w = solanaWallet();
    let last: Response | undefined;
    for (let i = 0; i < 31; i++)
      last = await grant(limited, { chain: 'solana', message: 'm', signature: 's' }, { 'x-ip': '203.0.113.9' });
    expect(last!.status).toBe(429);
    // Password grants from the same IP are not counted against it.
    const pw = await limited.request(
      'POST',
      '/token?grant_type=password',
      { email: 'nobody@example.com', password: 'x' },
      { 'x-ip': '203.0.113.9' },
    );
    expect(pw.status).toBe(400);

    const closed = await buildTestApp(db, { ...ON, AUTHSVC_DISABLE_SIGNUP: 'true' });
    const message = signInMessage('Solana', { address: w.address });
    const res = await grant(closed, { chain: 'solana', message, signature: w.sign(message) });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error_code: 'signup_disabled' });
  });
});

// H3: SITE_URL and URI_ALLOW_LIST of the review's server A (a production site, not on loopback).
const SERVER_A = {
  ...ON,
  AUTHSVC_SITE_URL: 'https://app.example.org',
  AUTHSVC_URI_ALLOW_LIST: 'https://*.example.com/**',
};
const URI_NOT_ALLOWED = (name: string) =>
  `Signed ${name} message is using URI which is not allowed on this server, message was signed for another app`;
const DOMAIN_NOT_ALLOWED = (name: string) =>
  `Signed ${name} message is using a Domain that does not match the one in URI which is not allowed on this server`;

async function signedGrant(
  app: TestApp,
  chain: 'ethereum' | 'solana',
  f: Omit<MessageFields, 'address'>,
): Promise<Response> {
  const w = chain === 'ethereum' ? ethereumWallet() : solanaWallet();
  const message = signInMessage(chain === 'ethereum' ? 'Ethereum' : 'Solana', { ...f, address: w.address });
  return grant(app, { chain, message, signature: w.sign(message) });
}

describe('H3 (security review 2026-12-01): a message signed for another site is refused even when its URI names localhost', () => {
  test.each([
    ['ethereum', 'evil.example.net', 'https://evil.example.net/'],
    ['ethereum', 'evil.example.net', 'http://localhost/'],
    ['ethereum', 'evil.example.net', 'https://localhost:8443/'],
    ['solana', 'evil.example.net', 'http://localhost/'],
    ['ethereum', 'evil.example.net', 'https://127.0.0.1/'],
  ] as const)('%s, domain %s, URI %s → 400 invalid_grant, nobody signed in', async (chain, domain, uri) => {
    const a = await buildTestApp(db, SERVER_A);
    const before = (await db.orm.select().from(db.t.sessions)).length;
    const res = await signedGrant(a, chain, { domain, uri, chainId: chain === 'ethereum' ? '1' : undefined });
    await expectGrantError(res, URI_NOT_ALLOWED(chain === 'ethereum' ? 'Ethereum' : 'Solana'));
    expect((await db.orm.select().from(db.t.sessions)).length).toBe(before);
  });

  test('the legitimate message (domain app.example.org, URI https://app.example.org/login) → 200', async () => {
    const a = await buildTestApp(db, SERVER_A);
    const res = await signedGrant(a, 'ethereum', {
      domain: 'app.example.org',
      uri: 'https://app.example.org/login',
      chainId: '1',
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(
      (await signedGrant(a, 'solana', { domain: 'app.example.org', uri: 'https://app.example.org/login' })).status,
    ).toBe(200);
  });

  test("the domain is checked whatever the URI says: a listed loopback URI does not admit another site's domain", async () => {
    const a = await buildTestApp(db, {
      ...SERVER_A,
      AUTHSVC_URI_ALLOW_LIST: 'https://*.example.com/**,http://localhost:3000/**',
    });
    for (const chain of ['ethereum', 'solana'] as const) {
      const name = chain === 'ethereum' ? 'Ethereum' : 'Solana';
      await expectGrantError(
        await signedGrant(a, chain, { domain: 'evil.example.net', uri: 'http://localhost:3000/login' }),
        DOMAIN_NOT_ALLOWED(name),
      );
      await expectGrantError(
        await signedGrant(a, chain, { domain: 'localhost:4000', uri: 'http://localhost:3000/login' }),
        DOMAIN_NOT_ALLOWED(name),
      );
      // Listed on purpose (a developer's machine against this project): its own domain, or the site's.
      expect(
        (await signedGrant(a, chain, { domain: 'localhost:3000', uri: 'http://localhost:3000/login' })).status,
      ).toBe(200);
      expect(
        (await signedGrant(a, chain, { domain: 'app.example.org', uri: 'http://localhost:3000/login' })).status,
      ).toBe(200);
    }
    // Unlisted, a loopback domain is refused too.
    await expectGrantError(
      await signedGrant(await buildTestApp(db, SERVER_A), 'ethereum', {
        domain: 'localhost',
        uri: 'https://app.example.org/login',
      }),
      DOMAIN_NOT_ALLOWED('Ethereum'),
    );
  });

  test('local development (SITE_URL on loopback) still accepts loopback messages', async () => {
    for (const chain of ['ethereum', 'solana'] as const) {
      expect((await signedGrant(t, chain, { domain: 'localhost:5173', uri: 'http://localhost:5173/' })).status).toBe(
        200,
      );
    }
  });
});

describe('a signed message is accepted once (authsvc; GoTrue replays it while valid)', () => {
  test('the same message again, in either signature form, is refused; its use is kept until it expires', async () => {
    const w = ethereumWallet();
    const issuedAt = new Date();
    const message = signInMessage('Ethereum', { address: w.address, chainId: '1', issuedAt });
    const sig = w.sign(message);
    expect((await grant(t, { chain: 'ethereum', message, signature: sig })).status).toBe(200);
    await expectGrantError(
      await grant(t, { chain: 'ethereum', message, signature: sig }),
      'Signed Ethereum message has already been used',
    );
    const v01 = `${sig.slice(0, 130)}${(Number.parseInt(sig.slice(130), 16) - 27).toString(16).padStart(2, '0')}`;
    await expectGrantError(
      await grant(t, { chain: 'ethereum', message, signature: v01 }),
      'Signed Ethereum message has already been used',
    );
    // At another instance over the same database too.
    await expectGrantError(
      await grant(await buildTestApp(db, ON), { chain: 'ethereum', message, signature: sig }),
      'Signed Ethereum message has already been used',
    );
    const used = await db.orm
      .select()
      .from(db.t.web3UsedMessages)
      .where(eq(db.t.web3UsedMessages.messageHash, createHash('sha256').update(`ethereum\n${message}`).digest('hex')));
    expect(used.map((u) => u.expiresAt.getTime())).toEqual([issuedAt.getTime() + 600_000]);

    const s = solanaWallet();
    const expires = new Date(Date.now() + 60_000);
    const sm = signInMessage('Solana', { address: s.address, expirationTime: expires });
    expect((await grant(t, { chain: 'solana', message: sm, signature: s.sign(sm) })).status).toBe(200);
    const padded = Buffer.from(s.sign(sm), 'base64url').toString('base64');
    await expectGrantError(
      await grant(t, { chain: 'solana', message: sm, signature: padded }),
      'Signed Solana message has already been used',
    );
    const kept = await db.orm
      .select()
      .from(db.t.web3UsedMessages)
      .where(eq(db.t.web3UsedMessages.messageHash, createHash('sha256').update(`solana\n${sm}`).digest('hex')));
    expect(kept.map((u) => u.expiresAt.getTime())).toEqual([expires.getTime()]);
  });

  test('a refused sign-in does not use the message up', async () => {
    const w = solanaWallet();
    const message = signInMessage('Solana', { address: w.address });
    const closed = await buildTestApp(db, { ...ON, AUTHSVC_DISABLE_SIGNUP: 'true' });
    expect((await grant(closed, { chain: 'solana', message, signature: w.sign(message) })).status).toBe(422);
    expect((await grant(t, { chain: 'solana', message, signature: w.sign(message) })).status).toBe(200);
  });

  test('entries of expired messages are deleted at the next sign-in', async () => {
    const stale = `stale-${crypto.randomUUID()}`;
    await db.orm.insert(db.t.web3UsedMessages).values({ messageHash: stale, expiresAt: new Date(Date.now() - 1000) });
    const live = `live-${crypto.randomUUID()}`;
    await db.orm.insert(db.t.web3UsedMessages).values({ messageHash: live, expiresAt: new Date(Date.now() + 60_000) });
    expect((await signedGrant(t, 'solana', {})).status).toBe(200);
    const left = (await db.orm.select().from(db.t.web3UsedMessages)).map((u) => u.messageHash);
    expect(left).toContain(live);
    expect(left).not.toContain(stale);
  });

  test('eight concurrent uses of one message, at two instances: exactly one session (Postgres: really in parallel)', async () => {
    const other = await buildTestApp(db, ON);
    for (const chain of ['ethereum', 'solana'] as const) {
      const w = chain === 'ethereum' ? ethereumWallet() : solanaWallet();
      const message = signInMessage(chain === 'ethereum' ? 'Ethereum' : 'Solana', {
        address: w.address,
        chainId: chain === 'ethereum' ? '1' : undefined,
      });
      const body = { chain, message, signature: w.sign(message) };
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => grant(i % 2 ? other : t, body)));
      const results = await Promise.all(
        answers.map(async (r) => ({ status: r.status, body: (await r.json()) as Json })),
      );
      const won = results.filter((r) => r.status === 200);
      expect(won, JSON.stringify(results.map((r) => r.status))).toHaveLength(1);
      const name = chain === 'ethereum' ? 'Ethereum' : 'Solana';
      expect(results.filter((r) => r.status !== 200)).toEqual(
        Array(7).fill({
          status: 400,
          body: { error: 'invalid_grant', error_description: `Signed ${name} message has already been used` },
        }),
      );
      const sessions = await db.orm.select().from(db.t.sessions).where(eq(db.t.sessions.userId, won[0]!.body.user.id));
      expect(sessions).toHaveLength(1);
    }
  });
});

describe('EXTERNAL_WEB3_ETHEREUM_CHAIN_IDS pins the Ethereum chain (authsvc)', () => {
  test('a listed Chain ID signs in; another, or none, is refused; unset, any chain is accepted', async () => {
    const pinned = await buildTestApp(db, { ...ON, AUTHSVC_EXTERNAL_WEB3_ETHEREUM_CHAIN_IDS: '1, 8453' });
    expect(pinned.deps.config.web3.ethereum.chainIds).toEqual(['1', '8453']);
    expect((await signedGrant(pinned, 'ethereum', { chainId: '1' })).status).toBe(200);
    expect((await signedGrant(pinned, 'ethereum', { chainId: '8453' })).status).toBe(200);
    const refused = 'Signed Ethereum message is using a Chain ID which is not allowed on this server';
    await expectGrantError(await signedGrant(pinned, 'ethereum', { chainId: '137' }), refused);
    await expectGrantError(await signedGrant(pinned, 'ethereum', { chainId: '11' }), refused);
    await expectGrantError(await signedGrant(pinned, 'ethereum', {}), refused);
    // Solana messages are not affected.
    expect((await signedGrant(pinned, 'solana', { chainId: 'solana:devnet' })).status).toBe(200);
    expect((await signedGrant(t, 'ethereum', { chainId: '137' })).status).toBe(200);
  });

  test('a value that is not a list of positive integers stops the start', async () => {
    await expect(buildTestApp(db, { ...ON, AUTHSVC_EXTERNAL_WEB3_ETHEREUM_CHAIN_IDS: 'mainnet' })).rejects.toThrow(
      /EXTERNAL_WEB3_ETHEREUM_CHAIN_IDS.*"mainnet" is not a chain id/,
    );
    await expect(buildTestApp(db, { ...ON, AUTHSVC_EXTERNAL_WEB3_ETHEREUM_CHAIN_IDS: '1,0' })).rejects.toThrow(
      /"0" is not a chain id/,
    );
  });
});

function bs58Decode(s: string): Uint8Array {
  const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  let n = 0n;
  for (const ch of s) n = n * 58n + BigInt(alphabet.indexOf(ch));
  const bytes: number[] = [];
  while (n > 0n) {
    bytes.unshift(Number(n & 255n));
    n >>= 8n;
  }
  for (const ch of s) {
    if (ch !== '1') break;
    bytes.unshift(0);
  }
  return Uint8Array.from(bytes);
}
