// MFA factors — GoTrue: mfa.go (EnrollFactor, ChallengeFactor, VerifyFactor, UnenrollFactor) and
// admin.go (adminUserGetFactors, adminUserUpdateFactor, adminUserDeleteFactor). Order as GoTrue's
// middleware: bearer, not anonymous, the factor's look-up, the per-IP limit, then the body.
import { Hono, type MiddlewareHandler } from 'hono';
import * as z from 'zod';
import { parseUuid, userIdParam } from '../http/uuid.ts';
import type { AppEnv } from '../app-env.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { requireAuth } from '../http/auth.ts';
import { forbidden } from '../core/errors.ts';
import { enforceRateLimit } from '../http/rate-limit.ts';
import { optStr, readJson, readOptionalJson } from '../http/read-json.ts';
import { requestMeta } from '../http/request-meta.ts';
import { challengeFactor, requireVerifyEnabled } from '../mfa/challenge.ts';
import { enrollFactor } from '../mfa/enroll.ts';
import { loadFactor } from '../mfa/load-factor.ts';
import { adminDeleteFactor, adminListFactors, adminUpdateFactor, unenrollFactor } from '../mfa/manage.ts';
import { deleteRecoveryCodes, generateRecoveryCodes, recoveryCodeStatus, regenerateRecoveryCodes } from '../mfa/recovery-codes.ts';
import { verifyRecoveryCode } from '../mfa/recovery-verify.ts';
import { verifyFactor } from '../mfa/verify.ts';

export const EnrollBody = z.object({ factor_type: optStr, friendly_name: optStr, issuer: optStr, phone: optStr });
// auth-js also sends `factorId` and `webauthn: {rpId, rpOrigins}`: ignored, as GoTrue ignores them.
export const ChallengeBody = z.object({ channel: optStr });
// A challenge_id that is not a UUID is a JSON decoding error in GoTrue (uuid.UUID field): bad_json.
const challengeId = z.string().refine((s) => parseUuid(s) !== null, 'not a UUID').nullish().transform((v) => (v ? parseUuid(v)! : undefined));
// `webauthn.credential_response` is checked by the ceremony (crypto/webauthn.ts): a bad one is validation_failed.
const WebauthnParams = z.object({ type: optStr, credential_response: z.unknown().optional() }).nullish().transform((v) => v ?? undefined);
export const VerifyBody = z.object({ challenge_id: challengeId, code: optStr, webauthn: WebauthnParams });
export const AdminFactorBody = z.object({ friendly_name: optStr, phone: optStr });
export const RecoveryCodesBody = z.object({ friendly_name: optStr });
export const RecoveryVerifyBody = z.object({ code: optStr });

const notAnonymous: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.get('auth').user.isAnonymous) throw forbidden('no_authorization', 'Anonymous user not allowed to perform these actions');
  await next();
};

export const mfaRoutes = new Hono<AppEnv>();

mfaRoutes.post('/factors', requireAuth, notAnonymous, async (c) => {
  const body = await readJson(c, EnrollBody);
  return c.json(await enrollFactor(c.get('deps'), c.get('auth'), body, requestMeta(c).ip));
});

// Recovery codes (GoTrue after our reference: supabase/auth#2762–#2780). Registered before the
// /factors/:factor_id routes, which would otherwise take "recovery-codes" for a malformed id.
mfaRoutes.get('/factors/recovery-codes', requireAuth, notAnonymous, async (c) => {
  return c.json(await recoveryCodeStatus(c.get('deps'), c.get('auth')));
});

mfaRoutes.post('/factors/recovery-codes', requireAuth, notAnonymous, async (c) => {
  const body = await readOptionalJson(c, RecoveryCodesBody);
  return c.json(await generateRecoveryCodes(c.get('deps'), c.get('auth'), body, requestMeta(c).ip));
});

mfaRoutes.post('/factors/recovery-codes/verify', requireAuth, notAnonymous, async (c) => {
  await enforceRateLimit(c, 'mfa_verify');
  const body = await readJson(c, RecoveryVerifyBody);
  return c.json(await verifyRecoveryCode(c.get('deps'), c.get('auth'), body.code, requestMeta(c).ip));
});

mfaRoutes.post('/factors/recovery-codes/regenerate', requireAuth, notAnonymous, async (c) => {
  return c.json(await regenerateRecoveryCodes(c.get('deps'), c.get('auth'), requestMeta(c).ip));
});

mfaRoutes.delete('/factors/recovery-codes', requireAuth, notAnonymous, async (c) => {
  return c.json(await deleteRecoveryCodes(c.get('deps'), c.get('auth'), requestMeta(c).ip));
});

mfaRoutes.post('/factors/:factor_id/challenge', requireAuth, notAnonymous, async (c) => {
  const deps = c.get('deps');
  const factor = await loadFactor(deps, c.get('auth'), c.req.param('factor_id'));
  await enforceRateLimit(c, 'mfa_challenge');
  requireVerifyEnabled(deps, factor);
  // A TOTP challenge reads no body; phone and WebAuthn challenges need one (GoTrue: empty → bad_json).
  const body = factor.factorType === 'totp' ? undefined : await readJson(c, ChallengeBody);
  const channel = factor.factorType === 'phone' ? body?.channel : undefined;
  return c.json(await challengeFactor(deps, c.get('auth'), factor.id, channel, requestMeta(c).ip));
});

mfaRoutes.post('/factors/:factor_id/verify', requireAuth, notAnonymous, async (c) => {
  const deps = c.get('deps');
  const factor = await loadFactor(deps, c.get('auth'), c.req.param('factor_id'));
  await enforceRateLimit(c, 'mfa_verify');
  const body = await readJson(c, VerifyBody);
  return c.json(await verifyFactor(deps, c.get('auth'), factor, { challengeId: body.challenge_id, code: body.code, webauthn: body.webauthn }, requestMeta(c).ip));
});

mfaRoutes.delete('/factors/:factor_id', requireAuth, notAnonymous, async (c) => {
  const factor = await loadFactor(c.get('deps'), c.get('auth'), c.req.param('factor_id'));
  return c.json(await unenrollFactor(c.get('deps'), c.get('auth'), factor, requestMeta(c).ip));
});

mfaRoutes.get('/admin/users/:user_id/factors', requireAdmin, async (c) => {
  return c.json(await adminListFactors(c.get('deps'), userIdParam(c.req.param('user_id'))));
});

mfaRoutes.put('/admin/users/:user_id/factors/:factor_id', requireAdmin, async (c) => {
  const userId = userIdParam(c.req.param('user_id'));
  const body = await readJson(c, AdminFactorBody);
  return c.json(await adminUpdateFactor(c.get('deps'), userId, c.req.param('factor_id'), body, null, requestMeta(c).ip));
});

mfaRoutes.delete('/admin/users/:user_id/factors/:factor_id', requireAdmin, async (c) => {
  const userId = userIdParam(c.req.param('user_id'));
  return c.json(await adminDeleteFactor(c.get('deps'), userId, c.req.param('factor_id'), null, requestMeta(c).ip));
});
