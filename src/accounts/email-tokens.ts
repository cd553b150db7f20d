// Emailed one-time tokens (GoTrue §6): a code and its hash, sha224(email + code), recorded on the
// user column of its kind and in one_time_tokens, with the SHA-256 of a random link token (the
// link's value: crypto/otp.ts), then queued on the request's outbox: the mail goes out after the
// transaction commits, and a failed send takes these writes back (outbox.ts).
import { generateOtp, newLinkToken, tokenHash } from '../crypto/otp.ts';
import type { Executor } from '../db/database.ts';
import { deleteFlowState, insertFlowState } from '../db/flow-state.ts';
import { type OneTimeTokenType, putOneTimeToken, restoreOneTimeToken } from '../db/one-time-tokens.ts';
import { consume, release } from '../db/rate-limits.ts';
import { type NewUser, restoreUserColumns, updateUser, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';
import type { MailKind } from '../mail/mailer.ts';
import type { Outbox } from './outbox.ts';
import type { Pkce } from './pkce-params.ts';

// Magic links may be re-requested sooner than confirmation and recovery emails (DESIGN.md).
export const MAGIC_LINK_MAX_FREQUENCY = 60;

export type EmailTokenKind = 'confirmation' | 'invite' | 'recovery' | 'magic_link' | 'reauthentication';

/** flow_state.authentication_method of each kind (GoTrue's names). */
export const FLOW_METHOD: Record<EmailTokenKind, string> = {
  confirmation: 'email/signup',
  invite: 'invite',
  recovery: 'recovery',
  magic_link: 'magiclink',
  reauthentication: 'reauthentication',
};

interface KindSpec {
  ott: OneTimeTokenType;
  mail: MailKind;
  /** `type` in the link; none for reauthentication (the code is typed in). */
  linkType?: 'signup' | 'invite' | 'recovery' | 'magiclink';
  path?: 'confirmation' | 'invite' | 'recovery';
  sentAt: 'confirmationSentAt' | 'recoverySentAt' | 'reauthenticationSentAt';
  column: 'confirmationToken' | 'recoveryToken' | 'reauthenticationToken';
  /** Seconds between two sends to one user; undefined = no limit (invites). */
  frequency?: (deps: Deps) => number;
}

const KINDS: Record<EmailTokenKind, KindSpec> = {
  confirmation: {
    ott: 'confirmation_token',
    mail: 'confirmation',
    linkType: 'signup',
    path: 'confirmation',
    sentAt: 'confirmationSentAt',
    column: 'confirmationToken',
    frequency: (d) => d.config.smtp.maxFrequency,
  },
  invite: {
    ott: 'confirmation_token',
    mail: 'invite',
    linkType: 'invite',
    path: 'invite',
    sentAt: 'confirmationSentAt',
    column: 'confirmationToken',
  },
  recovery: {
    ott: 'recovery_token',
    mail: 'recovery',
    linkType: 'recovery',
    path: 'recovery',
    sentAt: 'recoverySentAt',
    column: 'recoveryToken',
    frequency: (d) => d.config.smtp.maxFrequency,
  },
  magic_link: {
    ott: 'recovery_token',
    mail: 'magic_link',
    linkType: 'magiclink',
    path: 'recovery',
    sentAt: 'recoverySentAt',
    column: 'recoveryToken',
    frequency: () => MAGIC_LINK_MAX_FREQUENCY,
  },
  reauthentication: {
    ott: 'reauthentication_token',
    mail: 'reauthentication',
    sentAt: 'reauthenticationSentAt',
    column: 'reauthenticationToken',
    frequency: (d) => d.config.smtp.maxFrequency,
  },
};

export function frequencyLimitError(sentAt: Date, maxFrequencySeconds: number, now: Date): ApiError | undefined {
  const left = sentAt.getTime() + maxFrequencySeconds * 1000 - now.getTime();
  if (left <= 0) return undefined;
  return new ApiError(
    429,
    'over_email_send_rate_limit',
    `For security purposes, you can only request this after ${Math.floor(left / 1000)} seconds.`,
  );
}

/**
 * `<API_EXTERNAL_URL>` resolved against `<path>?token=…&type=…&redirect_to=…`, as GoTrue builds it.
 * GoTrue escapes redirect_to only when it holds `&`, `=` or `#`; a `+` or `%` must be escaped too,
 * or GET /verify reads back another URL (a `+` becomes a space).
 */
export function verificationLink(deps: Deps, path: string, hash: string, type: string, redirectTo: string): string {
  const escRedirect = /[&=#+%\s]/.test(redirectTo) ? encodeURIComponent(redirectTo) : redirectTo;
  const rel = `${path}?token=${encodeURIComponent(hash)}&type=${encodeURIComponent(type)}&redirect_to=${escRedirect}`;
  return new URL(rel, deps.config.api.externalUrl).toString();
}

// GoTrue's emailLabelPattern: `a+label@x` counts as `a@x` for the authorised-address list.
const EMAIL_LABEL = /[+][^@]+@/;

/**
 * EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES: when set, email goes only to these addresses (a `+label`
 * ignored, case-insensitive); anything else is 400 email_address_not_authorized, as in GoTrue.
 */
export function assertAuthorizedRecipient(deps: Deps, address: string): void {
  const allowed = deps.config.external.email.authorizedAddresses;
  if (allowed.length === 0 || address === '') return;
  const normalised = address.replace(EMAIL_LABEL, '@').toLowerCase();
  if (allowed.some((a) => a.toLowerCase() === normalised)) return;
  throw new ApiError(
    400,
    'email_address_not_authorized',
    `Email address "${address}" cannot be used as it is not authorized`,
  );
}

/**
 * RATE_LIMIT_EMAIL_SENT, counted in Postgres inside the request's transaction: exact across
 * instances. Skipped under MAILER_AUTOCONFIRM as in GoTrue, except that a limit of 0 still
 * blocks every email. A failed send gives the count back.
 */
export async function consumeEmailSend(deps: Deps, tx: Executor, out: Outbox): Promise<void> {
  const limit = deps.config.rateLimit.emailSent;
  if (deps.config.mailer.autoconfirm && limit.count > 0) return;
  const at = deps.now();
  if (!(await consume(tx, 'email_sent', limit, at))) {
    throw new ApiError(429, 'over_email_send_rate_limit', 'email rate limit exceeded');
  }
  out.undo((u) => release(u, 'email_sent', limit, at));
}

export interface StoreOptions {
  redirectTo: string;
  /** PKCE: a flow_state row is created, the stored token is `pkce_<hash>` and GET /verify answers with `?code=`. */
  pkce?: Pkce;
  /** Extra user columns written with the token (e.g. invited_at, or the password of a repeated signup). */
  patch?: Partial<NewUser>;
  /** Where the token goes when it is not the user's address: a provider address pending confirmation. */
  address?: string;
}

export interface StoredToken {
  user: UserRow;
  /** The code. */
  otp: string;
  /** What the user column and one_time_tokens.token_hash hold: the code's hash, `pkce_`-prefixed under PKCE. */
  stored: string;
  /** The link's value (`{{ .TokenHash }}`, generate_link's `hashed_token`): random, `pkce_`-prefixed under PKCE. */
  linkToken: string;
  /** The verification link ('' for reauthentication, whose code is typed in). */
  link: string;
}

/**
 * The "store" half of an emailed token, shared by the mail flows and POST /admin/generate_link:
 * the user column and its sent-at time, one_time_tokens, and the PKCE flow state. With `out`,
 * each write registers how to take it back if the mail cannot be sent.
 */
export async function storeEmailToken(
  deps: Deps,
  tx: Executor,
  user: UserRow,
  kind: EmailTokenKind,
  opts: StoreOptions & { otp?: string },
  out?: Outbox,
): Promise<StoredToken> {
  const spec = KINDS[kind];
  const now = deps.now();
  const email = (opts.address ?? user.email ?? '').toLowerCase();
  const otp = opts.otp ?? generateOtp(deps.config.mailer.otpLength, deps.randomBytes);
  const hash = tokenHash(email, otp);
  const stored = opts.pkce ? `pkce_${hash}` : hash;
  const link = spec.linkType ? newLinkToken(deps.randomBytes, !!opts.pkce) : undefined;
  if (opts.pkce) {
    const flow = await insertFlowState(tx, {
      userId: user.id,
      challenge: opts.pkce.challenge,
      method: opts.pkce.method,
      providerType: 'email',
      authenticationMethod: FLOW_METHOD[kind],
      now,
    });
    out?.undo((u) => deleteFlowState(u, flow.id));
  }
  const patch: Partial<NewUser> = { [spec.column]: stored, [spec.sentAt]: now, ...opts.patch };
  const before = Object.fromEntries(
    Object.keys(patch).map((k) => [k, user[k as keyof UserRow] ?? null]),
  ) as Partial<NewUser>;
  const updated = await updateUser(tx, user.id, patch);
  out?.undo((u) => restoreUserColumns(u, user.id, before, { column: spec.column, value: stored }));
  const previous = await putOneTimeToken(tx, {
    userId: user.id,
    type: spec.ott,
    tokenHash: stored,
    relatesTo: email,
    now,
    linkHash: link?.hash,
  });
  out?.undo((u) => restoreOneTimeToken(u, user.id, spec.ott, stored, previous));
  const paths = deps.config.mailer.urlPaths;
  const url =
    link && spec.linkType && spec.path
      ? verificationLink(deps, paths[spec.path], link.token, spec.linkType, opts.redirectTo)
      : '';
  return { user: updated, otp, stored, linkToken: link?.token ?? '', link: url };
}

/**
 * Checks the per-user frequency limit, the authorised-address list and the hourly email limit,
 * stores a new token of `kind` and queues its email on `out`.
 */
export async function queueEmailToken(
  deps: Deps,
  tx: Executor,
  out: Outbox,
  user: UserRow,
  kind: EmailTokenKind,
  opts: StoreOptions,
): Promise<UserRow> {
  const spec = KINDS[kind];
  const last = user[spec.sentAt];
  if (last && spec.frequency) {
    const limited = frequencyLimitError(last, spec.frequency(deps), deps.now());
    if (limited) throw limited;
  }
  const email = (opts.address ?? user.email ?? '').toLowerCase();
  assertAuthorizedRecipient(deps, email);
  await consumeEmailSend(deps, tx, out);
  const t = await storeEmailToken(deps, tx, user, kind, opts, out);
  out.mail(
    {
      kind: spec.mail,
      to: email,
      token: t.otp,
      tokenHash: t.linkToken,
      confirmationUrl: t.link,
      siteUrl: deps.config.siteUrl,
      redirectTo: opts.redirectTo,
      userMetadata: t.user.rawUserMetaData ?? {},
    },
    user.id,
  );
  return t.user;
}
