import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, vi } from 'vitest';
import { createNodeLogger } from '../src/adapters/node.ts';
import { parseConfig } from '../src/config/config.ts';
import { BASE_ENV } from './helpers/app.ts';

test('LOG_FILE appends JSON lines at LOG_LEVEL; lower levels are dropped', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'log-')), 'authsvc.log');
  const parsed = parseConfig({ ...BASE_ENV, AUTHSVC_LOG_LEVEL: 'warn', AUTHSVC_LOG_FILE: file }, { local: true });
  if (!parsed.ok) throw new Error(parsed.errors.join());
  const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    const logger = createNodeLogger(parsed.config).child({ request_id: 'r1' });
    logger.info('not at this level');
    logger.warn('first', { a: 1 });
    logger.error('second');
  } finally {
    write.mockRestore();
  }
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatchObject({ level: 'warn', msg: 'first', a: 1, request_id: 'r1' });
  expect(lines[1]).toMatchObject({ level: 'error', msg: 'second', request_id: 'r1' });
  expect(typeof lines[0]!.time).toBe('string');
});
