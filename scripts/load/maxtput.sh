#!/usr/bin/env bash
# maxtput.sh — scenario (b): max throughput per core, closed loop. The node serves on one core
# (NODE_CPU); requests per node CPU-second come from /proc/PID/stat utime+stime over the
# measured run (as scripts/bench-node.sh does). Peers in the same run:
#   kernel: faasload, wrk and hey against the node's echo (three generators cross-checking each
#           other); faasload and wrk against the minimal epoll server (http_baseline_server,
#           the kernel ceiling); the classic-watchdog model (exec function `cat`: one child
#           process per request, the faasd-like baseline)
#   dpdk:   faasload over memif against the node's echo and `cat`
#
#   scripts/load/maxtput.sh         # BUILD=build BACKENDS="kernel dpdk" DUR=3 CONNS=32
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_bin http_baseline_server
need_tool wrk hey
CONNS=${CONNS:-32}
EXEC_CONNS=${EXEC_CONNS:-8}
BASE_PORT=18111
printf 'wrk.method = "POST"\nwrk.body = "hello"\n' >"$WORK/post.lua"

to_us() {  # wrk's 134.00us / 1.23ms / 2.00s -> microseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000; else if (v ~ /s$/) print n * 1e6; else print n }'
}
# one BACKEND SERVER GEN PID URL CONNS [ENERGY_FN] [faasload args]: a warm-up run, then the
# measured run with the server's CPU ticks around it; one row.
one() {
  local backend=$1 server=$2 gen=$3 pid=$4 url=$5 conns=$6 efn=$7; shift 7
  local j=$WORK/$backend-$server-$gen.json c0 c1 t0 t1 tput p50 p99 errs n
  log "$backend: $gen -> $server ($conns connections, ${DUR}s)"
  case $gen in
    faasload)
      load "$backend" "$j.warm" --url "$url" "$@" --closed --connections "$conns" --duration 1s --warmup 0s --timeout 2s
      t0=$(date +%s.%N); c0=$(cpu_ticks "$pid")
      load "$backend" "$j" --url "$url" "$@" --closed --connections "$conns" --duration "${DUR}s" --warmup 0s --timeout 2s
      c1=$(cpu_ticks "$pid"); t1=$(date +%s.%N)
      read -r n tput p50 p99 errs < <(fl "$j" ok throughput_rps latency_us.p50 latency_us.p99 errors) ;;
    wrk)
      taskset -c "$GEN_CPU" timeout 30 wrk -t1 -c"$conns" -d1s -s "$WORK/post.lua" "$url" >/dev/null
      t0=$(date +%s.%N); c0=$(cpu_ticks "$pid")
      out=$(taskset -c "$GEN_CPU" timeout 60 wrk -t1 -c"$conns" -d"${DUR}s" --latency -s "$WORK/post.lua" "$url")
      c1=$(cpu_ticks "$pid"); t1=$(date +%s.%N)
      n=$(awk '/requests in/ {print $1}' <<<"$out"); tput=$(awk '/Requests\/sec/ {printf "%.1f", $2}' <<<"$out")
      p50=$(to_us "$(awk '$1 == "50%" {print $2}' <<<"$out")"); p99=$(to_us "$(awk '$1 == "99%" {print $2}' <<<"$out")")
      errs=$(awk '/Non-2xx/ {e += $NF} /Socket errors/ {gsub(/,/, ""); e += $4 + $6 + $8 + $10} END {print e + 0}' <<<"$out") ;;
    hey)
      t0=$(date +%s.%N); c0=$(cpu_ticks "$pid")
      out=$(taskset -c "$GEN_CPU" timeout 60 hey -z "${DUR}s" -c "$conns" -m POST -d hello "$url")
      c1=$(cpu_ticks "$pid"); t1=$(date +%s.%N)
      tput=$(awk '/Requests\/sec/ {printf "%.1f", $2}' <<<"$out")
      p50=$(awk '$1 == "50%" {printf "%.1f", $3 * 1e6}' <<<"$out"); p99=$(awk '$1 == "99%" {printf "%.1f", $3 * 1e6}' <<<"$out")
      n=$(awk '/\[2[0-9][0-9]\]/ {s += $2} END {print s + 0}' <<<"$out")
      errs=$(awk '/Error distribution/ {e = 1; next} e && /\[[0-9]+\]/ {gsub(/[\[\]]/, "", $1); s += $1} /\[[345][0-9][0-9]\]/ {s += $2} END {print s + 0}' <<<"$out") ;;
  esac
  local cpu jr=- g1m=-
  cpu=$(awk -v d=$((c1 - c0)) -v t="$TCK" 'BEGIN {printf "%.2f", d / t}')
  if [[ -n $efn ]]; then read -r jr g1m _ _ < <(energy $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%d %d", a + 0.5, b + 1}') "$efn"); fi
  row "$f" "$backend" "$server" "$gen" "$conns" "$tput" "$cpu" "$(awk -v n="$n" -v c="$cpu" 'BEGIN {printf "%.0f", (c > 0 ? n / c : 0)}')" "$p50" "$p99" "$errs" "$jr" "$g1m"
}

for backend in $BACKENDS; do
  f=$OUT/maxtput-$backend.tsv
  header "$f" backend server generator connections throughput_rps server_cpu_s req_per_cpu_s p50_us p99_us errors J_per_req gCO2e_per_1M
  start_node "$backend"
  base=$(url_base "$backend")
  one "$backend" faasnode faasload "$NODE_PID" "$base/function/echo" "$CONNS" echo --body hello
  if [[ $backend == kernel ]]; then
    one kernel faasnode wrk "$NODE_PID" "$base/function/echo" "$CONNS" echo
    one kernel faasnode hey "$NODE_PID" "$base/function/echo" "$CONNS" echo
  fi
  one "$backend" faasnode-exec-cat faasload "$NODE_PID" "$base/function/cat" "$EXEC_CONNS" cat --body hello
  stop_node
  if [[ $backend == kernel ]]; then
    taskset -c "$NODE_CPU" "$BUILD/bin/http_baseline_server" --port "$BASE_PORT" 2>/dev/null &
    bpid=$!; PEER_PIDS+=("$bpid")
    for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$BASE_PORT/" && break; sleep 0.1; done
    one kernel epoll-baseline faasload "$bpid" "http://127.0.0.1:$BASE_PORT/" "$CONNS" "" --body hello
    one kernel epoll-baseline wrk "$bpid" "http://127.0.0.1:$BASE_PORT/" "$CONNS" ""
    kill "$bpid"; wait "$bpid" 2>/dev/null || true
  fi
done
"$ROOT/scripts/load/plot.sh" maxtput
