// Node's counterpart of GoTrue's Go runtime metrics, with the semantic-convention names:
// event-loop delay, V8 heap, GC pauses, process CPU time and memory. Bun and Deno implement
// some of these hooks only: what a runtime lacks is left out rather than failing start-up.
import type { Meter } from '@opentelemetry/api';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import process from 'node:process';
import v8 from 'node:v8';

const GC_KINDS: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };

export function registerRuntimeMetrics(meter: Meter): void {
  try {
    const delay = monitorEventLoopDelay({ resolution: 20 });
    delay.enable();
    const ns = 1e9;
    meter
      .createObservableGauge('nodejs.eventloop.delay.p50', { unit: 's', description: 'Event loop delay, median.' })
      .addCallback((r) => r.observe(delay.percentile(50) / ns));
    meter
      .createObservableGauge('nodejs.eventloop.delay.p99', {
        unit: 's',
        description: 'Event loop delay, 99th percentile.',
      })
      .addCallback((r) => r.observe(delay.percentile(99) / ns));
    meter
      .createObservableGauge('nodejs.eventloop.delay.max', {
        unit: 's',
        description: 'Event loop delay, maximum since the last reading.',
      })
      .addCallback((r) => {
        r.observe(delay.max / ns);
        delay.reset();
      });
  } catch {
    // not implemented by this runtime
  }
  try {
    const spaces = v8.getHeapSpaceStatistics();
    if (spaces.length > 0) {
      meter
        .createObservableUpDownCounter('v8js.memory.heap.used', { unit: 'By', description: 'V8 heap used, by space.' })
        .addCallback((r) => {
          for (const s of v8.getHeapSpaceStatistics())
            r.observe(s.space_used_size, { 'v8js.heap.space.name': s.space_name });
        });
      meter
        .createObservableUpDownCounter('v8js.memory.heap.limit', { unit: 'By', description: 'V8 heap size, by space.' })
        .addCallback((r) => {
          for (const s of v8.getHeapSpaceStatistics())
            r.observe(s.space_size, { 'v8js.heap.space.name': s.space_name });
        });
    }
  } catch {
    // not implemented by this runtime
  }
  try {
    const gc = meter.createHistogram('v8js.gc.duration', {
      unit: 's',
      description: 'Garbage-collection pauses.',
      advice: { explicitBucketBoundaries: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1] },
    });
    const obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
        gc.record(e.duration / 1000, { 'v8js.gc.type': GC_KINDS[kind] ?? 'other' });
      }
    });
    obs.observe({ entryTypes: ['gc'] });
  } catch {
    // not implemented by this runtime
  }
  meter
    .createObservableCounter('process.cpu.time', { unit: 's', description: 'CPU time of the process, by mode.' })
    .addCallback((r) => {
      const u = process.cpuUsage();
      r.observe(u.user / 1e6, { 'cpu.mode': 'user' });
      r.observe(u.system / 1e6, { 'cpu.mode': 'system' });
    });
  meter
    .createObservableUpDownCounter('process.memory.usage', {
      unit: 'By',
      description: 'Resident set size of the process.',
    })
    .addCallback((r) => r.observe(process.memoryUsage.rss()));
}
