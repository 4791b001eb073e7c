#!/usr/bin/env bash
# curve.sh — scenario (a): latency vs offered load, open loop (faasload --rate), for echo and
# for cpu-burn (?rounds=25, ~0.1 ms of CPU), on each backend, up to past saturation. Each
# point: p50/p90/p99/p99.9, throughput, errors, and from the ledger J/request and gCO2e per
# 1M requests. When maxtput.sh ran before (OUT/maxtput-kernel.tsv), one more echo point at
# half the kernel path's max rate: the issue's p99 target.
#
#   scripts/load/curve.sh           # BUILD=build BACKENDS="kernel dpdk" DUR=3 (see lib.sh)
#   ECHO_RATES="5000 20000" BURN_RATES="2000" BACKENDS=kernel scripts/load/curve.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ECHO_RATES=${ECHO_RATES:-2000 10000 25000 45000 70000 100000}
BURN_RATES=${BURN_RATES:-1000 3000 5000 7000 9000 12000}
CONNS=${CONNS:-32}
half=
if [[ -f $OUT/maxtput-kernel.tsv ]]; then
  half=$(awk -F'\t' '$2 == "faasnode" && $3 == "faasload" {printf "%d", $5 / 2; exit}' "$OUT/maxtput-kernel.tsv")
  [[ -n $half ]] && log "half the kernel max rate (maxtput-kernel.tsv): $half requests/s"
fi
for backend in $BACKENDS; do
  f=$OUT/curve-$backend.tsv
  header "$f" backend function offered_rps throughput_rps p50_us p90_us p99_us p999_us max_us errors J_per_req gCO2e_per_1M J_per_req_fn
  start_node "$backend"
  base=$(url_base "$backend")
  for fn in echo cpu-burn half; do
    case $fn in
      echo) rates=$ECHO_RATES; path=/function/echo; args=(--method POST --body hello) ;;
      cpu-burn) rates=$BURN_RATES; path="/function/cpu-burn?rounds=25"; args=() ;;
      half) [[ -n $half ]] || continue; rates=$half; path=/function/echo; args=(--method POST --body hello) ;;
    esac
    for r in $rates; do
      log "$backend $fn at $r requests/s for ${DUR}s"
      j=$WORK/$backend-$fn-$r.json
      t0=$(date +%s.%N)
      load "$backend" "$j" --url "$base$path" "${args[@]}" --rate "$r" --connections "$CONNS" --duration "${DUR}s" --warmup "${WARMUP}s" --timeout 2s
      t1=$(date +%s.%N)
      read -r ok tput p50 p90 p99 p999 max errs < <(fl "$j" ok throughput_rps latency_us.p50 latency_us.p90 latency_us.p99 latency_us.p999 latency_us.max errors)
      # the ledger window: the measured part (after the warm-up) up to the end (whole seconds)
      fname=${path#/function/}
      read -r jr g1m jfn _ < <(energy $(window "$t0" "$t1") "${fname%%\?*}")
      row "$f" "$backend" "${fn/half/echo-half-kernel-max}" "$r" "$tput" "$p50" "$p90" "$p99" "$p999" "$max" "$errs" "$jr" "$g1m" "$jfn"
    done
  done
  stop_node
done
"$ROOT/scripts/load/plot.sh" curve
