#!/usr/bin/env bash
# bench-energy.sh — docs/benchmarks/energy.md: echo throughput through `faasnode serve` with the
# energy ledger on and off, in one run. The same binary and config but [energy] enabled = true /
# false; the load generator (GEN, below) on CLIENT_CPU; rounds interleaved (on, off, off, on, ...) so drift and neighbours hit
# both alike. Prints, per round, requests/s, requests per CPU-second of the node (utime+stime of
# all its threads) and the node's CPU per request by thread (schedstat: the runtime worker(s),
# the energy sampler, the ledger writer), then the medians and the on/off ratios.
# On a shared host whose speed swings within seconds one round's ratio spreads widely (0.74-1.35
# here); scripts/bench-energy-paired.sh loads nodes that run at once in short alternating windows
# and gives the ratio with a confidence interval and an A/A control.
#
# Where the node's helper threads (sampler, ledger writer) run, HELPERS:
#   client  (default) the node may use every CPU: its helpers go to the CPUs no worker holds (as
#           on a machine with spare cores), which on a 2-CPU machine is the generator's, so what they
#           cost slows the load generator;
#   node    the whole node is confined to SERVER_CPU (taskset): its helpers share the worker's
#           CPU and are paid out of the node's own CPU, at the price of the kernel's time
#           slices (a helper holds the CPU for ms while requests wait; noisier here).
#
# HEADERS=false turns off the energy reply headers (X-Energy-*, X-Carbon-*) of the ledger-on node:
# what they cost the load generator to read, apart from the billing itself.
#
# The load generator, GEN:
#   wrk       (default) wrk -t1. On this 2-CPU machine wrk saturates its CPU before the node
#             saturates its own (wrk at 99% CPU, the worker idling a few percent): the ratio is
#             then the load generator's throughput, slowed by the node's helpers on its CPU.
#   faasload  the project's closed-loop generator (build/bin/faasload, kernel sockets): cheaper
#             per request than wrk, it keeps the node's worker CPU busy, so the ratio is the
#             node's own throughput with the helpers taking what the generator leaves of CPU 1.
#
#   scripts/bench-energy.sh                 # BUILD=build ROUNDS=6 DUR=5 CONNS=32 HELPERS=client HEADERS=true GEN=wrk
#   SERVER_CPU=0 CLIENT_CPU=1 BUILD=build-energy HELPERS=node scripts/bench-energy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-threads.sh  # thread_ns
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-6}
DUR=${DUR:-5}
CONNS=${CONNS:-32}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PORT=${PORT:-18095}
HELPERS=${HELPERS:-client}
HEADERS=${HEADERS:-true}
GEN=${GEN:-wrk}
case $HELPERS in
  node) node_cpus=$SERVER_CPU ;;
  client) node_cpus=$(taskset -pc $$ | sed 's/.*: //') ;;
  *) echo "bench-energy.sh: HELPERS must be node or client, not '$HELPERS'" >&2; exit 2 ;;
esac
case $GEN in
  wrk) command -v wrk >/dev/null || { echo "bench-energy.sh: wrk is not installed (scripts/setup.sh installs it)" >&2; exit 2; } ;;
  faasload) [[ -x $BUILD/bin/faasload ]] || { echo "bench-energy.sh: $BUILD/bin/faasload is missing; build it first" >&2; exit 2; } ;;
  *) echo "bench-energy.sh: GEN must be wrk or faasload, not '$GEN'" >&2; exit 2 ;;
esac
[[ -x $BUILD/bin/faasnode ]] || { echo "bench-energy.sh: $BUILD/bin/faasnode is missing; build it first" >&2; exit 2; }
work=$(mktemp -d /tmp/bench-energy.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = "hello"
wrk.headers["Content-Type"] = "text/plain"
LUA
tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
wait_up() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "node at $1 did not come up" >&2; exit 1; }

# generate SECONDS: one closed-loop run of GEN against the node's echo on CLIENT_CPU; prints
# "requests N" and "rps R"; exits on any failed request.
generate() {
  local out
  if [[ $GEN == wrk ]]; then
    out=$(taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d"${1}s" -s "$work/post.lua" "http://127.0.0.1:$PORT/function/echo")
    if grep -q "Non-2xx\|Socket errors" <<<"$out"; then echo "wrk saw errors: $out" >&2; exit 1; fi
    awk '/requests in/ {print "requests", $1} /Requests\/sec/ {print "rps", $2}' <<<"$out"
  else
    taskset -c "$CLIENT_CPU" "$BUILD/bin/faasload" --url "http://127.0.0.1:$PORT/function/echo" --body hello \
      --closed --connections "$CONNS" --duration "${1}s" --warmup 0s --timeout 2s --quiet --json "$work/gen.json" \
      >"$work/gen.log" 2>&1 || { echo "faasload failed:" >&2; cat "$work/gen.log" >&2; exit 1; }
    python3 scripts/load/jsonfield.py "$work/gen.json" ok throughput_rps errors | {
      read -r ok rps errs
      if [[ $errs != 0 ]]; then echo "faasload saw $errs failed requests" >&2; exit 1; fi
      printf 'requests %s\nrps %s\n' "$ok" "$rps"
    }
  fi
}

