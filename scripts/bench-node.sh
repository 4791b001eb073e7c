#!/usr/bin/env bash
# bench-node.sh — docs/benchmarks/node.md: echo through `faasnode serve` (kernel backend, one
# core) against a minimal epoll HTTP server answering a fixed response, in the same run, with
# wrk on another core. Rounds alternate the two servers; each prints requests/s and requests
# per CPU-second of the server process (utime+stime from /proc, all its threads). The last
# lines give, per node build, its per-round ratios to the baseline's requests per CPU-second
# with their mean and median (the figure the target is judged on), and the mean user and
# kernel CPU per request.
#
#   scripts/bench-node.sh                      # BUILD=build ROUNDS=3 DUR=10 CONNS=32
#   SERVER_CPU=0 CLIENT_CPU=1 IDLE_SPIN_US=0 ENERGY=false scripts/bench-node.sh
#   BUILD_B=/tmp/old-build scripts/bench-node.sh   # each round also runs BUILD_B's faasnode (A/B)
#     (a build dir, or a copy holding bin/faasnode and functions/echo.so)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
DUR=${DUR:-10}
CONNS=${CONNS:-32}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
IDLE_SPIN_US=${IDLE_SPIN_US:-50}   # the node's default; 0: block as soon as idle
ENERGY=${ENERGY:-true}             # false: no billing sampler
ENERGY_INTERVAL_MS=${ENERGY_INTERVAL_MS:-10}   # the sampler's interval (the default 10 ms)
BUILD_B=${BUILD_B:-}               # optional second node build, measured in the same rounds
command -v wrk >/dev/null || { echo "bench-node.sh: wrk is not installed (scripts/setup.sh installs it)" >&2; exit 2; }
for b in faasnode http_baseline_server; do
  [[ -x $BUILD/bin/$b ]] || { echo "bench-node.sh: $BUILD/bin/$b is missing; build it with -DFAASNODE_BENCH=ON" >&2; exit 2; }
done
if [[ -n $BUILD_B && ! -x $BUILD_B/bin/faasnode ]]; then
  echo "bench-node.sh: BUILD_B=$BUILD_B has no bin/faasnode; point it at a build dir or a copy of one" >&2; exit 2
fi
work=$(mktemp -d /tmp/bench-node.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = "hello"
wrk.headers["Content-Type"] = "text/plain"
LUA
tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
sys_ticks() { awk '{print $15}' "/proc/$1/stat"; }
wait_up() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "server at $1 did not come up" >&2; exit 1; }

# measure NAME PID URL: one wrk run; prints a table row.
measure() {
  local name=$1 pid=$2 url=$3 out t0 t1
  taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d2s -s "$work/post.lua" "$url" >/dev/null  # warm-up
  t0=$(cpu_ticks "$pid"); k0=$(sys_ticks "$pid")
  out=$(taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d"${DUR}s" --latency -s "$work/post.lua" "$url")
  t1=$(cpu_ticks "$pid"); k1=$(sys_ticks "$pid")
  local n rps p50 p99 errs
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  errs=$(awk '/Non-2xx|Socket errors/ {printf "%s ", $0}' <<<"$out")
  # user and kernel CPU per request apart: the kernel's share (recv, send, wake-ups on
  # loopback) is the same work for both servers; the user share is what each adds.
  awk -v name="$name" -v n="$n" -v rps="$rps" -v d=$((t1 - t0)) -v k=$((k1 - k0)) -v tck="$tck" -v p50="$p50" -v p99="$p99" -v errs="$errs" \
    'BEGIN { cpu = d / tck; printf "| %s | %.0f | %.2f | %.0f | %.2f | %.2f | %s | %s | %s\n", name, rps, cpu, (cpu > 0 ? n / cpu : 0), (d - k) / tck * 1e6 / n, k / tck * 1e6 / n, p50, p99, errs }'
}

port_base=18091
cat >"$work/node.toml" <<EOF2
[runtime]
cores = [$SERVER_CPU]
idle_spin_us = $IDLE_SPIN_US
[net]
listen = "127.0.0.1:$((port_base + 1))"
[energy]
enabled = $ENERGY
interval_ms = $ENERGY_INTERVAL_MS
ledger = "$work/ledger.db"
[state]
dir = "$work/state"   # fresh: the config's functions deploy on a state dir's first start only
[functions.echo]
EOF2
echo "# $(date -u '+%F %T') UTC; uptime: $(uptime | sed 's/.*load average/load average/'); wrk -t1 -c$CONNS -d${DUR}s POST 5 bytes; server on CPU $SERVER_CPU, wrk on CPU $CLIENT_CPU; node idle_spin_us=$IDLE_SPIN_US energy=$ENERGY interval_ms=$ENERGY_INTERVAL_MS"
echo "| server | requests/s | server CPU s | requests per CPU-second | user µs/request | kernel µs/request | p50 | p99 | errors"
echo "|---|---|---|---|---|---|---|---|---"
for r in $(seq "$ROUNDS"); do
  taskset -c "$SERVER_CPU" "$BUILD/bin/http_baseline_server" --port "$port_base" 2>/dev/null &
  base_pid=$!
  wait_up "http://127.0.0.1:$port_base/"
  measure "baseline epoll (round $r)" "$base_pid" "http://127.0.0.1:$port_base/" | tee -a "$work/rows.md"
  kill "$base_pid"; wait "$base_pid" 2>/dev/null || true
  for nb in "$BUILD" ${BUILD_B:+"$BUILD_B"}; do
    rm -rf "$work/state"  # fresh each time (see [state] above)
    "$nb/bin/faasnode" serve --config "$work/node.toml" >"$work/node.log" 2>&1 &
    node_pid=$!
    wait_up "http://127.0.0.1:$((port_base + 1))/healthz"
    label="faasnode echo (round $r)"
    [[ -n $BUILD_B ]] && label="faasnode echo, $nb (round $r)"
    measure "$label" "$node_pid" "http://127.0.0.1:$((port_base + 1))/function/echo" | tee -a "$work/rows.md"
    kill "$node_pid"; wait "$node_pid" 2>/dev/null || true
  done
done
echo "# after: $(uptime | sed 's/.*load average/load average/')"
# The judged figure, per node binary: its requests per CPU-second over the baseline's in the
# same round (the rounds alternate, so a disturbed round moves both), with the mean and median
# over the rounds, and the mean user and kernel CPU per request beside the baseline's.
python3 - "$work/rows.md" <<'PY'
import statistics as st, sys
base, builds = {"user": [], "kernel": []}, {}
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.split("|")]
    name, cps, user, kernel = cells[1], float(cells[4]), float(cells[5]), float(cells[6])
    if name.startswith("baseline"):
        base_cps = cps
        base["user"].append(user); base["kernel"].append(kernel)
        continue
    b = builds.setdefault(name.rsplit(" (round", 1)[0], {"ratios": [], "user": [], "kernel": []})
    b["ratios"].append(cps / base_cps if base_cps else 0.0)
    b["user"].append(user); b["kernel"].append(kernel)
m = st.mean
print(f"# baseline: user {m(base['user']):.2f}, kernel {m(base['kernel']):.2f} µs/request")
for name, b in builds.items():
    r = b["ratios"]
    print(f"# {name} / baseline, requests per CPU-second: {' '.join(f'{x:.3f}' for x in r)}; "
          f"mean {m(r):.3f}, median {st.median(r):.3f} (target >= 0.8); "
          f"user {m(b['user']):.2f}, kernel {m(b['kernel']):.2f} µs/request")
PY
