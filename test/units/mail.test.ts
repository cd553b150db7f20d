// Email delivery through real protocols: an SMTP server (smtp-server) and HTTP stand-ins for
// template hosting and the Resend API run inside the test; messages are parsed as a mail client would.
import { createHmac } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import PostalMime, { type Email } from 'postal-mime';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { afterAll, describe, expect, test } from 'vitest';
import { buildNodeDeps } from '../../src/adapters/node.ts';
import { createSmtpTransport, type SmtpTransportOptions } from '../../src/adapters/smtp-transport.ts';
import type { Database } from '../../src/db/database.ts';
import { parseConfig } from '../../src/config/config.ts';
import type { Config } from '../../src/config/types.ts';
import { type Logger, createLogger } from '../../src/telemetry/logger.ts';
import { templateFetch, templateOptions } from '../../src/adapters/template-fetch.ts';
import { parseLocalizedMailName } from '../../src/config/mail-locales.ts';
import { htmlToText } from '../../src/mail/html-to-text.ts';
import { createTemplateRenderer, TemplateRenderError } from '../../src/mail/render.ts';
import { type MailTransport, createMailer, formatAddress } from '../../src/mail/transport.ts';
import type { MailRequest } from '../../src/mail/mailer.ts';
import { createResendTransport } from '../../src/mail/resend.ts';
import { BASE_ENV } from '../helpers/app.ts';
import { selfSignedCert } from '../helpers/tls-cert.ts';

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const TLS = selfSignedCert();

// ---------------------------------------------------------------- an SMTP server

interface Received {
  raw: Buffer;
  secure: boolean;
  user: unknown;
  envelopeTo: string[];
  parsed: Email;
}
interface SmtpServerHandle {
  port: number;
  received: Received[];
  auths: { method: string; username?: string }[];
  close(): Promise<void>;
}

async function startSmtp(options: SMTPServerOptions, port = 0): Promise<SmtpServerHandle> {
  const received: Received[] = [];
  const auths: { method: string; username?: string }[] = [];
  const server = new SMTPServer({
    logger: false,
    // Pooled client connections stay open; do not wait the default 30 s for them at teardown.
    closeTimeout: 100,
    ...options,
    onAuth(auth, _session, cb) {
      auths.push({ method: auth.method, username: auth.username });
      if (auth.username === 'mailer' && auth.password === 's3cret pass') cb(null, { user: auth.username });
      else cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session: SMTPServerSession, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        PostalMime.parse(raw).then((parsed) => {
          received.push({
            raw,
            secure: session.secure,
            user: session.user,
            envelopeTo: session.envelope.rcptTo.map((r) => r.address),
            parsed,
          });
          cb();
        }, cb);
      });
    },
  });
  // Client-side failures provoked on purpose (bad TLS, bad auth) surface here too; the tests assert them on the client.
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const handle = {
    port: (server.server.address() as AddressInfo).port,
    received,
    auths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  cleanups.push(handle.close);
  return handle;
}

function smtp(opts: SmtpTransportOptions): MailTransport {
  const t = createSmtpTransport(opts);
  cleanups.push(() => t.close());
  return t;
}

// ---------------------------------------------------------------- HTTP stand-ins

interface HttpHandle {
  url: string;
  hits: string[];
  close(): Promise<void>;
}

async function startHttp(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<HttpHandle> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      hits.push(`${req.method} ${req.url}`);
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const handle = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  cleanups.push(handle.close);
  return handle;
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const h = await startHttp(() => undefined);
  await h.close();
  return Number(new URL(h.url).port);
}

// ---------------------------------------------------------------- fixtures

function config(env: Record<string, string> = {}): Config {
  const parsed = parseConfig(
    {
      ...BASE_ENV,
      GOTRUE_SMTP_ADMIN_EMAIL: 'admin@auth.example.org',
      GOTRUE_SMTP_SENDER_NAME: 'Sender Name',
      ...env,
    },
    { local: true },
  );
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  return parsed.config;
}

const TOKEN = '492817';
const TOKEN_HASH = 'f3b2c1d0e9a8f3b2c1d0e9a8f3b2c1d0e9a8f3b2c1d0e9a8f3b2c1d0';
const LINK = `http://localhost:9999/verify?token=${TOKEN_HASH}&type=signup&redirect_to=http://localhost:3000/welcome`;

/** The variables a renderer is called with directly (an invite or magic link to a@example.com). */
const RENDER_VARS = {
  siteUrl: 'http://localhost:3000',
  email: 'a@example.com',
  confirmationUrl: LINK,
  token: TOKEN,
  tokenHash: TOKEN_HASH,
  redirectTo: '',
  data: {},
};

function mail(over: Partial<MailRequest> = {}): MailRequest {
  return {
    kind: 'confirmation',
    to: 'alice.private@example.com',
    token: TOKEN,
    tokenHash: TOKEN_HASH,
    confirmationUrl: LINK,
    siteUrl: 'http://localhost:3000',
    redirectTo: 'http://localhost:3000/welcome',
    userMetadata: { name: 'Alice <3', plan: 'pro' },
    ...over,
  };
}

function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger('debug', (l) => lines.push(l)), lines };
}

function build(
  transport: MailTransport,
  env: Record<string, string> = {},
  rendererOpts: { ttlMs?: number; timeoutMs?: number; now?: () => number } = {},
) {
  const { logger, lines } = recordingLogger();
  const renderer = createTemplateRenderer({ fetch: globalThis.fetch.bind(globalThis), logger, ...rendererOpts });
  return { mailer: createMailer({ config: config(env), transport, renderer, logger }), lines };
}

