"""Checks that `lemma-eval eval --ties group -m AP` equals scikit-learn's average_precision_score.

scikit-learn's average precision treats equal scores as one threshold: every relevant item of a tie
group is credited the precision at the group's end, which is lemma-eval's `--ties group`
(docs/METRICS.md §2). The two are the same number when every relevant lemma of a goal is ranked
(scikit-learn divides by the relevant items it is given, lemma-eval by R), so the generated goals
rank all their relevant lemmas. Scores come from a few distinct values, so ties are long and
common; goals are written in a shuffled line order inside each goal, so the file's order of equal
scores is arbitrary.

Usage: python compare_sklearn.py LEMMA_EVAL_BINARY WORK_DIR [SEED]
Prints `N values compared over M goals: ok` (or the differences and `FAILED`) and exits non-zero
on a difference.
"""

import random
import subprocess
import sys

from sklearn.metrics import average_precision_score


def main():
    binary, work = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    qrels, run = f"{work}/sk{seed}.qrels", f"{work}/sk{seed}.run"
    truth = {}
    with open(qrels, "w") as q, open(run, "w") as r:
        for g in range(400):
            goal = f"g{g}"
            n = rng.randint(1, 60)
            levels = rng.choice([2, 3, 5, 20])
            items = [(f"L{i}", float(rng.randint(0, levels - 1)) / levels) for i in range(n)]
            relevant = set(name for name, _ in rng.sample(items, rng.randint(1, n)))
            rng.shuffle(items)
            for name in sorted(relevant):
                q.write(f"{goal} 0 {name} 1\n")
            for rank, (name, score) in enumerate(items, 1):
                r.write(f"{goal} Q0 {name} {rank} {score} t\n")
            truth[goal] = ([name in relevant for name, _ in items], [s for _, s in items])
    out = subprocess.run(
        [binary, "eval", qrels, run, "--ties", "group", "-m", "AP", "--per-goal",
         "--format", "tsv", "--quiet"],
        check=True, capture_output=True, text=True,
    ).stdout
    got = {}
    for line in out.splitlines():
        goal, measure, value = line.split("\t")
        if goal != "all" and measure == "AP":
            got[goal] = float(value)
    bad = 0
    for goal, (y_true, y_score) in truth.items():
        want = average_precision_score(y_true, y_score)
        if abs(got[goal] - want) > 1e-9:
            bad += 1
            print(f"{goal}: lemma-eval {got[goal]!r}, scikit-learn {want!r}")
    verdict = "ok" if bad == 0 and len(got) == len(truth) else "FAILED"
    print(f"{run} (--ties group AP vs scikit-learn): {len(truth)} values compared over "
          f"{len(got)} goals: {verdict}")
    sys.exit(0 if verdict == "ok" else 1)


if __name__ == "__main__":
    main()
