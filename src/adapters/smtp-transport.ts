// SMTP delivery on Node (and Bun/Deno) through nodemailer. Lives in adapters/ because it opens
// TCP/TLS sockets; Workers use Resend or a Workers-specific SMTP client instead.
import nodemailer from 'nodemailer';
import type { ConnectionOptions } from 'node:tls';
import type { MailTransport } from '../lib/mail-transport.ts';

export interface SmtpTransportOptions {
  host: string;
  port: number;
  user?: string;
  pass?: string;
  /** Implicit TLS from the first byte; defaults to port 465 (GoTrue's rule). */
  secure?: boolean;
  /** Extra options for tls.connect, e.g. a private CA or a test server's self-signed certificate. */
  tls?: ConnectionOptions;
}

export interface SmtpTransport extends MailTransport {
  /** Closes the pooled connections; a message being sent finishes first. */
  close(): void;
}

export function createSmtpTransport(opts: SmtpTransportOptions): SmtpTransport {
  const transporter = nodemailer.createTransport({
    pool: true,
    host: opts.host,
    port: opts.port,
    // GoTrue's rule: port 465 means implicit TLS; any other port upgrades with STARTTLS when the
    // server offers it and stays plain otherwise (local relays often have no certificate).
    secure: opts.secure ?? opts.port === 465,
    requireTLS: false,
    auth: opts.user ? { user: opts.user, pass: opts.pass ?? '' } : undefined,
    tls: opts.tls,
    // nodemailer waits minutes by default; a sign-up request should fail long before that.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  return {
    async deliver(m) {
      await transporter.sendMail({
        from: m.fromName ? { name: m.fromName, address: m.from } : m.from,
        to: m.to,
        subject: m.subject,
        html: m.html,
        text: m.text,
      });
    },
    close() {
      transporter.close();
    },
  };
}