function expectNoSecretsLogged(lines: string[]) {
  const all = lines.join('\n');
  expect(all).not.toContain(TOKEN);
  expect(all).not.toContain(TOKEN_HASH);
  expect(all).not.toContain('localhost:9999/verify');
  expect(all).not.toContain('alice.private');
}

// ---------------------------------------------------------------- SMTP

describe('SMTP transport', () => {
  test('delivers From with the sender name, To, subject, an escaped HTML link and a text part with link and code', async () => {
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    const { mailer, lines } = build(smtp({ host: '127.0.0.1', port: srv.port }));
    await mailer.send(mail());

    expect(srv.received).toHaveLength(1);
    const [msg] = srv.received;
    expect(msg!.envelopeTo).toEqual(['alice.private@example.com']);
    expect(msg!.parsed.from).toMatchObject({ name: 'Sender Name', address: 'admin@auth.example.org' });
    expect(msg!.raw.toString('utf8')).toMatch(/^From: "?Sender Name"? <admin@auth\.example\.org>/m);
    expect(msg!.parsed.to).toEqual([expect.objectContaining({ address: 'alice.private@example.com' })]);
    expect(msg!.parsed.subject).toBe(config().mailer.subjects.confirmation);
    expect(msg!.parsed.html).toContain(`href="${LINK.replaceAll('&', '&amp;')}"`);
    expect(msg!.parsed.html).not.toContain(LINK);
    expect(msg!.parsed.html).toContain(TOKEN);
    expect(msg!.parsed.text).toContain(LINK);
    expect(msg!.parsed.text).toContain(TOKEN);
    expect(msg!.parsed.text).not.toContain('<');
    // No SMTP_USER: the client must not try to authenticate.
    expect(srv.auths).toEqual([]);
    expect(msg!.secure).toBe(false);

    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({ level: 'info', mail_kind: 'confirmation', to_domain: 'example.com' }),
    );
    expectNoSecretsLogged(lines);
  });

  test('subjects take the kind’s setting and Go-template variables, unescaped', async () => {
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    const { mailer } = build(smtp({ host: '127.0.0.1', port: srv.port }), {
      GOTRUE_MAILER_SUBJECTS_MAGIC_LINK: 'Sign in to {{ .SiteURL }}, {{.Data.name}}',
      GOTRUE_MAILER_SUBJECTS_REAUTHENTICATION: '{{ .Token }} is your verification code',
    });
    await mailer.send(mail({ kind: 'magic_link' }));
    await mailer.send(mail({ kind: 'reauthentication', confirmationUrl: '' }));
    expect(srv.received.map((r) => r.parsed.subject)).toEqual([
      'Sign in to http://localhost:3000, Alice <3',
      `${TOKEN} is your verification code`,
    ]);
    // The built-in reauthentication email is a code, not a link.
    expect(srv.received[1]!.parsed.text).toContain(TOKEN);
    expect(srv.received[1]!.parsed.html).not.toContain('href');
  });

  test.each(['PLAIN', 'LOGIN'] as const)('authenticates with AUTH %s when SMTP_USER is set', async (method) => {
    const srv = await startSmtp({ authMethods: [method], allowInsecureAuth: true, disabledCommands: ['STARTTLS'] });
    const { mailer } = build(smtp({ host: '127.0.0.1', port: srv.port, user: 'mailer', pass: 's3cret pass' }));
    await mailer.send(mail());
    expect(srv.auths).toEqual([{ method, username: 'mailer' }]);
    expect(srv.received).toHaveLength(1);
    expect(srv.received[0]!.user).toBe('mailer');
  });

  test('wrong credentials fail the send with GoTrue’s message and the cause attached', async () => {
    const srv = await startSmtp({
      authMethods: ['PLAIN', 'LOGIN'],
      allowInsecureAuth: true,
      disabledCommands: ['STARTTLS'],
    });
    const { mailer, lines } = build(smtp({ host: '127.0.0.1', port: srv.port, user: 'mailer', pass: 'wrong' }));
    const err = await mailer.send(mail({ kind: 'magic_link' })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('Error sending magic link email');
    expect(String(((err as Error).cause as Error).message)).toMatch(/535|Invalid/);
    expect(srv.received).toHaveLength(0);
    expect(lines.some((l) => l.includes('"level":"error"'))).toBe(true);
    expectNoSecretsLogged(lines);
  });

  test('a server that requires AUTH rejects a transport without SMTP_USER', async () => {
    const srv = await startSmtp({ authMethods: ['PLAIN'], allowInsecureAuth: true, disabledCommands: ['STARTTLS'] });
    const { mailer } = build(smtp({ host: '127.0.0.1', port: srv.port }));
    await expect(mailer.send(mail())).rejects.toThrow('Error sending confirmation email');
    expect(srv.received).toHaveLength(0);
  });

  test('upgrades with STARTTLS when offered, verifying the certificate', async () => {
    const srv = await startSmtp({ authOptional: true, key: TLS.key, cert: TLS.cert });
    const { mailer } = build(
      smtp({ host: '127.0.0.1', port: srv.port, user: 'mailer', pass: 's3cret pass', tls: { ca: TLS.cert } }),
    );
    await mailer.send(mail());
    expect(srv.received).toHaveLength(1);
    expect(srv.received[0]!.secure).toBe(true);
    // Credentials only ever crossed the encrypted channel.
    expect(srv.auths).toEqual([{ method: expect.any(String), username: 'mailer' }]);

    // Without the test CA the self-signed certificate is refused: verification is on.
    const strict = build(smtp({ host: '127.0.0.1', port: srv.port }));
    await expect(strict.mailer.send(mail())).rejects.toThrow('Error sending confirmation email');
    expect(srv.received).toHaveLength(1);
  });

  test('uses implicit TLS when asked (secure option)', async () => {
    const srv = await startSmtp({ secure: true, authOptional: true, key: TLS.key, cert: TLS.cert });
    const { mailer } = build(smtp({ host: '127.0.0.1', port: srv.port, secure: true, tls: { ca: TLS.cert } }));
    await mailer.send(mail());
    expect(srv.received).toHaveLength(1);
    expect(srv.received[0]!.secure).toBe(true);
    // The flag really means TLS from the first byte: a plaintext server's greeting breaks the handshake.
    const plainSrv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    const tlsClient = build(smtp({ host: '127.0.0.1', port: plainSrv.port, secure: true, tls: { ca: TLS.cert } }));
    await expect(tlsClient.mailer.send(mail())).rejects.toThrow('Error sending confirmation email');
    expect(plainSrv.received).toHaveLength(0);
  });

  test('port 465 means implicit TLS', async (ctx) => {
    let srv: SmtpServerHandle;
    try {
      srv = await startSmtp({ secure: true, authOptional: true, key: TLS.key, cert: TLS.cert }, 465);
    } catch {
      ctx.skip(); // not root, or the port is taken
      return;
    }
    const { mailer } = build(smtp({ host: '127.0.0.1', port: 465, tls: { ca: TLS.cert } }));
    await mailer.send(mail());
    expect(srv.received[0]!.secure).toBe(true);
  });
});

