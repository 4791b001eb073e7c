# node-threads.sh — sourced by the energy benchmarks (bench-energy.sh, bench-energy-paired.sh):
# a faasnode's CPU time by kind of thread, from each thread's schedstat.

# thread_ns PID: "worker sampler writer" CPU ns so far: the runtime workers (junction/N), the
# energy sampler (faasnode-energy) and the ledger writer (faasnode-ledger).
thread_ns() {
  local t w=0 s=0 l=0 ns
  for t in /proc/"$1"/task/*; do
    ns=$(awk '{print $1}' "$t/schedstat" 2>/dev/null) || continue
    case $(cat "$t/comm" 2>/dev/null) in
      junction/*) w=$((w + ns)) ;;
      faasnode-energy) s=$((s + ns)) ;;
      faasnode-ledger) l=$((l + ns)) ;;
    esac
  done
  echo "$w $s $l"
}
