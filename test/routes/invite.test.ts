import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createNodeHasher } from '../../src/adapters/node-hasher.ts';
import { SignJWT } from 'jose';
import { eq } from 'drizzle-orm';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, signUpConfirmed, TEST_JWT_SECRET, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

async function roleToken(role: string): Promise<string> {
  return new SignJWT({ role })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

describe('POST /invite', () => {
  test('service_role invites: user with invited_at, invite email; accepting signs in and confirms', async () => {
    // The production hasher: the stored hash's cost is asserted.
    const t = await buildTestApp(db, {}, { hasher: createNodeHasher() });
    const email = uniqueEmail();
    const res = await t.request(
      'POST',
      '/invite',
      { email, data: { team: 'a' } },
      { authorization: `Bearer ${await roleToken('service_role')}` },
    );
    expect(res.status).toBe(200);
    const user = (await res.json()) as Json;
    expect(user).toMatchObject({ email, user_metadata: { team: 'a' } });
    expect(user.invited_at).toBeTruthy();
    expect(user.confirmation_sent_at).toBeTruthy();
    const mail = t.mails.at(-1)!;
    expect(mail.kind).toBe('invite');
    const link = new URL(mail.confirmationUrl);
    expect(link.searchParams.get('type')).toBe('invite');
    const v = await t.request('GET', `/verify?token=${link.searchParams.get('token')}&type=invite`);
    expect(v.status).toBe(303);
    const frag = new URLSearchParams(v.headers.get('location')!.split('#')[1]);
    expect(frag.get('type')).toBe('invite');
    const [row] = await db.orm.select().from(db.t.users).where(eq(db.t.users.email, email));
    expect(row!.emailConfirmedAt).toBeTruthy();
    expect(row!.encryptedPassword).toMatch(/^\$2a\$10\$/); // random password until the user sets one
    const set = await t.request(
      'PUT',
      '/user',
      { password: 'chosen-password' },
      { authorization: `Bearer ${frag.get('access_token')}` },
    );
    expect(set.status).toBe(200);
    const audit = await db.orm.select().from(db.t.auditLogEntries);
    expect(
      audit.some((a) => a.payload?.action === 'user_invited' && a.payload?.actor_username === 'service_role'),
    ).toBe(true);
    expect(audit.some((a) => a.payload?.action === 'invite_accepted' && a.payload?.actor_id === row!.id)).toBe(true);
  });

  test('a confirmed address → 422 email_exists; no admin role → 403 not_admin; no token → 401', async () => {
    const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
    const { email, session } = await signUpConfirmed(t);
    const dup = await t.request(
      'POST',
      '/invite',
      { email },
      { authorization: `Bearer ${await roleToken('supabase_admin')}` },
    );
    expect(dup.status).toBe(422);
    expect(await dup.json()).toMatchObject({ error_code: 'email_exists' });
    const user = await t.request(
      'POST',
      '/invite',
      { email: uniqueEmail() },
      { authorization: `Bearer ${session.access_token}` },
    );
    expect(user.status).toBe(403);
    expect(await user.json()).toMatchObject({ error_code: 'not_admin', msg: 'User not allowed' });
    expect((await t.request('POST', '/invite', { email: uniqueEmail() })).status).toBe(401);
    expect(t.mails).toHaveLength(0);
  });
});

describe('GET /reauthenticate', () => {
  test('emails a nonce that PUT /user accepts once for a password change', async () => {
    const t = await buildTestApp(db, {
      AUTHSVC_MAILER_AUTOCONFIRM: 'true',
      AUTHSVC_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true',
    });
    const { email, session } = await signUpConfirmed(t);
    const auth = { authorization: `Bearer ${session.access_token}` };
    const res = await t.request('GET', '/reauthenticate', undefined, auth);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    const mail = t.mails.at(-1)!;
    expect(mail).toMatchObject({ kind: 'reauthentication', to: email, confirmationUrl: '' });
    const early = await t.request('GET', '/reauthenticate', undefined, auth);
    expect(early.status).toBe(429);
    expect(await early.json()).toMatchObject({ error_code: 'over_email_send_rate_limit' });
    expect((await t.request('PUT', '/user', { password: 'next-password-1', nonce: mail.token }, auth)).status).toBe(
      200,
    );
    const reused = await t.request('PUT', '/user', { password: 'next-password-2', nonce: mail.token }, auth);
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({ error_code: 'reauthentication_not_valid' });
  });
});
