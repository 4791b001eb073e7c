#!/usr/bin/env python3
"""jsonfield.py FILE FIELD...: prints the fields of a faasload JSON, tab-separated.
Dotted names reach inside (latency_us.p99); "errors" alone is the sum of every kind."""
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for f in sys.argv[2:]:
    if f == "errors":
        out.append(str(sum(d.get("errors", {}).values())))
        continue
    v = d
    for k in f.split("."):
        v = v[k]
    out.append(f"{v:.1f}" if isinstance(v, float) else str(v))
print("\t".join(out))
