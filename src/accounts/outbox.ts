// Mail and SMS go out after the transaction that wrote their token has committed, never inside
// it: a mail server or SMS provider that hangs must not hold a database connection (the embedded
// database has only one, so every other request would wait). If a send fails or times out, the
// writes the request made for it are taken back, so a failed send still leaves nothing behind.
import { deleteAuditEntries } from '../db/audit.ts';
import {
  type AuditSink,
  type Executor,
  type TransactionOutcome,
  transaction,
  transactionOutcome,
} from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';
import { emailHookCalls, type QueuedMail, sendEmailThroughHook } from '../hooks/send-email.ts';
import { sendSmsThroughHook } from '../hooks/send-sms.ts';
import { MAIL_LABEL, type MailRequest } from '../mail/mailer.ts';
import { type SmsMessage, SmsSendError } from '../sms/provider.ts';
import { errorFields } from '../telemetry/logger.ts';

/** Takes back one write of the request; runs in the undo transaction, newest first. */
export type Undo = (tx: Executor) => Promise<void>;

export interface Outbox {
  /** Queues a mail to send once the transaction has committed; `userId`: whom it is about (the send email hook's `user`). */
  mail(m: MailRequest, userId?: string): void;
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
  /** Whom the code is for (the send SMS hook's `user`). */
  userId?: string;
}

/**
 * How long one send may take: most of the request's time limit (API_MAX_REQUEST_DURATION), so
 * the undo and the error still reach the client before the 504; 10 s when there is no limit.
 */
export function sendTimeoutMs(deps: Deps): number {
  const limit = deps.config.api.maxRequestDuration;
  return limit > 0 ? Math.max(500, Math.floor(limit * 800)) : 10_000;
}

export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
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
  // A CommitThenFail's writes are committed, so its mail goes out too (the confirmation of an
  // unverified provider address); then its error is the answer.
  const outcome = await transactionThenSendOutcome(deps, fn);
  if ('failed' in outcome) throw outcome.failed;
  return outcome.ok;
}

async function transactionThenSendOutcome<T>(
  deps: Deps,
  fn: (tx: Executor, out: Outbox) => Promise<T>,
): Promise<TransactionOutcome<T>> {
  const mails: QueuedMail[] = [];
  const texts: QueuedSms[] = [];
  const undos: Undo[] = [];
  const auditIds: string[] = [];
  const out: Outbox = {
    mail: (mail, userId) => mails.push({ mail, userId }),
    sms: (s) => texts.push(s),
    undo: (u) => undos.push(u),
  };
  const result = await transactionOutcome(deps.db, (tx) => fn(withAuditCapture(tx, auditIds), out));
  for (const text of texts) {
    try {
      await sendSms(deps, text);
    } catch (err) {
      await takeBack(deps, undos, auditIds);
      if (err instanceof ApiError) {
        // The send SMS hook's refusal or failure: GoTrue answers it as it is in the phone flows,
        // and as a plain 500 for an MFA challenge.
        if (text.kind === 'mfa') throw new ApiError(500, 'unexpected_failure', 'error invoking hook', undefined, err);
        throw err;
      }
      // The provider's own words reach the client (as in GoTrue); anything else stays in the log.
      // An MFA code's failed send is GoTrue's plain 500 (challengePhoneFactor).
      if (text.kind === 'mfa') throw new ApiError(500, 'unexpected_failure', 'error sending message', undefined, err);
      const why = err instanceof SmsSendError ? err.message : 'the SMS provider could not be reached';
      throw new ApiError(422, 'sms_send_failed', `Error sending ${text.kind} OTP to provider: ${why}`, undefined, err);
    }
  }
  if (deps.config.hooks.SEND_EMAIL.enabled) {
    await sendThroughHook(deps, mails, undos, auditIds);
    return result;
  }
  for (const { mail } of mails) {
    try {
      await withTimeout(deps.mailer.send(mail), sendTimeoutMs(deps), 'the mail server');
    } catch (err) {
      await takeBack(deps, undos, auditIds);
      throw new ApiError(500, 'unexpected_failure', `Error sending ${MAIL_LABEL[mail.kind]} email`, undefined, err);
    }
  }
  return result;
}

/**
 * HOOK_SEND_EMAIL: the hook replaces the mailer. It is called after the commit like a mail
 * server (a Postgres-function hook in a transaction of its own): its refusal or failure takes
 * the request's writes back and is the request's answer, as GoTrue passes it on.
 */
async function sendThroughHook(deps: Deps, mails: QueuedMail[], undos: Undo[], auditIds: string[]): Promise<void> {
  for (const call of emailHookCalls(mails, deps.config.api.externalUrl)) {
    try {
      await sendEmailThroughHook(deps, call);
    } catch (err) {
      await takeBack(deps, undos, auditIds);
      throw err;
    }
  }
}

async function sendSms(deps: Deps, text: QueuedSms): Promise<void> {
  if (deps.config.hooks.SEND_SMS.enabled) {
    // The hook replaces the provider; GoTrue reads no message id from it.
    await sendSmsThroughHook(deps, {
      userId: text.userId,
      otp: text.message.otp,
      phone: text.message.phone,
      mfa: text.kind === 'mfa',
    });
    text.sent?.('');
    return;
  }
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
  return {
    ...tx,
    audit: {
      ...sink,
      log: (r) => {
        ids.push(r.id);
        sink.log(r);
      },
    },
  };
}
