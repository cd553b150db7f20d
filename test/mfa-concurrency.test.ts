// Races on MFA verify (issue 27): two verifies of one challenge, and one TOTP code sent with two
// challenges at once — exactly one wins each time. Meant for the Postgres server
// (TEST_DATABASE_URL), where the requests really run in parallel; PGlite runs them in turn.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { buildTestApp, signUpConfirmed, uniqueEmail } from './helpers/app.ts';
import { openTestDb } from './helpers/db.ts';
import { decodeBase32, totpAt } from './helpers/totp.ts';

type Json = Record<string, any>;
let db: Database;
beforeAll(async () => { db = await openTestDb(); });
afterAll(async () => { await db?.close(); });

const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'x-supabase-api-version': '2024-01-01' });

async function enrolled() {
  const t = await buildTestApp(db, { AUTHSVC_MAILER_AUTOCONFIRM: 'true' });
  const { session } = await signUpConfirmed(t, uniqueEmail('race'));
  const h = bearer(session.access_token);
  const factor = (await (await t.request('POST', '/factors', { factor_type: 'totp' }, h)).json()) as Json;
  const challenge = async () => ((await (await t.request('POST', `/factors/${factor.id}/challenge`, undefined, h)).json()) as Json).id as string;
  const code = () => totpAt(decodeBase32(factor.totp.secret), Date.now() / 1000);
  const verify = (challengeId: string, c: string) => t.request('POST', `/factors/${factor.id}/verify`, { challenge_id: challengeId, code: c }, h);
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
    const bodies = await Promise.all(answers.map(async (r) => ({ status: r.status, code: ((await r.json()) as Json).code })));
    expect(bodies.filter((b) => b.status === 200)).toHaveLength(1);
    expect(bodies.filter((b) => b.status !== 200)).toEqual(Array(3).fill({ status: 422, code: 'mfa_verification_failed' }));
  });
});
