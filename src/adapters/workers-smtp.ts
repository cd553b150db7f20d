// SMTP on Workers: worker-mailer over `cloudflare:sockets` (TCP, STARTTLS, implicit TLS). One
// connection per message, opened and closed inside the request that sends it: a Workers socket
// cannot outlive its request, so nothing is pooled.
import { type EmailOptions, LogLevel, WorkerMailer, type WorkerMailerOptions } from 'worker-mailer';
import type { MailTransport } from '../mail/transport.ts';
import { SmtpTlsRequiredError, plainAuthAllowed } from './smtp-auth-policy.ts';

// worker-mailer (1.2.1, pinned) has no "require TLS" option: after EHLO it upgrades only when the
// server offers STARTTLS, then runs AUTH whenever the server offers AUTH, in clear text if no upgrade
// happened. To apply Go's net/smtp rule (smtp-auth-policy.ts) we run the session its static `send`
// runs (construct, initializeSmtpSession, start, send, close) ourselves and wrap two of its private
// steps on our instance: `tls` (the STARTTLS upgrade) records that it succeeded, and `auth`, which
// the session calls right after the optional upgrade, refuses to go on without it. So with
// credentials and a non-loopback host, no AUTH and no message leave over a plain connection.
interface WorkerMailerSession {
  initializeSmtpSession(): Promise<void>;
  start(): Promise<void>;
  send(email: EmailOptions): Promise<void>;
  close(error?: Error): Promise<void>;
  tls(): Promise<void>;
  auth(): Promise<void>;
}
const Session = WorkerMailer as unknown as new (options: WorkerMailerOptions) => WorkerMailerSession;
const SESSION_STEPS = ['initializeSmtpSession', 'start', 'send', 'close', 'tls', 'auth'] as const;

export interface WorkerSmtpOptions {
  host: string;
  port: number;
  user?: string;
  pass?: string;
  /** Implicit TLS from the first byte; defaults to port 465 (GoTrue's rule), else STARTTLS when offered. */
  secure?: boolean;
  timeoutMs?: number;
}

export function createWorkerSmtpTransport(opts: WorkerSmtpOptions): MailTransport {
  // An upgrade of worker-mailer that renamed these steps must fail here, not send credentials unguarded.
  const proto = Session.prototype as unknown as Record<string, unknown>;
  const missing = SESSION_STEPS.filter((k) => typeof proto[k] !== 'function');
  if (missing.length > 0)
    throw new Error(
      `worker-mailer: expected session steps missing (${missing.join(', ')}); check workers-smtp.ts against this version`,
    );
  const secure = opts.secure ?? opts.port === 465;
  const requireTls = !plainAuthAllowed(opts.host, secure, !!opts.user);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const options: WorkerMailerOptions = {
    host: opts.host,
    port: opts.port,
    secure,
    // Upgrades only when the server offers STARTTLS; a local relay without it stays plain, as with
    // nodemailer, unless credentials must be protected (requireTls, enforced in deliver).
    startTls: !secure,
    credentials: opts.user ? { username: opts.user, password: opts.pass ?? '' } : undefined,
    // worker-mailer offers no mechanism unless told which ones it may use.
    authType: ['plain', 'login', 'cram-md5'],
    socketTimeoutMs: timeoutMs,
    responseTimeoutMs: timeoutMs,
    // Its own unstructured console lines; a failure reaches the mailer, which logs it as JSON.
    logLevel: LogLevel.NONE,
  };
  return {
    async deliver(m) {
      const session = new Session(options);
      if (requireTls) {
        let upgraded = false;
        const { tls, auth } = session;
        session.tls = async () => {
          await tls.call(session);
          upgraded = true;
        };
        session.auth = async () => {
          if (!upgraded) throw new SmtpTlsRequiredError(opts.host, opts.port);
          await auth.call(session);
        };
      }
      try {
        await session.initializeSmtpSession();
      } catch (err) {
        // Tries QUIT and closes the socket (worker-mailer's own connect leaves it open on a failure).
        await session.close(err instanceof Error ? err : undefined);
        throw err;
      }
      // The sending loop; a failed message rejects its send() below, the loop itself does not throw.
      session.start().catch(() => undefined);
      try {
        await session.send({
          from: m.fromName ? { name: m.fromName, email: m.from } : m.from,
          to: m.to,
          subject: m.subject,
          html: m.html,
          text: m.text,
        });
      } finally {
        await session.close();
      }
    },
  };
}
