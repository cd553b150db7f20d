// MFA factors — GoTrue: mfa.go (EnrollFactor, ChallengeFactor, VerifyFactor, UnenrollFactor) and
// admin.go (adminUserGetFactors, adminUserUpdateFactor, adminUserDeleteFactor). Order as GoTrue's
// middleware: bearer, not anonymous, the factor's look-up, the per-IP limit, then the body.
import type { MiddlewareHandler } from 'hono';
import * as z from 'zod';
import { parseUuid, userIdParam } from '../http/uuid.ts';
import type { AppEnv } from '../app-env.ts';
import { forbidden } from '../core/errors.ts';
import { enforceRateLimit } from '../http/rate-limit.ts';
import { optStr, readJson } from '../http/read-json.ts';
import { requestMeta } from '../http/request-meta.ts';
import { challengeFactor, requireVerifyEnabled } from '../mfa/challenge.ts';
import { enrollFactor } from '../mfa/enroll.ts';
import { loadFactor } from '../mfa/load-factor.ts';
import { adminDeleteFactor, adminListFactors, adminUpdateFactor, unenrollFactor } from '../mfa/manage.ts';
import {
  deleteRecoveryCodes,
  generateRecoveryCodes,
  recoveryCodeStatus,
  regenerateRecoveryCodes,
} from '../mfa/recovery-codes.ts';
import { verifyRecoveryCode } from '../mfa/recovery-verify.ts';
import { verifyFactor } from '../mfa/verify.ts';
import { type Reply, routeGroup } from '../http/route.ts';
import { error, json, str } from '../openapi/parts.ts';

export const EnrollBody = z.object({ factor_type: optStr, friendly_name: optStr, issuer: optStr, phone: optStr });
// auth-js also sends `factorId` and `webauthn: {rpId, rpOrigins}`: ignored, as GoTrue ignores them.
export const ChallengeBody = z.object({ channel: optStr });
// A challenge_id that is not a UUID is a JSON decoding error in GoTrue (uuid.UUID field): bad_json.
const challengeId = z
  .string()
  .refine((s) => parseUuid(s) !== null, 'not a UUID')
  .nullish()
  .transform((v) => (v ? parseUuid(v)! : undefined));
// `webauthn.credential_response` is checked by the ceremony (crypto/webauthn.ts): a bad one is validation_failed.
const WebauthnParams = z
  .object({ type: optStr, credential_response: z.unknown().optional() })
  .nullish()
  .transform((v) => v ?? undefined);
export const VerifyBody = z.object({ challenge_id: challengeId, code: optStr, webauthn: WebauthnParams });
export const AdminFactorBody = z.object({ friendly_name: optStr, phone: optStr });
export const RecoveryCodesBody = z.object({ friendly_name: optStr });
export const RecoveryVerifyBody = z.object({ code: optStr });

const notAnonymous: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.get('auth').user.isAnonymous)
    throw forbidden('no_authorization', 'Anonymous user not allowed to perform these actions');
  await next();
};

export const mfaRoutes = routeGroup('mfa');

const factorErrors: Record<string, Reply> = {
  404: error('`mfa_factor_not_found`, or `validation_failed` for an id that is not a UUID.'),
};
const factorJson = {
  type: 'object',
  description:
    'A factor (GoTrue models.Factor): id, created_at, updated_at, status, friendly_name?, factor_type, phone, last_challenged_at.',
};

mfaRoutes.route(
  {
    method: 'post',
    path: '/factors',
    summary: 'Enrol a TOTP, phone or WebAuthn factor',
    gotrue: 'EnrollFactor',
    auth: 'user',
    guards: [notAnonymous],
    body: EnrollBody,
    replies: {
      200: json({ type: 'object', description: '{id, type, friendly_name, totp?: {qr_code, secret, uri}, phone?}' }),
      403: error('`insufficient_aal`: a verified factor exists and the session is aal1.'),
      422: error('Type disabled, name conflict, too many factors, or a verified phone factor exists.'),
    },
  },
  async (c, body) => {
    return c.json(await enrollFactor(c.get('deps'), c.get('auth'), body, requestMeta(c).ip));
  },
);

