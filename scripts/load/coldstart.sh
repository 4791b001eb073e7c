#!/usr/bin/env bash
# coldstart.sh — scenario (c): a cold-start burst. The native function `hello` (replicas 4,
# idle_timeout_ms 300 in configs/load/node-*.toml; a config function keeps no warm instance)
# goes to zero by idling past the timeout until the reaper (every 1 s) finis its instances (a
# scale-function to 0 would not do: as behind the gateway, 0 replicas means 1) — then 100 new
# connections at once each send one request (faasload --closed --connections 100
# --requests 100 --warmup 0s). ROUNDS bursts per backend; the latency of every request of the
# bursts (connect and cold start included) gives p50/p99/max. Target (issue 8): p99 <= 5 ms.
#
#   scripts/load/coldstart.sh       # ROUNDS=5 BURST=100
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-5}
BURST=${BURST:-100}
for backend in $BACKENDS; do
  f=$OUT/coldstart-$backend.tsv
  header "$f" backend round burst ok p50_us p99_us max_us errors J_per_req gCO2e_per_1M
  start_node "$backend"
  base=$(url_base "$backend")
  hists=()
  for r in $(seq "$ROUNDS"); do
    # a warm call first (so there is an instance to scale away), then idle to zero
    load "$backend" "$WORK/warm-$r.json" --url "$base/function/hello" --closed --connections 1 --requests 1 --warmup 0s --duration 2s
    sleep 1.6   # > idle_timeout 0.3 s + the reaper's 1 s period
    log "$backend: burst $r of $ROUNDS: $BURST new connections at once on a function scaled to zero"
    j=$WORK/$backend-burst-$r.json
    t0=$(date +%s.%N)
    load "$backend" "$j" --url "$base/function/hello" --closed --connections "$BURST" --requests "$BURST" --warmup 0s --duration 10s --timeout 5s
    t1=$(date +%s.%N)
    hists+=("$j")
    read -r ok p50 p99 max errs < <(fl "$j" ok latency_us.p50 latency_us.p99 latency_us.max errors)
    read -r jr g1m _ _ < <(energy "$(awk -v a="$t0" 'BEGIN{printf "%d", a}')" "$(awk -v b="$t1" 'BEGIN{printf "%d", b + 1}')" hello)
    row "$f" "$backend" "$r" "$BURST" "$ok" "$p50" "$p99" "$max" "$errs" "$jr" "$g1m"
  done
  # every burst's requests together: merge the histograms
  read -r n p50 p99 max < <(python3 - "${hists[@]}" <<'PY'
import json, sys
b = {}
for f in sys.argv[1:]:
    for e in json.load(open(f))["histogram"]:
        b[e["le_us"]] = b.get(e["le_us"], 0) + e["count"]
ks = sorted(b); n = sum(b.values())
def q(p):
    c = 0
    for k in ks:
        c += b[k]
        if c >= p * n: return k
    return ks[-1] if ks else 0
print(n, f"{q(0.5):.1f}", f"{q(0.99):.1f}", f"{(ks[-1] if ks else 0):.1f}")
PY
)
  row "$f" "$backend" all "$n" "-" "$p50" "$p99" "$max" "-" "-" "-"
  stop_node
done
"$ROOT/scripts/load/plot.sh" coldstart
