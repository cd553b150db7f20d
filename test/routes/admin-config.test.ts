// GET /admin/config (routes/admin-config.ts): every setting by name, secrets masked; admin only.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isSecretSetting } from '../../src/config/effective.ts';
import { FIELD_NAMES } from '../../src/config/fields.ts';
import { parseConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { BASE_ENV, buildTestApp, serviceRoleHeaders, signUpConfirmed, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

let db: Database;
let t: TestApp;
let admin: Record<string, string>;
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
  admin = await serviceRoleHeaders(t);
});
afterAll(async () => {
  await db?.close();
});

describe('GET /admin/config', () => {
  const SECRETS: Record<string, string> = {
    AUTHSVC_SMTP_PASS: 'smtp-pass-marker-1',
    AUTHSVC_RESEND_API_KEY: 're_marker_2',
    AUTHSVC_EXTERNAL_GITHUB_ENABLED: 'true',
    AUTHSVC_EXTERNAL_GITHUB_CLIENT_ID: 'gh-client',
    AUTHSVC_EXTERNAL_GITHUB_REDIRECT_URI: 'http://localhost:9999/callback',
    AUTHSVC_EXTERNAL_GITHUB_SECRET: 'gh-secret-marker-3',
    AUTHSVC_SECURITY_CAPTCHA_SECRET: 'captcha-marker-4',
    AUTHSVC_SMS_TWILIO_AUTH_TOKEN: 'twilio-marker-5',
    AUTHSVC_OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer otlp-marker-6',
    AUTHSVC_SMS_TEST_OTP: '15550001111:123987',
    AUTHSVC_HOOK_SEND_EMAIL_ENABLED: 'true',
    AUTHSVC_HOOK_SEND_EMAIL_URI: 'https://hooks.example.com/send?apikey=hook-query-marker-9&v=2',
    AUTHSVC_HOOK_SEND_EMAIL_SECRETS: 'v1,whsec_c2VjcmV0LW1hcmtlci03LWhvb2stMDEyMzQ1Njc4OWFiY2RlZg==',
    AUTHSVC_OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:url-pass-marker-8@otel.example.com',
  };

  test("admin only: 401 without a token, 403 with a user's", async () => {
    expect((await t.request('GET', '/admin/config')).status).toBe(401);
    const u = await signUpConfirmed(t);
    expect(
      (await t.request('GET', '/admin/config', undefined, { authorization: `Bearer ${u.session.access_token}` }))
        .status,
    ).toBe(403);
  });

  test('every setting by name; secrets masked, URL passwords removed; other values as parsed', async () => {
    const app = await buildTestApp(db, SECRETS);
    const res = await app.request('GET', '/admin/config', undefined, admin);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const text = await res.text();
    for (const marker of [
      'smtp-pass-marker-1',
      're_marker_2',
      'gh-secret-marker-3',
      'captcha-marker-4',
      'twilio-marker-5',
      'otlp-marker-6',
      '123987',
      'c2VjcmV0LW1hcmtlci03LWhvb2st',
      'url-pass-marker-8',
      'hook-query-marker-9',
      BASE_ENV.AUTHSVC_JWT_SECRET!,
    ]) {
      expect(text).not.toContain(marker);
    }
    const body = JSON.parse(text) as {
      started_at: string;
      variables: { name: string; value: unknown; secret: boolean; set: boolean }[];
    };
    const v = Object.fromEntries(body.variables.map((x) => [x.name, x]));
    expect(body.variables.map((x) => x.name)).toEqual(FIELD_NAMES);
    expect(v.JWT_SECRET).toEqual({ name: 'JWT_SECRET', value: '********', secret: true, set: true });
    expect(v.SMTP_PASS).toMatchObject({ value: '********', secret: true });
    expect(v.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY).toEqual({
      name: 'SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY',
      value: null,
      secret: true,
      set: false,
    });
    expect(v.OTEL_EXPORTER_OTLP_ENDPOINT!.value).toBe('https://collector:********@otel.example.com');
    expect(v.SITE_URL).toEqual({ name: 'SITE_URL', value: 'http://localhost:3000', secret: false, set: true });
    expect(v.EXTERNAL_GITHUB_CLIENT_ID!.value).toBe('gh-client');
    expect(v.HOOK_SEND_EMAIL_URI!.value).toBe('https://hooks.example.com/send?apikey=********&v=********');
    expect(v.CONSOLE_ENABLED).toMatchObject({ value: null, set: false });
    expect(Date.parse(body.started_at)).toBeLessThanOrEqual(Date.now());
  });

  test('a database URL is shown without its password', async () => {
    const parsed = parseConfig({
      ...BASE_ENV,
      DATABASE_URL: 'postgres://authsvc:db-pass-marker@db.example.com:5432/auth',
      AUTHSVC_SMTP_HOST: 'smtp.example.com',
      AUTHSVC_SMTP_ADMIN_EMAIL: 'a@example.com',
    });
    if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
    const { maskedSettings } = await import('../../src/config/effective.ts');
    const shown = maskedSettings(parsed.config).find((s) => s.name === 'DATABASE_URL');
    expect(shown?.value).toBe('postgres://authsvc:********@db.example.com:5432/auth');
  });

  test('every setting named like a credential is classed secret', () => {
    const NOT_SECRET = new Set([
      'JWT_KEY_ID',
      'SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID',
      'SECURITY_CAPTCHA_PROVIDER',
      'EXTERNAL_APPLE_KEY_ID',
    ]);
    const credentialLike = FIELD_NAMES.filter(
      (n) =>
        /SECRET|PASS(?!KEY|WORD_)|_KEYS?(_|$)|TOKEN|HEADERS$|_OTP$/.test(n) &&
        !/^RATE_LIMIT_|CORS_ALLOWED_HEADERS|TOKEN_(ROTATION|REUSE)|_ENABLED$|_URI$|_STORE_TOKENS$/.test(n),
    );
    expect(credentialLike.length).toBeGreaterThan(20);
    for (const name of credentialLike)
      expect({ name, secret: isSecretSetting(name) }).toEqual({ name, secret: !NOT_SECRET.has(name) });
  });
});
