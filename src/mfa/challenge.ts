// POST /factors/{id}/challenge — GoTrue: mfa.go ChallengeFactor (challengeTOTPFactor,
// challengePhoneFactor, challengeWebAuthnFactor). A phone challenge's code is texted after the commit (accounts/outbox.ts);
// a failed send takes the challenge, the stamp and the counted text back.
import type { AuthContext } from '../app-env.ts';
import { generateOtp } from '../crypto/otp.ts';
import { sealSecret } from '../crypto/encrypted-string.ts';
import { insertAudit } from '../db/audit.ts';
import { type Executor, isUniqueViolation } from '../db/database.ts';
import {
  deleteChallenge,
  type FactorRow,
  findFactor,
  insertChallenge,
  stampChallenged,
  updateFactor,
} from '../db/mfa.ts';
import { consume, release } from '../db/rate-limits.ts';
import type { Deps } from '../deps.ts';
import { transactionThenSend } from '../accounts/outbox.ts';
import { parseChannel, renderSms } from '../accounts/phone-tokens.ts';
import { ApiError, unprocessable } from '../core/errors.ts';
import type { SmsChannel } from '../sms/provider.ts';
import { factorLocked, lockSecondsLeft } from './failure-lock.ts';
import { factorNotFound, requireAal2ToFinish } from './load-factor.ts';
import { type WebauthnChallenge, webauthnChallenge } from './webauthn.ts';

/** Stored when the adapter knows no client address: verify compares it all the same. */
export const UNKNOWN_IP = '0.0.0.0';

export function requireVerifyEnabled(deps: Deps, factor: FactorRow): void {
  const cfg = deps.config.mfa;
  if (factor.factorType === 'phone' && !cfg.phone.verifyEnabled)
    throw unprocessable('mfa_phone_verify_not_enabled', 'MFA verification is disabled for Phone');
  if (factor.factorType === 'totp' && !cfg.totp.verifyEnabled)
    throw unprocessable('mfa_totp_verify_not_enabled', 'MFA verification is disabled for TOTP');
  if (factor.factorType === 'webauthn' && !cfg.webauthn.verifyEnabled)
    throw unprocessable('mfa_webauthn_verify_not_enabled', 'MFA verification is disabled for WebAuthn');
}

export interface ChallengeAnswer {
  id: string;
  type: string;
  expires_at: number;
  webauthn?: WebauthnChallenge['answer'];
}

export async function challengeFactor(
  deps: Deps,
  auth: AuthContext,
  factorId: string,
  channelIn: string | undefined,
  ip: string | undefined,
): Promise<ChallengeAnswer> {
  const now = deps.now();
  const channel: SmsChannel | undefined = channelIn === undefined ? undefined : parseChannel(deps, channelIn);
  // last_challenged_at is UNIQUE across all factors (GoTrue's schema): two factors stamped with
  // the same random microsecond of one millisecond (about 1 in 1,000 when that happens) try again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await challengeOnce(deps, auth, factorId, channel, ip, now);
    } catch (err) {
      if (attempt >= 3 || !isUniqueViolation(err)) throw err;
    }
  }
}

async function challengeOnce(
  deps: Deps,
  auth: AuthContext,
  factorId: string,
  channel: SmsChannel | undefined,
  ip: string | undefined,
  now: Date,
): Promise<ChallengeAnswer> {
  const micros = deps.randomBytes(2).reduce((a, b) => a * 256 + b, 0);
  const created = await transactionThenSend(deps, async (tx, out) => {
    const factor = await findFactor(tx, factorId, { forUpdate: true });
    if (!factor || factor.userId !== auth.user.id) throw factorNotFound();
    await requireAal2ToFinish(tx, auth, factor, 'challenge');
    // No text (nor TOTP challenge) for a factor that would refuse every code now.
    const wait = lockSecondsLeft(factor, now);
    if (wait > 0) throw factorLocked(wait);
    let otpCode: string | null = null;
    if (factor.factorType === 'phone') {
      const cfg = deps.config.mfa.phone;
      const last = factor.lastChallengedAt;
      const left = last ? last.getTime() + cfg.maxFrequency * 1000 - now.getTime() : 0;
      if (left > 0) {
        throw new ApiError(
          429,
          'over_sms_send_rate_limit',
          `For security purposes, you can only request this after ${Math.ceil(left / 1000)} seconds.`,
        );
      }
      // GoTrue does not count MFA texts against RATE_LIMIT_SMS_SENT; every text here does.
      const limit = deps.config.rateLimit.smsSent;
      if (!(await consume(tx, 'sms_sent', limit, now)))
        throw new ApiError(429, 'over_sms_send_rate_limit', 'SMS rate limit exceeded');
      out.undo((u) => release(u, 'sms_sent', limit, now));
      otpCode = generateOtp(cfg.otpLength, deps.randomBytes);
      out.sms({
        kind: 'mfa',
        message: {
          phone: factor.phone ?? '',
          message: renderSms(cfg.template, otpCode),
          channel: channel ?? 'sms',
          otp: otpCode,
        },
        userId: auth.user.id,
      });
    }
    // A WebAuthn factor's ceremony options; the session data is kept to check the answer.
    const webauthn =
      factor.factorType === 'webauthn' ? await webauthnChallenge(deps, tx, auth, factor, now) : undefined;
    const id = crypto.randomUUID();
    // Encrypted under SECURITY_DB_ENCRYPTION_ENCRYPT, bound to the challenge id (GoTrue's SetOtpCode).
    const stored =
      otpCode === null ? null : await sealSecret(deps.config.security.dbEncryption, id, otpCode, deps.randomBytes);
    const challenge = await insertChallenge(tx, {
      id,
      factorId: factor.id,
      createdAt: now,
      ipAddress: ip ?? UNKNOWN_IP,
      otpCode: stored,
      webAuthnSessionData: webauthn?.sessionData ?? null,
    });
    out.undo((u) => deleteChallenge(u, challenge.id));
    await stampChallenged(tx, factor.id, now, micros);
    out.undo((u) => restoreStamp(u, factor));
    // GoTrue audits no WebAuthn challenge.
    if (!webauthn)
      await insertAudit(tx, {
        actor: auth.user,
        action: 'challenge_created',
        traits: { factor_id: factor.id, factor_status: factor.status },
        ip,
        now,
      });
    return { challenge, factor, webauthn };
  });
  const answer: ChallengeAnswer = {
    id: created.challenge.id,
    type: created.factor.factorType,
    expires_at: Math.floor(created.challenge.createdAt.getTime() / 1000) + Math.floor(deps.config.mfa.challengeExpiry),
  };
  if (created.webauthn) answer.webauthn = created.webauthn.answer;
  return answer;
}

async function restoreStamp(ex: Executor, factor: FactorRow): Promise<void> {
  await updateFactor(ex, factor.id, { lastChallengedAt: factor.lastChallengedAt });
}
