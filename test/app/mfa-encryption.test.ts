// SECURITY_DB_ENCRYPTION_*: factor secrets and phone codes at rest in GoTrue's encrypted-string
// format (internal/crypto/crypto.go). The format is checked against the test's own node:crypto
// version of it (HKDF-SHA256 over the master key with the row id as info, AES-256-GCM, JSON with
// standard base64), then the MFA flows are driven through the real app.
import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { decryptString, encryptString, parseEncryptedString } from '../../src/crypto/encrypted-string.ts';
import type { Database } from '../../src/db/database.ts';
import type { SmsMessage, SmsProvider } from '../../src/sms/provider.ts';
import { buildTestApp, signUpConfirmed, uniqueEmail } from '../helpers/app.ts';
import { GOTRUE_ENV } from '../helpers/config-env.ts';
import { openTestDb } from '../helpers/db.ts';
import { decodeBase32, totpAt } from '../helpers/totp.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

// Two master keys: 32 bytes each in unpadded base64url.
const K1 = Buffer.alloc(32, 1).toString('base64url');
const K2 = Buffer.alloc(32, 2).toString('base64url');

/** GoTrue's NewEncryptedString, written here with node:crypto. */
function nodeEncrypt(id: string, plain: string, keyId: string, key: string, nonce: Buffer): string {
  const rowKey = Buffer.from(hkdfSync('sha256', Buffer.from(key, 'base64url'), Buffer.alloc(0), Buffer.from(id), 32));
  const c = createCipheriv('aes-256-gcm', rowKey, nonce);
  const data = Buffer.concat([c.update(plain, 'utf8'), c.final(), c.getAuthTag()]);
  return JSON.stringify({
    key_id: keyId,
    alg: 'aes-gcm-hkdf',
    data: data.toString('base64'),
    nonce: nonce.toString('base64'),
  });
}

/** GoTrue's Decrypt, written here with node:crypto. */
function nodeDecrypt(id: string, stored: string, keys: Record<string, string>): string {
  const es = JSON.parse(stored) as { key_id: string; alg: string; data: string; nonce: string };
  expect(es.alg).toBe('aes-gcm-hkdf');
  const rowKey = Buffer.from(
    hkdfSync('sha256', Buffer.from(keys[es.key_id]!, 'base64url'), Buffer.alloc(0), Buffer.from(id), 32),
  );
  const data = Buffer.from(es.data, 'base64');
  const d = createDecipheriv('aes-256-gcm', rowKey, Buffer.from(es.nonce, 'base64'));
  d.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([d.update(data.subarray(0, data.length - 16)), d.final()]).toString('utf8');
}

describe('the encrypted-string format (known answers against node:crypto)', () => {
  const id = '2b7c1a52-3f0e-4d3c-9d55-0f6b8f3a9e11';
  const nonce = Buffer.from('000102030405060708090a0b', 'hex');

  test("ours encrypts byte for byte as GoTrue's recipe, and opens what the recipe wrote", async () => {
    const ours = await encryptString(id, 'JBSWY3DPEHPK3PXP', 'k1', K1, (n) => new Uint8Array(nonce.subarray(0, n)));
    const theirs = nodeEncrypt(id, 'JBSWY3DPEHPK3PXP', 'k1', K1, nonce);
    expect(ours).toBe(theirs);
    expect(Object.keys(JSON.parse(ours))).toEqual(['key_id', 'alg', 'data', 'nonce']);
    const random = nodeEncrypt(id, 'secret ✓', 'k2', K2, Buffer.from('ffeeddccbbaa998877665544', 'hex'));
    expect(await decryptString(parseEncryptedString(random)!, id, { k2: K2 })).toBe('secret ✓');
    expect(
      nodeDecrypt(id, await encryptString(id, '12345678', 'k2', K2, (n) => crypto.getRandomValues(new Uint8Array(n))), {
        k2: K2,
      }),
    ).toBe('12345678');
  });

  test('bound to the row id and the key: another id, another key or an unknown key id does not open it', async () => {
    const es = parseEncryptedString(nodeEncrypt(id, 'x', 'k1', K1, nonce))!;
    await expect(decryptString(es, 'another-id', { k1: K1 })).rejects.toThrow(/does not open/);
    await expect(decryptString(es, id, { k1: K2 })).rejects.toThrow(/does not open/);
    await expect(decryptString(es, id, { k2: K2 })).rejects.toThrow('decryption key with ID "k1" does not exist');
  });

  test("plain values, and JSON that is not a complete encrypted string, read as plain (GoTrue's ParseEncryptedString)", () => {
    const ok = JSON.parse(nodeEncrypt(id, 'x', 'k1', K1, nonce));
    expect(parseEncryptedString('JBSWY3DPEHPK3PXP')).toBeUndefined();
    expect(parseEncryptedString(` ${JSON.stringify(ok)}`)).toBeUndefined();
    expect(parseEncryptedString('{not json')).toBeUndefined();
    expect(parseEncryptedString(JSON.stringify({ ...ok, alg: 'aes-gcm' }))).toBeUndefined();
    expect(parseEncryptedString(JSON.stringify({ ...ok, key_id: '' }))).toBeUndefined();
    expect(parseEncryptedString(JSON.stringify({ ...ok, nonce: Buffer.alloc(8).toString('base64') }))).toBeUndefined();
    expect(parseEncryptedString(JSON.stringify({ ...ok, data: '' }))).toBeUndefined();
    expect(parseEncryptedString(JSON.stringify(ok))).toMatchObject({ keyId: 'k1' });
  });
});

