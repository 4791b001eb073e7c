#!/usr/bin/env bash
# test.sh — builds faasnode and runs the whole test suite twice: an optimised build, then an
# AddressSanitizer + UBSan build. Fails if a test fails or more tests skip than expected.
#
#   scripts/setup.sh && scripts/test.sh          # what the README and .ci/run do
#   JOBS=4 FAASNODE_MAX_SKIPS=6 scripts/test.sh  # knobs
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-2}
# Skips that are expected on a CI machine: the 4 GPU tests (no GPU there), in each of the two
# builds. Anything more means a capability went missing and is a failure.
MAX_SKIPS=${FAASNODE_MAX_SKIPS:-8}
# Performance properties (timer accuracy, strict cycle shares, idle CPU, RSS per uthread, the
# load generator's coordinated-omission figures, which need it to drain a burst of 100 held
# responses in well under 5 ms, and its percentiles within 5% of a 50 ms delay, which need it
# to add under 2.5 ms: a CI run of the ASan build added 3 ms on every attempt while the
# optimised build passed) are checked in the optimised build only: sanitizers change exactly
# what they measure. The 1.6 GB echo through net_tap (16 MB on each of 100
# connections, ~30 s optimised) too: under ASan it would take minutes, and the same code runs
# there with the smaller sizes. The heap pre-grow tests check glibc's arenas, which ASan's
# allocator replaces.
SANITIZER_EXCLUDE='HeapPreallocTest|SleepIsAccurate|AKnownBurnIsChargedToItsAccount|AnIdleRuntimeUsesAlmostNoCpu|Scale\.|StallIsCorrectedForCoordinatedOmission|KnownDelayShowsInPercentiles|DpdkTapTransferTest.*16MB_x100'

step() { printf '\n=== %s ===\n' "$*"; }

skipped_in() { grep -c '(Skipped)' "$1" || true; }

step "optimised build (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFAASNODE_BENCH=ON >/dev/null
cmake --build build -j"$JOBS"
step "tests, optimised build"
ctest --test-dir build --output-on-failure 2>&1 | tee build/ctest.log
skips=$(skipped_in build/ctest.log)

step "ASan + UBSan build (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DFAASNODE_SANITIZE=ON -DFAASNODE_BENCH=OFF \
  -DFAASNODE_CUDA=OFF >/dev/null
cmake --build build-asan -j"$JOBS"
step "tests, ASan + UBSan build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -E "$SANITIZER_EXCLUDE" 2>&1 | tee build-asan/ctest.log
skips=$((skips + $(skipped_in build-asan/ctest.log)))

step "skips"
if ((skips > MAX_SKIPS)); then
  echo "test.sh: $skips tests skipped, more than the $MAX_SKIPS expected; see '(Skipped)' above" >&2
  exit 1
fi
total=0
for log in build/ctest.log build-asan/ctest.log; do
  n=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
  total=$((total + ${n:-0}))
done
echo "test.sh: all tests passed ($skips skipped, at most $MAX_SKIPS expected)"
# The plain closing line CI reads: ctest counts a skipped test as passed; this line does not.
echo "tests: $((total - skips)) passed, 0 failed, $skips skipped"
