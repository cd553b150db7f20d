// Passkeys — GoTrue: passkey_*.go. The whole /passkeys group answers 404 passkey_disabled when
// PASSKEY_ENABLED is off, before authentication; the admin routes are not gated (as GoTrue's).
import { Hono, type MiddlewareHandler } from 'hono';
import * as z from 'zod';
import { userIdParam } from '../http/uuid.ts';
import type { AppEnv } from '../app-env.ts';
import { requireAdmin } from '../http/admin-auth.ts';
import { requireAuth } from '../http/auth.ts';
import { CaptchaFields, requireCaptcha } from '../http/captcha.ts';
import { forbidden, notFound } from '../core/errors.ts';
import { enforceRateLimit } from '../http/rate-limit.ts';
import { optStr, readJson, readOptionalJson } from '../http/read-json.ts';
import { requestMeta } from '../http/request-meta.ts';
import { authenticationOptions, authenticationVerify } from '../passkeys/authentication.ts';
import { adminDeletePasskey, adminListPasskeys, deleteOwnPasskey, listUserPasskeys, renamePasskey } from '../passkeys/manage.ts';
import { registrationOptions, registrationVerify } from '../passkeys/registration.ts';

// `credential` is checked by the ceremony (crypto/webauthn.ts): a bad one is webauthn_verification_failed.
export const PasskeyVerifyBody = z.object({ challenge_id: optStr, credential: z.unknown().optional() });
export const PasskeyOptionsBody = z.object(CaptchaFields);
export const PasskeyUpdateBody = z.object({ friendly_name: optStr });

const passkeysEnabled: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get('deps').config.passkey.enabled) throw notFound('passkey_disabled', 'Passkeys are disabled');
  await next();
};

const notAnonymous: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.get('auth').user.isAnonymous) throw forbidden('no_authorization', 'Anonymous user not allowed to perform these actions');
  await next();
};

export const passkeyRoutes = new Hono<AppEnv>();
passkeyRoutes.use('/passkeys', passkeysEnabled);
passkeyRoutes.use('/passkeys/*', passkeysEnabled);

passkeyRoutes.post('/passkeys/authentication/options', async (c) => {
  await enforceRateLimit(c, 'passkey');
  await requireCaptcha(c, await readOptionalJson(c, PasskeyOptionsBody));
  return c.json(await authenticationOptions(c.get('deps')));
});

passkeyRoutes.post('/passkeys/authentication/verify', async (c) => {
  const body = await readJson(c, PasskeyVerifyBody);
  const token = await authenticationVerify(c.get('deps'), body, requestMeta(c));
  return c.json(token.body, 200, token.headers);
});

passkeyRoutes.post('/passkeys/registration/options', requireAuth, notAnonymous, async (c) => {
  return c.json(await registrationOptions(c.get('deps'), c.get('auth')));
});

passkeyRoutes.post('/passkeys/registration/verify', requireAuth, notAnonymous, async (c) => {
  const body = await readJson(c, PasskeyVerifyBody);
  return c.json(await registrationVerify(c.get('deps'), c.get('auth'), body, requestMeta(c).ip));
});

passkeyRoutes.get('/passkeys', requireAuth, async (c) => {
  return c.json(await listUserPasskeys(c.get('deps'), c.get('auth').user.id));
});

passkeyRoutes.patch('/passkeys/:passkey_id', requireAuth, async (c) => {
  const body = await readJson(c, PasskeyUpdateBody);
  return c.json(await renamePasskey(c.get('deps'), c.get('auth'), c.req.param('passkey_id'), body.friendly_name, requestMeta(c).ip));
});

passkeyRoutes.delete('/passkeys/:passkey_id', requireAuth, async (c) => {
  await deleteOwnPasskey(c.get('deps'), c.get('auth'), c.req.param('passkey_id'), requestMeta(c).ip);
  return c.body(null, 204);
});

passkeyRoutes.get('/admin/users/:user_id/passkeys', requireAdmin, async (c) => {
  return c.json(await adminListPasskeys(c.get('deps'), userIdParam(c.req.param('user_id'))));
});

passkeyRoutes.delete('/admin/users/:user_id/passkeys/:passkey_id', requireAdmin, async (c) => {
  await adminDeletePasskey(c.get('deps'), userIdParam(c.req.param('user_id')), c.req.param('passkey_id'), requestMeta(c).ip);
  return c.body(null, 204);
});
