// POST /factors — GoTrue: mfa.go EnrollFactor (enrollTOTPFactor, enrollPhoneFactor,
// enrollWebAuthnFactor). A WebAuthn factor is only a name until its first challenge registers a key.
import { base32 } from '../crypto/encoding.ts';
import type { AuthContext } from '../app-env.ts';
import { sealSecret } from '../crypto/encrypted-string.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import { deleteUnverifiedPhoneFactors, type FactorRow, insertFactor, listFactors } from '../db/mfa.ts';
import { findUserById, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { validatePhone } from '../accounts/validate.ts';
import { ApiError, forbidden, unprocessable, validationFailed } from '../core/errors.ts';
import { deleteStaleFactors } from './load-factor.ts';
import { totpUri } from './otpauth.ts';

export interface EnrollInput {
  factor_type?: string;
  friendly_name?: string;
  issuer?: string;
  phone?: string;
}

/** A friendly name sits in a unique index (a btree row holds about 2,700 bytes): longer is refused, not a 500. */
export const MAX_FRIENDLY_NAME = 1024;

const ENROLL_DISABLED = {
  totp: ['mfa_totp_enroll_not_enabled', 'MFA enroll is disabled for TOTP'],
  phone: ['mfa_phone_enroll_not_enabled', 'MFA enroll is disabled for Phone'],
  webauthn: ['mfa_webauthn_enroll_not_enabled', 'MFA enroll is disabled for WebAuthn'],
} as const;

export const noSession = (what: 'enroll' | 'unenroll') =>
  new ApiError(500, 'unexpected_failure', `A valid session and a registered user are required to ${what} a factor`);

export async function enrollFactor(
  deps: Deps,
  auth: AuthContext,
  body: EnrollInput,
  ip: string | undefined,
): Promise<Record<string, unknown>> {
  const cfg = deps.config.mfa;
  const type = body.factor_type ?? '';
  if (type !== 'totp' && type !== 'phone' && type !== 'webauthn')
    throw validationFailed('factor_type needs to be totp, phone, or webauthn');
  const enabled = cfg[type].enrollEnabled;
  if (!enabled) throw unprocessable(ENROLL_DISABLED[type][0], ENROLL_DISABLED[type][1]);
  const session = auth.session;
  if (!session) throw noSession('enroll');
  const friendlyName = body.friendly_name ?? '';
  if (friendlyName.length > MAX_FRIENDLY_NAME)
    throw validationFailed(`friendly_name must be at most ${MAX_FRIENDLY_NAME} characters`);

  let phone: string | undefined;
  let totp: { secret: string; uri: string; qr: string } | undefined;
  if (type === 'totp') totp = await newTotp(deps, auth.user, body.issuer);
  else if (type === 'phone') {
    if (!body.phone) throw validationFailed('Phone number required to enroll Phone factor');
    phone = validatePhone(body.phone);
  }

  const now = deps.now();
  const factor = await transaction(deps.db, async (tx): Promise<FactorRow> => {
    // The user's row lock serialises enrolments: the limits below hold under concurrency.
    const user = await findUserById(tx, auth.user.id, { forUpdate: true });
    if (!user) throw forbidden('user_not_found', 'User from sub claim in JWT does not exist');
    if (phone) {
      const existing = await listFactors(tx, user.id);
      if (existing.some((f) => f.factorType === 'phone' && f.phone === phone && f.status === 'verified')) {
        throw unprocessable(
          'mfa_verified_factor_exists',
          'A verified phone factor already exists, unenroll the existing factor to continue',
        );
      }
      await deleteUnverifiedPhoneFactors(tx, user.id, phone);
    }
    await deleteStaleFactors(deps, tx, user.id, true);
    const factors = await listFactors(tx, user.id);
    if (factors.some((f) => (f.friendlyName ?? '') === friendlyName)) {
      throw unprocessable(
        'mfa_factor_name_conflict',
        `A factor with the friendly name "${friendlyName}" for this user already exists`,
      );
    }
    const verified = factors.filter((f) => f.status === 'verified').length;
    if (factors.length >= cfg.maxEnrolledFactors || verified >= cfg.maxVerifiedFactors) {
      throw unprocessable(
        'too_many_enrolled_mfa_factors',
        'Maximum number of verified factors reached, unenroll to continue',
      );
    }
    if (verified > 0 && session.aal !== 'aal2')
      throw forbidden('insufficient_aal', 'AAL2 required to enroll a new factor');
    const id = crypto.randomUUID();
    // Encrypted under SECURITY_DB_ENCRYPTION_ENCRYPT, bound to the factor id (GoTrue's SetSecret).
    const secret = totp ? await sealSecret(deps.config.security.dbEncryption, id, totp.secret, deps.randomBytes) : null;
    const row = await insertFactor(tx, {
      id,
      userId: user.id,
      friendlyName,
      factorType: type,
      status: 'unverified',
      createdAt: now,
      updatedAt: now,
      secret,
      phone: phone ?? null,
    });
    const traits: Record<string, unknown> = { factor_id: row.id };
    if (type !== 'totp') traits.factor_type = type;
    await insertAudit(tx, { actor: user, action: 'factor_in_progress', traits, ip, now });
    return row;
  });

  const out: Record<string, unknown> = { id: factor.id, type, friendly_name: friendlyName };
  if (totp) out.totp = { qr_code: totp.qr, secret: totp.secret, uri: totp.uri };
  else if (type === 'phone') out.phone = body.phone;
  return out;
}

async function newTotp(
  deps: Deps,
  user: UserRow,
  issuerIn: string | undefined,
): Promise<{ secret: string; uri: string; qr: string }> {
  let issuer = issuerIn;
  if (!issuer) {
    try {
      issuer = new URL(deps.config.siteUrl).host;
    } catch {
      throw new ApiError(500, 'unexpected_failure', 'site url is improperly formatted');
    }
  }
  // GoTrue names the account by email only and answers 500 for a phone-only user; the phone
  // number is as good a label for an authenticator app (a deliberate difference).
  const account = user.email || (user.phone ? `+${user.phone}` : '');
  if (!account) throw new ApiError(500, 'unexpected_failure', 'Error generating QR Code');
  // Upper-case RFC 4648 base32 without padding, as GoTrue shows and stores TOTP secrets.
  const secret = base32(deps.randomBytes(20)).toUpperCase();
  const uri = totpUri(issuer, account, secret);
  // The QR encoder is imported on the first TOTP enrolment, not at start.
  const { qrSvg } = await import('./qr-svg.ts');
  let qr: string;
  try {
    qr = qrSvg(uri);
  } catch {
    // A QR code holds at most 1,273 bytes at level H: only a huge issuer gets here.
    throw validationFailed('issuer is too long to fit the otpauth URI in a QR code');
  }
  return { secret, uri, qr };
}
