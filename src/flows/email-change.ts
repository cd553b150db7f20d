// Email change (GoTrue §11.3): PUT /user {email} records the new address and mails a code to it —
// and, with MAILER_SECURE_EMAIL_CHANGE_ENABLED (default), another to the current address; both
// must be confirmed. Under MAILER_AUTOCONFIRM an anonymous user's change applies at once;
// everybody else's still needs confirming, as in GoTrue. The mails go out after the transaction.
import { timingSafeEqual } from '../crypto/encoding.ts';
import { generateOtp, type LinkToken, newLinkToken, tokenHash } from '../crypto/otp.ts';
import { insertAudit } from '../db/audit.ts';
import { type Executor, isUniqueViolation, transaction } from '../db/database.ts';
import { deleteFlowState, insertFlowState, latestFlowState, markAuthCodeIssued } from '../db/flow-state.ts';
import {
  clearOneTimeTokens,
  findOneTimeTokensByAddress,
  type OneTimeTokenRow,
  type OneTimeTokenType,
  putBackOneTimeToken,
  putOneTimeToken,
  removeOneTimeToken,
  restoreOneTimeToken,
} from '../db/one-time-tokens.ts';
import {
  findUserByEmail,
  findUserById,
  insertIdentity,
  isBanned,
  listIdentities,
  type NewUser,
  restoreUserColumns,
  updateIdentityData,
  updateUser,
  type UserRow,
} from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, forbidden } from '../core/errors.ts';
import { takeCodeAttempt } from '../accounts/code-attempts.ts';
import { findLinkedTokens } from '../accounts/link-tokens.ts';
import {
  assertAuthorizedRecipient,
  consumeEmailSend,
  frequencyLimitError,
  verificationLink,
} from '../accounts/email-tokens.ts';
import { type Notification, notify } from '../accounts/notify.ts';
import { type Outbox, transactionThenSend } from '../accounts/outbox.ts';
import type { Pkce } from '../accounts/pkce-params.ts';
import { createSession, tokenResponse } from '../accounts/session.ts';
import type { RequestMeta, TokenResponse } from '../accounts/issued-session.ts';

import { emailExists } from '../core/errors.ts';
export const HALF_CONFIRMED_MESSAGE =
  'Confirmation link accepted. Please proceed to confirm link sent to the other email';

const EMAIL_CHANGE_TYPES: OneTimeTokenType[] = ['email_change_token_current', 'email_change_token_new'];

/**
 * The mail half of an email change (GoTrue's sendEmailChange), for PUT /user and POST /resend:
 * new codes for the pending address (and the current one under secure change), stored on the
 * user and in one_time_tokens, mails queued on `out`. The user row must be locked.
 */
async function queueEmailChangeCodes(
  deps: Deps,
  tx: Executor,
  out: Outbox,
  user: UserRow,
  newEmail: string,
  redirectTo: string,
  pkce?: Pkce,
): Promise<UserRow> {
  const cfg = deps.config;
  const now = deps.now();
  if (user.emailChangeSentAt) {
    const limited = frequencyLimitError(user.emailChangeSentAt, cfg.smtp.maxFrequency, now);
    if (limited) throw limited;
  }
  const current = cfg.mailer.secureEmailChangeEnabled && user.email ? user.email.toLowerCase() : undefined;
  assertAuthorizedRecipient(deps, newEmail);
  if (current) assertAuthorizedRecipient(deps, current);
  if (pkce) {
    const flow = await insertFlowState(tx, {
      userId: user.id,
      challenge: pkce.challenge,
      method: pkce.method,
      providerType: 'email',
      authenticationMethod: 'email_change',
      now,
    });
    out.undo((u) => deleteFlowState(u, flow.id));
  }
  const prefix = pkce ? 'pkce_' : '';
  const codes: { to: string; type: OneTimeTokenType; otp: string; hash: string; link: LinkToken }[] = [];
  for (const [to, type] of [
    [newEmail, 'email_change_token_new'],
    ...(current ? [[current, 'email_change_token_current']] : []),
  ] as [string, OneTimeTokenType][]) {
    await consumeEmailSend(deps, tx, out);
    const otp = generateOtp(cfg.mailer.otpLength, deps.randomBytes);
    codes.push({ to, type, otp, hash: `${prefix}${tokenHash(to, otp)}`, link: newLinkToken(deps.randomBytes, !!pkce) });
  }
  const patch: Partial<NewUser> = {
    emailChange: newEmail,
    emailChangeSentAt: now,
    emailChangeConfirmStatus: 0,
    emailChangeTokenNew: codes[0]!.hash,
    emailChangeTokenCurrent: codes[1]?.hash ?? '',
  };
  const before = Object.fromEntries(
    Object.keys(patch).map((k) => [k, user[k as keyof UserRow] ?? null]),
  ) as Partial<NewUser>;
  const updated = await updateUser(tx, user.id, patch);
  out.undo((u) => restoreUserColumns(u, user.id, before, { column: 'emailChangeTokenNew', value: codes[0]!.hash }));
  if (!current) {
    // A current-address code of an earlier secure change must not confirm this one.
    const dropped = await removeOneTimeToken(tx, user.id, 'email_change_token_current');
    if (dropped) out.undo((u) => putBackOneTimeToken(u, dropped));
  }
  for (const c of codes) {
    const previous = await putOneTimeToken(tx, {
      userId: user.id,
      type: c.type,
      tokenHash: c.hash,
      relatesTo: c.to,
      now,
      linkHash: c.link.hash,
    });
    out.undo((u) => restoreOneTimeToken(u, user.id, c.type, c.hash, previous));
    out.mail(
      {
        kind: 'email_change',
        to: c.to,
        // GoTrue's {{ .Email }} is the current address in both mails ({{ .NewEmail }} the new one).
        email: user.email ?? '',
        token: c.otp,
        tokenHash: c.link.token,
        newEmail,
        redirectTo,
        siteUrl: cfg.siteUrl,
        confirmationUrl: verificationLink(
          deps,
          cfg.mailer.urlPaths.emailChange,
          c.link.token,
          'email_change',
          redirectTo,
        ),
        userMetadata: user.rawUserMetaData ?? {},
      },
      user.id,
    );
  }
  return updated;
}

