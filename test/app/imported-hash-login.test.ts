// Users moved from GoTrue (or Firebase) keep their password hashes and sign in with them.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { buildTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

let db: Database;
let t: TestApp;
beforeAll(async () => {
  db = await openTestDb();
  t = await buildTestApp(db);
});
afterAll(async () => {
  await db?.close();
});

const HASHES: [string, string, string][] = [
  ['bcrypt $2a$ (Go)', '$2a$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga', 'allmine'],
  ['bcrypt $2y$ (PHP)', '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a', 'rasmuslerdorf'],
  ['argon2i', '$argon2i$v=19$m=16,t=2,p=1$bGJRWThNOHJJTVBSdHl2dQ$NfEnUOuUpb7F2fQkgFUG4g', 'test'],
  [
    'argon2id',
    '$argon2id$v=19$m=32,t=3,p=2$SFVpOWJ0eXhjRzVkdGN1RQ$RXnb8rh7LaDcn07xsssqqulZYXOM/EUCEFMVcAcyYVk',
    'test',
  ],
  [
    'Firebase scrypt',
    '$fbscrypt$v=1,n=14,r=8,p=1,ss=Bw==,sk=jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==$42xEC+ixf3L2lw==$lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
    'user1password',
  ],
];

test.each(HASHES)(
  'a user with an imported %s hash signs in with its password, not another',
  async (_kind, hash, password) => {
    const email = uniqueEmail();
    const now = new Date();
    await db.orm.insert(db.t.users).values({
      id: crypto.randomUUID(),
      aud: 'authenticated',
      role: 'authenticated',
      email,
      encryptedPassword: hash,
      emailConfirmedAt: now,
      rawAppMetaData: { provider: 'email', providers: ['email'] },
      rawUserMetaData: {},
      createdAt: now,
      updatedAt: now,
    });
    const ok = await t.request('POST', '/token?grant_type=password', { email, password });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Record<string, any>).user.email).toBe(email);
    const bad = await t.request('POST', '/token?grant_type=password', { email, password: `${password}x` });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error_code: 'invalid_credentials' });
  },
);
