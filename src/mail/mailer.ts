// The mailer interface: routes hand it what to send; transports (log now; SMTP and Resend in
// the email-flows work) decide how. Messages are semantic so transports can render templates.
import type { NotificationKind } from '../config/kinds.ts';
import type { Logger } from '../telemetry/logger.ts';

/** An email that carries a one-time token. */
export type TokenMailKind = 'confirmation' | 'invite' | 'recovery' | 'magic_link' | 'email_change' | 'reauthentication';
/** An account-change notification: no token, no link (GoTrue's `<kind>_notification` action types). */
export type NotificationMailKind = `${NotificationKind}_notification`;
export type MailKind = TokenMailKind | NotificationMailKind;

export function isNotification(kind: MailKind): kind is NotificationMailKind {
  return kind.endsWith('_notification');
}

/** GoTrue's wording in "Error sending … email". */
export const MAIL_LABEL: Record<MailKind, string> = {
  confirmation: 'confirmation',
  invite: 'invite',
  recovery: 'recovery',
  magic_link: 'magic link',
  email_change: 'email change',
  reauthentication: 'reauthentication',
  password_changed_notification: 'password changed notification',
  email_changed_notification: 'email changed notification',
  phone_changed_notification: 'phone changed notification',
  identity_linked_notification: 'identity linked notification',
  identity_unlinked_notification: 'identity unlinked notification',
  mfa_factor_enrolled_notification: 'MFA factor enrolled notification',
  mfa_factor_unenrolled_notification: 'MFA factor unenrolled notification',
  passkey_added_notification: 'passkey added notification',
  passkey_removed_notification: 'passkey removed notification',
};

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
  /** Notifications: the account's address as `{{ .Email }}` when the email goes elsewhere (the old address of an email change). */
  email?: string;
  /** Notifications: `{{ .OldEmail }}`, `{{ .OldPhone }}`, `{{ .Phone }}`, `{{ .Provider }}`, `{{ .FactorType }}`. */
  oldEmail?: string;
  oldPhone?: string;
  phone?: string;
  provider?: string;
  factorType?: string;
}

export interface Mailer {
  send(mail: MailRequest): Promise<void>;
}

/** Local mode: the email is written to the log so the developer can follow the link. */
export function createLogMailer(logger: Logger): Mailer {
  return {
    async send(mail) {
      logger.info(
        'email (log transport: not sent)',
        isNotification(mail.kind)
          ? { mail_kind: mail.kind, to: mail.to }
          : { mail_kind: mail.kind, to: mail.to, link: mail.confirmationUrl, code: mail.token },
      );
    },
  };
}
