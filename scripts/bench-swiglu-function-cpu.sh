#!/usr/bin/env bash
# bench-swiglu-function-cpu.sh — the served swiglu-mlp function on the CPU path, through a real
# `faasnode serve` on one core and curl: per (model, tokens), the median of 5 calls of
# X-Swiglu-Compute-Seconds (the MLP itself) and curl's total time (HTTP + parse + MLP + encode),
# raw bf16 in and out. Seconds, not minutes: a benchmark, not a test.
#
# Usage: scripts/bench-swiglu-function-cpu.sh [BUILD_DIR] [CPU_THREADS]
#   BUILD_DIR defaults to build (needs bin/faasnode and functions/swiglu-mlp.so);
#   CPU_THREADS is SWIGLU_CPU_THREADS (default 0 = every hardware thread).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
THREADS=${2:-0}
PORT=${PORT:-18931}
D=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; rm -rf "$D"' EXIT
cat >"$D/node.toml" <<T
[runtime]
cores = [0]
[net]
listen = "127.0.0.1:$PORT"
[energy]
ledger = "$D/ledger.db"
[functions]
store = "$BUILD/functions"
[functions.swiglu-mlp]
env = { SWIGLU_MAX_TOKENS = "64", SWIGLU_CPU_THREADS = "$THREADS" }
T
"$BUILD/bin/faasnode" serve --config "$D/node.toml" >"$D/log" 2>&1 &
PID=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
URL="http://127.0.0.1:$PORT/function/swiglu-mlp"
echo "| model | tokens | SWIGLU_CPU_THREADS | path | compute ms | curl total ms |"
echo "|---|---:|---:|---|---:|---:|"
for spec in 0.5b:896:1 0.5b:896:16 0.5b:896:64 7b:3584:1 7b:3584:16; do
  IFS=: read -r model hidden tokens <<<"$spec"
  # Small finite bf16 values: a random sign and mantissa, exponent of |x| in [2^-7, 2^-6).
  python3 -c "import os,sys
b=bytearray(os.urandom(2*$hidden*$tokens))
for i in range(1,len(b),2): b[i]=0x3c if b[i]&1 else 0xbc
sys.stdout.buffer.write(b)" >"$D/x.bf16"
  call() { curl -s -D - -o /dev/null -w 'total %{time_total}\n' -H 'Content-Type: application/octet-stream' \
             --data-binary @"$D/x.bf16" "$URL?model=$model" | tr -d '\r'; }
  call >/dev/null  # warm: builds the model's weights on first use
  for _ in 1 2 3 4 5; do
    call | awk '/^X-Swiglu-Compute-Seconds/ {c=$2} /^X-Swiglu-Path/ {p=$2} /^total/ {t=$2} END {printf "%s %.3f %.3f\n", p, c*1000, t*1000}'
  done | sort -k2 -n | sed -n 3p |
    awk -v m="$model" -v n="$tokens" -v th="$THREADS" '{printf "| %s | %d | %s | %s | %s | %s |\n", m, n, th, $1, $2, $3}'
done
