#!/usr/bin/env bash
# diag-threads.sh — where a node's CPU goes at max closed-loop echo throughput, thread by
# thread (docs/benchmarks/load.md, 2026-12-05): the worker (junction/N), the energy sampler
# (faasnode-energy), the ledger writer (faasnode-ledger), DPDK's threads. Samples the node with
# `perf record -F 4999` over the measured run, then prints requests per node CPU-second, each
# thread's share of the node's samples, and how many of the run's calls the ledger holds as
# rows and how many it folded into overflow aggregates (its queue was full). Needs perf; dpdk
# needs root.
#
#   BACKENDS=dpdk DUR=5 scripts/load/diag-threads.sh      # PERF_OUT=dir keeps the perf.data
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_tool perf
CONNS=${CONNS:-32}
PERF_OUT=${PERF_OUT:-$WORK}
mkdir -p "$PERF_OUT"
for backend in $BACKENDS; do
  start_node "$backend"
  base=$(url_base "$backend")
  args=(--url "$base/function/echo" --method POST --body hello --closed --connections "$CONNS" --warmup 0s --timeout 2s)
  load "$backend" "$WORK/$backend-warm.json" "${args[@]}" --duration 1s
  data=$PERF_OUT/perf-$backend.data
  c0=$(cpu_ticks "$NODE_PID")
  perf record -q -F 4999 -p "$NODE_PID" -o "$data" -- sleep "$DUR" >/dev/null 2>&1 &
  perf_pid=$!
  load "$backend" "$WORK/$backend.json" "${args[@]}" --duration "${DUR}s"
  c1=$(cpu_ticks "$NODE_PID")
  wait "$perf_pid" || true
  n=$(fl "$WORK/$backend.json" ok)
  cpu=$(awk -v d=$((c1 - c0)) -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", d / t }')
  echo "$backend: $n calls in ${DUR}s, $(fl "$WORK/$backend.json" throughput_rps) requests/s, node CPU ${cpu} s," \
       "$(awk -v n="$n" -v c="$cpu" 'BEGIN { printf "%.0f", (c > 0 ? n / c : 0) }') requests per node CPU-second"
  stop_node
  echo "$backend: share of the node's samples by thread:"
  perf report -i "$data" --no-children --sort comm --stdio -F overhead,comm 2>/dev/null | grep '%' | sed 's/^/  /'
  python3 - "$NODE_DIR/ledger.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT count(*) FROM invocations").fetchone()[0]
folded = db.execute("SELECT coalesce(sum(records), 0) FROM overflow_aggregates").fetchone()[0]
total = rows + folded
print(f"  ledger: {rows} rows, {folded} calls folded into overflow aggregates"
      f" ({100.0 * folded / total if total else 0:.1f}% of {total})")
PY
done
