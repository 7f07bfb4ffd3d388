"""Checks `lemma-eval curve --pooled` against scikit-learn's precision_recall_curve and
average_precision_score over the same pooled (score, relevant?) pairs.

Every generated goal ranks all of its relevant lemmas (scikit-learn's recall counts only the items
it is given; lemma-eval's counts every relevant lemma of the actual sets), some goals rank nothing
relevant, and scores come either from a few levels shared by every goal (long ties, within and
across goals) or from many distinct values. The same curve is also read:

- with a tiny --memory, so that the counts are spilled to disk in many runs and merged: the output
  must be byte for byte the in-memory one;
- with --bins K: every binned row must be the exact curve's row at its threshold, and the binned
  pooled AP must lie within the printed ap_error_bound of the exact AP.

Usage: python compare_sklearn_pooled.py LEMMA_EVAL_BINARY WORK_DIR [SEED]
Prints `... N values compared over M goals: ok` (or the differences and `FAILED`) and exits
non-zero on a difference.
"""

import json
import random
import subprocess
import sys

import numpy as np
from sklearn.metrics import average_precision_score, precision_recall_curve


def generate(rng, seed, qrels, run):
    y_true, y_score = [], []
    levels = [3, 10, 1000, 10**9][seed % 4]
    goals = rng.randint(50, 300)
    with open(qrels, "w") as q, open(run, "w") as r:
        for g in range(goals):
            n = rng.randint(1, 80)
            items = [(f"L{i}", rng.randint(0, levels - 1) / levels) for i in range(n)]
            k = rng.randint(0, n) if rng.random() < 0.9 else 0
            relevant = set(name for name, _ in rng.sample(items, k))
            if not relevant:
                # A goal of judged non-relevant lemmas only: its lemmas are pooled as negatives
                # (--keep-zero-relevant).
                q.write(f"g{g} 0 {items[0][0]} 0\n")
            for name in sorted(relevant):
                q.write(f"g{g} 0 {name} 1\n")
            items.sort(key=lambda x: -x[1])
            for rank, (name, score) in enumerate(items, 1):
                r.write(f"g{g} Q0 {name} {rank} {score!r} t\n")
                y_true.append(name in relevant)
                y_score.append(score)
    return goals, np.array(y_true), np.array(y_score)


def curve(binary, qrels, run, *extra):
    out = subprocess.run(
        [binary, "curve", qrels, run, "--pooled", "--keep-zero-relevant", "--format", "json", *extra],
        check=True, capture_output=True, text=True,
    )
    return out.stdout, json.loads(out.stdout)["runs"][0]


def main():
    binary, work = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    qrels, run = f"{work}/skp{seed}.qrels", f"{work}/skp{seed}.run"
    goals, y_true, y_score = generate(rng, seed, qrels, run)
    text, got = curve(binary, qrels, run)
    bad = []
    compared = 0

    # The curve: scikit-learn's thresholds ascend; its last (precision, recall) = (1, 0) has none.
    precision, recall, thresholds = precision_recall_curve(y_true, y_score)
    want = list(zip(thresholds[::-1], precision[:-1][::-1], recall[:-1][::-1]))
    rows = got["points"]
    if len(rows) != len(want):
        bad.append(f"{len(rows)} rows, scikit-learn {len(want)} thresholds")
    for row, (t, p, r) in zip(rows, want):
        compared += 1
        if row["threshold"] != t or abs(row["precision"] - p) > 1e-12 or abs(row["recall"] - r) > 1e-12:
            bad.append(f"row {row} against scikit-learn ({t!r}, {p!r}, {r!r})")
    ap = average_precision_score(y_true, y_score)
    compared += 1
    if abs(got["average_precision"] - ap) > 1e-12:
        bad.append(f"pooled AP {got['average_precision']!r}, scikit-learn {ap!r}")

    # Spilled in many runs: the same bytes.
    spilled = subprocess.run(
        [binary, "curve", qrels, run, "--pooled", "--keep-zero-relevant", "--format", "json",
         "--memory", "16K"],
        check=True, capture_output=True, text=True,
    )
    compared += 1
    if spilled.stdout != text:
        bad.append("the curve spilled to disk differs from the one held")
    # Each summary holds at most 64 distinct scores with --memory 16K.
    if len(rows) > 200 and "sorted runs" not in spilled.stderr:
        bad.append(f"no spill reported with --memory 16K: {spilled.stderr!r}")

    # Binned: rows of the exact curve, AP within the printed bound.
    exact = {row["threshold"]: row for row in rows}
    for k in (1, 3, 10, 50):
        _, b = curve(binary, qrels, run, "--bins", str(k))
        for row in b["points"]:
            compared += 1
            if exact.get(row["threshold"]) != row:
                bad.append(f"--bins {k}: row {row} is not the exact curve's")
        compared += 1
        if abs(b["average_precision"] - got["average_precision"]) > b["ap_error_bound"] + 1e-12:
            bad.append(f"--bins {k}: AP {b['average_precision']} off the exact "
                       f"{got['average_precision']} by more than {b['ap_error_bound']}")
        if len(b["points"]) > k:
            bad.append(f"--bins {k}: {len(b['points'])} rows")

    for line in bad[:20]:
        print(line)
    verdict = "ok" if not bad else "FAILED"
    print(f"{run} (curve --pooled vs scikit-learn, spilled, binned): {compared} values compared "
          f"over {goals} goals: {verdict}")
    sys.exit(0 if not bad else 1)


if __name__ == "__main__":
    main()
