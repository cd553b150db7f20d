// Account-change notifications (GoTrue's MAILER_NOTIFICATIONS_*_ENABLED): an email that tells the
// account's owner their password, email address or phone number changed, an identity was linked
// or unlinked, an MFA factor or a passkey was added or removed. Each is off by default. The passkey
// ones are authsvc's own (review L3: a passkey is a sign-in method that outlives a password reset,
// and adding one silently is what a thief of a session would do); GoTrue has none.
//
// Sent after the change has committed, as GoTrue sends them after its transaction (it sends the
// password one inside it): the change stands whether or not the email goes out, so every failure
// is logged and never reaches the client, as in GoTrue. The rules that apply to any email apply:
// EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES, RATE_LIMIT_EMAIL_SENT (not under MAILER_AUTOCONFIRM, as for
// every email), and the send email hook replaces the mailer when it is on.
import type { NotificationKind } from '../config/kinds.ts';
import { transaction } from '../db/database.ts';
import { consume, release } from '../db/rate-limits.ts';
import type { UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { emailHookCalls, sendEmailThroughHook } from '../hooks/send-email.ts';
import type { MailRequest } from '../mail/mailer.ts';
import { errorFields } from '../telemetry/logger.ts';
import { assertAuthorizedRecipient } from './email-tokens.ts';
import { withTimeout } from './outbox.ts';

export interface Notification {
  kind: NotificationKind;
  /** The account as it is after the change. */
  user: UserRow;
  /** Where it goes when that is not the account's address now (the old address of an email change). */
  to?: string;
  oldEmail?: string;
  oldPhone?: string;
  provider?: string;
  factorType?: string;
}

function request(deps: Deps, n: Notification, to: string): MailRequest {
  const u = n.user;
  return {
    kind: `${n.kind}_notification`,
    to,
    token: '',
    tokenHash: '',
    confirmationUrl: '',
    siteUrl: deps.config.siteUrl,
    redirectTo: deps.config.siteUrl,
    userMetadata: u.rawUserMetaData ?? {},
    // `{{ .Email }}`: the address of the account (GoTrue: the new address of an email change, the
    // one the account had of an unlink).
    email: n.kind === 'identity_unlinked' ? to : (u.email ?? ''),
    oldEmail: n.oldEmail,
    oldPhone: n.oldPhone,
    phone: u.phone ?? '',
    provider: n.provider,
    factorType: n.factorType,
  };
}

/**
 * How long a request waits for its notifications: half its time limit (API_MAX_REQUEST_DURATION;
 * 5 s without one), so that a mail server that hangs cannot turn a change already committed into
 * a 504. A send still running then is not waited for; its outcome is only logged.
 */
export function notificationTimeoutMs(deps: Deps): number {
  const limit = deps.config.api.maxRequestDuration;
  return limit > 0 ? Math.max(250, Math.floor(limit * 500)) : 5_000;
}

/** Sends a request's notifications side by side (one wait, not one per notification). */
export async function notifyAll(deps: Deps, notices: readonly Notification[], ip?: string): Promise<void> {
  await Promise.all(notices.map((n) => notify(deps, n, ip)));
}

/**
 * Sends the notification if its setting is on and there is an address to send it to. Never throws:
 * the change it reports has already been made.
 */
export async function notify(deps: Deps, n: Notification | undefined, ip?: string): Promise<void> {
  if (!n || !deps.config.mailer.notifications[n.kind]) return;
  const to = n.to ?? n.user.email ?? '';
  if (!to) return;
  const fields = { mail_kind: `${n.kind}_notification`, user_id: n.user.id };
  const limit = deps.config.rateLimit.emailSent;
  const counted = !(deps.config.mailer.autoconfirm && limit.count > 0);
  const at = deps.now();
  try {
    assertAuthorizedRecipient(deps, to);
  } catch {
    // Its message names the address: not for the log.
    deps.logger.warn('notification email not sent: the address is not in EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES', fields);
    return;
  }
  try {
    if (counted && !(await transaction(deps.db, (tx) => consume(tx, 'email_sent', limit, at)))) {
      deps.logger.warn('notification email not sent: email rate limit exceeded', fields);
      return;
    }
  } catch (err) {
    deps.logger.warn('notification email not sent', { ...fields, ...errorFields(err) });
    return;
  }
  const mail = request(deps, n, to);
  try {
    const send: Promise<unknown> = deps.config.hooks.SEND_EMAIL.enabled
      ? Promise.all(
          emailHookCalls([{ mail, userId: n.user.id }], deps.config.api.externalUrl).map((call) =>
            sendEmailThroughHook(deps, call, ip),
          ),
        )
      : deps.mailer.send(mail);
    await withTimeout(
      send,
      notificationTimeoutMs(deps),
      deps.config.hooks.SEND_EMAIL.enabled ? 'the send email hook' : 'the mail server',
    );
  } catch (err) {
    deps.logger.warn('notification email not sent', { ...fields, ...errorFields(err) });
    // Nothing went out: the send is not counted, as for a failed confirmation email.
    if (counted) await transaction(deps.db, (tx) => release(tx, 'email_sent', limit, at)).catch(() => undefined);
  }
}
