#!/usr/bin/env bash
# The A/B of docs/decisions/tracer.md: GET /user with tracing off, and with tracing on through the
# SDK and through the recorder at 100% and 10% sampling, alternated (AB, BA, ...), same build, same
# sink. Before each pair it waits (up to 20 min) for the 1-minute load average to fall below 1.5,
# and while the file $OUT/pause exists or a vitest run is on (other work on the machine); $OUT/running exists during a pair.
# Needs both tracers, i.e. src/ and bench/run.ts as of commit 06d9c32 (bench --tracer,
# AUTHSVC_AB_TRACER); the recorder is gone since. Tables: node bench/ab/tracer-ab-summary.mjs <outdir>.
# Usage: bench/ab/tracer-ab.sh <pairs> <outdir> [scenario]
set -u
PAIRS=${1:-9}; OUT=${2:-/tmp/tracer-ab}; SCEN=${3:-user}
mkdir -p "$OUT"
busy_elsewhere() { # the pause file, or another checkout's test run (the machine is shared)
  [ -e "$OUT/pause" ] || pgrep -f 'node_modules/.bin/vitest' > /dev/null
}
wait_quiet() {
  for _ in $(seq 1 240); do
    l=$(cut -d' ' -f1 /proc/loadavg)
    if ! busy_elsewhere && awk -v l="$l" 'BEGIN { exit !(l < 1.5) }'; then echo "load $l"; touch "$OUT/running"; return; fi
    sleep 5
  done
  echo "load still $(cut -d' ' -f1 /proc/loadavg) after 20 min: running anyway"
  touch "$OUT/running"
}
run() { # name args...
  local name=$1; shift
  npm run -s bench -- --only "$SCEN" --no-peer --no-ceilings --json "$OUT/$name.json" "$@" > "$OUT/$name.log" 2>&1
  node -e "const j=require('$OUT/$name.json');const r=j.results['$SCEN'];console.log('$name', r.rps.toFixed(0), r.cpuMsPerReq.toFixed(4), j.machine.loadAvg1, r.machineBusy.toFixed(2))" | tee -a "$OUT/summary.txt"
}
main() {
  for i in $(seq 1 "$PAIRS"); do
    wait_quiet | tee -a "$OUT/summary.txt"
    run "off-$i"
    rm -f "$OUT/running"
    for r in 1 0.1; do
      wait_quiet | tee -a "$OUT/summary.txt"
      ratio=(); [ "$r" != 1 ] && ratio=(--sample-ratio "$r")
      if [ $((i % 2)) -eq 1 ]; then order="sdk recorder"; else order="recorder sdk"; fi
      for t in $order; do run "$t-$r-$i" --tracing --tracer "$t" "${ratio[@]}"; done
      rm -f "$OUT/running"
    done
  done
}
main