const V2024 = { 'x-supabase-api-version': '2024-01-01' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}`, ...V2024 });
const ENCRYPT_K1 = {
  AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true',
  AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: 'k1',
  AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: K1,
  AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${K1}`,
};
const ROTATED_TO_K2 = {
  AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true',
  AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: 'k2',
  AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: K2,
  AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${K1},k2:${K2}`,
};
let phoneN = 0;
const uniquePhone = () => `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++phoneN % 10)}`;

function recordingSms(): { provider: SmsProvider; sent: SmsMessage[] } {
  const sent: SmsMessage[] = [];
  return {
    sent,
    provider: {
      name: 'twilio',
      supportsWhatsApp: true,
      verifiesCodes: false,
      async send(m) {
        sent.push(m);
        return `SM${sent.length}`;
      },
    },
  };
}

/** Apps over one database that differ only in their encryption settings, on one shared clock. */
function world() {
  let now = Date.now();
  const sms = recordingSms();
  const make = (env: Record<string, string>) =>
    buildTestApp(
      db,
      {
        AUTHSVC_MAILER_AUTOCONFIRM: 'true',
        AUTHSVC_SMS_PROVIDER: 'twilio',
        AUTHSVC_SMS_TWILIO_ACCOUNT_SID: 'AC-test',
        AUTHSVC_SMS_TWILIO_AUTH_TOKEN: 'token',
        AUTHSVC_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG-test',
        AUTHSVC_RATE_LIMIT_SMS_SENT: '100000',
        AUTHSVC_MFA_PHONE_ENROLL_ENABLED: 'true',
        AUTHSVC_MFA_PHONE_VERIFY_ENABLED: 'true',
        ...env,
      },
      { sms: sms.provider, now: () => new Date(now) },
    );
  return {
    make,
    sms,
    tick: (s: number) => {
      now += s * 1000;
    },
    seconds: () => now / 1000,
  };
}
type App = Awaited<ReturnType<ReturnType<typeof world>['make']>>;

const storedSecret = async (factorId: string) =>
  (await db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.id, factorId)))[0]!.secret!;
const storedCode = async (challengeId: string) =>
  (await db.orm.select().from(db.t.mfaChallenges).where(eq(db.t.mfaChallenges.id, challengeId)))[0]!.otpCode!;

async function enrollTotp(t: App, token: string, name = 'app'): Promise<Json> {
  const res = await t.request('POST', '/factors', { factor_type: 'totp', friendly_name: name }, bearer(token));
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json() as Promise<Json>;
}

async function challengeAndVerify(
  t: App,
  token: string,
  factorId: string,
  code: (challengeId: string) => string,
): Promise<Response> {
  const ch = (await (
    await t.request('POST', `/factors/${factorId}/challenge`, undefined, bearer(token))
  ).json()) as Json;
  return t.request('POST', `/factors/${factorId}/verify`, { challenge_id: ch.id, code: code(ch.id) }, bearer(token));
}

describe('TOTP factors with SECURITY_DB_ENCRYPTION_ENCRYPT', () => {
  test("enrol stores GoTrue's encrypted string (not the base32 secret), bound to the factor id; the code verifies", async () => {
    const w = world();
    const t = await w.make(ENCRYPT_K1);
    const { session } = await signUpConfirmed(t, uniqueEmail('enc'));
    const factor = await enrollTotp(t, session.access_token);
    const stored = await storedSecret(factor.id);
    expect(stored).not.toContain(factor.totp.secret);
    expect(JSON.parse(stored)).toMatchObject({ key_id: 'k1', alg: 'aes-gcm-hkdf' });
    expect(nodeDecrypt(factor.id, stored, { k1: K1 })).toBe(factor.totp.secret);
    const res = await challengeAndVerify(t, session.access_token, factor.id, () =>
      totpAt(decodeBase32(factor.totp.secret), w.seconds()),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await storedSecret(factor.id)).toBe(stored); // current key: not rewritten
  });

  test('a secret stored plain (written before encryption was on) verifies, and is re-encrypted — on a wrong code too, as GoTrue', async () => {
    const w = world();
    const plainApp = await w.make({});
    const { session } = await signUpConfirmed(plainApp, uniqueEmail('enc-plain'));
    const factor = await enrollTotp(plainApp, session.access_token);
    expect(await storedSecret(factor.id)).toBe(factor.totp.secret);
    const t = await w.make(ENCRYPT_K1);
    const good = totpAt(decodeBase32(factor.totp.secret), w.seconds());
    const wrong = await challengeAndVerify(t, session.access_token, factor.id, () =>
      good === '000000' ? '111111' : '000000',
    );
    expect(wrong.status).toBe(422);
    expect(((await wrong.json()) as Json).code).toBe('mfa_verification_failed');
    const afterWrong = await storedSecret(factor.id);
    expect(nodeDecrypt(factor.id, afterWrong, { k1: K1 })).toBe(factor.totp.secret);
    const ok = await challengeAndVerify(t, session.access_token, factor.id, () => good);
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(JSON.parse(await storedSecret(factor.id)).key_id).toBe('k1');
  });

  test('key rotation: a secret under k1 verifies with ENCRYPTION_KEY_ID=k2 and is re-encrypted under k2 in the verify', async () => {
    const w = world();
    const before = await w.make(ENCRYPT_K1);
    const { session } = await signUpConfirmed(before, uniqueEmail('enc-rotate'));
    const factor = await enrollTotp(before, session.access_token);
    const t = await w.make(ROTATED_TO_K2);
    const ok = await challengeAndVerify(t, session.access_token, factor.id, () =>
      totpAt(decodeBase32(factor.totp.secret), w.seconds()),
    );
    expect(ok.status, await ok.clone().text()).toBe(200);
    const stored = await storedSecret(factor.id);
    expect(JSON.parse(stored).key_id).toBe('k2');
    expect(nodeDecrypt(factor.id, stored, { k2: K2 })).toBe(factor.totp.secret);
  });

  test('encryption turned off: encrypted secrets still open with DECRYPTION_KEYS and stay encrypted; new ones are plain', async () => {
    const w = world();
    const before = await w.make(ENCRYPT_K1);
    const { session } = await signUpConfirmed(before, uniqueEmail('enc-off'));
    const factor = await enrollTotp(before, session.access_token);
    const stored = await storedSecret(factor.id);
    const t = await w.make({ AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${K1}` });
    const ok = await challengeAndVerify(t, session.access_token, factor.id, () =>
      totpAt(decodeBase32(factor.totp.secret), w.seconds()),
    );
    expect(ok.status, await ok.clone().text()).toBe(200);
    const aal2 = ((await ok.json()) as Json).access_token as string;
    expect(await storedSecret(factor.id)).toBe(stored);
    const second = await enrollTotp(t, aal2, 'second');
    expect(await storedSecret(second.id)).toBe(second.totp.secret);
  });

  test('a secret whose key is not configured: GoTrue\'s 500 "Database error verifying MFA TOTP secret", logged by key id without the secret, row unchanged', async () => {
    const w = world();
    const before = await w.make(ENCRYPT_K1);
    const { session } = await signUpConfirmed(before, uniqueEmail('enc-lost'));
    const factor = await enrollTotp(before, session.access_token);
    const stored = await storedSecret(factor.id);
    const settings: Record<string, string>[] = [
      {},
      { ...ROTATED_TO_K2, AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k2:${K2}` },
      { AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${K2}` },
    ];
    for (const env of settings) {
      const t = await w.make(env);
      const res = await challengeAndVerify(t, session.access_token, factor.id, () =>
        totpAt(decodeBase32(factor.totp.secret), w.seconds()),
      );
      expect(res.status).toBe(500);
      expect(await res.json()).toMatchObject({
        code: 'unexpected_failure',
        message: 'Database error verifying MFA TOTP secret',
      });
      const logged = t.logs.join('\n');
      expect(logged).toContain('with ID \\"k1\\"');
      expect(logged).not.toContain(factor.totp.secret);
      expect(logged).not.toContain(K1);
      expect(await storedSecret(factor.id)).toBe(stored);
    }
  });
});