// ---------------------------------------------------------------- templates

describe('templates', () => {
  const TEMPLATE = `<html><head><title>t</title><style>p{}</style></head><body>
<h1>Hello {{ .Data.name }}</h1>
<p>Welcome to {{.SiteURL}}. Your address: {{ .Email }}, new: {{ .NewEmail }}.</p>
<p><a href="{{ .ConfirmationURL }}">Confirm</a></p>
<p>Code: {{ .Token }} / hash {{ .TokenHash }} / back to {{ .RedirectTo }} / plan {{ .Data.plan }}{{ .Data.missing }}</p>
</body></html>`;

  test('a fetched template gets every variable, HTML-escaped, and a tag-stripped text part; fetched once per TTL', async () => {
    const http = await startHttp((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(TEMPLATE));
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    let clock = 1_000_000;
    const { mailer } = build(
      smtp({ host: '127.0.0.1', port: srv.port }),
      {
        GOTRUE_MAILER_TEMPLATES_CONFIRMATION: `${http.url}/confirm.html`,
        GOTRUE_MAILER_TEMPLATES_EMAIL_CHANGE: `${http.url}/change.html`,
      },
      { ttlMs: 60_000, now: () => clock },
    );

    await Promise.all([mailer.send(mail()), mailer.send(mail())]);
    await mailer.send(mail());
    expect(http.hits).toEqual(['GET /confirm.html']);

    const { html, text } = srv.received[0]!.parsed;
    expect(html).toContain('<h1>Hello Alice &lt;3</h1>');
    expect(html).toContain(`<a href="${LINK.replaceAll('&', '&amp;')}">Confirm</a>`);
    expect(html).toContain('Welcome to http://localhost:3000. Your address: alice.private@example.com, new: .');
    expect(html).toContain(
      `Code: ${TOKEN} / hash ${TOKEN_HASH} / back to http://localhost:3000/welcome / plan pro</p>`,
    );
    expect(html).not.toContain('{{');
    expect(text).toContain('Hello Alice <3');
    expect(text).toContain(`Confirm: ${LINK}`);
    expect(text).toContain(`Code: ${TOKEN}`);
    expect(text).not.toMatch(/<\/?(p|a|h1|style|title)\b|p\{\}/);

    // A kind with its own template fetches its own URL; NewEmail is filled for email changes.
    await mailer.send(mail({ kind: 'email_change', newEmail: 'new@example.com' }));
    expect(http.hits).toEqual(['GET /confirm.html', 'GET /change.html']);
    expect(srv.received[3]!.parsed.html).toContain('new: new@example.com.');

    clock += 61_000; // past the TTL: fetched again
    await mailer.send(mail());
    expect(http.hits.filter((h) => h === 'GET /confirm.html')).toHaveLength(2);
  });

  test('an unreachable template server falls back to the default, warns once, and is not asked again at once', async () => {
    const port = await closedPort();
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    const { mailer, lines } = build(smtp({ host: '127.0.0.1', port: srv.port }), {
      GOTRUE_MAILER_TEMPLATES_RECOVERY: `http://127.0.0.1:${port}/recovery.html?sig=abc`,
    });
    await mailer.send(mail({ kind: 'recovery' }));
    await mailer.send(mail({ kind: 'recovery' }));
    expect(srv.received).toHaveLength(2);
    for (const r of srv.received) {
      expect(r.parsed.subject).toBe(config().mailer.subjects.recovery);
      expect(r.parsed.html).toMatch(/<h2>.+<\/h2>/);
      expect(r.parsed.html).toContain(`href="${LINK.replaceAll('&', '&amp;')}"`);
      expect(r.parsed.text).toContain(LINK);
      expect(r.parsed.text).toContain(TOKEN);
    }
    const warnings = lines.filter((l) => l.includes('"level":"warn"'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`127.0.0.1:${port}/recovery.html`);
    expect(warnings[0]).not.toContain('sig=abc');
  });

  test.each([
    ['a 500 answer', (res: ServerResponse) => res.writeHead(500).end('<p>{{ .Token }} oops</p>')],
    ['an empty body', (res: ServerResponse) => res.writeHead(200).end('  \n')],
  ])('%s falls back to the default', async (_name, answer) => {
    const http = await startHttp((_req, res) => answer(res));
    const { logger, lines } = recordingLogger();
    const renderer = createTemplateRenderer({ fetch: globalThis.fetch.bind(globalThis), logger });
    const out = await renderer.render('invite', RENDER_VARS, {
      templateUrl: `${http.url}/invite.html`,
      subject: 'You have been invited',
      defaultSubject: 'You have been invited',
    });
    expect(http.hits).toHaveLength(1);
    expect(out.subject).toBe('You have been invited');
    expect(out.html).toContain('<h2>You have been invited</h2>');
    expect(out.html).toContain(LINK.replaceAll('&', '&amp;'));
    expect(out.html).not.toContain('oops');
    expect(out.text).toContain(LINK);
    expect(lines.filter((l) => l.includes('"level":"warn"'))).toHaveLength(1);
  });

  test('a template server that never answers times out and falls back', async () => {
    const hang = await startHttp(() => undefined); // accepts, never responds
    const { logger } = recordingLogger();
    const renderer = createTemplateRenderer({ fetch: globalThis.fetch.bind(globalThis), logger, timeoutMs: 200 });
    const started = Date.now();
    const out = await renderer.render('magic_link', RENDER_VARS, {
      templateUrl: `${hang.url}/slow.html`,
      subject: 'Your Magic Link',
      defaultSubject: 'Your Magic Link',
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(out.text).toContain(LINK);
  });

  test('Go template actions in a fetched body and in the subject: conditionals on user_metadata, nested keys', async () => {
    const body =
      '<p>{{ if eq .Data.lang "fr" }}Bonjour{{ else }}Hello{{ end }} {{ .Data.profile.first }}</p>' +
      '<p><a href="{{ .ConfirmationURL }}">go</a> <a href="{{ .Data.site }}">site</a></p>';
    const http = await startHttp((_req, res) => res.writeHead(200).end(body));
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    const { mailer } = build(smtp({ host: '127.0.0.1', port: srv.port }), {
      GOTRUE_MAILER_TEMPLATES_CONFIRMATION: `${http.url}/c.html`,
      GOTRUE_MAILER_SUBJECTS_CONFIRMATION:
        '{{ if eq .Data.lang "fr" }}Confirmez{{ else }}Confirm{{ end }}, {{ .Data.profile.first }}',
    });
    const userMetadata = { lang: 'fr', profile: { first: 'Zoë & co' }, site: 'javascript:alert(1)' };
    await mailer.send(mail({ userMetadata }));
    await mailer.send(mail({ userMetadata: {} }));
    const [fr, other] = srv.received;
    expect(fr!.parsed.subject).toBe('Confirmez, Zoë & co');
    expect(fr!.parsed.html).toContain('<p>Bonjour Zoë &amp; co</p>');
    expect(fr!.parsed.html).toContain('<a href="#ZgotmplZ">site</a>');
    expect(fr!.parsed.text).toContain('Bonjour Zoë & co');
    expect(other!.parsed.subject).toBe('Confirm,'); // the header's trailing space does not survive
    expect(other!.parsed.html).toContain('<p>Hello </p>');
    expect(http.hits).toHaveLength(1);
  });

  test('a body with a syntax error: the built-in body and subject of that kind, logged once; the fix is fetched after the retry interval', async () => {
    let body = '<p>{{ if .Data.x }}unclosed</p>';
    const http = await startHttp((_req, res) => res.writeHead(200).end(body));
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    let clock = 5_000_000;
    const { mailer, lines } = build(
      smtp({ host: '127.0.0.1', port: srv.port }),
      { GOTRUE_MAILER_TEMPLATES_RECOVERY: `${http.url}/r.html`, GOTRUE_MAILER_SUBJECTS_RECOVERY: 'Custom subject' },
      { now: () => clock },
    );
    await mailer.send(mail({ kind: 'recovery' }));
    await mailer.send(mail({ kind: 'recovery' }));
    for (const r of srv.received) {
      expect(r.parsed.subject).toBe('Reset Your Password');
      expect(r.parsed.html).toMatch(/<h2>Reset password<\/h2>/);
      expect(r.parsed.html).not.toContain('unclosed');
    }
    const warnings = lines.filter((l) => l.includes('"level":"warn"'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('syntax error');
    expect(http.hits).toHaveLength(1);
    body = '<p>fixed {{ .Token }}</p>';
    clock += 11_000;
    await mailer.send(mail({ kind: 'recovery' }));
    expect(srv.received[2]!.parsed.subject).toBe('Custom subject');
    expect(srv.received[2]!.parsed.html?.trim()).toBe(`<p>fixed ${TOKEN}</p>`);
  });

  test('a subject with a syntax error: the built-in subject and body, even with a good body template', async () => {
    const http = await startHttp((_req, res) => res.writeHead(200).end('<p>custom</p>'));
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    const { mailer } = build(smtp({ host: '127.0.0.1', port: srv.port }), {
      GOTRUE_MAILER_TEMPLATES_MAGIC_LINK: `${http.url}/m.html`,
      GOTRUE_MAILER_SUBJECTS_MAGIC_LINK: 'Sign in {{ .Data.name',
    });
    await mailer.send(mail({ kind: 'magic_link' }));
    expect(srv.received[0]!.parsed.subject).toBe('Your Magic Link');
    expect(srv.received[0]!.parsed.html).not.toContain('custom');
    expect(srv.received[0]!.parsed.subject).not.toContain('{{');
  });

  test('a template that fails while rendering fails the send and sends nothing', async () => {
    const http = await startHttp((_req, res) =>
      res.writeHead(200).end('<p>{{ if eq .Data.plan 3 }}three{{ end }}</p><a href="{{ if .Data.x }}a">{{ end }}'),
    );
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    const { mailer } = build(smtp({ host: '127.0.0.1', port: srv.port }), {
      GOTRUE_MAILER_TEMPLATES_INVITE: `${http.url}/i.html`,
    });
    await expect(mailer.send(mail({ kind: 'invite' }))).rejects.toBeInstanceOf(TemplateRenderError);
    expect(srv.received).toEqual([]);
  });

  test('a refresh that fails keeps the last good template; a path is fetched from SITE_URL', async () => {
    let up = true;
    const http = await startHttp((req, res) =>
      up ? res.writeHead(200).end(`<p>v1 ${req.url}</p>`) : res.writeHead(404).end(),
    );
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    let clock = 9_000_000;
    const { logger } = recordingLogger();
    const renderer = createTemplateRenderer({
      fetch: globalThis.fetch.bind(globalThis),
      logger,
      siteUrl: http.url,
      ttlMs: 60_000,
      now: () => clock,
    });
    const mailer = createMailer({
      config: config({ GOTRUE_MAILER_TEMPLATES_CONFIRMATION: '/templates/confirm.html' }),
      transport: smtp({ host: '127.0.0.1', port: srv.port }),
      renderer,
      logger,
    });
    await mailer.send(mail());
    up = false;
    clock += 61_000;
    await mailer.send(mail());
    expect(http.hits).toEqual(['GET /templates/confirm.html', 'GET /templates/confirm.html']);
    expect(srv.received.map((r) => r.parsed.html?.trim())).toEqual([
      '<p>v1 /templates/confirm.html</p>',
      '<p>v1 /templates/confirm.html</p>',
    ]);
  });

  test('email change: {{ .Email }} is the current address in both mails, {{ .NewEmail }} the new, {{ .SendingTo }} the recipient', async () => {
    const http = await startHttp((_req, res) =>
      res.writeHead(200).end('<p>{{ .Email }} → {{ .NewEmail }} (to {{ .SendingTo }})</p>'),
    );
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    const { mailer } = build(smtp({ host: '127.0.0.1', port: srv.port }), {
      GOTRUE_MAILER_TEMPLATES_EMAIL_CHANGE: `${http.url}/e.html`,
    });
    const change = { kind: 'email_change' as const, email: 'old@example.com', newEmail: 'new@example.com' };
    await mailer.send(mail({ ...change, to: 'new@example.com' }));
    await mailer.send(mail({ ...change, to: 'old@example.com' }));
    expect(srv.received.map((r) => r.parsed.html?.trim())).toEqual([
      '<p>old@example.com → new@example.com (to new@example.com)</p>',
      '<p>old@example.com → new@example.com (to old@example.com)</p>',
    ]);
  });

  test('through the outbound guard: the configured template host is trusted, a redirect to another internal host is not', async () => {
    const internal = await startHttp((_req, res) => res.writeHead(200).end('<p>internal {{ .Token }}</p>'));
    const templates = await startHttp((req, res) =>
      req.url === '/moved.html'
        ? res.writeHead(302, { location: `${internal.url}/secret.html` }).end()
        : res.writeHead(200).end('<p>custom {{ .Token }}</p>'),
    );
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    const cfg = config({
      GOTRUE_MAILER_TEMPLATES_CONFIRMATION: `${templates.url}/confirm.html`,
      GOTRUE_MAILER_TEMPLATES_RECOVERY: `${templates.url}/moved.html`,
    });
    const { logger, lines } = recordingLogger();
    const mailer = createMailer({
      config: cfg,
      transport: smtp({ host: '127.0.0.1', port: srv.port }),
      renderer: createTemplateRenderer({ fetch: templateFetch(cfg, globalThis.fetch.bind(globalThis)), logger }),
      logger,
    });
    await mailer.send(mail());
    await mailer.send(mail({ kind: 'recovery' }));
    expect(srv.received[0]!.parsed.html?.trim()).toBe(`<p>custom ${TOKEN}</p>`);
    expect(srv.received[1]!.parsed.html).toMatch(/<h2>Reset password<\/h2>/);
    expect(internal.hits).toEqual([]);
    expect(lines.join('\n')).toContain('URL must use HTTPS');
  });

  test("GoTrue's MAILER_TEMPLATE_MAX_SIZE, _MAX_AGE and _RETRY_INTERVAL reach the renderer; a template is cut at the size", async () => {
    const cfg = config({
      GOTRUE_MAILER_TEMPLATE_MAX_SIZE: '24',
      GOTRUE_MAILER_TEMPLATE_MAX_AGE: '2m',
      GOTRUE_MAILER_TEMPLATE_RETRY_INTERVAL: '30s',
    });
    const opts = templateOptions(cfg);
    expect(opts).toEqual({ siteUrl: cfg.siteUrl, maxBytes: 24, ttlMs: 120_000, failureTtlMs: 30_000 });
    expect(templateOptions(config())).toMatchObject({ maxBytes: 1_000_000, ttlMs: 600_000, failureTtlMs: 10_000 });
    const http = await startHttp((_req, res) => res.writeHead(200).end('<p>{{ .Token }}</p>0123456789ABCDEFGHIJ'));
    const { logger } = recordingLogger();
    const renderer = createTemplateRenderer({ fetch: globalThis.fetch.bind(globalThis), logger, ...opts });
    const out = await renderer.render('confirmation', RENDER_VARS, {
      templateUrl: `${http.url}/t.html`,
      subject: 's',
      defaultSubject: 's',
    });
    expect(out.html).toBe(`<p>${TOKEN}</p>01234`); // 24 bytes of the template: 19 of markup, 5 more
  });

  test('htmlToText keeps link targets and drops markup', () => {
    expect(htmlToText('<p>Hi &amp; welcome</p><p><a href="https://x.test/a?b=1&amp;c=2">Go</a><br>next</p>')).toBe(
      'Hi & welcome\n\nGo: https://x.test/a?b=1&c=2\nnext\n',
    );
  });
});

// ---------------------------------------------------------------- Resend

describe('templates per locale', () => {
  test('user_metadata.locale, else .lang, picks MAILER_TEMPLATES_<KIND>_<LOCALE> and MAILER_SUBJECTS_<KIND>_<LOCALE>, dropping subtags, then the unsuffixed ones', async () => {
    const http = await startHttp((req, res) => res.writeHead(200).end(`<p>${req.url} {{ .Token }}</p>`));
    const srv = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS'] });
    const { mailer } = build(smtp({ host: '127.0.0.1', port: srv.port }), {
      GOTRUE_MAILER_TEMPLATES_CONFIRMATION: `${http.url}/en.html`,
      GOTRUE_MAILER_TEMPLATES_CONFIRMATION_PT: `${http.url}/pt.html`,
      AUTHSVC_MAILER_TEMPLATES_CONFIRMATION_FR: `${http.url}/fr.html`,
      GOTRUE_MAILER_TEMPLATES_CONFIRMATION_FR: `${http.url}/not-this.html`,
      GOTRUE_MAILER_SUBJECTS_CONFIRMATION: 'Confirm',
      GOTRUE_MAILER_SUBJECTS_CONFIRMATION_PT_BR: 'Confirme (Brasil)',
      GOTRUE_MAILER_SUBJECTS_CONFIRMATION_FR: 'Confirmez',
    });
    const cases: [Record<string, unknown>, string, string][] = [
      [{ locale: 'pt-BR' }, '/pt.html', 'Confirme (Brasil)'],
      [{ locale: 'pt_PT' }, '/pt.html', 'Confirm'],
      [{ lang: 'FR' }, '/fr.html', 'Confirmez'],
      [{ locale: 'fr-CA', lang: 'pt' }, '/fr.html', 'Confirmez'],
      [{ locale: 'de' }, '/en.html', 'Confirm'],
      [{ locale: 42, lang: 'fr' }, '/fr.html', 'Confirmez'],
      [{}, '/en.html', 'Confirm'],
    ];
    for (const [userMetadata] of cases) await mailer.send(mail({ userMetadata }));
    expect(srv.received.map((r) => [r.parsed.html?.trim(), r.parsed.subject])).toEqual(
      cases.map(([, path, subject]) => [`<p>${path} ${TOKEN}</p>`, subject]),
    );
  });

  test('a locale with a subject only keeps the built-in body; the variables are no unknown settings', () => {
    const parsed = parseConfig(
      {
        ...BASE_ENV,
        GOTRUE_MAILER_SUBJECTS_RECOVERY_DE: 'Passwort zurücksetzen',
        GOTRUE_MAILER_TEMPLATES_RECOVERY_X: 'y',
      },
      { local: true },
    );
    if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
    expect(parsed.config.mailer.localized).toEqual({
      templates: {},
      subjects: { recovery: { de: 'Passwort zurücksetzen' } },
    });
    expect(parsed.warnings.filter((w) => w.includes('_DE'))).toEqual([]);
    // One letter is no language tag: an unknown variable, as any other.
    expect(parsed.warnings).toContain(
      'GOTRUE_MAILER_TEMPLATES_RECOVERY_X is set, but authsvc has no such setting: it has no effect.',
    );
  });

  test.each([
    ['GOTRUE_MAILER_TEMPLATES_CONFIRMATION_FR', { part: 'templates', kind: 'confirmation', locale: 'fr' }],
    ['AUTHSVC_MAILER_SUBJECTS_MAGIC_LINK_PT_BR', { part: 'subjects', kind: 'magicLink', locale: 'pt-br' }],
    ['GOTRUE_MAILER_SUBJECTS_EMAIL_CHANGE_ZH_HANT', { part: 'subjects', kind: 'emailChange', locale: 'zh-hant' }],
    [
      'GOTRUE_MAILER_TEMPLATES_EMAIL_CHANGED_NOTIFICATION_DE',
      { part: 'templates', kind: 'email_changed_notification', locale: 'de' },
    ],
    ['GOTRUE_MAILER_SUBJECTS_EMAIL_CHANGED_NOTIFICATION', undefined],
    ['GOTRUE_MAILER_SUBJECTS_CONFIRMATION', undefined],
    ['GOTRUE_MAILER_SUBJECTS_CONFIRMATION_F', undefined],
    ['MAILER_SUBJECTS_CONFIRMATION_FR', undefined],
  ])('%s', (key, want) => {
    expect(parseLocalizedMailName(key)).toEqual(want);
  });
});

describe('Resend transport', () => {
  const KEY = 're_test_0123456789abcdef';

  test('POSTs the message as JSON with the bearer key', async () => {
    const bodies: unknown[] = [];
    const api = await startHttp((req, res, body) => {
      if (req.url !== '/emails' || req.headers.authorization !== `Bearer ${KEY}` || !req.headers['user-agent']) {
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ statusCode: 401, name: 'missing_api_key', message: 'bad request' }));
        return;
      }
      bodies.push(JSON.parse(body));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ id: '49a3999c-0ce1-4ea6-ab68-afcd6dc2e794' }));
    });
    const transport = createResendTransport({
      apiKey: KEY,
      baseUrl: `${api.url}/`,
      fetch: globalThis.fetch.bind(globalThis),
    });
    const { mailer, lines } = build(transport, { GOTRUE_MAILER_SUBJECTS_INVITE: 'Join {{ .SiteURL }}' });
    await mailer.send(mail({ kind: 'invite' }));

    expect(api.hits).toEqual(['POST /emails']);
    expect(bodies).toHaveLength(1);
    const sent = bodies[0] as Record<string, unknown>;
    expect(sent).toMatchObject({
      from: 'Sender Name <admin@auth.example.org>',
      to: ['alice.private@example.com'],
      subject: 'Join http://localhost:3000',
    });
    expect(sent.html).toContain(LINK.replaceAll('&', '&amp;'));
    expect(sent.text).toContain(LINK);
    expect(sent.text).toContain(TOKEN);
    expectNoSecretsLogged(lines);
  });

  test('a 4xx becomes "Error sending … email" whose messages hold neither the key nor the token', async () => {
    const api = await startHttp((_req, res) => {
      // A hostile or buggy API echoing the key must not get it into our errors.
      res
        .writeHead(422, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ statusCode: 422, name: 'validation_error', message: `Invalid \`from\` field (key ${KEY})` }),
        );
    });
    const transport = createResendTransport({
      apiKey: KEY,
      baseUrl: api.url,
      fetch: globalThis.fetch.bind(globalThis),
    });
    const { mailer, lines } = build(transport);
    const err = await mailer.send(mail()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    const e = err as Error;
    const cause = e.cause as Error;
    expect(e.message).toBe('Error sending confirmation email');
    expect(cause.message).toContain('422');
    expect(cause.message).toContain('Invalid `from` field');
    for (const text of [e.message, cause.message, cause.stack ?? '', lines.join('\n')]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(TOKEN_HASH);
    }
    expectNoSecretsLogged(lines);
  });

  /**
   * Resend's idempotency as documented: a key seen in the last 24 hours gets the first answer
   * back and nothing is sent again. `delayMs` holds the first answer back (a slow API).
   */
  async function idempotentResend(delayMs = 0) {
    const sent: { idempotencyKey: string | undefined; body: Record<string, unknown> }[] = [];
    const requests: { headers: IncomingMessage['headers']; body: string }[] = [];
    const answered = new Map<string, string>();
    const api = await startHttp((req, res, body) => {
      requests.push({ headers: req.headers, body });
      const key = req.headers['idempotency-key'] as string | undefined;
      const seen = key !== undefined ? answered.get(key) : undefined;
      if (seen) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(seen);
        return;
      }
      const answer = JSON.stringify({ id: crypto.randomUUID() });
      if (key !== undefined) answered.set(key, answer);
      sent.push({ idempotencyKey: key, body: JSON.parse(body) as Record<string, unknown> });
      const reply = () => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      };
      if (requests.length === 1 && delayMs > 0) setTimeout(reply, delayMs);
      else reply();
    });
    return { api, sent, requests };
  }

  /** The key as an independent HMAC computes it: HMAC-SHA256(API key, label, kind, recipient, token hash). */
  const expectedKey = (kind: string, to: string, tokenHash: string) =>
    `authsvc-${createHmac('sha256', KEY).update(`resend-idempotency\n${kind}\n${to}\n${tokenHash}`).digest('hex').slice(0, 48)}`;

  test('every send carries an Idempotency-Key derived from kind, recipient and token, revealing none of them', async () => {
    const { api, requests } = await idempotentResend();
    const transport = createResendTransport({
      apiKey: KEY,
      baseUrl: api.url,
      fetch: globalThis.fetch.bind(globalThis),
    });
    const { mailer, lines } = build(transport);
    await mailer.send(mail());
    await mailer.send(mail({ kind: 'magic_link' }));
    await mailer.send(mail({ to: 'bob@example.com' }));
    await mailer.send(mail({ tokenHash: 'aa'.repeat(28) }));

    expect(requests).toHaveLength(4);
    // The exact request: fetch's own headers aside, these four and nothing else.
    const FETCH_OWN = new Set([
      'host',
      'connection',
      'content-length',
      'accept',
      'accept-language',
      'accept-encoding',
      'sec-fetch-mode',
    ]);
    const first = Object.fromEntries(Object.entries(requests[0]!.headers).filter(([k]) => !FETCH_OWN.has(k)));
    expect(first).toEqual({
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      'user-agent': 'authsvc',
      'idempotency-key': expectedKey('confirmation', 'alice.private@example.com', TOKEN_HASH),
    });
    const keys = requests.map((r) => r.headers['idempotency-key'] as string);
    expect(keys).toEqual([
      expectedKey('confirmation', 'alice.private@example.com', TOKEN_HASH),
      expectedKey('magic_link', 'alice.private@example.com', TOKEN_HASH),
      expectedKey('confirmation', 'bob@example.com', TOKEN_HASH),
      expectedKey('confirmation', 'alice.private@example.com', 'aa'.repeat(28)),
    ]);
    expect(new Set(keys).size).toBe(4);
    for (const key of keys) {
      expect(key).toMatch(/^authsvc-[0-9a-f]{48}$/);
      expect(key).not.toContain(TOKEN);
      expect(key).not.toContain(TOKEN_HASH.slice(0, 8));
      expect(key).not.toContain('alice');
    }
    // A hash of the address and a 6-digit code without the API key would be a million guesses away from the code.
    expect(keys[0]).not.toBe(
      `authsvc-${createHmac('sha256', '').update(`resend-idempotency\nconfirmation\nalice.private@example.com\n${TOKEN_HASH}`).digest('hex').slice(0, 48)}`,
    );
    expectNoSecretsLogged(lines);
  });

  test('a send retried after a timeout reaches the inbox once: the retry carries the same key', async () => {
    // The API takes the first request and sends it, but answers after the transport gave up.
    const { api, sent, requests } = await idempotentResend(1_000);
    const transport = createResendTransport({
      apiKey: KEY,
      baseUrl: api.url,
      fetch: globalThis.fetch.bind(globalThis),
      timeoutMs: 200,
    });
    const { mailer } = build(transport);
    const message = mail({ kind: 'recovery' });
    const err = await mailer.send(message).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toBe('Error sending recovery email');
    await mailer.send(message);

    expect(requests).toHaveLength(2);
    expect(requests[1]!.headers['idempotency-key']).toBe(requests[0]!.headers['idempotency-key']);
    expect(requests[1]!.body).toBe(requests[0]!.body);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      idempotencyKey: expectedKey('recovery', 'alice.private@example.com', TOKEN_HASH),
      body: { to: ['alice.private@example.com'] },
    });
  });

  test('a message without a token gets no Idempotency-Key (one derived from nothing would drop other emails)', async () => {
    const { api, requests } = await idempotentResend();
    const transport = createResendTransport({
      apiKey: KEY,
      baseUrl: api.url,
      fetch: globalThis.fetch.bind(globalThis),
    });
    await transport.deliver({
      from: 'admin@auth.example.org',
      to: 'alice.private@example.com',
      subject: 's',
      html: '<p>h</p>',
      text: 'h',
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.headers).not.toHaveProperty('idempotency-key');
  });

  test('sender names that need it are quoted', () => {
    expect(formatAddress('a@x.test', 'Acme, Inc.')).toBe('"Acme, Inc." <a@x.test>');
    expect(formatAddress('a@x.test', 'Say "hi"')).toBe('"Say \\"hi\\"" <a@x.test>');
    expect(formatAddress('a@x.test', undefined)).toBe('a@x.test');
  });
});

