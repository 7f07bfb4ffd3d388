#!/usr/bin/env python3
"""What a pytrec_eval user runs: parse TREC qrels and run into dicts, evaluate map, P_10 and Rprec
with pytrec_eval (trec_eval 9.0.8 inside), print the means as JSON. Timed whole by scripts/bench-trec."""
import json
import sys

import pytrec_eval


def read(path, value):
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            out.setdefault(p[0], {})[p[2]] = value(p)
    return out


qrels = read(sys.argv[1], lambda p: int(p[3]))
run = read(sys.argv[2], lambda p: float(p[4]))
res = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_10", "Rprec"}).evaluate(run)
n = len(res)
print(json.dumps({m: sum(r[m] for r in res.values()) / n for m in ("map", "P_10", "Rprec")} | {"goals": n}))
