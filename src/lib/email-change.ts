// Email change (GoTrue §11.3): PUT /user {email} records the new address and mails a code to it —
// and, with MAILER_SECURE_EMAIL_CHANGE_ENABLED (default), another to the current address; both
// must be confirmed. Under MAILER_AUTOCONFIRM the change applies at once.
import type { Deps } from '../deps.ts';
import { insertAudit } from '../db/audit.ts';
import { type Executor, transaction } from '../db/database.ts';
import { insertFlowState, latestFlowState, markAuthCodeIssued } from '../db/flow-state.ts';
import { clearOneTimeTokens, findOneTimeTokens, type OneTimeTokenType, putOneTimeToken } from '../db/one-time-tokens.ts';
import type { Pkce } from './pkce.ts';
import {
  findUserByEmail, findUserById, insertIdentity, isBanned, listIdentities, type NewUser, updateIdentityData, updateUser, type UserRow,
} from '../db/users.ts';
import { timingSafeEqual } from './encoding.ts';
import { consumeEmailSend, frequencyLimitError, verificationLink } from './email-tokens.ts';
import { ApiError, forbidden } from './errors.ts';
import { generateOtp, tokenHash } from './otp.ts';
import { type RequestMeta, type TokenResponse, createSession, tokenResponse } from './session.ts';

export const emailExists = () => new ApiError(422, 'email_exists', 'A user with this email address has already been registered');

export const HALF_CONFIRMED_MESSAGE = 'Confirmation link accepted. Please proceed to confirm link sent to the other email';

async function mailCode(deps: Deps, tx: Executor, user: UserRow, to: string, newEmail: string, column: 'emailChangeTokenNew' | 'emailChangeTokenCurrent', redirectTo: string, pkce: boolean): Promise<Partial<NewUser>> {
  const now = deps.now();
  await consumeEmailSend(deps, tx);
  const otp = generateOtp(deps.config.mailer.otpLength, deps.randomBytes);
  const hash = `${pkce ? 'pkce_' : ''}${tokenHash(to, otp)}`;
  await putOneTimeToken(tx, {
    userId: user.id, type: column === 'emailChangeTokenNew' ? 'email_change_token_new' : 'email_change_token_current',
    tokenHash: hash, relatesTo: to, now,
  });
  try {
    await deps.mailer.send({
      kind: 'email_change', to, token: otp, tokenHash: hash, newEmail, redirectTo, siteUrl: deps.config.siteUrl,
      confirmationUrl: verificationLink(deps, deps.config.mailer.urlPaths.emailChange, hash, 'email_change', redirectTo),
      userMetadata: user.rawUserMetaData ?? {},
    });
  } catch (err) {
    throw new ApiError(500, 'unexpected_failure', 'Error sending email change email', undefined, err);
  }
  return { [column]: hash };
}

