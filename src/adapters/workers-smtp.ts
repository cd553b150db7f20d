// SMTP on Workers: worker-mailer over `cloudflare:sockets` (TCP, STARTTLS, implicit TLS). One
// connection per message, opened and closed inside the request that sends it: a Workers socket
// cannot outlive its request, so nothing is pooled.
import { LogLevel, WorkerMailer, type WorkerMailerOptions } from 'worker-mailer';
import type { MailTransport } from '../lib/mail-transport.ts';

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
  const secure = opts.secure ?? opts.port === 465;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const options: WorkerMailerOptions = {
    host: opts.host,
    port: opts.port,
    secure,
    // Upgrades only when the server offers STARTTLS; a local relay without it stays plain, as with nodemailer.
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
      await WorkerMailer.send(options, {
        from: m.fromName ? { name: m.fromName, email: m.from } : m.from,
        to: m.to,
        subject: m.subject,
        html: m.html,
        text: m.text,
      });
    },
  };
}
