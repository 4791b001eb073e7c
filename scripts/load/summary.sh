#!/usr/bin/env bash
# summary.sh — OUT/summary.md from the scenarios' TSVs: every table, then issue 8's targets
# stated as met or missed with the measured figures (a missing scenario is said to be missing).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/docs/benchmarks/load}
[[ $OUT = /* ]] || OUT=$ROOT/$OUT
python3 - "$OUT" >"$OUT/summary.md" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
def load(name):
    p = os.path.join(out, name + ".tsv")
    if not os.path.exists(p): return None, []
    lines = open(p).read().splitlines()
    com = lines[0][2:] if lines and lines[0].startswith("#") else ""
    rows = list(csv.DictReader([l for l in lines if not l.startswith("#")], delimiter="\t"))
    return com, rows
def num(x):
    try: return float(x)
    except (TypeError, ValueError): return None
print("# Load scenarios: results\n")
for scen in ["maxtput", "curve", "coldstart", "mixed"]:
    for b in ["kernel", "dpdk"]:
        com, rows = load(f"{scen}-{b}")
        if com is None: print(f"## {scen}, {b}: not run\n"); continue
        print(f"## {scen}, {b}\n\n{com}\n")
        cols = list(rows[0].keys()) if rows else []
        print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
        for r in rows: print("| " + " | ".join(r[c] for c in cols) + " |")
        print()
print("## Targets (issue 8)\n")
def pick(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()): return r
    return None
_, mk = load("maxtput-kernel"); _, md = load("maxtput-dpdk")
k = pick(mk, server="faasnode", generator="faasload"); d = pick(md, server="faasnode", generator="faasload")
if k and d and num(k["req_per_cpu_s"]) and num(d["req_per_cpu_s"]):
    ratio = num(d["req_per_cpu_s"]) / num(k["req_per_cpu_s"])
    tr = num(d["throughput_rps"]) / max(num(k["throughput_rps"]), 1)
    print(f"- dpdk/memif >= 5x the kernel backend's max throughput per core (echo): "
          f"**{'met' if ratio >= 5 else 'missed'}**: {d['req_per_cpu_s']} vs {k['req_per_cpu_s']} requests per node CPU-second "
          f"= {ratio:.2f}x (requests/s: {d['throughput_rps']} vs {k['throughput_rps']} = {tr:.2f}x)")
else:
    print("- dpdk/memif >= 5x kernel max throughput per core: **not measured** (maxtput on both backends is missing)")
_, ck = load("curve-kernel"); _, cd = load("curve-dpdk")
hk = pick(ck, function="echo-half-kernel-max"); hd = pick(cd, function="echo-half-kernel-max")
if hk and hd and num(hk["p99_us"]) and num(hd["p99_us"]) is not None:
    r = num(hd["p99_us"]) / num(hk["p99_us"])
    print(f"- p99 at 50% of the kernel path's max rate ({hk['offered_rps']} requests/s) <= 1/3 of the kernel path's p99: "
          f"**{'met' if r <= 1/3 else 'missed'}**: dpdk p99 {hd['p99_us']} µs vs kernel p99 {hk['p99_us']} µs = {r:.2f}")
else:
    print("- p99 at 50% of the kernel max rate: **not measured** (curve's half-rate point on both backends is missing)")
for b in ["kernel", "dpdk"]:
    _, cs = load(f"coldstart-{b}")
    a = pick(cs, round="all")
    if a and num(a["p99_us"]) is not None:
        print(f"- cold start of a native function from zero <= 5 ms p99 in the burst ({b}): "
              f"**{'met' if num(a['p99_us']) <= 5000 else 'missed'}**: p99 {a['p99_us']} µs over {a['burst']} requests "
              f"(p50 {a['p50_us']} µs, max {a['max_us']} µs; new connections included)")
    else:
        print(f"- cold start <= 5 ms p99 ({b}): **not measured**")
PY
echo "summary.sh: wrote $OUT/summary.md" >&2
cat "$OUT/summary.md" | sed -n '/## Targets/,$p' >&2
