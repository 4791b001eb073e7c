#!/usr/bin/env bash
# diag-billing-p99.sh — what the energy billing costs the tail: echo at a fixed open-loop rate
# (RATE, default 30000/s: about half the kernel path's max here) against the same node config
# with [energy] enabled = true and false, alternating, REPS runs each (docs/benchmarks/load.md,
# 2026-12-04 18:40). Prints throughput, p50/p99/p99.9/max per run. dpdk needs root.
#
#   BACKENDS=dpdk RATE=30000 DUR=4 scripts/load/diag-billing-p99.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
RATE=${RATE:-30000}
DUR=${DUR:-4}
REPS=${REPS:-2}
for backend in $BACKENDS; do
  for energy in on off; do
    cfg=$WORK/node-$backend-energy-$energy.toml
    cp "$ROOT/configs/load/node-$backend.toml" "$cfg"
    [[ $energy == off ]] && sed -i 's/^enabled = true/enabled = false/' "$cfg"
    start_node "$backend" "$cfg"
    base=$(url_base "$backend")
    for rep in $(seq "$REPS"); do
      j=$WORK/$backend-$energy-$rep.json
      load "$backend" "$j" --url "$base/function/echo" --method POST --body hello --rate "$RATE" \
        --connections 32 --duration "${DUR}s" --warmup 1s --timeout 2s
      echo "$backend energy=$energy run $rep: $(fl "$j" throughput_rps latency_us.p50 latency_us.p99 latency_us.p999 latency_us.max) (requests/s, p50, p99, p99.9, max µs)"
    done
    stop_node
  done
done
