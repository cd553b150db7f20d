// Provider settings beyond GoTrue's: Apple's signing key (EXTERNAL_APPLE_PRIVATE_KEY, _KEY_ID,
// _TEAM_ID; a PEM, or on Node a file path read by the adapter), EXTERNAL_<P>_STORE_TOKENS, and what start-up refuses.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readKeyFiles } from '../../src/adapters/key-files.ts';
import { ConfigError, loadConfig } from '../../src/adapters/node.ts';
import { parseConfig } from '../../src/config/config.ts';
import type { Config } from '../../src/config/types.ts';
import { GOTRUE_ENV } from '../helpers/config-env.ts';

type Env = Record<string, string>;

const pemOf = (type: 'pkcs8' | 'sec1', curve = 'P-256') =>
  generateKeyPairSync('ec', { namedCurve: curve }).privateKey.export({ type, format: 'pem' }) as string;
const P256 = pemOf('pkcs8');

const APPLE: Env = {
  GOTRUE_EXTERNAL_APPLE_ENABLED: 'true',
  GOTRUE_EXTERNAL_APPLE_CLIENT_ID: 'com.example.web',
  GOTRUE_EXTERNAL_APPLE_REDIRECT_URI: 'https://auth.example.com/callback',
};
const KEY: Env = {
  AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: P256,
  AUTHSVC_EXTERNAL_APPLE_KEY_ID: 'ABC123DEFG',
  AUTHSVC_EXTERNAL_APPLE_TEAM_ID: 'TEAM456789',
};

function ok(extra: Env): Config {
  const r = parseConfig({ ...GOTRUE_ENV, ...extra });
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.config;
}
function errors(extra: Env): string[] {
  const r = parseConfig({ ...GOTRUE_ENV, ...extra });
  if (r.ok) throw new Error('expected errors, got a valid config');
  return r.errors;
}

describe('EXTERNAL_APPLE_PRIVATE_KEY', () => {
  it("takes Apple's .p8 (a PKCS#8 PEM of a P-256 key), also with \\n escapes on one line", () => {
    expect(ok(KEY).external.appleKey).toEqual({ privateKey: P256, keyId: 'ABC123DEFG', teamId: 'TEAM456789' });
    const oneLine = ok({ ...KEY, AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: P256.trim().replaceAll('\n', '\\n') });
    expect(oneLine.external.appleKey.privateKey).toBe(P256);
  });

  it('refuses at start anything but an EC P-256 PKCS#8 key, never quoting it', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    const refused = (value: string) => errors({ AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: value });
    const notP256 = [
      "AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: is not an EC P-256 key in PKCS#8 (Apple's .p8 Sign in with Apple key)",
    ];
    expect(refused(pemOf('pkcs8', 'P-384'))).toEqual(notP256);
    expect(refused(rsa)).toEqual(notP256);
    expect(refused(P256.replace(/\n[A-Za-z0-9+/]{8}/, '\nAAAAAAAA'))).toEqual(notP256);
    expect(refused(pemOf('sec1'))).toEqual([
      "AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: is a SEC 1 EC key: give Apple's .p8 file as it was downloaded (-----BEGIN PRIVATE KEY-----)",
    ]);
    const garbage = refused('not-a-key-marker-42');
    expect(garbage).toEqual([
      "AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: is not a PEM private key (-----BEGIN PRIVATE KEY-----): give the .p8 file's contents, or on Node, Bun and Deno its path",
    ]);
    expect(garbage.join()).not.toContain('marker-42');
  });

  it('enabled Apple needs EXTERNAL_APPLE_SECRET or all three of the key, its id and the team id', () => {
    expect(errors(APPLE)).toEqual([
      'AUTHSVC_EXTERNAL_APPLE_SECRET (or GOTRUE_EXTERNAL_APPLE_SECRET) is required when EXTERNAL_APPLE_ENABLED is true (or set EXTERNAL_APPLE_PRIVATE_KEY, EXTERNAL_APPLE_KEY_ID, EXTERNAL_APPLE_TEAM_ID)',
    ]);
    const { AUTHSVC_EXTERNAL_APPLE_TEAM_ID: _, ...noTeam } = KEY;
    expect(errors({ ...APPLE, ...noTeam })).toEqual([
      'AUTHSVC_EXTERNAL_APPLE_SECRET (or GOTRUE_EXTERNAL_APPLE_SECRET) is required when EXTERNAL_APPLE_ENABLED is true (or set also EXTERNAL_APPLE_TEAM_ID)',
    ]);
    expect(ok({ ...APPLE, ...KEY }).external.providers.apple).toMatchObject({ enabled: true, secret: undefined });
    expect(ok({ ...APPLE, GOTRUE_EXTERNAL_APPLE_SECRET: 'jwt' }).external.providers.apple.secret).toBe('jwt');
  });
});

