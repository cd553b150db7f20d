// Races on MFA verify (issue 27): two verifies of one challenge, and one TOTP code sent with two
// challenges at once — exactly one wins each time; and guesses sent at once (security review
// 2026-12-01, M1) — no more than five are compared before the factor locks. Meant for the
// Postgres server (TEST_DATABASE_URL), where the requests really run in parallel; PGlite runs
// them in turn.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, signUpConfirmed, uniqueEmail } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';
import { decodeBase32, totpAt } from '../helpers/totp.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'x-supabase-api-version': '2024-01-01' });

async function enrolled() {
  const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
  const { session } = await signUpConfirmed(t, uniqueEmail('race'));
  const h = bearer(session.access_token);
  const factor = (await (await t.request('POST', '/factors', { factor_type: 'totp' }, h)).json()) as Json;
  const challenge = async () =>
    ((await (await t.request('POST', `/factors/${factor.id}/challenge`, undefined, h)).json()) as Json).id as string;
  const code = () => totpAt(decodeBase32(factor.totp.secret), Date.now() / 1000);
  const verify = (challengeId: string, c: string) =>
    t.request('POST', `/factors/${factor.id}/verify`, { challenge_id: challengeId, code: c }, h);
  return { challenge, code, verify };
}

describe('MFA verify races', () => {
  test('eight verifies of one challenge with the right code: exactly one session', async () => {
    const { challenge, code, verify } = await enrolled();
    const id = await challenge();
    const c = code();
    const answers = await Promise.all(Array.from({ length: 8 }, () => verify(id, c)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 422)).toHaveLength(7);
  });

  test('one TOTP code sent with four challenges at once: accepted once', async () => {
    const { challenge, code, verify } = await enrolled();
    const ids = await Promise.all([challenge(), challenge(), challenge(), challenge()]);
    const c = code();
    const answers = await Promise.all(ids.map((id) => verify(id, c)));
    const bodies = await Promise.all(
      answers.map(async (r) => ({ status: r.status, code: ((await r.json()) as Json).code })),
    );
    expect(bodies.filter((b) => b.status === 200)).toHaveLength(1);
    expect(bodies.filter((b) => b.status !== 200)).toEqual(
      Array(3).fill({ status: 422, code: 'mfa_verification_failed' }),
    );
  });
});

/** A user with a verified TOTP factor, and the helpers of an aal1 session of theirs (the attacker: the password only). */
async function lockable() {
  const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
  const { email, password, session } = await signUpConfirmed(t, uniqueEmail('guess'));
  const owner = bearer(session.access_token);
  const factor = (await (await t.request('POST', '/factors', { factor_type: 'totp' }, owner)).json()) as Json;
  const key = decodeBase32(factor.totp.secret);
  const first = ((await (await t.request('POST', `/factors/${factor.id}/challenge`, undefined, owner)).json()) as Json)
    .id;
  expect(
    (
      await t.request(
        'POST',
        `/factors/${factor.id}/verify`,
        { challenge_id: first, code: totpAt(key, Date.now() / 1000) },
        owner,
      )
    ).status,
  ).toBe(200);
  const signIn = (await (await t.request('POST', '/token?grant_type=password', { email, password })).json()) as Json;
  const h = bearer(signIn.access_token);
  const challenge = async () =>
    ((await (await t.request('POST', `/factors/${factor.id}/challenge`, undefined, h)).json()) as Json).id as string;
  // The code of the next step: the owner's verify spent this one.
  const right = () => totpAt(key, Date.now() / 1000 + 30);
  const wrong = () => (right() === '000000' ? '111111' : '000000');
  const verify = async (challengeId: string, code: string) => {
    const res = await t.request('POST', `/factors/${factor.id}/verify`, { challenge_id: challengeId, code }, h);
    return `${res.status} ${((await res.json()) as Json).code ?? ''}`.trim();
  };
  const row = async () => (await db.orm.select().from(db.t.mfaFactors).where(eq(db.t.mfaFactors.id, factor.id)))[0]!;
  return { challenge, right, wrong, verify, row };
}

function tally(answers: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) out[a] = (out[a] ?? 0) + 1;
  return out;
}

describe('M1 (security review 2026-12-01): guesses at once', () => {
  test('M1 (security review 2026-12-01): twenty wrong codes at once over four challenges: five are compared and counted, fifteen refused as locked', async () => {
    const { challenge, wrong, verify, row } = await lockable();
    const ids = await Promise.all([challenge(), challenge(), challenge(), challenge()]);
    const answers = await Promise.all(ids.flatMap((id) => Array.from({ length: 5 }, () => verify(id, wrong()))));
    expect(tally(answers)).toEqual({ '422 mfa_verification_failed': 5, '429 mfa_factor_locked': 15 });
    expect(await row()).toMatchObject({ failedVerificationCount: 5, verificationLockedUntil: expect.any(Date) });
  });

  test('M1 (security review 2026-12-01): during the lock, right codes sent at once with wrong ones are all refused and nothing more is counted', async () => {
    const { challenge, right, wrong, verify, row } = await lockable();
    const ids = await Promise.all(Array.from({ length: 8 }, () => challenge()));
    const locking = await Promise.all(ids.slice(0, 5).map((id) => verify(id, wrong())));
    expect(tally(locking)).toEqual({ '422 mfa_verification_failed': 5 });
    const during = await Promise.all(
      ids.slice(5).flatMap((id) => [verify(id, right()), verify(id, wrong()), verify(id, right())]),
    );
    expect(tally(during)).toEqual({ '429 mfa_factor_locked': 9 });
    expect(await row()).toMatchObject({ failedVerificationCount: 5 });
  });
});
