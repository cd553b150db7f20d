// SMTP credentials are never sent over an unencrypted connection to a host other than localhost
// (Go's net/smtp PlainAuth rule, which GoTrue inherits; src/adapters/smtp-auth-policy.ts). Real
// SMTP servers (smtp-server) run in the test, with and without STARTTLS. Loopback names are exempt,
// so the servers listen on 0.0.0.0 and the refusals are checked through one of this machine's
// non-loopback IPv4 addresses. The Workers transport (worker-mailer on cloudflare:sockets) runs in
// workerd through miniflare, in a small Worker that sends one message per request.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COMPATIBILITY_DATE, buildWorker } from '../../scripts/build-worker.ts';
import { SmtpTlsRequiredError, isLoopbackHost, plainAuthAllowed } from '../../src/adapters/smtp-auth-policy.ts';
import { type SmtpTransportOptions, createSmtpTransport } from '../../src/adapters/smtp-transport.ts';
import type { MailMessage } from '../../src/mail/transport.ts';
import { selfSignedCert } from '../helpers/tls-cert.ts';

const USER = 'mailer';
const PASS = 'pl41n-s3cret-Pass';
const MESSAGE: MailMessage = {
  from: 'auth@example.com',
  to: 'user@example.com',
  subject: 'Hello',
  html: '<p>Hello</p>',
  text: 'Hello',
};

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A non-loopback IPv4 address of this machine: reaching our own server under a name that is not exempt. */
function nonLoopbackIPv4(): string {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) {
      if ((a.family === 'IPv4' || (a.family as unknown) === 4) && !a.internal && !isLoopbackHost(a.address))
        return a.address;
    }
  }
  throw new Error(
    'this machine has no non-loopback IPv4 address (os.networkInterfaces()); the refusal tests need one to reach a local SMTP server under a name that is not loopback',
  );
}
const IP = nonLoopbackIPv4();
const TLS = selfSignedCert([IP]);

interface AuthSeen {
  username: string | undefined;
  password: string | undefined;
  secure: boolean;
}
interface SmtpHandle {
  port: number;
  auths: AuthSeen[];
  received: { secure: boolean; user: unknown }[];
}

/** An SMTP server on 0.0.0.0 that records every AUTH it sees (accepting USER/PASS) and every message. */
async function startSmtp(options: SMTPServerOptions): Promise<SmtpHandle> {
  const auths: AuthSeen[] = [];
  const received: SmtpHandle['received'] = [];
  const server = new SMTPServer({
    logger: false,
    closeTimeout: 100,
    ...options,
    onAuth(auth, session, cb) {
      auths.push({ username: auth.username, password: auth.password ?? undefined, secure: session.secure });
      if (auth.username === USER && auth.password === PASS) cb(null, { user: auth.username });
      else cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, cb) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received.push({ secure: session.secure, user: session.user });
        cb();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '0.0.0.0', () => resolve());
  });
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.server.address() as AddressInfo).port, auths, received };
}

/** No STARTTLS; AUTH (PLAIN/LOGIN) offered and accepted in clear text. */
const plainServer = (authOptional: boolean) =>
  startSmtp({ authOptional, allowInsecureAuth: true, disabledCommands: ['STARTTLS'] });

/** STARTTLS offered (self-signed certificate); AUTH only after the upgrade (allowInsecureAuth false). */
const startTlsServer = () => startSmtp({ authOptional: false, key: TLS.key, cert: TLS.cert });

async function deliverNode(opts: SmtpTransportOptions): Promise<void> {
  const t = createSmtpTransport(opts);
  try {
    await t.deliver(MESSAGE);
  } finally {
    t.close();
  }
}

/** Every message and server response along an error's cause chain, to look for the password. */
function errorText(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, i = 0; e && i < 10; e = (e as { cause?: unknown }).cause, i++) {
    parts.push(
      String((e as Error).message),
      String((e as { response?: unknown }).response ?? ''),
      String((e as Error).stack ?? ''),
    );
  }
  return parts.join('\n');
}

describe('plainAuthAllowed: Go net/smtp isLocalhost on the configured host name', () => {
  test.each([
    // host, secure, hasCredentials, allowed
    ['smtp.example.com', false, true, false],
    ['192.0.2.2', false, true, false],
    ['localhost', false, true, true],
    ['127.0.0.1', false, true, true],
    ['::1', false, true, true],
    // Exactly these three, as Go compares them: no other 127/8 address, no DNS, no variants.
    ['127.0.0.2', false, true, false],
    ['LOCALHOST', false, true, false],
    ['localhost.', false, true, false],
    ['[::1]', false, true, false],
    ['', false, true, false],
    // Implicit TLS protects the credentials; without credentials nothing secret is sent.
    ['smtp.example.com', true, true, true],
    ['smtp.example.com', false, false, true],
  ] as const)('%j secure=%j credentials=%j → %j', (host, secure, creds, allowed) => {
    expect(plainAuthAllowed(host, secure, creds)).toBe(allowed);
  });

  test('the refusal names the reason and the server, and cannot carry the password', () => {
    const e = new SmtpTlsRequiredError('smtp.example.com', 587);
    expect(e.name).toBe('SmtpTlsRequiredError');
    expect(e.message).toContain('smtp.example.com:587');
    expect(e.message).toMatch(/STARTTLS/);
    expect(e.message).toMatch(/credentials are not sent over an unencrypted connection/);
    expect(e.message).toMatch(/nothing was sent/);
  });
});

