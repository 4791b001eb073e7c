#!/usr/bin/env python3
"""bench_table.py — turns a Google Benchmark JSON file of the runtime benchmarks into the
markdown table of docs/benchmarks/runtime.md: medians, and ratios to the baselines measured in
the same run."""
import json
import sys


def main(path):
    data = json.load(open(path))
    med = {}
    counters = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"]
        med[name] = b["real_time"]  # ns (time_unit ns)
        counters[name] = {k: v for k, v in b.items() if k.endswith("_ns")}
    # Iterations of these benchmarks are two switches (there and back; or two yields).
    per_event = {n: t / 2 for n, t in med.items() if n.startswith(("BM_RawFcontextSwitch", "BM_UthreadYield"))}
    raw = per_event.get("BM_RawFcontextSwitch")
    ctx = data["context"]
    print(f"Run {ctx['date']} on {ctx['host_name']}, {ctx['num_cpus']} CPUs at {ctx['mhz_per_cpu']} MHz; "
          f"medians of {len([b for b in data['benchmarks'] if b.get('aggregate_name') == 'median'])} "
          f"benchmarks x repetitions.\n")
    print("| benchmark | median ns / iteration | per-event figure | vs raw switch |")
    print("|---|---:|---|---:|")
    for name, ns in med.items():
        extra = ", ".join(f"{k} = {v:.1f}" for k, v in counters[name].items())
        ratio = ""
        per = per_event.get(name)
        if per:
            extra = f"{per:.1f} ns per switch/yield" + (", " + extra if extra else "")
        if raw and per:
            ratio = f"{per / raw:.1f}x"
        print(f"| {name} | {ns:.1f} | {extra} | {ratio} |")
    def get(n):
        return med.get(n)
    pairs = [
        ("spawn+join: uthread vs std::thread", "BM_UthreadSpawnJoin/real_time", "BM_StdThreadSpawnJoin/real_time"),
        ("condvar ping-pong across cores: uthread vs std", "BM_UthreadCondvarPingPong/peer_core:1/real_time",
         "BM_StdCondvarPingPong/real_time"),
        ("mutex hand-off: uthread vs std", "BM_UthreadMutexHandoff/real_time", "BM_StdMutexHandoff/real_time"),
    ]
    print("\n| comparison (same run) | uthread ns | kthread ns | speed-up |")
    print("|---|---:|---:|---:|")
    for label, a, b in pairs:
        if get(a) and get(b):
            print(f"| {label} | {get(a):.0f} | {get(b):.0f} | {get(b) / get(a):.1f}x |")


if __name__ == "__main__":
    main(sys.argv[1])
