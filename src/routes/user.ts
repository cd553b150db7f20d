// GET /user, PUT /user — GoTrue: api.UserGet / api.UserUpdate
import * as z from 'zod';
import { insertAudit } from '../db/audit.ts';
import { findUserById } from '../db/users.ts';
import { queueEmailToken } from '../accounts/email-tokens.ts';
import { transactionThenSend } from '../accounts/outbox.ts';
import { queuePhoneToken, testOtp } from '../accounts/phone-tokens.ts';
import { updateCurrentUser } from '../flows/update-user.ts';
import { userJson } from '../models/user-json.ts';
import { ApiError, validationFailed } from '../core/errors.ts';
import { optRecord, optStr } from '../http/read-json.ts';
import { redirectTarget } from '../http/redirect.ts';
import { requestMeta } from '../http/request-meta.ts';
import { routeGroup } from '../http/route.ts';
import { json, redirectTo } from '../openapi/parts.ts';

export const UpdateBody = z.object({
  email: optStr,
  phone: optStr,
  password: optStr,
  nonce: optStr,
  channel: optStr,
  current_password: optStr,
  data: optRecord,
  app_metadata: optRecord,
  code_challenge: optStr,
  code_challenge_method: optStr,
});

export const userRoutes = routeGroup('user');

userRoutes.route(
  {
    method: 'get',
    path: '/user',
    summary: 'The signed-in user',
    gotrue: 'UserGet',
    auth: 'user',
    replies: { 200: json('User') },
  },
  async (c) => {
    const { user, claims, identities } = c.get('auth');
    const aud = c.req.header('x-jwt-aud');
    const tokenAud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
    if (aud && aud !== (tokenAud ?? '')) throw validationFailed("Token audience doesn't match request audience");
    return c.json(userJson(user, identities, c.get('auth').factors));
  },
);

userRoutes.route(
  {
    method: 'put',
    path: '/user',
    summary: 'Update the signed-in user',
    gotrue: 'UserUpdate',
    auth: 'user',
    rateLimit: 'user',
    body: UpdateBody,
    query: [redirectTo],
    replies: { 200: json('User') },
  },
  async (c, body) => {
    const cfg = c.get('deps').config;
    const meta = { ip: requestMeta(c).ip, redirectTo: redirectTarget(c, cfg.siteUrl, cfg.uriAllowList) };
    return c.json(await updateCurrentUser(c.get('deps'), c.get('auth'), body, meta));
  },
);

// GET /reauthenticate — GoTrue: api.Reauthenticate (by email, or by SMS for a user without one)
userRoutes.route(
  {
    method: 'get',
    path: '/reauthenticate',
    summary: 'Send a reauthentication nonce',
    gotrue: 'Reauthenticate',
    auth: 'user',
    replies: { 200: json('MessageId') },
  },
  async (c) => {
    const deps = c.get('deps');
    const { user } = c.get('auth');
    if (!user.email && !user.phone)
      throw validationFailed('Reauthentication requires the user to have an email or a phone number');
    if (user.email && !user.emailConfirmedAt)
      throw new ApiError(422, 'email_not_confirmed', 'Please verify your email first.');
    if (!user.email && !user.phoneConfirmedAt)
      throw new ApiError(422, 'phone_not_confirmed', 'Please verify your phone first.');
    let messageId = '';
    await transactionThenSend(deps, async (tx, out) => {
      const locked = (await findUserById(tx, user.id, { forUpdate: true }))!;
      await insertAudit(tx, {
        actor: locked,
        action: 'user_reauthenticate_requested',
        ip: requestMeta(c).ip,
        now: deps.now(),
      });
      if (locked.email) {
        await queueEmailToken(deps, tx, out, locked, 'reauthentication', { redirectTo: deps.config.siteUrl });
        return;
      }
      const phone = locked.phone!;
      if (testOtp(deps, phone, deps.now()) !== undefined) messageId = 'test-otp';
      await queuePhoneToken(deps, tx, out, locked, 'reauthentication', phone, 'sms', {
        sent: (id) => {
          messageId = id;
        },
      });
    });
    return c.json(messageId ? { message_id: messageId } : {});
  },
);
