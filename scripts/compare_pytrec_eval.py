#!/usr/bin/env python3
"""Compares `lemma-eval trec_eval --trec-version 9 -q` with trec_eval 9.0.8 (as bundled by
pytrec_eval-terrier) on TREC qrels/run files, to the last printed digit.

Usage: compare_pytrec_eval.py LEMMA_EVAL QRELS RUN [-l LEVEL] [-c]

For every goal and measure, the value lemma-eval prints must equal pytrec_eval's value printed
the way trec_eval prints it (`%.4f`, integers for counts); the `all` block must equal trec_eval's
summary (the mean over goals, or the sum for counts, geometric mean for gm_map and gm_bpref). Exit 1 on any
difference, naming it.
"""
import argparse
import math
import subprocess
import sys

import pytrec_eval

MEASURES = [
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall", "11pt_avg", "ndcg", "ndcg_cut", "map_cut", "relative_P",
    "success", "set_P", "set_recall", "set_F", "gm_bpref", "utility", "set_relative_P", "set_map",
    "num_nonrel_judged_ret", "infAP", "Rprec_mult", "binG", "G", "ndcg_rel", "Rndcg",
]
COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
GEOMETRIC = {"gm_map", "gm_bpref"}  # summary only: per goal, pytrec_eval gives the logarithm


def read_qrels(path):
    qrels = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            qrels.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    return qrels


def read_run(path):
    run = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            run.setdefault(parts[0], {})[parts[2]] = float(parts[4])
    return run


def fmt(name, value):
    base = name.split("_")[0] if name.startswith("num_") else name
    if name in COUNTS or base in COUNTS:
        return str(int(value))
    return "%.4f" % value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lemma_eval")
    ap.add_argument("qrels")
    ap.add_argument("run")
    ap.add_argument("-l", type=int, default=1)
    args = ap.parse_args()

    qrels, run = read_qrels(args.qrels), read_run(args.run)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES), relevance_level=args.l)
    per_query = evaluator.evaluate(run)

    cmd = [args.lemma_eval, "trec_eval", "--trec-version", "9", "-q", "-l", str(args.l)]
    for m in MEASURES:
        cmd += ["-m", m]
    cmd += [args.qrels, args.run]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    ours = {}
    for line in out.splitlines():
        name, goal, value = line.split("\t")
        ours[(name.strip(), goal)] = value

    failures = []
    compared = 0
    names_seen = set()
    for goal in sorted(per_query):
        for name, value in per_query[goal].items():
            if name in {"num_q", "runid"} | GEOMETRIC:
                continue  # summary-only in trec_eval's output
            names_seen.add(name)
            want = fmt(name, value)
            got = ours.get((name, goal))
            compared += 1
            if got != want:
                failures.append(f"{goal} {name}: lemma-eval {got}, trec_eval 9.0.8 {want}")
    # The summary, as trec_eval forms it.
    goals = sorted(per_query)
    n = len(goals)
    for name in sorted(names_seen | GEOMETRIC | {"num_q"}):
        if name == "num_q":
            want = str(n)
        elif name in GEOMETRIC:
            total = 0.0
            for g in goals:
                total += per_query[g][name]
            want = "%.4f" % math.exp(total / n)
        elif name in COUNTS:
            want = str(int(sum(per_query[g][name] for g in goals)))
        else:
            total = 0.0
            for g in goals:  # trec_eval adds in goal order
                total += per_query[g][name]
            want = "%.4f" % (total / n)
        got = ours.get((name, "all"))
        compared += 1
        if got != want:
            failures.append(f"all {name}: lemma-eval {got}, trec_eval 9.0.8 {want}")
    extra = {k for k in ours if k[1] != "all" and k[1] not in per_query}
    if extra:
        failures.append(f"lemma-eval printed goals trec_eval does not evaluate: {sorted(extra)[:5]}")
    for f in failures[:40]:
        print("MISMATCH", f, file=sys.stderr)
    status = "ok" if not failures else f"{len(failures)} mismatches"
    print(f"{args.run} (-l {args.l}): {compared} values compared over {n} goals: {status}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