/**
 * Applies the change: the new address becomes the user's, confirmed, with an email identity.
 * The address may have been registered by someone else since the change was requested: 422.
 */
async function applyChange(tx: Executor, user: UserRow, now: Date): Promise<UserRow> {
  const newEmail = user.emailChange ?? '';
  const other = await findUserByEmail(tx, newEmail, user.aud ?? '');
  if (other && other.id !== user.id) throw emailExists();
  const identities = await listIdentities(tx, [user.id]);
  const emailIdentity = identities.find((i) => i.provider === 'email');
  if (emailIdentity) {
    await updateIdentityData(tx, user.id, 'email', {
      ...emailIdentity.identityData,
      email: newEmail,
      email_verified: true,
    });
  } else {
    await insertIdentity(tx, {
      providerId: user.id,
      userId: user.id,
      provider: 'email',
      createdAt: now,
      updatedAt: now,
      lastSignInAt: now,
      identityData: { sub: user.id, email: newEmail, email_verified: true, phone_verified: false },
    });
  }
  const app = { ...(user.rawAppMetaData ?? {}) };
  const providers = new Set<string>(Array.isArray(app.providers) ? (app.providers as string[]) : []);
  providers.add('email');
  app.providers = [...providers];
  app.provider ??= 'email';
  await clearOneTimeTokens(tx, user.id);
  return updateUser(tx, user.id, {
    email: newEmail,
    emailChange: '',
    emailChangeTokenNew: '',
    emailChangeTokenCurrent: '',
    emailChangeSentAt: null,
    emailChangeConfirmStatus: 0,
    emailConfirmedAt: user.emailConfirmedAt ?? now,
    isAnonymous: false,
    rawAppMetaData: app,
    rawUserMetaData: { ...(user.rawUserMetaData ?? {}), email: newEmail, email_verified: true },
    updatedAt: now,
  });
}

/** A unique violation while applying: the address was taken by a concurrent request. */
async function orEmailExists<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw isUniqueViolation(err) ? emailExists() : err;
  }
}

/**
 * PUT /user {email}, inside the caller's transaction with the user row locked. An anonymous
 * user's change applies at once under MAILER_AUTOCONFIRM (like a signup); anyone else's waits
 * for the emailed codes, as GoTrue's UserUpdate does.
 */
export async function requestEmailChange(
  deps: Deps,
  tx: Executor,
  out: Outbox,
  user: UserRow,
  newEmail: string,
  redirectTo: string,
  ip?: string,
  pkce?: Pkce,
): Promise<UserRow> {
  const now = deps.now();
  const other = await findUserByEmail(tx, newEmail, user.aud ?? '');
  if (other && other.id !== user.id) throw emailExists();
  if (deps.config.mailer.autoconfirm && user.isAnonymous) {
    const staged = await updateUser(tx, user.id, { emailChange: newEmail });
    // The address may belong to a user of another audience (the unique index is on email alone).
    const changed = await orEmailExists(applyChange(tx, staged, now));
    await insertAudit(tx, { actor: changed, action: 'user_modified', ip, now });
    return changed;
  }
  return queueEmailChangeCodes(deps, tx, out, user, newEmail, redirectTo, pkce);
}

/**
 * POST /resend type=email_change: the pending change's codes again, and nothing else — a resend
 * never applies a change, whatever MAILER_AUTOCONFIRM says (it is unauthenticated).
 */
export async function resendEmailChange(
  deps: Deps,
  currentEmail: string,
  aud: string,
  redirectTo: string,
  pkce?: Pkce,
): Promise<void> {
  const found = await findUserByEmail(deps.db, currentEmail, aud);
  if (!found?.emailChange) return;
  await transactionThenSend(deps, async (tx, out) => {
    const user = await findUserById(tx, found.id, { forUpdate: true });
    if (!user?.emailChange) return;
    await queueEmailChangeCodes(deps, tx, out, user, user.emailChange, redirectTo, pkce);
  });
}

