// The Node CLI's one collection after start-up (src/adapters/startup-gc.ts): it runs a major GC
// and never leaves `gc` on the application's global object.
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { collectStartupGarbage } from '../../src/adapters/startup-gc.ts';

describe('collectStartupGarbage', () => {
  it('runs one major collection after the delay and does not expose gc', async () => {
    const kinds: number[] = [];
    const obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) kinds.push((e as unknown as { detail: { kind: number } }).detail.kind);
    });
    obs.observe({ entryTypes: ['gc'] });
    try {
      collectStartupGarbage(10);
      expect(kinds).not.toContain(constants.NODE_PERFORMANCE_GC_MAJOR);
      await new Promise((r) => setTimeout(r, 300));
      expect(kinds).toContain(constants.NODE_PERFORMANCE_GC_MAJOR);
      expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    } finally {
      obs.disconnect();
    }
  });
});
