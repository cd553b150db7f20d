// Passkeys — GoTrue: passkey_*.go. The whole /passkeys group answers 404 passkey_disabled when
// PASSKEY_ENABLED is off, before authentication; the admin routes are not gated (as GoTrue's).
import type { MiddlewareHandler } from 'hono';
import * as z from 'zod';
import { userIdParam } from '../http/uuid.ts';
import type { AppEnv } from '../app-env.ts';
import { CaptchaFields } from '../http/captcha.ts';
import { forbidden, notFound } from '../core/errors.ts';
import { optStr } from '../http/read-json.ts';
import { requestMeta } from '../http/request-meta.ts';
import { authenticationOptions, authenticationVerify } from '../passkeys/authentication.ts';
import {
  adminDeletePasskey,
  adminListPasskeys,
  deleteOwnPasskey,
  listUserPasskeys,
  renamePasskey,
} from '../passkeys/manage.ts';
import { registrationOptions, registrationVerify } from '../passkeys/registration.ts';
import { routeGroup } from '../http/route.ts';
import { error, json } from '../openapi/parts.ts';

// `credential` is checked by the ceremony (crypto/webauthn.ts): a bad one is webauthn_verification_failed.
export const PasskeyVerifyBody = z.object({ challenge_id: optStr, credential: z.unknown().optional() });
export const PasskeyOptionsBody = z.object(CaptchaFields);
export const PasskeyUpdateBody = z.object({ friendly_name: optStr });

const passkeysEnabled: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get('deps').config.passkey.enabled) throw notFound('passkey_disabled', 'Passkeys are disabled');
  await next();
};

const notAnonymous: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.get('auth').user.isAnonymous)
    throw forbidden('no_authorization', 'Anonymous user not allowed to perform these actions');
  await next();
};

export const passkeyRoutes = routeGroup('passkeys');
passkeyRoutes.app.use('/passkeys', passkeysEnabled);
passkeyRoutes.app.use('/passkeys/*', passkeysEnabled);

const off = error('`passkey_disabled`: PASSKEY_ENABLED is off; or `validation_failed` "Passkey not found".');
const failed = error(
  '`webauthn_challenge_not_found`, `webauthn_challenge_expired`, `webauthn_verification_failed` or `validation_failed`.',
);
const item = { type: 'object', description: '{id, friendly_name?, created_at, last_used_at?}' };
const options = json({
  type: 'object',
  description: '{challenge_id, options (PublicKeyCredential creation or request options), expires_at}',
});

passkeyRoutes.route(
  {
    method: 'post',
    path: '/passkeys/authentication/options',
    summary: 'Passkey sign-in options (discoverable: no user named)',
    gotrue: 'PasskeyAuthenticationOptions',
    rateLimit: 'passkey',
    body: PasskeyOptionsBody,
    bodyOptional: true,
    captcha: true,
    replies: { 200: options, 404: off, 429: error('`over_request_rate_limit` (RATE_LIMIT_PASSKEY).') },
  },
  async (c) => {
    return c.json(await authenticationOptions(c.get('deps')));
  },
);

passkeyRoutes.route(
  {
    method: 'post',
    path: '/passkeys/authentication/verify',
    summary: 'Sign in with a passkey assertion: an aal1 session (AMR passkey)',
    gotrue: 'PasskeyAuthenticationVerify',
    body: PasskeyVerifyBody,
    replies: {
      200: json('Session'),
      400: failed,
      403: error('`email_not_confirmed`, `phone_not_confirmed` or `user_banned`.'),
      404: off,
    },
  },
  async (c, body) => {
    const token = await authenticationVerify(c.get('deps'), body, requestMeta(c));
    return c.json(token.body, 200, token.headers);
  },
);

passkeyRoutes.route(
  {
    method: 'post',
    path: '/passkeys/registration/options',
    summary: 'Passkey registration options for the signed-in user',
    gotrue: 'PasskeyRegistrationOptions',
    auth: 'user',
    guards: [notAnonymous],
    replies: {
      200: options,
      403: error('`insufficient_aal` (MFA on, session aal1).'),
      404: off,
      422: error('`too_many_passkeys`, or `validation_failed` for SSO users.'),
    },
  },
  async (c) => {
    return c.json(await registrationOptions(c.get('deps'), c.get('auth')));
  },
);

passkeyRoutes.route(
  {
    method: 'post',
    path: '/passkeys/registration/verify',
    summary: 'Register a passkey from an attestation',
    gotrue: 'PasskeyRegistrationVerify',
    auth: 'user',
    guards: [notAnonymous],
    body: PasskeyVerifyBody,
    replies: {
      200: json({ type: 'object', description: '{id, friendly_name, created_at}' }),
      400: failed,
      403: error('`insufficient_aal`.'),
      404: off,
      422: error('`too_many_passkeys` or `webauthn_credential_exists`.'),
    },
  },
  async (c, body) => {
    return c.json(await registrationVerify(c.get('deps'), c.get('auth'), body, requestMeta(c).ip));
  },
);

passkeyRoutes.route(
  {
    method: 'get',
    path: '/passkeys',
    summary: "The signed-in user's passkeys, oldest first",
    gotrue: 'PasskeyList',
    auth: 'user',
    replies: { 200: json({ type: 'array', items: item }), 404: off },
  },
  async (c) => {
    return c.json(await listUserPasskeys(c.get('deps'), c.get('auth').user.id));
  },
);

passkeyRoutes.route(
  {
    method: 'patch',
    path: '/passkeys/{passkey_id}',
    summary: 'Rename a passkey',
    gotrue: 'PasskeyUpdate',
    auth: 'user',
    body: PasskeyUpdateBody,
    replies: { 200: json(item), 404: off },
  },
  async (c, body) => {
    return c.json(
      await renamePasskey(
        c.get('deps'),
        c.get('auth'),
        c.req.param('passkey_id'),
        body.friendly_name,
        requestMeta(c).ip,
      ),
    );
  },
);

passkeyRoutes.route(
  {
    method: 'delete',
    path: '/passkeys/{passkey_id}',
    summary: 'Delete a passkey (aal2 when MFA is on)',
    gotrue: 'PasskeyDelete',
    auth: 'user',
    replies: { 204: { description: 'Deleted.' }, 403: error('`insufficient_aal`.'), 404: off },
  },
  async (c) => {
    await deleteOwnPasskey(c.get('deps'), c.get('auth'), c.req.param('passkey_id'), requestMeta(c).ip);
    return c.body(null, 204);
  },
);

passkeyRoutes.route(
  {
    method: 'get',
    path: '/admin/users/{user_id}/passkeys',
    summary: "A user's passkeys",
    gotrue: 'AdminPasskeyList',
    auth: 'admin',
    replies: { 200: json({ type: 'array', items: item }), 404: error('`user_not_found`.') },
  },
  async (c) => {
    return c.json(await adminListPasskeys(c.get('deps'), userIdParam(c.req.param('user_id'))));
  },
);

passkeyRoutes.route(
  {
    method: 'delete',
    path: '/admin/users/{user_id}/passkeys/{passkey_id}',
    summary: "Delete a user's passkey",
    gotrue: 'AdminPasskeyDelete',
    auth: 'admin',
    replies: {
      204: { description: 'Deleted.' },
      404: error('`user_not_found`, or `validation_failed` "Passkey not found".'),
    },
  },
  async (c) => {
    await adminDeletePasskey(
      c.get('deps'),
      userIdParam(c.req.param('user_id')),
      c.req.param('passkey_id'),
      requestMeta(c).ip,
    );
    return c.body(null, 204);
  },
);
