// Summarises bench/ab/tracer-ab.sh's output directory: per pair and median req/s and server CPU
// per request, and each variant's cost against the median of the tracing-off runs.
// Usage: node bench/ab/tracer-ab-summary.mjs <outdir> [scenario]
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const [dir = '/tmp/tracer-ab', scen = 'user'] = process.argv.slice(2);
const runs = new Map();
for (const f of readdirSync(dir).filter((n) => n.endsWith('.json'))) {
  const j = JSON.parse(readFileSync(join(dir, f), 'utf8'));
  const r = j.results[scen];
  if (r)
    runs.set(f.replace(/\.json$/, ''), {
      rps: r.rps,
      cpu: r.cpuMsPerReq,
      load: j.machine.loadAvg1,
      busy: r.machineBusy,
    });
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const pct = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)}%`;
const off = [...runs].filter(([k]) => k.startsWith('off-')).map(([, v]) => v);
const offRps = median(off.map((r) => r.rps));
const offCpu = median(off.map((r) => r.cpu));
console.log(
  `tracing off runs (req/s, CPU ms/req, busy): ${off.map((r) => `${r.rps.toFixed(0)} ${r.cpu.toFixed(3)} ${Math.round(r.busy * 100)}%`).join('; ')}`,
);
console.log(
  `tracing off: ${off.length} runs, median ${offRps.toFixed(0)} req/s (${Math.min(...off.map((r) => r.rps)).toFixed(0)}–${Math.max(...off.map((r) => r.rps)).toFixed(0)}), ${offCpu.toFixed(3)} ms CPU/req`,
);
for (const ratio of ['1', '0.1']) {
  const pairs = [];
  for (let i = 1; ; i++) {
    const sdk = runs.get(`sdk-${ratio}-${i}`);
    const rec = runs.get(`recorder-${ratio}-${i}`);
    if (!sdk && !rec) break;
    if (sdk && rec) pairs.push({ i, sdk, rec });
  }
  console.log(`\nsampling ${Number(ratio) * 100}%: ${pairs.length} pairs`);
  console.log(
    '| pair | order | SDK req/s | recorder req/s | SDK CPU ms/req | recorder CPU ms/req | recorder − SDK (req/s, points of the off median) | machine busy (SDK / recorder) |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const p of pairs) {
    console.log(
      `| ${p.i} | ${p.i % 2 ? 'SDK first' : 'recorder first'} | ${p.sdk.rps.toFixed(0)} | ${p.rec.rps.toFixed(0)} | ${p.sdk.cpu.toFixed(3)} | ${p.rec.cpu.toFixed(3)} | ${pct(((p.rec.rps - p.sdk.rps) / offRps) * 100)} | ${Math.round(p.sdk.busy * 100)}% / ${Math.round(p.rec.busy * 100)}% |`,
    );
  }
  const sRps = median(pairs.map((p) => p.sdk.rps));
  const rRps = median(pairs.map((p) => p.rec.rps));
  const sCpu = median(pairs.map((p) => p.sdk.cpu));
  const rCpu = median(pairs.map((p) => p.rec.cpu));
  const diffs = pairs.map((p) => ((p.rec.rps - p.sdk.rps) / offRps) * 100);
  console.log(
    `| median | | ${sRps.toFixed(0)} (${pct(((sRps - offRps) / offRps) * 100)} vs off) | ${rRps.toFixed(0)} (${pct(((rRps - offRps) / offRps) * 100)} vs off) | ${sCpu.toFixed(3)} (${pct(((sCpu - offCpu) / offCpu) * 100)}) | ${rCpu.toFixed(3)} (${pct(((rCpu - offCpu) / offCpu) * 100)}) | median ${pct(median(diffs))}, range ${pct(Math.min(...diffs))} to ${pct(Math.max(...diffs))} | |`,
  );
}
