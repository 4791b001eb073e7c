#!/usr/bin/env bash
# diag-first-burst.sh — where the node's first 100-connection burst after a start spends its
# time in page faults (docs/benchmarks/load.md, 2026-12-04). Starts a fresh node, makes one
# warm call, idles 1.6 s (the function scales to zero), then records every page fault of the
# node (perf record -c 1 -e page-faults, call graphs) across two bursts one after another,
# and prints each burst's p50/p99 and the top faulting symbols. Needs perf (linux-perf) and,
# for dpdk, root.
#
#   B=dpdk scripts/load/diag-first-burst.sh      # B=kernel|dpdk; perf data kept with KEEP_WORK=1
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_tool perf
B=${B:-dpdk}
start_node "$B"
base=$(url_base "$B")
for r in 1 2; do
  load "$B" "$WORK/w$r.json" --url "$base/function/hello" --closed --connections 1 --requests 1 --warmup 0s --duration 2s
  sleep 1.6
  perf record -q -c 1 -e page-faults -g -o "$WORK/faults$r.data" -p "$NODE_PID" >/dev/null 2>&1 & pp=$!
  sleep 0.3
  load "$B" "$WORK/b$r.json" --url "$base/function/hello" --closed --connections 100 --requests 100 --warmup 0s --duration 10s --timeout 5s
  kill -INT "$pp"; wait "$pp" || true
  read -r p50 p99 < <(fl "$WORK/b$r.json" latency_us.p50 latency_us.p99)
  echo "burst $r: p50 $p50 us, p99 $p99 us; the node's page faults meanwhile:"
  perf report -i "$WORK/faults$r.data" --no-children --sort dso,sym --stdio 2>/dev/null \
    | grep -E "^# Samples|^ +[0-9.]+%" | head -8
done
stop_node
