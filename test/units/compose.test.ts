// The compose files (compose.yaml, deploy/supabase-auth.yml): every variable the service sets is
// one authsvc reads, the configuration they make parses (with the values of Supabase's example
// .env), and the image, port and health check are the Dockerfile's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { parseConfig, unknownVariables } from '../../src/config/config.ts';
import { allowsBare } from '../../src/config/names.ts';
import { REPO_ROOT } from '../helpers/server.ts';

type Service = {
  image?: string;
  build?: string;
  environment: Record<string, string | number | boolean>;
  healthcheck: { test: string[] };
  ports?: string[];
  read_only?: boolean;
  tmpfs?: string[];
  depends_on?: Record<string, { condition: string }>;
  container_name?: string;
};

const compose = (file: string) =>
  parse(readFileSync(join(REPO_ROOT, file), 'utf8')) as { services: Record<string, Service> };
const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');

/** Supabase's example .env (docker/.env.example), for the variables the auth service uses. */
const SUPABASE_ENV: Record<string, string> = {
  API_EXTERNAL_URL: 'http://localhost:8000',
  POSTGRES_PASSWORD: 'your-super-secret-and-long-postgres-password',
  POSTGRES_HOST: 'db',
  POSTGRES_PORT: '5432',
  POSTGRES_DB: 'postgres',
  SITE_URL: 'http://localhost:3000',
  ADDITIONAL_REDIRECT_URLS: '',
  DISABLE_SIGNUP: 'false',
  JWT_EXPIRY: '3600',
  JWT_SECRET: 'your-super-secret-jwt-token-with-at-least-32-characters-long',
  ENABLE_EMAIL_SIGNUP: 'true',
  ENABLE_ANONYMOUS_USERS: 'false',
  ENABLE_EMAIL_AUTOCONFIRM: 'false',
  SMTP_ADMIN_EMAIL: 'admin@example.com',
  SMTP_HOST: 'supabase-mail',
  SMTP_PORT: '2500',
  SMTP_USER: 'fake_mail_user',
  SMTP_PASS: 'fake_mail_password',
  SMTP_SENDER_NAME: 'fake_sender',
  MAILER_URLPATHS_INVITE: '/auth/v1/verify',
  MAILER_URLPATHS_CONFIRMATION: '/auth/v1/verify',
  MAILER_URLPATHS_RECOVERY: '/auth/v1/verify',
  MAILER_URLPATHS_EMAIL_CHANGE: '/auth/v1/verify',
  ENABLE_PHONE_SIGNUP: 'true',
  ENABLE_PHONE_AUTOCONFIRM: 'true',
};

/** Compose's interpolation: ${VAR} and ${VAR:-default}. */
function interpolate(env: Service['environment'], vars: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [
      k,
      String(v).replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => {
        const value = vars[name];
        if (value !== undefined && value !== '') return value;
        if (fallback !== undefined) return fallback;
        if (value === undefined) throw new Error(`\${${name}} has no value in the example .env`);
        return '';
      }),
    ]),
  );
}

function unread(env: Record<string, string>): string[] {
  const unknown = unknownVariables(env);
  const bare = Object.keys(env).filter((k) => !/^(AUTHSVC|GOTRUE)_/.test(k) && !allowsBare(k));
  return [...unknown, ...bare];
}

/** The Dockerfile's HEALTHCHECK as compose writes it: ["CMD", program, args...]. */
const HEALTHCHECK = [
  'CMD',
  ...(JSON.parse(/^HEALTHCHECK .*CMD (\[.*\])$/m.exec(dockerfile.replace(/\\\n\s*/g, ''))![1]!) as string[]),
];

describe("deploy/supabase-auth.yml: the auth service of Supabase's self-hosted stack", () => {
  const auth = compose('deploy/supabase-auth.yml').services.auth!;

  test('every variable is one authsvc reads, and with the example .env the configuration parses', () => {
    const env = interpolate(auth.environment, SUPABASE_ENV);
    expect(unread(env)).toEqual([]);
    const parsed = parseConfig(env);
    if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
    const c = parsed.config;
    expect(c.api.port).toBe(9999);
    expect(c.api.host).toBe('0.0.0.0');
    expect(c.db.connection).toMatchObject({
      kind: 'postgres',
      url: 'postgres://supabase_auth_admin:your-super-secret-and-long-postgres-password@db:5432/postgres',
    });
    expect(c.jwt).toMatchObject({ exp: 3600, aud: 'authenticated', adminRoles: ['service_role'] });
    expect(c.mailer.urlPaths).toEqual({
      invite: '/auth/v1/verify',
      confirmation: '/auth/v1/verify',
      recovery: '/auth/v1/verify',
      emailChange: '/auth/v1/verify',
    });
    expect(c.smtp).toMatchObject({ host: 'supabase-mail', port: 2500, user: 'fake_mail_user' });
  });

  test("the same service name, port and container name as Supabase's; the image's health check", () => {
    expect(auth.image).toBe('authsvc:latest');
    expect(auth.container_name).toBe('supabase-auth');
    expect(auth.environment.GOTRUE_API_PORT).toBe(9999);
    expect(dockerfile).toMatch(/^EXPOSE 9999$/m);
    expect(auth.healthcheck.test).toEqual(HEALTHCHECK);
    expect(auth).toMatchObject({ read_only: true, tmpfs: ['/tmp'] });
  });
});

describe('compose.yaml: authsvc and a Postgres server', () => {
  const { services } = compose('compose.yaml');
  const authsvc = services.authsvc!;

  test('every variable is one authsvc reads, and with its defaults the configuration parses', () => {
    const env = interpolate(authsvc.environment, {});
    expect(unread(env)).toEqual([]);
    const parsed = parseConfig(env);
    if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
    expect(parsed.config.api.port).toBe(9999);
    expect(parsed.config.db.connection).toMatchObject({
      kind: 'postgres',
      url: 'postgres://postgres:change-me@postgres:5432/postgres',
    });
  });

  test("built from this directory, port 9999 published, the image's health check, started once Postgres is healthy", () => {
    expect(authsvc).toMatchObject({ build: '.', ports: ['9999:9999'], read_only: true, tmpfs: ['/tmp'] });
    expect(authsvc.healthcheck.test).toEqual(HEALTHCHECK);
    expect(authsvc.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(services.postgres!.healthcheck.test).toEqual(['CMD', 'pg_isready', '-U', 'postgres']);
  });
});
