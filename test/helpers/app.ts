// Builds the real app over a real database (PGlite, or Postgres with TEST_DATABASE_URL);
// only the mailer is a recording fake.
import { createApp } from '../../src/app.ts';
import { createNodeHasher } from '../../src/adapters/node-hasher.ts';
import { loadMigrations } from '../../src/adapters/migrations-fs.ts';
import type { Database } from '../../src/db/database.ts';
import { type Deps, cryptoRandomBytes } from '../../src/deps.ts';
import { parseConfig } from '../../src/config/config.ts';
import { loadKeySet, signJwt } from '../../src/crypto/jwt.ts';
import { createLogger } from '../../src/telemetry/logger.ts';
import type { MailRequest, Mailer } from '../../src/mail/mailer.ts';
import { createSmsProvider } from '../../src/sms/create.ts';

export const TEST_JWT_SECRET = 'test-secret-with-at-least-32-characters!!';

export const BASE_ENV: Record<string, string> = {
  AUTHSVC_SITE_URL: 'http://localhost:3000',
  AUTHSVC_API_EXTERNAL_URL: 'http://localhost:9999',
  AUTHSVC_JWT_SECRET: TEST_JWT_SECRET,
  AUTHSVC_DB_DRIVER: 'postgres',
  DATABASE_URL: 'memory://',
  AUTHSVC_LOG_LEVEL: 'error',
  // Test files share a database; the hourly email limit is exercised in app/email-limit.test.ts.
  AUTHSVC_RATE_LIMIT_EMAIL_SENT: '100000',
};

export interface TestApp {
  app: ReturnType<typeof createApp>;
  deps: Deps;
  mails: MailRequest[];
  logs: string[];
  /**
   * The cookies `request` keeps and sends back, as one browser would (the OAuth state binding).
   * Clear it, or call `app.request` directly, to act as another browser.
   */
  cookies: Map<string, string>;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
}

/** Keeps what Set-Cookie says: a value, or its removal (Max-Age=0 or an empty value). */
function keepCookies(jar: Map<string, string>, res: Response): void {
  for (const line of res.headers.getSetCookie()) {
    const [pair, ...attrs] = line.split(';');
    const eq = pair!.indexOf('=');
    const name = pair!.slice(0, eq).trim();
    const value = pair!.slice(eq + 1).trim();
    const gone = attrs.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a)) || value === '';
    if (gone) jar.delete(name);
    else jar.set(name, value);
  }
}

/**
 * bcrypt at cost 4 (the minimum), not GoTrue's 10, for every password the suite hashes. A test of
 * what production stores passes `{ hasher: createNodeHasher() }` (admin-users, signup, invite,
 * admin-generate-link: the stored hash's cost); test/vectors/password.test.ts holds the hasher to
 * its vectors. One hasher for every app: its concurrency limit is per process.
 */
const TEST_HASHER = createNodeHasher({ cost: 4 });
const MIGRATION_VERSIONS = loadMigrations().map((m) => m.version);

export async function buildTestApp(
  db: Database,
  env: Record<string, string> = {},
  over: Partial<Deps> = {},
): Promise<TestApp> {
  const parsed = parseConfig({ ...BASE_ENV, ...env }, { local: true });
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  const config = { ...parsed.config, db: { ...parsed.config.db, namespace: db.namespace } };
  const mails: MailRequest[] = [];
  const logs: string[] = [];
  const mailer: Mailer = {
    async send(m) {
      mails.push(m);
    },
  };
  const deps: Deps = {
    config,
    db,
    mailer,
    keys: await loadKeySet(config.jwt),
    hasher: TEST_HASHER,
    sms: createSmsProvider(config.sms, globalThis.fetch.bind(globalThis)),
    fetch: globalThis.fetch.bind(globalThis),
    now: () => new Date(),
    randomBytes: cryptoRandomBytes,
    logger: createLogger(config.log.level, (l) => logs.push(l)),
    version: '0.0.0-test',
    samlXml: () => import('../../src/adapters/saml-xml.ts').then((m) => m.samlXml),
    migrations: MIGRATION_VERSIONS,
    ...over,
  };
  const app = createApp(deps);
  const cookies = new Map<string, string>();
  return {
    app,
    deps,
    mails,
    logs,
    cookies,
    async request(method, path, body, headers = {}) {
      const sent = { ...headers };
      if (cookies.size > 0 && !Object.keys(sent).some((k) => k.toLowerCase() === 'cookie')) {
        sent.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      }
      const init: RequestInit = { method, headers: sent };
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
      }
      const res = await app.request(path, init);
      keepCookies(cookies, res);
      return res;
    },
  };
}

let counter = 0;
export function uniqueEmail(prefix = 'user'): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}@example.com`;
}

/** Signs a user up under autoconfirm and returns the session body. */
export async function signUpConfirmed(
  t: TestApp,
  email = uniqueEmail(),
  password = 'correct-horse-1',
): Promise<{ email: string; password: string; session: Record<string, any> }> {
  const res = await t.request('POST', '/signup', { email, password });
  if (res.status !== 200) throw new Error(`signup failed: ${res.status} ${await res.text()}`);
  return { email, password, session: (await res.json()) as Record<string, any> };
}

/** `Authorization: Bearer <token>`. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A password sign-in that must succeed; the session body. */
export async function signInWithPassword(app: TestApp, email: string, password: string): Promise<Record<string, any>> {
  const res = await app.request('POST', '/token?grant_type=password', { email, password });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, any>;
}

/** Headers of an admin (service_role) request to `app`, valid for ten minutes. */
export async function serviceRoleHeaders(app: TestApp): Promise<Record<string, string>> {
  return bearer(await signJwt(app.deps.keys, { role: 'service_role', exp: Math.floor(Date.now() / 1000) + 600 }));
}
