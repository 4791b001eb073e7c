#!/usr/bin/env bash
# mixed.sh — scenario (d): mixed functions (configs/load/mix.txt: echo, hello, sha256,
# json-stats, cpu-burn by weight), open loop at several rates and one closed-loop run, on
# each backend, with J/request and gCO2e per 1M requests from the ledger beside p99.
#
#   scripts/load/mixed.sh           # MIX_RATES="2000 8000 20000" DUR=3
set -euo pipefail
source "$(dirname "$0")/lib.sh"
MIX_RATES=${MIX_RATES:-2000 8000 20000}
CONNS=${CONNS:-32}
for backend in $BACKENDS; do
  f=$OUT/mixed-$backend.tsv
  header "$f" backend mode offered_rps throughput_rps p50_us p90_us p99_us p999_us max_us errors J_per_req gCO2e_per_1M
  start_node "$backend"
  base=$(url_base "$backend")
  for r in $MIX_RATES closed; do
    log "$backend: the mix at ${r} (requests/s) for ${DUR}s"
    j=$WORK/$backend-mix-$r.json
    if [[ $r == closed ]]; then mode=(--closed); else mode=(--rate "$r"); fi
    t0=$(date +%s.%N)
    load "$backend" "$j" --url "$base/" --mix "$ROOT/configs/load/mix.txt" "${mode[@]}" --connections "$CONNS" --duration "${DUR}s" --warmup "${WARMUP}s" --timeout 2s
    t1=$(date +%s.%N)
    read -r tput p50 p90 p99 p999 max errs < <(fl "$j" throughput_rps latency_us.p50 latency_us.p90 latency_us.p99 latency_us.p999 latency_us.max errors)
    read -r jr g1m _ _ < <(energy $(window "$t0" "$t1"))
    row "$f" "$backend" "$([[ $r == closed ]] && echo closed || echo open)" "$([[ $r == closed ]] && echo - || echo "$r")" "$tput" "$p50" "$p90" "$p99" "$p999" "$max" "$errs" "$jr" "$g1m"
  done
  stop_node
done
"$ROOT/scripts/load/plot.sh" mixed