/**
 * The pending email-change token a typed code belongs to. Every code typed in counts one attempt
 * at each pending code sent to that address (code-attempts.ts), before any comparison.
 */
async function tokenForCode(deps: Deps, email: string, code: string): Promise<OneTimeTokenRow | undefined> {
  const address = email.toLowerCase();
  const plain = tokenHash(address, code);
  let match: OneTimeTokenRow | undefined;
  for (const row of await findOneTimeTokensByAddress(deps.db, address, EMAIL_CHANGE_TYPES)) {
    if (!(await takeCodeAttempt(deps, row.userId, row.tokenType, row.createdAt ?? new Date(0)))) continue;
    const same = timingSafeEqual(row.tokenHash, plain) || timingSafeEqual(row.tokenHash, `pkce_${plain}`);
    // The current address's token first, as GoTrue looks them up.
    if (same && (!match || row.tokenType === 'email_change_token_current')) match = row;
  }
  return match;
}

export type EmailChangeResult =
  | { kind: 'half'; message: string; pkce: boolean }
  | { kind: 'session'; token: TokenResponse }
  /** A PKCE link followed with `issueCode`: the code for grant_type=pkce. */
  | { kind: 'code'; authCode: string };

/** verify type=email_change, by code (+ the address it went to) or by link hash. */
export async function verifyEmailChange(
  deps: Deps,
  p: { aud: string; token?: string; email?: string; tokenHash?: string; issueCode?: boolean; client?: string },
  meta: RequestMeta,
): Promise<EmailChangeResult> {
  const byCode = p.token !== undefined;
  const invalid = () =>
    forbidden('otp_expired', byCode ? 'Token has expired or is invalid' : 'Email link is invalid or has expired');
  let row: OneTimeTokenRow | undefined;
  if (byCode) {
    row = await tokenForCode(deps, p.email ?? '', p.token!);
  } else {
    // A link: found by its own random value (link-tokens.ts); the current address's token first,
    // as GoTrue looks them up. The link and the code are one token: once the code has had its
    // attempts, the link is dead too.
    const rows = await findLinkedTokens(deps, p.tokenHash ?? '', EMAIL_CHANGE_TYPES, p.client);
    const found = rows.find((r) => r.tokenType === 'email_change_token_current') ?? rows[0];
    if (found && (await takeCodeAttempt(deps, found.userId, found.tokenType, found.createdAt ?? new Date(0))))
      row = found;
  }
  if (!row) throw invalid();
  const hash = row.tokenHash;
  const column = row.tokenType === 'email_change_token_current' ? 'emailChangeTokenCurrent' : 'emailChangeTokenNew';
  let notice: Notification | undefined;
  const result = await transaction(deps.db, async (tx): Promise<EmailChangeResult> => {
    const now = deps.now();
    const user = await findUserById(tx, row.userId, { forUpdate: true });
    if (!user || user.aud !== p.aud || !user.emailChange || !user[column] || !timingSafeEqual(user[column]!, hash))
      throw invalid();
    // Each half is mailed to its own address: the row must still name it.
    const address = row.tokenType === 'email_change_token_current' ? user.email : user.emailChange;
    if ((address ?? '').toLowerCase() !== row.relatesTo) throw invalid();
    if (!user.emailChangeSentAt || now.getTime() > user.emailChangeSentAt.getTime() + deps.config.mailer.otpExp * 1000)
      throw invalid();
    if (isBanned(user, now)) throw forbidden('user_banned', 'User is banned');
    const secure = deps.config.mailer.secureEmailChangeEnabled && !!user.email && !deps.config.mailer.autoconfirm;
    if (secure && (user.emailChangeConfirmStatus ?? 0) === 0) {
      await updateUser(tx, user.id, { [column]: '', emailChangeConfirmStatus: 1, updatedAt: now });
      await clearOneTimeTokens(tx, user.id, row.tokenType);
      return { kind: 'half', message: HALF_CONFIRMED_MESSAGE, pkce: hash.startsWith('pkce_') };
    }
    const changed = await orEmailExists(applyChange(tx, user, now));
    await insertAudit(tx, { actor: changed, action: 'user_modified', traits: { provider: 'email' }, ip: meta.ip, now });
    // To the address the account had, when it had one (GoTrue: emailAddressChanged).
    if (user.email && changed.email && user.email !== changed.email) {
      notice = { kind: 'email_changed', user: changed, to: user.email, oldEmail: user.email };
    }
    if (p.issueCode && hash.startsWith('pkce_')) {
      const flow = await latestFlowState(tx, user.id, 'email_change');
      if (!flow) throw new ApiError(404, 'flow_state_not_found', 'no valid flow state found for user.');
      await markAuthCodeIssued(tx, flow.id, now);
      return { kind: 'code', authCode: flow.authCode! };
    }
    const issued = await createSession(deps, tx, changed, 'otp', meta);
    return { kind: 'session', token: await tokenResponse(deps, tx, issued) };
  });
  await notify(deps, notice, meta.ip);
  return result;
}
