// Email templates through the whole request: a template that fails while rendering is GoTrue's
// 500 "Error sending … email" and leaves nothing behind; one that cannot be fetched falls back to
// the built-in template and the request succeeds.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { createMailer, type MailMessage } from '../../src/mail/transport.ts';
import { createTemplateRenderer } from '../../src/mail/render.ts';
import { createLogger } from '../../src/telemetry/logger.ts';
import { buildTestApp, serviceRoleHeaders, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

let db: Database;
let server: Server;
let base: string;
const bodies = new Map<string, string>();

beforeAll(async () => {
  db = await openTestDb();
  server = createServer((req, res) => {
    const body = bodies.get(req.url ?? '');
    if (body === undefined) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': 'text/html' }).end(body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((done) => server.close(done));
  await db?.close();
});

async function appWithTemplates(env: Record<string, string>) {
  const sent: MailMessage[] = [];
  const t = await buildTestApp(db, env);
  const logger = createLogger('error', () => undefined);
  t.deps.mailer = createMailer({
    config: t.deps.config,
    transport: {
      async deliver(m) {
        sent.push(m);
      },
    },
    renderer: createTemplateRenderer({ fetch: globalThis.fetch.bind(globalThis), logger }),
    logger,
  });
  return { t, sent };
}

describe('signup with MAILER_TEMPLATES_CONFIRMATION', () => {
  test('a template that fails while rendering: 500 "Error sending confirmation email", no user, nothing sent', async () => {
    bodies.set('/broken.html', '<p>{{ if eq .Data.age 30 }}thirty{{ end }}</p>');
    const { t, sent } = await appWithTemplates({ GOTRUE_MAILER_TEMPLATES_CONFIRMATION: `${base}/broken.html` });
    const email = uniqueEmail('render-error');
    const res = await t.request('POST', '/signup', { email, password: 'secret-pw-1', data: { age: 30 } });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      code: 500,
      error_code: 'unexpected_failure',
      msg: 'Error sending confirmation email',
      error_id: expect.any(String),
    });
    expect(sent).toEqual([]);
    const listed = await t.request('GET', '/admin/users?per_page=1000', undefined, await serviceRoleHeaders(t));
    expect(((await listed.json()) as { users: { email: string }[] }).users.map((u) => u.email)).not.toContain(email);
    // The same template renders for a user whose metadata does not trip it.
    const other = uniqueEmail('render-ok');
    expect((await t.request('POST', '/signup', { email: other, password: 'secret-pw-1' })).status).toBe(200);
    expect(sent.map((m) => [m.to, m.html])).toEqual([[other, '<p></p>']]);
  });

  test('a template URL that answers 404: the built-in confirmation mail goes out', async () => {
    const { t, sent } = await appWithTemplates({
      GOTRUE_MAILER_TEMPLATES_CONFIRMATION: `${base}/missing.html`,
      GOTRUE_MAILER_SUBJECTS_CONFIRMATION: 'Bienvenue {{ .Data.name }}',
    });
    const email = uniqueEmail('fallback');
    const res = await t.request('POST', '/signup', { email, password: 'secret-pw-1', data: { name: 'Zoë' } });
    expect(res.status).toBe(200);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.subject).toBe('Confirm Your Signup');
    expect(sent[0]!.html).toContain('<h2>Confirm your email</h2>');
    expect(sent[0]!.html).not.toContain('{{');
  });
});
