// A failed statement is logged by its SQLSTATE and the driver's message, never its parameters
// (issue 11, item 9).
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { errorFields } from '../../src/telemetry/logger.ts';
import { buildTestApp } from '../helpers/app.ts';
import { openTestDb } from '../helpers/db.ts';

let db: Database;
beforeAll(async () => {
  // Its own database: every insert into users fails with a check violation (SQLSTATE 23514).
  db = await openTestDb();
  await db.orm.execute(
    sql.raw(`ALTER TABLE "${db.namespace}".users ADD CONSTRAINT refuse_all CHECK (false) NOT VALID`),
  );
});
afterAll(async () => {
  await db?.close();
});

test('a statement that fails logs SQLSTATE and message; no email, password hash or stack line carrying them', async () => {
  const t = await buildTestApp(db, { AUTHSVC_LOG_LEVEL: 'info' });
  const email = 'secret-owner@example.com';
  const password = 'correct-horse-battery-staple-1';
  const res = await t.request('POST', '/signup', { email, password });
  expect(res.status).toBe(500);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ code: 500, error_code: 'unexpected_failure' });
  expect(JSON.stringify(body)).not.toContain('refuse_all');

  const errors = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 'error');
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatchObject({
    msg: 'unexpected error',
    sqlstate: '23514',
    error: 'new row for relation "users" violates check constraint "refuse_all"',
  });
  const all = t.logs.join('\n');
  expect(all).not.toContain(email);
  expect(all).not.toContain(password);
  expect(all).not.toMatch(/\$2[aby]\$/); // a bcrypt hash
  expect(all).not.toContain('params');
  expect(all).not.toContain('Failed query');
});

test('errors that are not statements keep their message; a stack never repeats a message', () => {
  const f = errorFields(new TypeError('boom'));
  expect(f).toMatchObject({ error: 'boom', error_name: 'TypeError' });
  expect(String(f.stack)).not.toContain('boom');
  const conn = Object.assign(new Error('Failed query: select 1\nparams: hunter2'), {
    query: 'select 1',
    params: ['hunter2'],
    cause: new Error('connect ECONNREFUSED 127.0.0.1:5432'),
  });
  expect(errorFields(conn)).toMatchObject({ error: 'connect ECONNREFUSED 127.0.0.1:5432', sqlstate: undefined });
  expect(JSON.stringify(errorFields(conn))).not.toContain('hunter2');
  expect(errorFields('text')).toEqual({ error: 'text' });
});

test("a data exception (SQLSTATE class 22) is logged by its SQLSTATE and a generic text: the driver's message quotes the input", async () => {
  const own = await openTestDb();
  try {
    // Every insert into users casts the email to uuid: 22P02 `invalid input syntax for type uuid: "<email>"`.
    await own.orm.execute(
      sql.raw(
        `ALTER TABLE "${own.namespace}".users ADD CONSTRAINT email_as_uuid CHECK (email::uuid IS NOT NULL) NOT VALID`,
      ),
    );
    const t = await buildTestApp(own, { AUTHSVC_LOG_LEVEL: 'info' });
    const email = 'quoted-input-owner@example.com';
    const res = await t.request('POST', '/signup', { email, password: 'correct-horse-battery-staple-1' });
    expect(res.status).toBe(500);
    const errors = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      msg: 'unexpected error',
      sqlstate: '22P02',
      error: 'data exception (SQLSTATE class 22); the message is not logged, as it may quote the input',
    });
    expect(t.logs.join('\n')).not.toContain('quoted-input-owner');
  } finally {
    await own.close();
  }
  // Any class-22 code, from the driver's error or its cause; other classes keep their message.
  const tooLong = Object.assign(new Error('value too long for type character varying(255)'), { code: '22001' });
  expect(errorFields(tooLong)).toMatchObject({ sqlstate: '22001', error: expect.stringMatching(/^data exception/) });
  const wrapped = Object.assign(new Error('Failed query: …'), {
    query: 'q',
    params: ['p'],
    cause: Object.assign(new Error('invalid input syntax for type uuid: "x-secret"'), { code: '22P02' }),
  });
  expect(JSON.stringify(errorFields(wrapped))).not.toContain('x-secret');
  expect(
    errorFields(Object.assign(new Error('duplicate key value violates unique constraint "k"'), { code: '23505' })),
  ).toMatchObject({ error: 'duplicate key value violates unique constraint "k"' });
});
