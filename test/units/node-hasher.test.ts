import { expect, test } from 'vitest';
import { concurrencyLimit, createNodeHasher } from '../../src/adapters/node-hasher.ts';

test('concurrencyLimit runs at most N tasks at once, in order, and keeps going after failures', async () => {
  const limit = concurrencyLimit(2);
  let active = 0;
  let peak = 0;
  const order: number[] = [];
  const task = (i: number) =>
    limit(async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 5));
      order.push(i);
      active--;
      if (i === 3) throw new Error('boom');
      return i;
    });
  const results = await Promise.allSettled([0, 1, 2, 3, 4, 5, 6].map(task));
  expect(peak).toBe(2);
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(6);
  expect(order.slice(0, 2).sort()).toEqual([0, 1]);
});

test('the limited node hasher still hashes and verifies every format', async () => {
  const h = createNodeHasher({ maxConcurrent: 1 });
  const hashes = await Promise.all([1, 2, 3].map((i) => h.hash(`pw-${i}`)));
  for (const [i, hash] of hashes.entries()) {
    expect(hash).toMatch(/^\$2a\$10\$/);
    expect(await h.verify(`pw-${i + 1}`, hash)).toBe(true);
    expect(await h.verify(`pw-${i + 2}`, hash)).toBe(false);
  }
  expect(await h.verify('test', '$argon2i$v=19$m=16,t=2,p=1$bGJRWThNOHJJTVBSdHl2dQ$NfEnUOuUpb7F2fQkgFUG4g')).toBe(true);
});
