#!/usr/bin/env bash
# bench-energy.sh — echo throughput with the energy ledger on and off, in one run: the same
# faasnode binary served with [energy] enabled = true / false, repetitions interleaved
# (on, off, off, on, ...) so drift and neighbours hit both alike; prints each repetition, the
# medians and the ratio, for docs/benchmarks/energy.md.
#
#   scripts/bench-energy.sh                 # REPS=6 SECONDS_PER=5 CONNS=4
#   BUILD=build-energy scripts/bench-energy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
REPS=${REPS:-6}
SECS=${SECONDS_PER:-5}
CONNS=${CONNS:-4}
PORT=${PORT:-18950}
if [[ -z "${NO_BUILD:-}" ]]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$BUILD" -j"${JOBS:-2}" --target faasnode faasnode_http_load >/dev/null
fi
dir=$(mktemp -d /tmp/bench-energy.XXXXXX)
trap 'rm -rf "$dir"' EXIT
run_one() {  # $1 = true|false ; prints "rps cpu_us_per_request" (the node's user+system CPU)
  local cfg="$dir/node-$1.toml"
  printf '[net]\nlisten = "127.0.0.1:%s"\n[functions]\nstore = "%s/functions"\n[functions.echo]\n[energy]\nenabled = %s\nledger = "%s/ledger.db"\n' \
    "$PORT" "$BUILD" "$1" "$dir" >"$cfg"
  "$BUILD/bin/faasnode" serve --config "$cfg" >"$dir/log-$1" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.05; done
  local t0 t1 out
  t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  out=$("$BUILD/bin/faasnode_http_load" --url "http://127.0.0.1:$PORT/function/echo" --body hello \
    --connections "$CONNS" --seconds "$SECS")
  t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  local hz; hz=$(getconf CLK_TCK)
  echo "$out" | awk -v d="$((t1 - t0))" -v hz="$hz" '{
    split($1, r, "="); split($4, p, "="); printf "%s %.2f\n", p[2], d / hz * 1e6 / r[2] }'
  kill -INT "$pid"
  wait "$pid" || { echo "faasnode exited non-zero; log:" >&2; cat "$dir/log-$1" >&2; exit 1; }
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)  (uptime: $(uptime))"
on=() off=() on_cpu=() off_cpu=()
for r in $(seq "$REPS"); do
  if (( r % 2 )); then order="true false"; else order="false true"; fi
  for mode in $order; do
    read -r rps cpu < <(run_one "$mode")
    if [[ $mode == true ]]; then on+=("$rps"); on_cpu+=("$cpu"); else off+=("$rps"); off_cpu+=("$cpu"); fi
    echo "rep $r ledger=$([[ $mode == true ]] && echo on || echo off) rps=$rps node_cpu_us_per_request=$cpu"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${on[*]}" "${off[*]}" "${on_cpu[*]}" "${off_cpu[*]}" <<'PY'
import statistics, sys
on, off, on_cpu, off_cpu = ([float(x) for x in a.split()] for a in sys.argv[1:5])
pairs = [a / b for a, b in zip(on, off)]
print(f"median rps: ledger on {statistics.median(on):.0f}, off {statistics.median(off):.0f}")
print(f"on/off ratio of medians {statistics.median(on) / statistics.median(off):.4f}; "
      f"median of per-repetition ratios {statistics.median(pairs):.4f} "
      f"(loss {100 * (1 - statistics.median(pairs)):.2f}%)")
print(f"median node CPU per request: ledger on {statistics.median(on_cpu):.2f} us, "
      f"off {statistics.median(off_cpu):.2f} us")
PY
