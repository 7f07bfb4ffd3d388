"""lemma_eval.compare(group_by=...): the tests' units are groups of goals. On generated goals
grouped into theorems, each run's value of a theorem is the mean of its goals' values (from
lemma_eval.evaluate per goal, averaged here), and the rows equal SciPy's ttest_rel over those
group means, the means equal evaluate(group_by=...)'s summary, wins/ties/losses count groups;
grouping every goal on its own gives the ungrouped rows exactly; the command agrees."""

import csv
import io
import json
import math
import numpy as np
from scipy import stats

import lemma_eval
from conftest import cli

MEASURES = ["AP", "RR", "P@5"]


def write_grouped(d, theorems: int, quality, seed: int):
    """`theorems` theorems of 1 to 6 goals each (JSONL actual sets with a `theorem` key), 1-4
    relevant premises of 200 per goal; one TREC run per entry of `quality`."""
    rng = np.random.default_rng(seed)
    actual = d / f"actual{seed}.jsonl"
    relevant, lines = {}, []
    g = 0
    for t in range(theorems):
        for _ in range(int(rng.integers(1, 7))):
            rel = [int(x) for x in rng.choice(200, size=int(rng.integers(1, 5)), replace=False)]
            relevant[f"g{g}"] = set(rel)
            lines.append(json.dumps({"goal_id": f"g{g}", "theorem": f"T{t}", "premises": [f"p{x}" for x in rel]}))
            g += 1
    actual.write_text("\n".join(lines) + "\n")
    runs = []
    for i, shift in enumerate(quality):
        p = d / f"run{seed}_{i}"
        with open(p, "w") as f:
            for goal, rel in relevant.items():
                cands = list(dict.fromkeys(list(rel) + [int(x) for x in rng.choice(200, 20, replace=False)]))
                scores = {c: rng.normal() + (shift if c in rel else 0.0) for c in cands}
                for rank, c in enumerate(sorted(scores, key=lambda c: -scores[c])[:10], 1):
                    f.write(f"{goal} Q0 p{c} {rank} {scores[c]:.6f} r\n")
        runs.append(p)
    return actual, runs


def mean(xs):
    """A group's mean as lemma-eval takes it: the exact sum, rounded once, over the count."""
    return math.fsum(xs) / len(xs)


def theorem_of(actual):
    return {r["goal_id"]: r["theorem"] for r in map(json.loads, open(actual))}


def test_groups_are_the_units(tmp_path):
    actual, runs = write_grouped(tmp_path, 80, [0.8, 1.0, 1.6], 41)
    rows = lemma_eval.compare(actual, runs, MEASURES, group_by="theorem", permutations=500)
    thm = theorem_of(actual)
    values = [lemma_eval.evaluate(actual, r, MEASURES, per_goal=True).per_goal for r in runs]
    groups = sorted(set(thm.values()))
    assert len(rows) == len(MEASURES) * 2
    for row in rows:
        m = row["measure"]
        a, b = (runs.index(next(r for r in runs if str(r) == row[k])) for k in ("run_a", "run_b"))
        per = [
            np.array([mean([values[x][g][m] for g in thm if thm[g] == t]) for t in groups])
            for x in (a, b)
        ]
        want = stats.ttest_rel(per[0], per[1]).pvalue
        assert math.isclose(row["p_t"], want, rel_tol=1e-9), (m, row["p_t"], want)
        for x, key in ((a, "mean_a"), (b, "mean_b")):
            summary = lemma_eval.evaluate(actual, runs[x], MEASURES, group_by="theorem").summary
            assert math.isclose(row[key], summary[m], rel_tol=1e-13)
            assert math.isclose(row[key], per[(a, b).index(x)].mean(), rel_tol=1e-13)
        d = per[1] - per[0]
        assert (row["wins"], row["ties"], row["losses"]) == (
            int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
        assert math.isclose(row["effect"], d.mean() / d.std(ddof=1), rel_tol=1e-10)
        assert row["wins"] + row["ties"] + row["losses"] == 80


def test_each_goal_its_own_group_changes_nothing(tmp_path):
    actual, runs = write_grouped(tmp_path, 30, [0.8, 1.2], 42)
    flat = lemma_eval.compare(actual, runs, MEASURES, seed=3, permutations=300)
    own = lemma_eval.compare(actual, runs, MEASURES, seed=3, permutations=300, group_by="goal_id")
    assert own == flat


def test_the_command_agrees(tmp_path):
    actual, runs = write_grouped(tmp_path, 40, [0.8, 1.2], 43)
    rows = lemma_eval.compare(actual, runs, ["AP"], group_by="theorem", seed=2, permutations=400)
    tsv = cli("compare", actual, *runs, "-m", "AP", "--group-by", "theorem", "--seed", "2",
              "--permutations", "400", "--format", "tsv")
    got = list(csv.DictReader(io.StringIO(tsv), delimiter="\t"))
    assert len(got) == 1
    for k, v in got[0].items():
        if k not in ("measure", "run_a", "run_b"):
            assert float(v) == rows[0][k], k
    table = cli("compare", actual, *runs, "-m", "AP", "--group-by", "theorem")
    n = len(theorem_of(actual))
    assert f"{n} goals in 40 groups compared" in table
