// Mail and SMS go out after the transaction that wrote their token has committed, never inside
// it: a mail server or SMS provider that hangs must not hold a database connection (the embedded
// database has only one, so every other request would wait). If a send fails or times out, the
// writes the request made for it are taken back, so a failed send still leaves nothing behind.
import { deleteAuditEntries } from '../db/audit.ts';
import { type AuditSink, type Executor, transaction } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../http/errors.ts';
import type { MailKind, MailRequest } from '../mail/mailer.ts';
import { type SmsMessage, SmsSendError } from '../sms/provider.ts';
import { errorFields } from '../telemetry/logger.ts';

/** Takes back one write of the request; runs in the undo transaction, newest first. */
export type Undo = (tx: Executor) => Promise<void>;

export interface Outbox {
  /** Queues a mail to send once the transaction has committed. */
  mail(m: MailRequest): void;
  /** Queues an SMS; `kind` names it in GoTrue's "Error sending <kind> OTP to provider". */
  sms(s: QueuedSms): void;
  /** How to take back a write this request made, should a send fail. */
  undo(step: Undo): void;
}

export interface QueuedSms {
  kind: 'confirmation' | 'phone_change' | 'reauthentication' | 'mfa';
  message: SmsMessage;
  /** Told the provider's message id once it has accepted the SMS (GoTrue answers it as `message_id`). */
  sent?: (messageId: string) => void;
}

// GoTrue's wording in "Error sending … email".
const LABEL: Record<MailKind, string> = {
  confirmation: 'confirmation', invite: 'invite', recovery: 'recovery',
  magic_link: 'magic link', email_change: 'email change', reauthentication: 'reauthentication',
};

/**
 * How long one send may take: most of the request's time limit (API_MAX_REQUEST_DURATION), so
 * the undo and the error still reach the client before the 504; 10 s when there is no limit.
 */
export function sendTimeoutMs(deps: Deps): number {
  const limit = deps.config.api.maxRequestDuration;
  return limit > 0 ? Math.max(500, Math.floor(limit * 800)) : 10_000;
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Runs `fn` in a transaction, commits, then sends the mails it queued. When a send fails, the
 * undo steps run in one transaction (newest first) and the request fails with GoTrue's
 * "Error sending … email". Audit entries written by `fn` are taken back with the rest.
 */
export async function transactionThenSend<T>(deps: Deps, fn: (tx: Executor, out: Outbox) => Promise<T>): Promise<T> {
  const mails: MailRequest[] = [];
  const texts: QueuedSms[] = [];
  const undos: Undo[] = [];
  const auditIds: string[] = [];
  const out: Outbox = { mail: (m) => mails.push(m), sms: (s) => texts.push(s), undo: (u) => undos.push(u) };
  const result = await transaction(deps.db, (tx) => fn(withAuditCapture(tx, auditIds), out));
  for (const text of texts) {
    try {
      await sendSms(deps, text);
    } catch (err) {
      await takeBack(deps, undos, auditIds);
      // The provider's own words reach the client (as in GoTrue); anything else stays in the log.
      // An MFA code's failed send is GoTrue's plain 500 (challengePhoneFactor).
      if (text.kind === 'mfa') throw new ApiError(500, 'unexpected_failure', 'error sending message', undefined, err);
      const why = err instanceof SmsSendError ? err.message : 'the SMS provider could not be reached';
      throw new ApiError(422, 'sms_send_failed', `Error sending ${text.kind} OTP to provider: ${why}`, undefined, err);
    }
  }
  for (const mail of mails) {
    try {
      await withTimeout(deps.mailer.send(mail), sendTimeoutMs(deps), 'the mail server');
    } catch (err) {
      await takeBack(deps, undos, auditIds);
      throw new ApiError(500, 'unexpected_failure', `Error sending ${LABEL[mail.kind]} email`, undefined, err);
    }
  }
  return result;
}

async function sendSms(deps: Deps, text: QueuedSms): Promise<void> {
  // Not `text.sent?.(await …)`: an optional call skips evaluating its arguments when absent.
  const id = await sendWithin(deps, text);
  text.sent?.(id);
}

async function sendWithin(deps: Deps, text: QueuedSms): Promise<string> {
  if (!deps.sms) throw new SmsSendError('no SMS provider is configured (SMS_PROVIDER)');
  const ms = sendTimeoutMs(deps);
  const abort = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new SmsSendError(`no answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([deps.sms.send(text.message, abort.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function takeBack(deps: Deps, undos: Undo[], auditIds: string[]): Promise<void> {
  try {
    await transaction(deps.db, async (tx) => {
      for (const step of [...undos].reverse()) await step(tx);
      await deleteAuditEntries(tx, auditIds);
    });
  } catch (err) {
    // The send already failed; the client gets that error. What could not be taken back is logged.
    deps.logger.error('could not take back the writes of a failed send', errorFields(err));
  }
}

/** Records the id of every audit entry written through `tx`, so a failed send can remove them. */
function withAuditCapture(tx: Executor, ids: string[]): Executor {
  const sink: AuditSink = tx.audit ?? { disablePostgres: false, logs: false, log: () => undefined };
  return { ...tx, audit: { ...sink, log: (r) => { ids.push(r.id); sink.log(r); } } };
}