describe('phone factor codes with SECURITY_DB_ENCRYPTION_ENCRYPT', () => {
  test("the challenge's otp_code is encrypted, bound to the challenge id; the texted code verifies; a wrong one re-encrypts after rotation", async () => {
    const w = world();
    const t = await w.make(ENCRYPT_K1);
    const { session } = await signUpConfirmed(t, uniqueEmail('enc-phone'));
    const token = session.access_token;
    const factor = (await (
      await t.request('POST', '/factors', { factor_type: 'phone', phone: `+${uniquePhone()}` }, bearer(token))
    ).json()) as Json;
    const ch = (await (await t.request('POST', `/factors/${factor.id}/challenge`, {}, bearer(token))).json()) as Json;
    const code = /(\d{6})/.exec(w.sms.sent.at(-1)!.message)![1]!;
    const stored = await storedCode(ch.id);
    expect(stored).not.toContain(code);
    expect(nodeDecrypt(ch.id, stored, { k1: K1 })).toBe(code);

    const rotated = await w.make(ROTATED_TO_K2);
    const wrong = await rotated.request(
      'POST',
      `/factors/${factor.id}/verify`,
      { challenge_id: ch.id, code: code === '000000' ? '111111' : '000000' },
      bearer(token),
    );
    expect(((await wrong.json()) as Json).code).toBe('mfa_verification_failed');
    const reEncrypted = await storedCode(ch.id);
    expect(JSON.parse(reEncrypted).key_id).toBe('k2');
    expect(nodeDecrypt(ch.id, reEncrypted, { k2: K2 })).toBe(code);
    const ok = await rotated.request(
      'POST',
      `/factors/${factor.id}/verify`,
      { challenge_id: ch.id, code },
      bearer(token),
    );
    expect(ok.status, await ok.clone().text()).toBe(200);
  });
});