# round ON(true|false) R: one node, one run of GEN; prints "rps requests_per_cpu_second
# worker_ns sampler_ns writer_ns" (the last three per request).
round() {
  local cfg="$work/node-$1.toml" out t0 t1 pid
  # A state dir of its own per round: a faasnode-state/ left in the working directory by other
  # runs (stored deployments) must not change which functions this node serves.
  printf '[runtime]\ncores = [%s]\n[net]\nlisten = "127.0.0.1:%s"\n[functions.echo]\n[state]\ndir = "%s/state-%s-%s"\n[energy]\nenabled = %s\nresponse_headers = %s\nledger = "%s/ledger-%s.db"\n' \
    "$SERVER_CPU" "$PORT" "$work" "$1" "$2" "$1" "$HEADERS" "$work" "$2" >"$cfg"
  taskset -c "$node_cpus" "$BUILD/bin/faasnode" serve --config "$cfg" >"$work/node.log" 2>&1 &
  pid=$!
  wait_up "http://127.0.0.1:$PORT/healthz"
  generate 1 >/dev/null  # warm-up
  t0=$(cpu_ticks "$pid")
  read -r w0 s0 l0 < <(thread_ns "$pid")
  out=$(generate "$DUR")
  t1=$(cpu_ticks "$pid")
  read -r w1 s1 l1 < <(thread_ns "$pid")
  kill -INT "$pid"
  wait "$pid" || { echo "faasnode exited non-zero:" >&2; cat "$work/node.log" >&2; exit 1; }
  awk -v d=$((t1 - t0)) -v tck="$tck" -v w=$((w1 - w0)) -v s=$((s1 - s0)) -v l=$((l1 - l0)) \
    '/^requests / {n = $2} /^rps / {rps = $2}
    END { cpu = d / tck; printf "%.0f %.0f %.0f %.0f %.0f\n", rps, (cpu > 0 ? n / cpu : 0), w / n, s / n, l / n }' <<<"$out"
}

echo "# $(date -u '+%F %T') UTC; uptime: $(uptime | sed 's/.*load average/load average/'); $GEN closed loop, $CONNS connections, ${DUR}s, POST 5 bytes to /function/echo; node worker on CPU $SERVER_CPU (runtime cores = [$SERVER_CPU]), HELPERS=$HELPERS (node threads on CPUs $node_cpus), $GEN on CPU $CLIENT_CPU; energy reply headers $HEADERS"
echo "| round | ledger | requests/s | requests per node CPU-second | node CPU ns per request: worker / sampler / writer |"
echo "|---|---|---|---|---|"
on=() off=() on_cpu=() off_cpu=() on_thr=() off_thr=()
for r in $(seq "$ROUNDS"); do
  if (( r % 2 )); then order="true false"; else order="false true"; fi
  for mode in $order; do
    read -r rps per_cpu w_ns s_ns l_ns < <(round "$mode" "$r")
    if [[ $mode == true ]]; then
      on+=("$rps"); on_cpu+=("$per_cpu"); on_thr+=("$w_ns,$s_ns,$l_ns")
    else
      off+=("$rps"); off_cpu+=("$per_cpu"); off_thr+=("$w_ns,$s_ns,$l_ns")
    fi
    echo "| $r | $([[ $mode == true ]] && echo on || echo off) | $rps | $per_cpu | $w_ns / $s_ns / $l_ns |"
  done
done
echo "# after: $(uptime | sed 's/.*load average/load average/')"
python3 - "${on[*]}" "${off[*]}" "${on_cpu[*]}" "${off_cpu[*]}" "${on_thr[*]}" "${off_thr[*]}" <<'PY'
import statistics as st, sys
on, off, on_cpu, off_cpu = ([float(x) for x in a.split()] for a in sys.argv[1:5])
on_thr, off_thr = ([[float(v) for v in t.split(",")] for t in a.split()] for a in sys.argv[5:7])
m = st.median
print(f"median requests/s: ledger on {m(on):.0f}, off {m(off):.0f}; ratio on/off {m(on) / m(off):.4f} "
      f"(per-round ratios: median {m([a / b for a, b in zip(on, off)]):.4f})")
print(f"median requests per CPU-second: on {m(on_cpu):.0f}, off {m(off_cpu):.0f}; ratio {m(on_cpu) / m(off_cpu):.4f}")
col = lambda rows, i: m([r[i] for r in rows])
print(f"median node CPU ns per request: ledger on: worker {col(on_thr, 0):.0f}, sampler {col(on_thr, 1):.0f}, "
      f"writer {col(on_thr, 2):.0f}; off: worker {col(off_thr, 0):.0f} (the worker's figure counts its idle polling)")
PY
