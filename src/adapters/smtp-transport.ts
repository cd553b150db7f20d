// SMTP delivery on Node (and Bun/Deno) through nodemailer. Lives in adapters/ because it opens
// TCP/TLS sockets; Workers use Resend or a Workers-specific SMTP client instead.
import nodemailer from 'nodemailer';
import type { ConnectionOptions } from 'node:tls';
import type { MailTransport } from '../mail/transport.ts';
import { SmtpTlsRequiredError, plainAuthAllowed } from './smtp-auth-policy.ts';

export interface SmtpTransportOptions {
  host: string;
  port: number;
  user?: string;
  pass?: string;
  /** Implicit TLS from the first byte; defaults to port 465 (GoTrue's rule). */
  secure?: boolean;
  /** Extra options for tls.connect, e.g. a private CA or a test server's self-signed certificate. */
  tls?: ConnectionOptions;
  /**
   * Longest wait for the server at any step (connect, greeting, each answer): below the time the
   * outbox gives a send, so a send it has given up on is dropped here too, never delivered late.
   */
  stepTimeoutMs?: number;
}

export interface SmtpTransport extends MailTransport {
  /** Closes the pooled connections; a message being sent finishes first. */
  close(): void;
}

/** A failure caused by requireTLS itself: the server refused STARTTLS (or does not know it), or knows no EHLO. */
function startTlsRefused(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const e = err as Error & { code?: unknown; command?: unknown; response?: unknown };
  return (
    (e.code === 'ETLS' && e.command === 'STARTTLS' && typeof e.response === 'string') ||
    (e.code === 'ECONNECTION' && e.command === 'EHLO' && /STARTTLS/.test(e.message))
  );
}

export function createSmtpTransport(opts: SmtpTransportOptions): SmtpTransport {
  // GoTrue's rule: port 465 means implicit TLS; any other port upgrades with STARTTLS when the
  // server offers it and stays plain otherwise (local relays often have no certificate).
  const secure = opts.secure ?? opts.port === 465;
  // Except with credentials: AUTH would carry SMTP_USER/SMTP_PASS in clear text, so, as Go's
  // net/smtp PlainAuth, STARTTLS is required unless the host is loopback (smtp-auth-policy.ts).
  // nodemailer's requireTLS sends STARTTLS even when not offered and fails before AUTH if refused.
  const requireTLS = !plainAuthAllowed(opts.host, secure, !!opts.user);
  const transporter = nodemailer.createTransport({
    pool: true,
    host: opts.host,
    port: opts.port,
    secure,
    requireTLS,
    auth: opts.user ? { user: opts.user, pass: opts.pass ?? '' } : undefined,
    tls: opts.tls,
    // nodemailer waits minutes by default; a sign-up request should fail long before that.
    connectionTimeout: Math.min(10_000, opts.stepTimeoutMs ?? Infinity),
    greetingTimeout: Math.min(10_000, opts.stepTimeoutMs ?? Infinity),
    socketTimeout: Math.min(30_000, opts.stepTimeoutMs ?? Infinity),
  });
  return {
    async deliver(m) {
      try {
        await transporter.sendMail({
          from: m.fromName ? { name: m.fromName, address: m.from } : m.from,
          to: m.to,
          subject: m.subject,
          html: m.html,
          text: m.text,
        });
      } catch (err) {
        // Name the reason; nodemailer's "Error upgrading connection with STARTTLS: 502 …" does not.
        if (requireTLS && startTlsRefused(err)) throw new SmtpTlsRequiredError(opts.host, opts.port, { cause: err });
        throw err;
      }
    },
    close() {
      transporter.close();
    },
  };
}
