#!/usr/bin/env bash
# run.sh — builds faasnode (optimised) and runs `faasnode serve`.
#
#   scripts/setup.sh && scripts/run.sh                        # what the README does
#   scripts/run.sh --config configs/dev.toml                  # one node, on that config
#
# With no arguments it serves the embedded defaults on the kernel backend (127.0.0.1:8080,
# unprivileged is fine). As root it also brings up the kernel-bypass path: a second node on
# configs/dpdk-tap.toml (dpdk over net_tap) inside a network namespace of its own, so the tap
# never meets the host's interfaces; it prints one curl line per path. Ctrl-C stops both
# (each drains), then the namespace is removed. FAASNODE_DPDK=0 skips the second node;
# BUILD_DIR picks the build directory (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS" --target faasnode
BIN=$(realpath "$BUILD_DIR/bin/faasnode")

if [[ $# -gt 0 || $EUID -ne 0 || ${FAASNODE_DPDK:-1} == 0 ]] || ! command -v ip >/dev/null; then
  [[ $# -eq 0 && $EUID -ne 0 ]] && echo "run.sh: not root: the kernel backend only (the dpdk path needs root)"
  exec "$BIN" serve "$@"
fi

# --- as root: both paths ---------------------------------------------------------------------
DPDK_CONFIG=configs/dpdk-tap.toml
# The tap's name and the stack's address, from the config; the namespace's side of the tap
# gets the first address of the stack's subnet.
TAP=$(sed -n 's/.*iface=\([A-Za-z0-9_]*\).*/\1/p' "$DPDK_CONFIG" | head -1)
LISTEN=$(sed -n 's/^listen *= *"\([^"]*\)".*/\1/p' "$DPDK_CONFIG" | head -1)
STACK_IP=$(sed -n 's/^ip *= *"\([^"]*\)".*/\1/p' "$DPDK_CONFIG" | head -1)
PREFIX=$(sed -n 's/^prefix_len *= *\([0-9]*\).*/\1/p' "$DPDK_CONFIG" | head -1)
PEER_IP=${STACK_IP%.*}.1
[[ $PEER_IP == "$STACK_IP" ]] && PEER_IP=${STACK_IP%.*}.254
DPDK_URL=http://$STACK_IP:${LISTEN##*:}
NS=faasnode-run-$$
STATE=faasnode-state/dpdk   # the dpdk node's working directory: its own state, ledger and log

# Namespaces left by an earlier run that died without cleaning up (its pid is gone).
for old in $(ip netns list | awk '{print $1}' | grep '^faasnode-run-[0-9]*$' || true); do
  kill -0 "${old#faasnode-run-}" 2>/dev/null && continue
  for pid in $(ip netns pids "$old" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 1
  ip netns del "$old" 2>/dev/null || true
done

KERNEL_PID= DPDK_PID=
cleanup() {
  trap - INT TERM EXIT
  for pid in $KERNEL_PID $DPDK_PID; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in $KERNEL_PID $DPDK_PID; do wait "$pid" 2>/dev/null || true; done
  ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NS"
ip -n "$NS" link set lo up
mkdir -p "$STATE"
# ip netns exec and setpriv exec the node: $! is the node's pid. Its log goes to the terminal,
# prefixed.
# Both get SIGTERM (and drain) if this script dies without running its cleanup (kill -9).
ORPHAN=(setpriv --pdeathsig TERM --)
command -v setpriv >/dev/null || ORPHAN=()
(cd "$STATE" && exec ip netns exec "$NS" "${ORPHAN[@]}" "$BIN" serve --config "$OLDPWD/$DPDK_CONFIG") \
  > >(sed -u 's/^/[dpdk] /') 2>&1 &
DPDK_PID=$!
"${ORPHAN[@]}" "$BIN" serve &
KERNEL_PID=$!

dpdk_up=false addressed=false
for _ in $(seq 150); do  # up to 30 s: EAL start, port up, the tap's address
  kill -0 "$DPDK_PID" 2>/dev/null || break
  if ip -n "$NS" link show "$TAP" >/dev/null 2>&1; then
    if ! $addressed; then
      ip -n "$NS" addr add "$PEER_IP/$PREFIX" dev "$TAP" && ip -n "$NS" link set "$TAP" up && addressed=true
    fi
    if $addressed && ip netns exec "$NS" curl -s --max-time 1 -o /dev/null "$DPDK_URL/healthz"; then dpdk_up=true; break; fi
  fi
  sleep 0.2
done
kernel_up=false
for _ in $(seq 150); do
  kill -0 "$KERNEL_PID" 2>/dev/null || break
  if curl -s --max-time 1 -o /dev/null http://127.0.0.1:8080/healthz; then kernel_up=true; break; fi
  sleep 0.2
done

echo
if $kernel_up; then
  echo "run.sh: kernel backend: curl -s http://127.0.0.1:8080/function/echo -d hello"
else
  echo "run.sh: the kernel-backend node did not come up (its log is above)"
fi
if $dpdk_up; then
  echo "run.sh: dpdk backend:   ip netns exec $NS curl -s $DPDK_URL/function/echo -d hello"
else
  echo "run.sh: the dpdk node in namespace $NS did not come up (its log is above, prefixed [dpdk])"
fi
echo "run.sh: Ctrl-C stops both"
echo
# Until a node that came up exits (or Ctrl-C); then both are stopped and the namespace removed.
if $dpdk_up && $kernel_up; then
  wait -n "$KERNEL_PID" "$DPDK_PID" || true
elif $dpdk_up; then
  wait "$DPDK_PID" || true
else
  wait "$KERNEL_PID" || true
fi
