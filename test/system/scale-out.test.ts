// Three instances on one Postgres under the mixed profile (1 sign-in : 20 refreshes : 200 GET /user):
// no 5xx, every refresh chain stays single, every user read answers. Needs a Postgres server:
// CI runs the whole suite a second time with TEST_DATABASE_URL set.
import { describe, expect, test } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { openPostgres } from '../../src/adapters/db-postgres.ts';
import type { Database } from '../../src/db/database.ts';
import { type TestApp, buildTestApp, signUpConfirmed } from '../helpers/app.ts';
import { TEST_DATABASE_URL, openTestDb } from '../helpers/db.ts';

type Json = Record<string, any>;

describe.runIf(TEST_DATABASE_URL)('three instances on one database', () => {
  test('the mixed profile runs without a 5xx and without forking a refresh chain', async () => {
    const first = await openTestDb();
    const others: Database[] = [];
    try {
      others.push(openPostgres({ url: TEST_DATABASE_URL!, namespace: first.namespace, maxPoolSize: 10 }));
      others.push(openPostgres({ url: TEST_DATABASE_URL!, namespace: first.namespace, maxPoolSize: 10 }));
      const env = { AUTHSVC_MAILER_AUTOCONFIRM: 'true', AUTHSVC_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' };
      const apps: TestApp[] = [
        await buildTestApp(first, env),
        ...(await Promise.all(others.map((d) => buildTestApp(d, env)))),
      ];
      const users = await Promise.all([0, 1, 2, 3].map((i) => signUpConfirmed(apps[i % 3]!)));
      const statuses: number[] = [];
      const pick = (i: number) => apps[i % apps.length]!;

      // Each user: one sign-in, then rounds of 20 refreshes (a chain, each on any instance)
      // interleaved with 200 GET /user spread over the instances.
      await Promise.all(
        users.map(async (u, ui) => {
          const signIn = await pick(ui).request('POST', '/token?grant_type=password', {
            email: u.email,
            password: u.password,
          });
          statuses.push(signIn.status);
          let session = (await signIn.json()) as Json;
          const reads: Promise<void>[] = [];
          for (let r = 0; r < 20; r++) {
            for (let k = 0; k < 10; k++) {
              const token = session.access_token as string;
              reads.push(
                pick(r + k)
                  .request('GET', '/user', undefined, { authorization: `Bearer ${token}` })
                  .then((res) => {
                    statuses.push(res.status);
                  }),
              );
            }
            const res = await pick(r + ui).request('POST', '/token?grant_type=refresh_token', {
              refresh_token: session.refresh_token,
            });
            statuses.push(res.status);
            expect(res.status).toBe(200);
            session = (await res.json()) as Json;
          }
          await Promise.all(reads);
          // One live refresh token per session after 20 rotations across three instances.
          const r = first.t.refreshTokens;
          const sessionId = String(decodeJwt(session.access_token as string).session_id);
          const live = await first.orm
            .select()
            .from(r)
            .where(and(eq(r.sessionId, sessionId), eq(r.revoked, false)));
          expect(live).toHaveLength(1);
        }),
      );
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(statuses.every((s) => s === 200)).toBe(true);
      expect(statuses).toHaveLength(4 * (1 + 20 + 200));
    } finally {
      for (const d of others) await d.close();
      await first.close();
    }
  });
});
