#!/usr/bin/env bash
# run.sh — builds faasnode (optimised) and runs `faasnode serve` with any arguments given;
# with none, on the embedded defaults.
#
#   scripts/setup.sh && scripts/run.sh                        # what the README does
#   scripts/run.sh --config configs/dev.toml
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$JOBS" --target faasnode
exec build/bin/faasnode serve "$@"