// Recovery codes (GoTrue after our reference: supabase/auth#2762–#2780). Registered before the
// /factors/:factor_id routes, which would otherwise take "recovery-codes" for a malformed id.
mfaRoutes.route(
  {
    method: 'get',
    path: '/factors/recovery-codes',
    summary: "The user's recovery-code set: codes in all and unused",
    auth: 'user',
    guards: [notAnonymous],
    replies: {
      200: json({ type: 'object', description: '{id, type: "recovery_code", total, remaining}' }),
      404: error('`mfa_factor_not_found`: the user has no recovery codes.'),
    },
  },
  async (c) => {
    return c.json(await recoveryCodeStatus(c.get('deps'), c.get('auth')));
  },
);

mfaRoutes.route(
  {
    method: 'post',
    path: '/factors/recovery-codes',
    summary: 'Generate recovery codes (aal2; shown once)',
    auth: 'user',
    guards: [notAnonymous],
    body: RecoveryCodesBody,
    bodyOptional: true,
    replies: {
      200: json({ type: 'object', description: '{id, type, friendly_name, total, codes}' }),
      403: error('`insufficient_aal`.'),
      422: error('`mfa_recovery_codes_enroll_not_enabled`, or `mfa_verified_factor_exists` (the user has a set).'),
    },
  },
  async (c, body) => {
    return c.json(await generateRecoveryCodes(c.get('deps'), c.get('auth'), body, requestMeta(c).ip));
  },
);

mfaRoutes.route(
  {
    method: 'post',
    path: '/factors/recovery-codes/verify',
    summary: 'Use a recovery code: the session becomes aal2 (AMR mfa/recovery_code)',
    auth: 'user',
    guards: [notAnonymous],
    rateLimit: 'mfa_verify',
    body: RecoveryVerifyBody,
    replies: {
      200: json('Session'),
      404: error('`mfa_factor_not_found`: the user has no recovery codes.'),
      422: error('`mfa_verification_failed` or `mfa_recovery_codes_verify_not_enabled`.'),
      429: error(
        '`over_request_rate_limit`: five wrong codes in a row lock the set (15 minutes, doubling with each lock, up to a day), or the per-IP limit.',
      ),
    },
  },
  async (c, body) => {
    return c.json(await verifyRecoveryCode(c.get('deps'), c.get('auth'), body.code, requestMeta(c).ip));
  },
);

mfaRoutes.route(
  {
    method: 'post',
    path: '/factors/recovery-codes/regenerate',
    summary: 'Replace the recovery codes (aal2): earlier codes stop working',
    auth: 'user',
    guards: [notAnonymous],
    replies: {
      200: json({ type: 'object', description: '{id, type, friendly_name, total, codes}' }),
      403: error('`insufficient_aal`.'),
      404: error('`mfa_factor_not_found`.'),
      422: error('`mfa_recovery_codes_enroll_not_enabled`.'),
    },
  },
  async (c) => {
    return c.json(await regenerateRecoveryCodes(c.get('deps'), c.get('auth'), requestMeta(c).ip));
  },
);

mfaRoutes.route(
  {
    method: 'delete',
    path: '/factors/recovery-codes',
    summary: 'Delete the recovery codes (aal2)',
    auth: 'user',
    guards: [notAnonymous],
    replies: {
      200: json({ type: 'object', properties: { id: str } }),
      403: error('`insufficient_aal`.'),
      404: error('`mfa_factor_not_found`.'),
    },
  },
  async (c) => {
    return c.json(await deleteRecoveryCodes(c.get('deps'), c.get('auth'), requestMeta(c).ip));
  },
);

// The factor is loaded before the bucket is taken, and its type decides whether there is a body.
mfaRoutes.route(
  {
    method: 'post',
    path: '/factors/{factor_id}/challenge',
    summary: 'Challenge a factor (a phone factor is texted a code; a WebAuthn factor gets creation or request options)',
    gotrue: 'ChallengeFactor',
    auth: 'user',
    guards: [notAnonymous],
    bodyReadByHandler: ChallengeBody,
    bodyOptional: true,
    replies: {
      200: json({
        type: 'object',
        description: '{id, type, expires_at, webauthn?: {type: create|request, credential_options: {publicKey}}}',
      }),
      ...factorErrors,
      403: error('`insufficient_aal`: an unverified factor, a verified one exists and the session is aal1.'),
      422: error('Verification disabled for the factor type.'),
      429: error(
        '`over_sms_send_rate_limit`, `over_request_rate_limit`, or `mfa_factor_locked` (five wrong codes in a row).',
      ),
    },
  },
  async (c) => {
    const deps = c.get('deps');
    const factor = await loadFactor(deps, c.get('auth'), c.req.param('factor_id'));
    await enforceRateLimit(c, 'mfa_challenge');
    requireVerifyEnabled(deps, factor);
    // A TOTP challenge reads no body; phone and WebAuthn challenges need one (GoTrue: empty → bad_json).
    const body = factor.factorType === 'totp' ? undefined : await readJson(c, ChallengeBody);
    const channel = factor.factorType === 'phone' ? body?.channel : undefined;
    return c.json(await challengeFactor(deps, c.get('auth'), factor.id, channel, requestMeta(c).ip));
  },
);