describe("SECURITY_DB_ENCRYPTION_* settings (GoTrue's DatabaseEncryptionConfiguration.Validate)", () => {
  const parse = (env: Record<string, string>) => parseConfig({ ...GOTRUE_ENV, ...env });
  const errors = (env: Record<string, string>) => {
    const r = parse(env);
    return r.ok ? [] : r.errors;
  };

  test('valid settings reach the config; off by default with no keys', () => {
    const r = parse({
      GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true',
      GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: 'k2',
      GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: K2,
      GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${K1},k2:${K2}`,
    });
    expect(r.ok && r.config.security.dbEncryption).toEqual({
      encrypt: true,
      encryptionKeyId: 'k2',
      encryptionKey: K2,
      decryptionKeys: { k1: K1, k2: K2 },
    });
    const off = parse({});
    expect(off.ok && off.config.security.dbEncryption).toEqual({
      encrypt: false,
      encryptionKeyId: '',
      encryptionKey: '',
      decryptionKeys: {},
    });
  });

  test('encrypt=true needs a key id, a 256-bit unpadded base64url key, and that key among the decryption keys', () => {
    const missing = errors({ GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true' });
    expect(missing).toHaveLength(2);
    expect(missing[0]).toMatch(
      /SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID\) is required when SECURITY_DB_ENCRYPTION_ENCRYPT is true$/,
    );
    expect(missing[1]).toMatch(
      /SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY\) must be 256 bits of unpadded base64url when SECURITY_DB_ENCRYPTION_ENCRYPT is true$/,
    );
    const base = {
      GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true',
      GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: 'k1',
    };
    for (const bad of [
      K1.slice(1),
      `${K1}=`,
      Buffer.alloc(32, 1).toString('base64').replace(/=+$/, '').replace(/.$/, '+'),
      Buffer.alloc(33).toString('base64url'),
    ]) {
      const e = errors({
        ...base,
        GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: bad,
        GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${K1}`,
      });
      expect(e).toEqual([
        'GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: must be 256 bits of unpadded base64url when SECURITY_DB_ENCRYPTION_ENCRYPT is true',
      ]);
      expect(e.join()).not.toContain(bad);
    }
    expect(
      errors({
        ...base,
        GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: K1,
        GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k2:${K2}`,
      }),
    ).toEqual(['GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: must also hold the encryption key (id "k1")']);
    expect(
      errors({
        ...base,
        GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: K1,
        GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${K1}`,
      }),
    ).toEqual([]);
  });

  test('every decryption key is checked even with encrypt=false (GoTrue); errors name ids, never keys', () => {
    const e = errors({ GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${K1},old:${K2.slice(2)}` });
    expect(e).toEqual([
      'GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: decryption key with ID "old" must be 256 bits of unpadded base64url',
    ]);
    const malformed = errors({ GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${K1},${K2}` });
    expect(malformed).toEqual(['GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: item 2 is not id:key']);
    expect(malformed.join()).not.toContain(K2);
    // With encrypt off, the encryption key itself is not checked (GoTrue checks it only when encrypting).
    expect(errors({ GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: 'not-a-key' })).toEqual([]);
  });
});