describe(`nodemailer transport (non-loopback address ${IP})`, () => {
  test('(1) credentials, non-loopback host, server without STARTTLS: refused before AUTH, nothing sent', async () => {
    const server = await plainServer(false);
    const err = await deliverNode({ host: IP, port: server.port, user: USER, pass: PASS }).then(
      () => {
        throw new Error('delivery succeeded: the credentials went out in clear text');
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SmtpTlsRequiredError);
    expect((err as Error).message).toContain(`${IP}:${server.port}`);
    expect((err as Error).message).toMatch(/did not upgrade the connection with STARTTLS/);
    expect(errorText(err)).not.toContain(PASS);
    // What the server saw: no AUTH at all (so neither user nor password on the wire), no message.
    expect(server.auths).toEqual([]);
    expect(server.received).toEqual([]);
  });

  test('(2) the same server as 127.0.0.1 with credentials: loopback is exempt, AUTH in clear text works', async () => {
    const server = await plainServer(false);
    await deliverNode({ host: '127.0.0.1', port: server.port, user: USER, pass: PASS });
    expect(server.auths).toEqual([{ username: USER, password: PASS, secure: false }]);
    expect(server.received).toEqual([{ secure: false, user: USER }]);
  });

  test('(3) without credentials on the non-loopback address: plain delivery, no AUTH', async () => {
    // authOptional here: a server that insists on AUTH would turn away a client without credentials.
    const server = await plainServer(true);
    await deliverNode({ host: IP, port: server.port });
    expect(server.auths).toEqual([]);
    expect(server.received).toEqual([{ secure: false, user: undefined }]);
  });

  test('(4) credentials, non-loopback host, server with STARTTLS: upgrades, then AUTH over TLS', async () => {
    const server = await startTlsServer();
    await deliverNode({ host: IP, port: server.port, user: USER, pass: PASS, tls: { rejectUnauthorized: false } });
    expect(server.auths).toEqual([{ username: USER, password: PASS, secure: true }]);
    expect(server.received).toEqual([{ secure: true, user: USER }]);
  });

  test('(5) credentials, non-loopback host, implicit TLS (secure) on a port other than 465', async () => {
    const server = await startSmtp({ secure: true, authOptional: false, key: TLS.key, cert: TLS.cert });
    await deliverNode({
      host: IP,
      port: server.port,
      secure: true,
      user: USER,
      pass: PASS,
      tls: { rejectUnauthorized: false },
    });
    expect(server.auths).toEqual([{ username: USER, password: PASS, secure: true }]);
    expect(server.received).toEqual([{ secure: true, user: USER }]);
  });
});

describe(`Workers transport in workerd (worker-mailer; non-loopback address ${IP})`, () => {
  let outdir: string;
  let mf: Miniflare;
  let url: string;

  beforeAll(async () => {
    outdir = mkdtempSync(join(tmpdir(), 'authsvc-smtp-tls-worker-'));
    const build = await buildWorker(outdir, { script: 'test/helpers/smtp-tls-worker.ts' });
    mf = new Miniflare({
      modules: true,
      scriptPath: build.entry,
      modulesRoot: build.outdir,
      compatibilityDate: COMPATIBILITY_DATE,
      // Sockets may reach this machine's addresses, and TLS trusts the test certificate (worker-mailer
      // has no option to skip verification).
      outboundService: {
        network: { allow: ['public', 'private', 'local', `${IP}/32`], tlsOptions: { trustedCertificates: [TLS.cert] } },
      },
    });
    url = (await mf.ready).toString();
  });

  afterAll(async () => {
    await mf?.dispose();
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  async function deliverWorker(opts: { host: string; port: number; user?: string; pass?: string; secure?: boolean }) {
    const res = await mf.dispatchFetch(url, { method: 'POST', body: JSON.stringify({ ...opts, timeoutMs: 5_000 }) });
    return (await res.json()) as { ok: boolean; name?: string; message?: string };
  }

  test('(1) credentials, non-loopback host, server without STARTTLS: refused before AUTH, nothing sent', async () => {
    const server = await plainServer(false);
    const result = await deliverWorker({ host: IP, port: server.port, user: USER, pass: PASS });
    expect(result.ok).toBe(false);
    expect(result.name).toBe('SmtpTlsRequiredError');
    expect(result.message).toMatch(/did not upgrade the connection with STARTTLS/);
    expect(result.message).not.toContain(PASS);
    expect(server.auths).toEqual([]);
    expect(server.received).toEqual([]);
  });

  test('(2) the same server as 127.0.0.1 with credentials: loopback is exempt, AUTH in clear text works', async () => {
    const server = await plainServer(false);
    expect(await deliverWorker({ host: '127.0.0.1', port: server.port, user: USER, pass: PASS })).toEqual({ ok: true });
    expect(server.auths).toEqual([{ username: USER, password: PASS, secure: false }]);
    expect(server.received).toEqual([{ secure: false, user: USER }]);
  });

  test('(3) without credentials on the non-loopback address: plain delivery, no AUTH', async () => {
    // AUTH not offered: worker-mailer gives up when a server offers AUTH and it has no credentials.
    const server = await startSmtp({ authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'] });
    expect(await deliverWorker({ host: IP, port: server.port })).toEqual({ ok: true });
    expect(server.auths).toEqual([]);
    expect(server.received).toEqual([{ secure: false, user: undefined }]);
  });

  test('(4) credentials, non-loopback host, server with STARTTLS: upgrades, then AUTH over TLS', async () => {
    const server = await startTlsServer();
    expect(await deliverWorker({ host: IP, port: server.port, user: USER, pass: PASS })).toEqual({ ok: true });
    expect(server.auths).toEqual([{ username: USER, password: PASS, secure: true }]);
    expect(server.received).toEqual([{ secure: true, user: USER }]);
  });
});
