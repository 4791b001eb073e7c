#!/usr/bin/env bash
# bench-net-floors.sh — the memif RPC benchmark (junction_net_dpdk_rpc_bench, docs/benchmarks/
# net.md) run again and again for a bounded time, one or more binaries in turn, then a summary
# grouped by the raw floor each run measured.
#
# Why: on these VMs the raw memif round trip sits at one of three levels (~0.2, ~0.45 and
# ~1.7 us) and moves between them from one minute to the next, so a single run's ratio says
# little, and an A/B of two builds means comparing like floors over many alternating runs.
#
#   scripts/bench-net-floors.sh                            # 600 s of the default build's bench
#   scripts/bench-net-floors.sh 600 new=build/junction/net/dpdk/junction_net_dpdk_rpc_bench \
#       old=/tmp/old/junction_net_dpdk_rpc_bench           # A/B, alternating
#   OUT=/tmp/floors scripts/bench-net-floors.sh 300        # keep every run's output there
#
# Root (memif's control socket). Each run is bounded by the bench itself (its phases stop at a
# time limit) and by `timeout 120`; the loop stops starting runs after SECONDS. The bench pins
# CPUs 0 and 1 (its default --cpus): run nothing else meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
shift || true
[[ $secs =~ ^[0-9]+$ && $secs -gt 0 ]] || { echo "bench-net-floors.sh: SECONDS must be a positive integer, not '$secs'" >&2; exit 2; }
bins=("$@")
(( ${#bins[@]} )) || bins=("head=build/junction/net/dpdk/junction_net_dpdk_rpc_bench")
for nb in "${bins[@]}"; do
  name=${nb%%=*} bin=${nb#*=}
  [[ $nb == *=* && $name =~ ^[A-Za-z0-9_]+$ ]] || { echo "bench-net-floors.sh: '$nb' is not NAME=BINARY (NAME: letters, digits, _)" >&2; exit 2; }
  [[ -x $bin ]] || { echo "bench-net-floors.sh: $bin is not an executable; build it (docs/benchmarks/net.md, \"Command\")" >&2; exit 2; }
done
out=${OUT:-$(mktemp -d /tmp/bench-net-floors.XXXXXX)}
mkdir -p "$out"
echo "# $(date -u '+%F %T') UTC; $(uptime | sed 's/.*load average/load average/'); ${secs}s; runs in $out"
end=$(( $(date +%s) + secs ))
i=0
while (( $(date +%s) < end )); do
  for nb in "${bins[@]}"; do
    name=${nb%%=*} bin=${nb#*=}
    f=$(printf '%s/run-%s-%04d.txt' "$out" "$name" "$i")
    timeout 120 "$bin" >"$f" 2>&1 || echo "run $i of $name failed (exit $?): $f" >&2
  done
  i=$((i + 1))
  (( i % 10 == 0 )) && echo "# $i rounds, $(( end - $(date +%s) )) s left"
done
echo "# $(date -u '+%F %T') UTC: $i rounds"

python3 - "$out" <<'PY'
import glob, re, statistics as st, sys
out = sys.argv[1]
row = lambda name, t: re.search(re.escape(name) + r'\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)', t)
groups, skipped = {}, {}
for f in sorted(glob.glob(out + '/run-*.txt')):
    name = f.rsplit('/', 1)[1].split('-')[1]
    t = open(f).read()
    b, a = row('raw memif ping-pong, before', t), row('raw memif ping-pong, after', t)
    d = row('TCP RPC, dpdk stack over memif', t)
    if not (b and a and d):
        skipped[name] = skipped.get(name, 0) + 1
        continue
    rb, ra = float(b.group(1)), float(a.group(1))
    if max(rb, ra) / min(rb, ra) > 1.25:  # the bench's own "not judged"
        skipped[name] = skipped.get(name, 0) + 1
        continue
    raw, raw99 = (rb + ra) / 2, (float(b.group(2)) + float(a.group(2))) / 2
    tcp, tcp99 = float(d.group(1)), float(d.group(2))
    floor = 'raw < 0.3 us' if raw < 0.3 else 'raw 0.3-0.6 us' if raw < 0.6 else 'raw >= 0.6 us'
    rate = re.search(r'RPCs/s ([\d.]+)x with', t)  # dpdk over kernel, 16 in flight
    groups.setdefault((floor, name), []).append((raw, tcp, tcp - raw, tcp / raw, tcp99 / raw99, float(d.group(4)) / 1e6,
                                                 float(rate.group(1)) if rate else 0.0))
def ms(v, i):
    xs = [r[i] for r in v]
    se = st.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else 0.0
    return f'{st.mean(xs):.3f} ± {se:.3f}'
print('| floor | build | runs | raw p50 µs | TCP p50 µs | stack share µs | p50 / raw | p50 ≤ 2x | p99 ≤ 3x | 16 in flight M/s | RPCs/s ≥ 5x kernel |')
print('|---|---|---|---|---|---|---|---|---|---|---|')
order = ['raw < 0.3 us', 'raw 0.3-0.6 us', 'raw >= 0.6 us']
for (floor, name), v in sorted(groups.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])):
    print(f'| {floor} | {name} | {len(v)} | {ms(v, 0)} | {ms(v, 1)} | {ms(v, 2)} | {ms(v, 3)} | '
          f'{sum(r[3] <= 2 for r in v)} | {sum(r[4] <= 3 for r in v)} | {ms(v, 5)} | {sum(r[6] >= 5 for r in v)} |')
for name, n in sorted(skipped.items()):
    print(f'{name}: {n} run(s) not counted (the floor moved > 25% within the run, or no results)')
PY
