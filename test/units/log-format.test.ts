// LOG_FORMAT: the JSON lines machines read, or one readable line per entry for people; the same
// level filter and fields either way; text by default only at a terminal in local mode.
import { describe, expect, test } from 'vitest';
import { logFormat } from '../../src/adapters/node.ts';
import { parseConfig } from '../../src/config/config.ts';
import { createLogger, textLine } from '../../src/telemetry/logger.ts';
import { BASE_ENV } from '../helpers/app.ts';

describe('text lines', () => {
  test('time, level, message, then key=value: plain words bare, anything else JSON-quoted, always one line', () => {
    const line = textLine({
      level: 'info',
      time: '2026-12-03T12:10:26.976Z',
      msg: 'request completed',
      method: 'GET',
      path: '/health/ready',
      status: 200,
      ok: true,
      email: 'a b@example.com',
      traits: { provider: 'email' },
      stack: 'Error\n    at x (y.ts:1:2)',
      gone: undefined,
    });
    expect(line).toBe(
      '2026-12-03T12:10:26.976Z INFO  request completed method=GET path=/health/ready status=200 ok=true ' +
        'email="a b@example.com" traits={"provider":"email"} stack="Error\\n    at x (y.ts:1:2)"',
    );
    expect(line.split('\n')).toHaveLength(1);
  });

  test('a message with a newline stays on its line; the level is padded to five', () => {
    expect(textLine({ level: 'warn', time: 't', msg: 'one\ntwo' })).toBe('t WARN  one\\ntwo');
    expect(textLine({ level: 'error', time: 't', msg: 'x' })).toBe('t ERROR x');
  });

  test('the logger: the same filter and fields as JSON, child fields included', () => {
    const text: string[] = [];
    const json: string[] = [];
    const t = createLogger('info', (l) => text.push(l), {}, 'text').child({ request_id: 'r1' });
    const j = createLogger('info', (l) => json.push(l)).child({ request_id: 'r1' });
    for (const logger of [t, j]) {
      logger.debug('hidden');
      logger.warn('shown', { n: 1 });
    }
    expect(text).toHaveLength(1);
    expect(text[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z WARN {2}shown request_id=r1 n=1$/);
    expect(json).toHaveLength(1);
    expect(JSON.parse(json[0]!)).toMatchObject({ level: 'warn', msg: 'shown', request_id: 'r1', n: 1 });
  });
});

describe('LOG_FORMAT', () => {
  const config = (env: Record<string, string>, local = true) => {
    const parsed = parseConfig({ ...BASE_ENV, ...env }, { local: true });
    if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
    return { ...parsed.config, local };
  };

  test('json or text as set (GOTRUE_ name too); anything else is a configuration error', () => {
    expect(config({ AUTHSVC_LOG_FORMAT: 'text' }).log.format).toBe('text');
    expect(config({ GOTRUE_LOG_FORMAT: 'json' }).log.format).toBe('json');
    const bad = parseConfig({ ...BASE_ENV, AUTHSVC_LOG_FORMAT: 'xml' }, { local: true });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors.join('\n')).toContain('LOG_FORMAT');
  });

  test('unset: text at a terminal in local mode, JSON otherwise (a pipe, a file, a server deployment)', () => {
    expect(logFormat(config({}, true), true)).toBe('text');
    expect(logFormat(config({}, true), false)).toBe('json');
    expect(logFormat(config({}, false), true)).toBe('json');
    expect(logFormat(config({ AUTHSVC_LOG_FORMAT: 'json' }, true), true)).toBe('json');
    expect(logFormat(config({ AUTHSVC_LOG_FORMAT: 'text' }, false), false)).toBe('text');
  });
});