describe('EXTERNAL_APPLE_PRIVATE_KEY as a file path (Node, Bun and Deno: adapters/key-files.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'authsvc-apple-key-'));
  const file = join(dir, 'AuthKey_ABC123DEFG.p8');
  writeFileSync(file, P256);

  it('a value that is not a PEM is read as a path (relative to the working directory) before parsing', () => {
    expect(readKeyFiles({ GOTRUE_EXTERNAL_APPLE_PRIVATE_KEY: file }).env).toEqual({
      GOTRUE_EXTERNAL_APPLE_PRIVATE_KEY: P256,
    });
    expect(readKeyFiles({ AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: 'AuthKey_ABC123DEFG.p8' }, dir).env).toEqual({
      AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: P256,
    });
    expect(readKeyFiles({ AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: P256 })).toEqual({
      env: { AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: P256 },
      problems: [],
    });
    const { config } = loadConfig({ ...GOTRUE_ENV, ...APPLE, ...KEY, AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: file });
    expect(config.external.appleKey.privateKey).toBe(P256);
  });

  it('a file that cannot be read stops start-up, naming the variable (and the path, never key material)', () => {
    const missing = join(dir, 'missing.p8');
    expect(readKeyFiles({ AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: missing })).toEqual({
      env: {},
      problems: [
        `AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: is not a PEM, and the key file ${missing} cannot be read (ENOENT)`,
      ],
    });
    // Key material pasted without its PEM lines is not echoed as a "path".
    const body = P256.split('\n')[1]!;
    expect(readKeyFiles({ AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: body }, dir).problems).toEqual([
      'AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: is not a PEM, and the key file cannot be read (ENOENT)',
    ]);
    let thrown: unknown;
    try {
      loadConfig({ ...GOTRUE_ENV, ...APPLE, ...KEY, AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: missing });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).problems[0]).toMatch(
      /^AUTHSVC_EXTERNAL_APPLE_PRIVATE_KEY: is not a PEM, and the key file /,
    );
  });
});

describe('EXTERNAL_<PROVIDER>_STORE_TOKENS', () => {
  const KEYS: Env = {
    AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: 'k1',
    AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: 'Z7-AyPyChGNcQsX16cPBV-pPBo4q-zckDxkq1VZjATo',
    AUTHSVC_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: 'k1:Z7-AyPyChGNcQsX16cPBV-pPBo4q-zckDxkq1VZjATo',
  };

  it('is off by default for every provider', () => {
    expect(Object.values(ok({}).external.providers).every((p) => p.storeTokens === false)).toBe(true);
  });

  it('refuses to start without encryption at rest: off, or on without a key', () => {
    const refusal =
      'AUTHSVC_EXTERNAL_GOOGLE_STORE_TOKENS: needs SECURITY_DB_ENCRYPTION_ENCRYPT=true with an encryption key: refresh tokens are stored only encrypted';
    expect(errors({ AUTHSVC_EXTERNAL_GOOGLE_STORE_TOKENS: 'true' })).toEqual([refusal]);
    // Decryption keys alone (reading old values) are not enough.
    expect(
      errors({
        AUTHSVC_EXTERNAL_GOOGLE_STORE_TOKENS: 'true',
        ...KEYS,
        AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPT: 'false',
      }),
    ).toEqual([refusal]);
    expect(
      errors({ AUTHSVC_EXTERNAL_GOOGLE_STORE_TOKENS: 'true', AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true' }),
    ).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID .*is required when SECURITY_DB_ENCRYPTION_ENCRYPT is true$/,
        ),
        expect.stringMatching(/^AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY .*must be 256 bits/),
      ]),
    );
    const on = ok({
      AUTHSVC_EXTERNAL_GOOGLE_STORE_TOKENS: 'true',
      ...KEYS,
      AUTHSVC_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true',
    });
    expect(on.external.providers.google.storeTokens).toBe(true);
  });

  it("twitter's (OAuth 1.0a, no refresh token) is accepted with a warning and needs no key", () => {
    const r = parseConfig({ ...GOTRUE_ENV, GOTRUE_EXTERNAL_TWITTER_STORE_TOKENS: 'true' });
    expect(r.ok).toBe(true);
    expect(r.ok && r.warnings.filter((w) => w.startsWith('GOTRUE_EXTERNAL_TWITTER_STORE_TOKENS'))).toHaveLength(1);
  });
});
