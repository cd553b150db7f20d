// When an SMTP client may log in (AUTH with SMTP_USER/SMTP_PASS) over an unencrypted connection:
// GoTrue inherits Go's net/smtp rule (PlainAuth refuses a connection without TLS unless the
// server is localhost). Both SMTP transports apply it: with credentials and any other host, the
// connection must be encrypted, by implicit TLS (port 465) or by STARTTLS; a server that offers no
// STARTTLS gets neither the credentials nor the message. Without credentials nothing secret
// travels, so a relay without STARTTLS (local relays often have no certificate) is still used in
// the clear, upgrading when STARTTLS is offered.
// Pure and runtime-neutral: imported by the nodemailer transport and by the Workers one.

/** Go's net/smtp isLocalhost: the configured host name, compared exactly (no DNS lookup). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '127.0.0.1' || host === '::1';
}

/**
 * True when the session may authenticate (or go on) without encryption: no credentials are
 * configured, the connection is TLS from the first byte (`secure`), or the host is loopback.
 * False means STARTTLS is required before AUTH.
 */
export function plainAuthAllowed(host: string, secure: boolean, hasCredentials: boolean): boolean {
  return !hasCredentials || secure || isLoopbackHost(host);
}

/** The send failed because the server did not upgrade to TLS; no credentials were sent. Never holds the password. */
export class SmtpTlsRequiredError extends Error {
  override name = 'SmtpTlsRequiredError';
  constructor(host: string, port: number, options?: ErrorOptions) {
    super(
      `SMTP server ${host}:${port} did not upgrade the connection with STARTTLS: SMTP credentials are not sent ` +
        'over an unencrypted connection to a host other than localhost, so nothing was sent ' +
        '(use a server that offers STARTTLS, or implicit TLS on port 465)',
      options,
    );
  }
}
