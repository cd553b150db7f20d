// The mailer interface: routes hand it what to send; transports (log now; SMTP and Resend in
// the email-flows work) decide how. Messages are semantic so transports can render templates.
import type { Logger } from '../telemetry/logger.ts';

export type MailKind = 'confirmation' | 'invite' | 'recovery' | 'magic_link' | 'email_change' | 'reauthentication';

export interface MailRequest {
  kind: MailKind;
  to: string;
  /** The one-time code (OTP). */
  token: string;
  /** The link token (`{{ .TokenHash }}`, the `token` of links): random, never computable from the code. */
  tokenHash: string;
  /** Absolute link the user follows (already includes token, type, redirect_to). */
  confirmationUrl: string;
  siteUrl: string;
  redirectTo: string;
  userMetadata: Record<string, unknown>;
  newEmail?: string;
}

export interface Mailer {
  send(mail: MailRequest): Promise<void>;
}

/** Local mode: the email is written to the log so the developer can follow the link. */
export function createLogMailer(logger: Logger): Mailer {
  return {
    async send(mail) {
      logger.info('email (log transport: not sent)', {
        mail_kind: mail.kind, to: mail.to, link: mail.confirmationUrl, code: mail.token,
      });
    },
  };
}
