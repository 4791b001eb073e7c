#!/usr/bin/env bash
# bench-energy-paired.sh — docs/benchmarks/energy.md: the ledger's throughput cost (issue 6,
# "<= 2% throughput loss with the ledger on") measured with the host's drift paired out, and
# with an A/A control that shows what the method itself reads when nothing differs.
#
# Several nodes run at once from the same binary, each with its runtime worker on SERVER_CPU,
# one per entry of NODES (NAME:ENERGY:HEADERS, ENERGY and HEADERS true|false). The default:
#   on:true:true     the ledger, the sampler and the energy reply headers
#   off:false:false  the reference: every other node's throughput is divided by this one's
#   off2:false:false the A/A control: off2/off should read 1.0 within the interval
# (add e.g. on-nohdr:true:false to see the reply headers' share apart). Only one node is loaded
# at a time (an unloaded kernel-backend worker sleeps in epoll). Each cycle runs one short
# closed-loop faasload window (W seconds after WARMUP of warm-up) against each node, in an order
# that rotates and reverses from cycle to cycle, so the host's speed swings — which on this
# shared VM reach 2x within seconds and made the sequential rounds of bench-energy.sh spread
# 0.74-1.35 per round — hit every node alike within a cycle. After each window the script waits
# until that node's billing threads are quiet (settle, below), so no node's deferred ledger
# work runs in another node's window.
#
# Prints progress every 10 cycles, then for each node against the reference: the median of the
# per-cycle throughput ratios with a bootstrap 95% interval, and each node's CPU per request by
# thread (schedstat: worker, sampler, writer) during its windows and after them.
#
#   scripts/bench-energy-paired.sh    # BUILD=build CYCLES=150 W=0.5 WARMUP=0.1 CONNS=32
#                                     # SERVER_CPU=0 CLIENT_CPU=1 PORT=18300 (PORT.. one per node)
#   NODES="on:true:true on-nohdr:true:false off:false:false" scripts/bench-energy-paired.sh
# Helpers (sampler, writer) may use every CPU the script may (as HELPERS=client in
# bench-energy.sh): on this 2-CPU VM that is the generator's CPU as well.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-threads.sh  # thread_ns
BUILD=${BUILD:-build}
CYCLES=${CYCLES:-150}
W=${W:-0.5}
WARMUP=${WARMUP:-0.1}
CONNS=${CONNS:-32}
NODES=${NODES:-on:true:true off:false:false off2:false:false}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PORT=${PORT:-18300}
die() { echo "bench-energy-paired.sh: $*" >&2; exit 2; }
[[ $CYCLES =~ ^[0-9]+$ && $CYCLES -ge 10 ]] || die "CYCLES must be a whole number >= 10, not '$CYCLES'"
names=()
declare -A energy headers
for spec in $NODES; do
  IFS=: read -r n e h <<<"$spec"
  [[ $n =~ ^[a-z0-9-]+$ && ($e == true || $e == false) && ($h == true || $h == false) ]] ||
    die "NODES: '$spec' is not NAME:ENERGY:HEADERS (a name of a-z0-9-, then true|false twice)"
  [[ -z ${energy[$n]:-} ]] || die "NODES: '$n' is named twice"
  names+=("$n"); energy[$n]=$e; headers[$n]=$h
