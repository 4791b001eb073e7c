#!/usr/bin/env bash
# bench-runtime.sh — runs the junction/sched benchmarks (uthreads beside a raw Boost.Context
# jump and std::thread + condvar, one run) and prints the table for docs/benchmarks/runtime.md.
#
#   scripts/bench-runtime.sh            # 5 repetitions, medians
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-5}
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFAASNODE_BENCH=ON >/dev/null
cmake --build build -j"${JOBS:-2}" --target junction_sched_bench >/dev/null
out=build/runtime-bench.json
build/junction/sched/junction_sched_bench --benchmark_repetitions="$REPS" \
  --benchmark_report_aggregates_only=true --benchmark_out="$out" --benchmark_out_format=json \
  --benchmark_min_time=0.3 >/dev/null
python3 scripts/bench_table.py "$out"
