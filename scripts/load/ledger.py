#!/usr/bin/env python3
"""ledger.py FAASNODE LEDGER SINCE UNTIL [FUNCTION]: reads the node's energy ledger with
`faasnode carbon report --format json` over [SINCE, UNTIL] (unix seconds) and prints, tab-separated:
  J/request, all-in: the meter's joules (idle and node overhead included) / the calls billed
  gCO2e per 1M requests, all-in, likewise
  J/request of the function rows alone (FUNCTION's only, when given) / their calls
  the calls billed in the window"""
import json, subprocess, sys
faasnode, ledger, since, until = sys.argv[1:5]
fn = sys.argv[5] if len(sys.argv) > 5 else None
r = subprocess.run([faasnode, "carbon", "report", "--ledger", ledger, "--since", since, "--until", until,
                    "--format", "json"], capture_output=True, text=True, timeout=30)
if r.returncode != 0:
    sys.exit(f"ledger.py: faasnode carbon report failed: {r.stderr.strip()}")
rows = json.loads(r.stdout)["rows"]
meter = [x for x in rows if x["kind"] == "meter"]
mj = sum(x["joules"] for x in meter)
mg = sum(x["grams_co2e"] or 0 for x in meter)
allf = [x for x in rows if x["kind"] == "function"]
calls = sum(x["calls"] for x in allf)
funcs = [x for x in allf if fn is None or x["function"] == fn]
fj, fc = sum(x["joules"] for x in funcs), sum(x["calls"] for x in funcs)
n = max(calls, 1)
print(f"{mj / n:.3g}\t{mg / n * 1e6:.3g}\t{(fj / fc if fc else 0):.3g}\t{calls}")
