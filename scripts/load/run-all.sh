#!/usr/bin/env bash
# run-all.sh — every load scenario, in order, bounded (well under 10 minutes on the 2-CPU VM):
# maxtput (b) first, so that curve (a) can add its point at half the kernel max rate, then
# coldstart (c) and mixed (d). Results: OUT/<scenario>-<backend>.tsv and OUT/<scenario>.png,
# then OUT/summary.md (the targets, met or missed). See docs/benchmarks/load.md.
#
#   scripts/load/run-all.sh                 # BUILD=build BACKENDS="kernel dpdk" (root for dpdk)
#   BUILD=build-scen BACKENDS=kernel scripts/load/run-all.sh
set -euo pipefail
cd "$(dirname "$0")"
start=$(date +%s)
for s in maxtput curve coldstart mixed; do
  echo "=== run-all: $s ($(($(date +%s) - start)) s so far) ===" >&2
  timeout 300 ./"$s".sh
done
./summary.sh
echo "=== run-all: done in $(($(date +%s) - start)) s ===" >&2