// The factor is loaded (404) before the bucket is taken and the body read.
mfaRoutes.route(
  {
    method: 'post',
    path: '/factors/{factor_id}/verify',
    summary: 'Verify a challenge: the session becomes aal2',
    gotrue: 'VerifyFactor',
    auth: 'user',
    guards: [notAnonymous],
    bodyReadByHandler: VerifyBody,
    replies: {
      200: json('Session'),
      ...factorErrors,
      403: error(
        '`insufficient_aal` (an unverified factor, a verified one exists, the session is aal1), `otp_expired` (Twilio Verify refused the code), `mfa_verification_rejected` (hook).',
      ),
      422: error(
        '`mfa_verification_failed`, `mfa_challenge_expired`, `mfa_ip_address_mismatch`, `mfa_factor_not_found` (unknown challenge).',
      ),
      429: error(
        '`mfa_factor_locked`: five wrong codes in a row lock a TOTP or phone factor (a minute, doubling with each lock, up to a day); the right code is refused meanwhile. Or the per-IP limit (`over_request_rate_limit`).',
      ),
    },
  },
  async (c) => {
    const deps = c.get('deps');
    const factor = await loadFactor(deps, c.get('auth'), c.req.param('factor_id'));
    await enforceRateLimit(c, 'mfa_verify');
    const body = await readJson(c, VerifyBody);
    return c.json(
      await verifyFactor(
        deps,
        c.get('auth'),
        factor,
        { challengeId: body.challenge_id, code: body.code, webauthn: body.webauthn },
        requestMeta(c).ip,
      ),
    );
  },
);

mfaRoutes.route(
  {
    method: 'delete',
    path: '/factors/{factor_id}',
    summary: 'Unenrol a factor (a verified one needs aal2)',
    gotrue: 'UnenrollFactor',
    auth: 'user',
    guards: [notAnonymous],
    replies: {
      200: json({ type: 'object', properties: { id: str } }),
      ...factorErrors,
      422: error('`insufficient_aal`.'),
    },
  },
  async (c) => {
    const factor = await loadFactor(c.get('deps'), c.get('auth'), c.req.param('factor_id'));
    return c.json(await unenrollFactor(c.get('deps'), c.get('auth'), factor, requestMeta(c).ip));
  },
);

mfaRoutes.route(
  {
    method: 'get',
    path: '/admin/users/{user_id}/factors',
    summary: "A user's factors (`[]` when none)",
    gotrue: 'adminUserGetFactors',
    auth: 'admin',
    replies: { 200: json({ type: 'array', items: factorJson }) },
  },
  async (c) => {
    return c.json(await adminListFactors(c.get('deps'), userIdParam(c.req.param('user_id'))));
  },
);

mfaRoutes.route(
  {
    method: 'put',
    path: '/admin/users/{user_id}/factors/{factor_id}',
    summary: "Rename a factor, or change a phone factor's number",
    gotrue: 'adminUserUpdateFactor',
    auth: 'admin',
    body: AdminFactorBody,
    replies: { 200: json(factorJson), ...factorErrors },
  },
  async (c, body) => {
    const userId = userIdParam(c.req.param('user_id'));
    return c.json(
      await adminUpdateFactor(c.get('deps'), userId, c.req.param('factor_id'), body, null, requestMeta(c).ip),
    );
  },
);

mfaRoutes.route(
  {
    method: 'delete',
    path: '/admin/users/{user_id}/factors/{factor_id}',
    summary: "Delete a user's factor",
    gotrue: 'adminUserDeleteFactor',
    auth: 'admin',
    replies: { 200: json(factorJson), ...factorErrors },
  },
  async (c) => {
    const userId = userIdParam(c.req.param('user_id'));
    return c.json(await adminDeleteFactor(c.get('deps'), userId, c.req.param('factor_id'), null, requestMeta(c).ip));
  },
);
