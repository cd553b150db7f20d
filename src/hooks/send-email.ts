// The send email hook (GoTrue: mail.go sendEmail): with HOOK_SEND_EMAIL_ENABLED every email
// authsvc would send goes to the hook instead of SMTP/Resend, as `email_data`. The authorised-
// address checks and the email limits have run before (as in GoTrue). An email change that
// mails both addresses is one call: `token`/`token_hash` belong to the current address and
// `token_new`/`token_hash_new` to the new one (GoTrue swaps the two hashes, a bug it documents).
import type { Deps } from '../deps.ts';
import { isNotification, type MailKind, type MailRequest, type TokenMailKind } from '../mail/mailer.ts';
import { invokeHook } from './invoke.ts';
import { hookUser } from './user-payload.ts';

// GoTrue's email_action_type values.
const TOKEN_ACTION: Record<TokenMailKind, string> = {
  confirmation: 'signup',
  invite: 'invite',
  recovery: 'recovery',
  magic_link: 'magiclink',
  email_change: 'email_change',
  reauthentication: 'reauthentication',
};
const action = (kind: MailKind): string => (isNotification(kind) ? kind : TOKEN_ACTION[kind]);

export interface QueuedMail {
  mail: MailRequest;
  /** The user the mail is about (the hook's `user`, read after the commit). */
  userId?: string;
}

/** One hook call: the user and GoTrue's EmailData (every field a string, always present). */
export interface EmailHookCall {
  userId?: string;
  emailData: Record<string, string>;
}

function emailData(m: MailRequest, extra: Partial<Record<string, string>> = {}): Record<string, string> {
  return {
    token: m.token,
    token_hash: m.tokenHash,
    redirect_to: m.redirectTo,
    email_action_type: action(m.kind),
    site_url: '',
    token_new: '',
    token_hash_new: '',
    old_email: m.oldEmail ?? '',
    old_phone: m.oldPhone ?? '',
    provider: m.provider ?? '',
    factor_type: m.factorType ?? '',
    ...extra,
  } as Record<string, string>;
}

/** The hook calls for a request's queued mails: the mails of one email change become one call. */
export function emailHookCalls(mails: readonly QueuedMail[], siteUrl: string): EmailHookCall[] {
  const calls: EmailHookCall[] = [];
  const changes = mails.filter((q) => q.mail.kind === 'email_change');
  for (const q of mails)
    if (q.mail.kind !== 'email_change')
      calls.push({ userId: q.userId, emailData: emailData(q.mail, { site_url: siteUrl }) });
  if (changes.length > 0) {
    const next = changes.find((q) => q.mail.to === q.mail.newEmail) ?? changes[0]!;
    const current = changes.find((q) => q !== next);
    calls.push({
      userId: next.userId,
      emailData: current
        ? emailData(current.mail, {
            site_url: siteUrl,
            token_new: next.mail.token,
            token_hash_new: next.mail.tokenHash,
          })
        : emailData(next.mail, { site_url: siteUrl }),
    });
  }
  return calls;
}

/** Calls the hook once (after the request's commit); its refusal or failure is the request's error. */
export async function sendEmailThroughHook(deps: Deps, call: EmailHookCall, ip?: string): Promise<void> {
  const user = call.userId ? await hookUser(deps.db, call.userId) : null;
  await invokeHook(deps, 'SEND_EMAIL', { user, email_data: call.emailData }, { ip });
}