done
(( ${#names[@]} >= 2 )) || die "NODES needs at least two nodes (the second, the reference, ledger off)"
ref=${names[1]}
for b in faasnode faasload; do
  [[ -x $BUILD/bin/$b ]] || die "$BUILD/bin/$b is missing: build it first (cmake --build $BUILD -j2 --target $b)"
done
command -v curl >/dev/null || die "curl is not installed (scripts/setup.sh installs it)"
work=$(mktemp -d /tmp/bench-energy-paired.XXXXXX)
declare -A port=() pid=()
cleanup() {
  for p in "${pid[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${pid[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start NAME: a node of its own state and ledger on its own port; waits for /healthz.
start() {
  local cfg="$work/$1.toml"
  port[$1]=$((PORT + ${#pid[@]}))
  printf '[runtime]\ncores = [%s]\n[net]\nlisten = "127.0.0.1:%s"\n[functions.echo]\n[state]\ndir = "%s/state-%s"\n[energy]\nenabled = %s\nresponse_headers = %s\nledger = "%s/ledger-%s.db"\n' \
    "$SERVER_CPU" "${port[$1]}" "$work" "$1" "${energy[$1]}" "${headers[$1]}" "$work" "$1" >"$cfg"
  "$BUILD/bin/faasnode" serve --config "$cfg" >"$work/$1.log" 2>&1 &
  pid[$1]=$!
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:${port[$1]}/healthz" && return 0
    kill -0 "${pid[$1]}" 2>/dev/null || { cat "$work/$1.log" >&2; die "the $1 node exited at start (log above)"; }
    sleep 0.1
  done
  die "the $1 node did not answer /healthz in 10 s (log: $work/$1.log)"
}
# settle NAME: waits (up to 5 s) until the node's billing threads are quiet, less than 3 ms of
# CPU in 100 ms. A ledger-on node packs its rows while it is busy and expands the packs into
# rows once it has slack (from expand_delay, 100 ms, after its last busy round): ~1.5-1.9 us of
# writer CPU a call (2026-12-07), spent after the window. Left to run into the next node's
# window, it would slow that node and flatter the ratio. Every node settles, for symmetry.
settle() {
  local _w s l before now
  read -r _w s l < <(thread_ns "${pid[$1]}")
  before=$((s + l))
  for _ in $(seq 50); do
    sleep 0.1
    read -r _w s l < <(thread_ns "${pid[$1]}")
    now=$((s + l))
    (( now - before < 3000000 )) && return 0
    before=$now
  done
  echo "bench-energy-paired.sh: the $1 node's billing threads were still busy 5 s after its window" >&2
}
# window NAME: one closed-loop faasload window against NAME; prints "sent rps" (sent: every
# request written, warm-up included, as the node's CPU counts them).
window() {
  taskset -c "$CLIENT_CPU" "$BUILD/bin/faasload" --url "http://127.0.0.1:${port[$1]}/function/echo" --body hello \
    --closed --connections "$CONNS" --duration "${W}s" --warmup "${WARMUP}s" --timeout 2s --quiet \
    --json "$work/gen.json" >"$work/gen.log" 2>&1 || { cat "$work/gen.log" >&2; die "faasload failed against the $1 node"; }
  python3 scripts/load/jsonfield.py "$work/gen.json" sent throughput_rps errors | {
    read -r sent rps errs
    [[ $errs == 0 ]] || die "faasload saw $errs failed requests against the $1 node"
    echo "$sent $rps"
  }
}
# add3 "a b c" "x y z" "p q r": a + y - p, element-wise (accumulates a difference of thread_ns).
add3() {
  local -a a b c
  read -ra a <<<"$1"; read -ra b <<<"$2"; read -ra c <<<"$3"
  echo "$((a[0] + b[0] - c[0])) $((a[1] + b[1] - c[1])) $((a[2] + b[2] - c[2]))"
}

for n in "${names[@]}"; do start "$n"; done
for n in "${names[@]}"; do window "$n" >/dev/null; settle "$n"; done  # each node warm before the first cycle
declare -A sent rps_list during after
for n in "${names[@]}"; do sent[$n]=0; rps_list[$n]=""; during[$n]="0 0 0"; after[$n]="0 0 0"; done
# order C: the nodes rotated by C, reversed every other round of rotations.
order() {
  local k=${#names[@]} i out=()
  for ((i = 0; i < k; i++)); do out+=("${names[$(( (i + $1) % k ))]}"); done
  if (( ($1 / k) % 2 )); then for ((i = k - 1; i >= 0; i--)); do echo "${out[$i]}"; done; else printf '%s\n' "${out[@]}"; fi
}
echo "# $(date -u '+%F %T') UTC; $(uptime | sed 's/.*load average/load average/'); $CYCLES cycles of ${W}s closed-loop windows (after ${WARMUP}s warm-up), $CONNS connections, POST 5 bytes to /function/echo; workers on CPU $SERVER_CPU, faasload on CPU $CLIENT_CPU; nodes (name:energy:reply headers) $NODES; reference $ref"
for c in $(seq "$CYCLES"); do
  for n in $(order "$c"); do
    t0=$(thread_ns "${pid[$n]}")
    read -r k rps < <(window "$n")
    t1=$(thread_ns "${pid[$n]}")
    settle "$n"
    t2=$(thread_ns "${pid[$n]}")
    sent[$n]=$(( ${sent[$n]} + k ))
    rps_list[$n]+="$rps "
    during[$n]=$(add3 "${during[$n]}" "$t1" "$t0")
    after[$n]=$(add3 "${after[$n]}" "$t2" "$t1")
  done
  (( c % 10 )) || echo "[bench-energy-paired $(date -u +%T)] cycle $c/$CYCLES" >&2
done
echo "# after: $(uptime | sed 's/.*load average/load average/')"
for n in "${names[@]}"; do echo "$n|${rps_list[$n]}|${during[$n]}|${after[$n]}|${sent[$n]}"; done >"$work/results"
python3 - "$ref" "$work/results" <<'PY'
import random, statistics as st, sys
ref = sys.argv[1]
nodes = {}
for line in open(sys.argv[2]):
    name, rps, during, after, sent = line.rstrip("\n").split("|")
    per_call = lambda ns: [int(x) / int(sent) for x in ns.split()]
    nodes[name] = ([float(x) for x in rps.split()], per_call(during), per_call(after))
rng = random.Random(20261207)
def paired(a, b):
    r = [x / y for x, y in zip(a, b)]
    boot = sorted(st.median(rng.choices(r, k=len(r))) for _ in range(4000))
    return st.median(r), boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot)) - 1]
print(f"| node | median requests/s | vs {ref}: median of per-cycle ratios | bootstrap 95% interval "
      "| CPU ns/request in its windows: worker / sampler / writer | after its windows: sampler / writer |")
print("|---|---|---|---|---|---|")
for name, (rps, during, after) in nodes.items():
    m, lo, hi = paired(rps, nodes[ref][0]) if name != ref else (1.0, 1.0, 1.0)
    print(f"| {name} | {st.median(rps):.0f} | {m:.4f} | [{lo:.4f}, {hi:.4f}] | {during[0]:.0f} / {during[1]:.0f} / "
          f"{during[2]:.0f} | {after[1]:.0f} / {after[2]:.0f} |")
print(f"({len(nodes[ref][0])} windows per node. A worker's CPU counts its idle polling between requests; the writer's "
      "CPU after a window is mostly the expansion of that window's packs into rows.)")
PY
