# lib.sh — shared by the load scenarios (sourced, not run): tools, the node on either backend,
# faasload runs, the ledger readout, result rows and plots. See docs/benchmarks/load.md.
#
# Environment (all optional):
#   BUILD=build          the build dir with bin/faasnode, bin/faasload, bin/http_baseline_server
#   NODE_CPU=0 GEN_CPU=1 the node and the load generator are pinned to different CPUs
#   OUT=docs/benchmarks/load   where each scenario writes NAME-<backend>.tsv and NAME.png
#   BACKENDS="kernel dpdk"     the backends to run (dpdk needs root: memif's control socket)
#   DUR=3                seconds per measured point (after WARMUP=1 s of warm-up)
#   GEN_IDLE_POLL_US=50  dpdk: faasload's longest idle poll back-off on memif, us (empty: its
#                        default, 2000). The generator is the measuring instrument: with a 2 ms
#                        back-off it adds up to 2 ms of its own to every response it waits for
#                        (cold-start p99 6.2 ms against 3.0 ms at 50 us, same node, 12-03). The
#                        node's own bound stays the default (configs/load/node-dpdk.toml).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
[[ $BUILD = /* ]] || BUILD=$ROOT/$BUILD
NODE_CPU=${NODE_CPU:-0}
GEN_CPU=${GEN_CPU:-1}
OUT=${OUT:-$ROOT/docs/benchmarks/load}
[[ $OUT = /* ]] || OUT=$ROOT/$OUT
BACKENDS=${BACKENDS:-kernel dpdk}
DUR=${DUR:-3}
WARMUP=${WARMUP:-1}
GEN_IDLE_POLL_US=${GEN_IDLE_POLL_US-50}
PORT=18110
MEMIF_SOCK=/tmp/faasnode-load-memif.sock
DPDK_EAL_GEN="--no-pci --no-huge -m 256 --log-level=*:warning --file-prefix=faasnode-load-gen --vdev=net_memif0,role=client,socket=$MEMIF_SOCK,id=0"
SCEN=${SCEN:-$(basename "$0" .sh)}
FAASNODE=$BUILD/bin/faasnode
FAASLOAD=$BUILD/bin/faasload
TCK=$(getconf CLK_TCK)

log() { echo "[$SCEN $(date -u +%T)] $*" >&2; }
die() { echo "$SCEN: $*" >&2; exit 2; }
need_bin() { for b in "$@"; do [[ -x $BUILD/bin/$b ]] || die "$BUILD/bin/$b is missing: build it (cmake --build $BUILD --target $b; the baseline server needs -DFAASNODE_BENCH=ON) or set BUILD"; done; }
need_tool() { for t in "$@"; do command -v "$t" >/dev/null || die "$t is not installed (scripts/setup.sh installs it)"; done; }
need_tool taskset curl python3 gnuplot timeout
need_bin faasnode faasload

WORK=$(mktemp -d "/tmp/faasnode-load-$SCEN.XXXXXX")
NODE_PID=
PEER_PIDS=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_node
  for p in "${PEER_PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf /var/run/dpdk/faasnode-load-node /var/run/dpdk/faasnode-load-gen 2>/dev/null || true
  rm -f "$MEMIF_SOCK"
  if [[ ${KEEP_WORK:-0} == 1 ]]; then log "scratch kept: $WORK"; else rm -rf "$WORK"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$OUT"

url_base() { if [[ $1 == dpdk ]]; then echo "http://10.79.0.2:$PORT"; else echo "http://127.0.0.1:$PORT"; fi; }
# Both memif peers back off to a 2 ms poll when idle by default (node-dpdk.toml too), which
# adds up to 2 ms per side to a request at low rates; faasload here polls at <= 50 us
# (GEN_IDLE_POLL_US above), so what is left is the node's own back-off. The node keeps its
# default bound: a node polling often is likelier to hit DPDK 22.11's unlocked unmap of the
# rings when its memif peer exits (seen once: a segfault between two curve stages, before the
# node's bursts ran under a fault guard, junction/net/dpdk/burst_guard.h), and its figures
# stay comparable with the runs recorded in docs/benchmarks/load.md.
gen_args() {
  [[ $1 == dpdk ]] || return 0
  printf '%s\n' --backend dpdk --dpdk-ip 10.79.0.1/24 --dpdk-eal "$DPDK_EAL_GEN"
  [[ -z $GEN_IDLE_POLL_US ]] || printf '%s\n' --dpdk-idle-poll-us "$GEN_IDLE_POLL_US"
}

# start_node BACKEND [CONFIG]: a fresh node (scratch state and ledger) pinned to NODE_CPU, on
# configs/load/node-BACKEND.toml or CONFIG; waits until it serves (kernel: /healthz; dpdk: its
# log says it serves; the memif socket is abstract).
start_node() {
  local backend=$1 config=${2:-$ROOT/configs/load/node-$1.toml}
  [[ $backend == dpdk && $EUID -ne 0 ]] && die "the dpdk backend needs root (memif's control socket); run as root or BACKENDS=kernel"
  NODE_DIR=$WORK/node-$backend-$RANDOM
  mkdir -p "$NODE_DIR"
  rm -f "$MEMIF_SOCK"
  rm -rf /var/run/dpdk/faasnode-load-node /var/run/dpdk/faasnode-load-gen
  (cd "$NODE_DIR" && exec taskset -c "$NODE_CPU" "$FAASNODE" serve --config "$config") >"$NODE_DIR/node.log" 2>&1 &
  NODE_PID=$!
  for _ in $(seq 150); do
    kill -0 "$NODE_PID" 2>/dev/null || { tail -5 "$NODE_DIR/node.log" >&2; die "the $backend node exited at start (log above)"; }
    if [[ $backend == kernel ]]; then curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$PORT/healthz" && return 0
    elif grep -q "faasnode: serving" "$NODE_DIR/node.log" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  die "the $backend node did not come up in 15 s (log: $NODE_DIR/node.log)"
}
stop_node() {
  [[ -n ${NODE_PID:-} ]] || return 0
  kill -TERM "$NODE_PID" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$NODE_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$NODE_PID" 2>/dev/null || true
  wait "$NODE_PID" 2>/dev/null || true
  NODE_PID=
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# load BACKEND JSON ARGS...: one faasload run on GEN_CPU (bounded by timeout), its JSON in JSON.
load() {
  local backend=$1 json=$2; shift 2
  local -a extra=()
  mapfile -t extra < <(gen_args "$backend")
  timeout 120 taskset -c "$GEN_CPU" "$FAASLOAD" "${extra[@]}" --json "$json" --quiet "$@" >"$json.log" 2>&1 \
    || { tail -5 "$json.log" >&2; die "faasload failed (rc $?; log above): $*"; }
  rm -rf /var/run/dpdk/faasnode-load-gen
}

# fl JSON FIELD...: fields of a faasload JSON (dotted: latency_us.p99, errors.timeout; "errors"
# alone: the sum of every kind).
fl() { python3 "$ROOT/scripts/load/jsonfield.py" "$@"; }

# energy SINCE UNTIL [FUNCTION]: "J/request(all-in) gCO2e/1M(all-in) J/request(function) calls"
# from the node's ledger (ledger.py): the meter's joules over the window / the calls billed in
# it, and the function rows' joules / their calls.
energy() { python3 "$ROOT/scripts/load/ledger.py" "$FAASNODE" "$NODE_DIR/ledger.db" "$@"; }

header() {  # header FILE COLUMNS...: a TSV with a comment line naming the run
  local f=$1; shift
  { echo "# $(date -u '+%F %T') UTC $(uname -n) $(nproc) CPUs; node on CPU $NODE_CPU, generator on CPU $GEN_CPU; $(uptime | sed 's/.*load average/load average/')"
    (IFS=$'\t'; echo "$*"); } >"$f"
}
# window T0 T1: the ledger window of a run that started at T0 (warm-up first) and ended at T1
window() { awk -v a="$1" -v b="$2" -v w="$WARMUP" 'BEGIN{printf "%d %d", a + w, b + 1}'; }
row() { local f=$1; shift; (IFS=$'\t'; echo "$*") | tee -a "$f" >&2; }