describe("users.encrypted_password in GoTrue's encrypted-string format (a GoTrue database with encryption on)", () => {
  test("the password grant, a repeated signup's check and PUT /user's current password open it under the user's id; no key opens it: 500, no session", async () => {
    const t = await buildTestApp(db, {
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      AUTHSVC_SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD: 'true',
      ...ENCRYPT_K1,
    });
    const { email, password, session } = await signUpConfirmed(t, uniqueEmail('enc-pw'));
    const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
    // What GoTrue's SetPassword writes under encryption: the bcrypt hash sealed with the user's id, by node:crypto here.
    const sealed = nodeEncrypt(row!.id, row!.encryptedPassword!, 'k1', K1, Buffer.alloc(12, 7));
    await db.orm.update(db.t.users).set({ encryptedPassword: sealed }).where(eq(db.t.users.id, row!.id));

    expect((await t.request('POST', '/token?grant_type=password', { email, password })).status).toBe(200);
    expect(
      (await t.request('POST', '/token?grant_type=password', { email, password: 'not-the-password-1' })).status,
    ).toBe(400);
    const wrongCurrent = await t.request(
      'PUT',
      '/user',
      { password: 'a-new-password-1', current_password: 'not-the-password-1' },
      { authorization: `Bearer ${session.access_token}` },
    );
    expect(await wrongCurrent.json()).toMatchObject({ error_code: 'current_password_invalid' });
    const changed = await t.request(
      'PUT',
      '/user',
      { password: 'a-new-password-1', current_password: password },
      { authorization: `Bearer ${session.access_token}` },
    );
    expect(changed.status).toBe(200);

    await db.orm
      .update(db.t.users)
      .set({ encryptedPassword: nodeEncrypt(row!.id, '$2a$10$x', 'k9', K2, Buffer.alloc(12, 3)) })
      .where(eq(db.t.users.id, row!.id));
    const unknownKey = await t.request('POST', '/token?grant_type=password', { email, password });
    expect(unknownKey.status).toBe(500);
    const body = (await unknownKey.json()) as Record<string, unknown>;
    expect(body.access_token).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain('k9');
  });
});