// ---------------------------------------------------------------- Node adapter wiring

describe('Node adapter', () => {
  // The mailer never touches the database; a placeholder keeps this test off PGlite.
  const noDb = {} as Database;

  test('SMTP_HOST selects the SMTP transport', async () => {
    const srv = await startSmtp({ authMethods: ['PLAIN'], allowInsecureAuth: true, disabledCommands: ['STARTTLS'] });
    const cfg = config({
      GOTRUE_SMTP_HOST: '127.0.0.1',
      GOTRUE_SMTP_PORT: String(srv.port),
      GOTRUE_SMTP_USER: 'mailer',
      GOTRUE_SMTP_PASS: 's3cret pass',
    });
    expect(cfg.mailer.transport).toBe('smtp');
    const deps = await buildNodeDeps(cfg, noDb, recordingLogger().logger);
    await deps.mailer.send(mail());
    expect(srv.received).toHaveLength(1);
    expect(srv.received[0]!.parsed.from).toMatchObject({ name: 'Sender Name', address: 'admin@auth.example.org' });
    expect(srv.auths).toEqual([{ method: 'PLAIN', username: 'mailer' }]);
  });

  test('RESEND_API_KEY selects the Resend transport at RESEND_BASE_URL', async () => {
    const KEY = 're_wiring_key';
    const api = await startHttp((req, res) => {
      res
        .writeHead(req.headers.authorization === `Bearer ${KEY}` ? 200 : 401, { 'content-type': 'application/json' })
        .end('{"id":"x"}');
    });
    const cfg = config({ AUTHSVC_RESEND_API_KEY: KEY, AUTHSVC_RESEND_BASE_URL: api.url });
    expect(cfg.mailer.transport).toBe('resend');
    const deps = await buildNodeDeps(cfg, noDb, recordingLogger().logger);
    await deps.mailer.send(mail());
    expect(api.hits).toEqual(['POST /emails']);
  });
});
