// Three instances on one Postgres schema under the mixed profile; one is killed with SIGKILL in
// the middle of it (transactions open, answers in flight) and started again. The other two never
// answer a 5xx, the restarted one serves, and the invariants hold (no refresh token with two
// children, nothing half-written). Postgres server only.
import { afterAll, describe, expect, test } from 'vitest';
import { TEST_DATABASE_URL } from '../../helpers/db.ts';
import { cleanupProcesses } from '../../helpers/server.ts';
import { brokenInvariants } from './invariants.ts';
import { dropSchema, mixedLoad, newNamespace, signUp, sleep, startAuthsvc, tally } from './setup.ts';

describe.runIf(TEST_DATABASE_URL)('kill -9 of one of three instances', () => {
  const namespace = newNamespace();
  afterAll(async () => {
    await cleanupProcesses();
    await dropSchema(namespace);
  });

  test('the others never answer 5xx, the restarted one serves, the invariants hold', async () => {
    const pgPort = Number(new URL(TEST_DATABASE_URL!).port || 5432);
    const first = await startAuthsvc(pgPort, namespace);
    const servers = [first, ...(await Promise.all([startAuthsvc(pgPort, namespace), startAuthsvc(pgPort, namespace)]))];
    const bases = servers.map((s) => s.url);
    const accounts = await Promise.all(Array.from({ length: 9 }, (_, i) => signUp(bases[i % 3]!, `kill${i}`)));
    // The load reads `bases` on every request: the restarted instance takes the victim's place.
    const load = mixedLoad(bases, accounts);
    await sleep(2_500);

    const victim = servers[2]!;
    const killedUrl = victim.url;
    victim.proc.kill('SIGKILL');
    await victim.exited;
    await sleep(2_000);
    const restarted = await startAuthsvc(pgPort, namespace);
    bases[2] = restarted.url;
    const restartedAt = Date.now();
    await sleep(2_500);
    await load.stop();

    const others = load.answers.filter((a) => a.base !== killedUrl && a.base !== restarted.url);
    const atVictim = load.answers.filter((a) => a.base === killedUrl);
    const atRestarted = load.answers.filter((a) => a.base === restarted.url && a.at >= restartedAt);
    const summary = JSON.stringify({ others: tally(others), victim: tally(atVictim), restarted: tally(atRestarted) });
    if (process.env.FAULTS_VERBOSE) console.log('kill -9', summary);

    expect(others.length, summary).toBeGreaterThan(300);
    expect(
      others.filter((a) => a.status !== 200),
      summary,
    ).toEqual([]);
    // The kill was felt: requests to it failed at the socket (not with an answer).
    expect(
      atVictim.some((a) => a.status === 0),
      summary,
    ).toBe(true);
    expect(
      atVictim.filter((a) => a.status !== 200 && a.status !== 0),
      summary,
    ).toEqual([]);
    expect(atRestarted.length, summary).toBeGreaterThan(50);
    expect(
      atRestarted.filter((a) => a.status !== 200),
      summary,
    ).toEqual([]);
    expect(await brokenInvariants(TEST_DATABASE_URL!, namespace)).toEqual({});
  }, 60_000);
});