/** Applies the change: the new address becomes the user's, confirmed, with an email identity. */
async function applyChange(tx: Executor, user: UserRow, now: Date): Promise<UserRow> {
  const newEmail = user.emailChange ?? '';
  const identities = await listIdentities(tx, [user.id]);
  const emailIdentity = identities.find((i) => i.provider === 'email');
  if (emailIdentity) {
    await updateIdentityData(tx, user.id, 'email', { ...emailIdentity.identityData, email: newEmail, email_verified: true });
  } else {
    await insertIdentity(tx, {
      providerId: user.id, userId: user.id, provider: 'email', createdAt: now, updatedAt: now, lastSignInAt: now,
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
    email: newEmail, emailChange: '', emailChangeTokenNew: '', emailChangeTokenCurrent: '', emailChangeSentAt: null,
    emailChangeConfirmStatus: 0, emailConfirmedAt: user.emailConfirmedAt ?? now, isAnonymous: false,
    rawAppMetaData: app, rawUserMetaData: { ...(user.rawUserMetaData ?? {}), email: newEmail, email_verified: true }, updatedAt: now,
  });
}

/** Called from PUT /user inside its transaction (the user row is locked). */
export async function requestEmailChange(deps: Deps, tx: Executor, user: UserRow, newEmail: string, redirectTo: string, ip?: string, pkce?: Pkce): Promise<UserRow> {
  const now = deps.now();
  const other = await findUserByEmail(tx, newEmail, user.aud ?? '');
  if (other && other.id !== user.id) throw emailExists();
  if (deps.config.mailer.autoconfirm) {
    const staged = await updateUser(tx, user.id, { emailChange: newEmail });
    const changed = await applyChange(tx, staged, now);
    await insertAudit(tx, { actor: changed, action: 'user_modified', ip, now });
    return changed;
  }
  if (user.emailChangeSentAt && user.emailChange) {
    const limited = frequencyLimitError(user.emailChangeSentAt, deps.config.smtp.maxFrequency, now);
    if (limited) throw limited;
  }
  const staged = await updateUser(tx, user.id, { emailChange: newEmail, emailChangeSentAt: now, emailChangeConfirmStatus: 0, emailChangeTokenCurrent: '', emailChangeTokenNew: '' });
  await clearOneTimeTokens(tx, user.id, 'email_change_token_current');
  if (pkce) {
    await insertFlowState(tx, { userId: user.id, challenge: pkce.challenge, method: pkce.method, providerType: 'email', authenticationMethod: 'email_change', now });
  }
  let patch = await mailCode(deps, tx, staged, newEmail, newEmail, 'emailChangeTokenNew', redirectTo, !!pkce);
  if (deps.config.mailer.secureEmailChangeEnabled && user.email) {
    patch = { ...patch, ...(await mailCode(deps, tx, staged, user.email, newEmail, 'emailChangeTokenCurrent', redirectTo, !!pkce)) };
  }
  return updateUser(tx, user.id, patch);
}

/** POST /resend type=email_change: the pending change's emails again. */
export async function resendEmailChange(deps: Deps, currentEmail: string, aud: string, redirectTo: string): Promise<void> {
  const found = await findUserByEmail(deps.db, currentEmail, aud);
  if (!found?.emailChange) return;
  await transaction(deps.db, async (tx) => {
    const user = (await findUserById(tx, found.id, { forUpdate: true }))!;
    await requestEmailChange(deps, tx, user, user.emailChange!, redirectTo);
  });
}

export type EmailChangeResult =
  | { kind: 'half'; message: string; pkce: boolean }
  | { kind: 'session'; token: TokenResponse }
  /** A PKCE link followed with `issueCode`: the code for grant_type=pkce. */
  | { kind: 'code'; authCode: string };

/** verify type=email_change, by code (+ the address it went to) or by link hash. */
export async function verifyEmailChange(deps: Deps, p: { aud: string; token?: string; email?: string; tokenHash?: string; issueCode?: boolean }, meta: RequestMeta): Promise<EmailChangeResult> {
  const byCode = p.token !== undefined;
  const invalid = () => forbidden('otp_expired', byCode ? 'Token has expired or is invalid' : 'Email link is invalid or has expired');
  const plain = byCode ? tokenHash((p.email ?? '').toLowerCase(), p.token!) : p.tokenHash ?? '';
  // The current address's token first, as GoTrue looks them up; a typed code may belong to a PKCE request.
  const types: OneTimeTokenType[] = ['email_change_token_current', 'email_change_token_new'];
  let rows = await findOneTimeTokens(deps.db, plain, types);
  if (rows.length === 0 && byCode) rows = await findOneTimeTokens(deps.db, `pkce_${plain}`, types);
  const hash = rows[0]?.tokenHash ?? plain;
  rows.sort((a, b) => (a.tokenType === b.tokenType ? 0 : a.tokenType === 'email_change_token_current' ? -1 : 1));
  const row = rows[0];
  if (!row) throw invalid();
  const column = row.tokenType === 'email_change_token_current' ? 'emailChangeTokenCurrent' : 'emailChangeTokenNew';
  return transaction(deps.db, async (tx) => {
    const now = deps.now();
    const user = await findUserById(tx, row.userId, { forUpdate: true });
    if (!user || user.aud !== p.aud || !user.emailChange || !user[column] || !timingSafeEqual(user[column]!, hash)) throw invalid();
    if (!user.emailChangeSentAt || now.getTime() > user.emailChangeSentAt.getTime() + deps.config.mailer.otpExp * 1000) throw invalid();
    if (isBanned(user, now)) throw forbidden('user_banned', 'User is banned');
    const secure = deps.config.mailer.secureEmailChangeEnabled && !!user.email && !deps.config.mailer.autoconfirm;
    if (secure && (user.emailChangeConfirmStatus ?? 0) === 0) {
      await updateUser(tx, user.id, { [column]: '', emailChangeConfirmStatus: 1, updatedAt: now });
      await clearOneTimeTokens(tx, user.id, row.tokenType);
      return { kind: 'half', message: HALF_CONFIRMED_MESSAGE, pkce: hash.startsWith('pkce_') };
    }
    const changed = await applyChange(tx, user, now);
    await insertAudit(tx, { actor: changed, action: 'user_modified', traits: { provider: 'email' }, ip: meta.ip, now });
    if (p.issueCode && hash.startsWith('pkce_')) {
      const flow = await latestFlowState(tx, user.id, 'email_change');
      if (!flow) throw new ApiError(404, 'flow_state_not_found', 'no valid flow state found for user.');
      await markAuthCodeIssued(tx, flow.id, now);
      return { kind: 'code', authCode: flow.authCode };
    }
    const issued = await createSession(deps, tx, changed, 'otp', meta);
    return { kind: 'session', token: await tokenResponse(deps, tx, issued) };
  });
}
