#!/usr/bin/env bash
# The A/B of docs/decisions/tracer.md: GET /user with tracing off, and with tracing on through the
# SDK and through the recorder at 100% and 10% sampling, alternated (AB, BA, ...), same build, same
# sink. Before each pair it waits (up to 10 min) for the 1-minute load average to fall below 1.5,
# and while the file $OUT/pause exists (other work on the machine); $OUT/running exists during a pair.
# Usage: bench/ab/tracer-ab.sh <pairs> <outdir> [scenario]
set -u
PAIRS=${1:-9}; OUT=${2:-/tmp/tracer-ab}; SCEN=${3:-user}
mkdir -p "$OUT"
wait_quiet() {
  while [ -e "$OUT/pause" ]; do sleep 5; done
  for _ in $(seq 1 120); do
    l=$(cut -d' ' -f1 /proc/loadavg)
    awk -v l="$l" 'BEGIN { exit !(l < 1.5) }' && { echo "load $l"; touch "$OUT/running"; return; }
    sleep 5
  done
  echo "load still $(cut -d' ' -f1 /proc/loadavg) after 10 min: running anyway"
  touch "$OUT/running"
}
run() { # name args...
  local name=$1; shift
  npm run -s bench -- --only "$SCEN" --no-peer --no-ceilings --json "$OUT/$name.json" "$@" > "$OUT/$name.log" 2>&1
  node -e "const j=require('$OUT/$name.json');const r=j.results['$SCEN'];console.log('$name', r.rps.toFixed(0), r.cpuMsPerReq.toFixed(4), j.machine.loadAvg1)" | tee -a "$OUT/summary.txt"
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
