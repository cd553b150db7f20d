// The measuring harness of the in-process ceilings (user-read.ts, refresh-rotate.ts): `inFlight`
// loops each run `op` back to back (a loop's `prepare` first); the first `warmup` seconds are not
// counted; then one JSON line on stdout:
//   { perSecond, p50, p99, seconds, cpuMsPerOp, pgCpuMsPerOp }
// with this process's CPU and every postgres process's CPU over the measured window, per op.
import { postgresCpuMs } from '../lib/procs.ts';

export interface ClosedLoop<S> {
  inFlight: number;
  warmup: number;
  seconds: number;
  /** A loop's own state (a session to rotate), made before it starts. */
  prepare: (i: number) => Promise<S>;
  op: (state: S) => Promise<void>;
  close: () => Promise<void>;
}

export async function runClosedLoop<S>(o: ClosedLoop<S>): Promise<void> {
  let counting = false;
  let running = true;
  const latencies: number[] = [];
  const loop = async (i: number): Promise<void> => {
    const state = await o.prepare(i);
    while (running) {
      const t = performance.now();
      await o.op(state);
      if (counting) latencies.push(performance.now() - t);
    }
  };
  const loops = Array.from({ length: o.inFlight }, (_, i) => loop(i));
  await new Promise((r) => setTimeout(r, o.warmup * 1000));
  counting = true;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const pg0 = postgresCpuMs();
  await new Promise((r) => setTimeout(r, o.seconds * 1000));
  const elapsed = (performance.now() - t0) / 1000;
  const count = latencies.length;
  const cpu = process.cpuUsage(cpu0);
  const pgMs = postgresCpuMs() - pg0;
  running = false;
  await Promise.all(loops);
  await o.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  process.stdout.write(
    `${JSON.stringify({
      perSecond: count / elapsed,
      p50: pct(50),
      p99: pct(99),
      seconds: elapsed,
      cpuMsPerOp: (cpu.user + cpu.system) / 1000 / count,
      pgCpuMsPerOp: pgMs / count,
    })}\n`,
  );
}
