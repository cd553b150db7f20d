// The runtime smoke suite on Node (the real server process, local mode, log mailer).
import { afterAll, beforeAll, test } from 'vitest';
import { type ServerProcess, cleanupProcesses, startServer } from './helpers/server.ts';
import { runSmoke } from './helpers/smoke.ts';

let server: ServerProcess;
beforeAll(async () => { server = await startServer({ env: { DATABASE_URL: 'memory://' } }); });
afterAll(async () => { await cleanupProcesses(); });

test('smoke: signup, email, verify, sign-in, user, refresh, logout, error body', async () => {
  await runSmoke({
    baseUrl: server.url,
    async lastMail(email) {
      const line = await server.waitForLine((l) => l.includes('email (log transport') && l.includes(email), 10_000);
      const j = JSON.parse(line) as { link: string; code: string };
      return { link: j.link, code: j.code };
    },
  });
});
