// GET /user, PUT /user — GoTrue: api.UserGet / api.UserUpdate
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { insertAudit } from '../db/audit.ts';
import { findUserById } from '../db/users.ts';
import { queueEmailToken } from '../accounts/email-tokens.ts';
import { transactionThenSend } from '../accounts/outbox.ts';
import { queuePhoneToken, testOtp } from '../accounts/phone-tokens.ts';
import { updateCurrentUser } from '../flows/update-user.ts';
import { userJson } from '../models/user-json.ts';
import { requireAuth } from '../http/auth.ts';
import { ApiError, validationFailed } from '../core/errors.ts';
import { enforceRateLimit } from '../http/rate-limit.ts';
import { optRecord, optStr, readJson } from '../http/read-json.ts';
import { redirectTarget } from '../http/redirect.ts';
import { requestMeta } from '../http/request-meta.ts';

export const UpdateBody = z.object({
  email: optStr, phone: optStr, password: optStr, nonce: optStr, channel: optStr, current_password: optStr,
  data: optRecord, app_metadata: optRecord, code_challenge: optStr, code_challenge_method: optStr,
});

export const userRoutes = new Hono<AppEnv>();

userRoutes.get('/user', requireAuth, async (c) => {
  const { user, claims, identities } = c.get('auth');
  const aud = c.req.header('x-jwt-aud');
  const tokenAud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
  if (aud && aud !== (tokenAud ?? '')) throw validationFailed("Token audience doesn't match request audience");
  return c.json(userJson(user, identities, c.get('auth').factors));
});

userRoutes.put('/user', requireAuth, async (c) => {
  await enforceRateLimit(c, 'user');
  const body = await readJson(c, UpdateBody);
  const cfg = c.get('deps').config;
  const meta = { ip: requestMeta(c).ip, redirectTo: redirectTarget(c, cfg.siteUrl, cfg.uriAllowList) };
  return c.json(await updateCurrentUser(c.get('deps'), c.get('auth'), body, meta));
});

// GET /reauthenticate — GoTrue: api.Reauthenticate (by email, or by SMS for a user without one)
userRoutes.get('/reauthenticate', requireAuth, async (c) => {
  const deps = c.get('deps');
  const { user } = c.get('auth');
  if (!user.email && !user.phone) throw validationFailed('Reauthentication requires the user to have an email or a phone number');
  if (user.email && !user.emailConfirmedAt) throw new ApiError(422, 'email_not_confirmed', 'Please verify your email first.');
  if (!user.email && !user.phoneConfirmedAt) throw new ApiError(422, 'phone_not_confirmed', 'Please verify your phone first.');
  let messageId = '';
  await transactionThenSend(deps, async (tx, out) => {
    const locked = (await findUserById(tx, user.id, { forUpdate: true }))!;
    await insertAudit(tx, { actor: locked, action: 'user_reauthenticate_requested', ip: requestMeta(c).ip, now: deps.now() });
    if (locked.email) {
      await queueEmailToken(deps, tx, out, locked, 'reauthentication', { redirectTo: deps.config.siteUrl });
      return;
    }
    const phone = locked.phone!;
    if (testOtp(deps, phone, deps.now()) !== undefined) messageId = 'test-otp';
    await queuePhoneToken(deps, tx, out, locked, 'reauthentication', phone, 'sms', { sent: (id) => { messageId = id; } });
  });
  return c.json(messageId ? { message_id: messageId } : {});
});
