"""lemma_eval.compare against SciPy and statsmodels: the paired t-test's p-value equals
scipy.stats.ttest_rel's to 1e-12 relative, on per-goal values of generated runs (the values
lemma_eval.evaluate gives per goal); Holm, Bonferroni and Benjamini-Hochberg adjustments equal
statsmodels' multipletests; means and differences equal NumPy's; the command gives the same rows."""

import csv
import io
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

import lemma_eval
from conftest import cli

MEASURES = ["AP", "RR", "P@5", "nDCG@10", "R@20"]
CORRECTIONS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}


def write_runs(d, goals: int, quality, seed: int):
    """`goals` goals with 1-6 relevant lemmas of 400; one run per entry of `quality`: each
    relevant lemma scored higher by that much on average, 30 lemmas ranked per goal."""
    rng = np.random.default_rng(seed)
    q = d / f"qrels{seed}"
    relevant = {}
    with open(q, "w") as f:
        for g in range(goals):
            rel = rng.choice(400, size=int(rng.integers(1, 7)), replace=False)
            relevant[g] = set(int(x) for x in rel)
            for lemma in rel:
                f.write(f"g{g} 0 l{lemma} 1\n")
    runs = []
    for i, shift in enumerate(quality):
        p = d / f"run{seed}_{i}"
        with open(p, "w") as f:
            for g in range(goals):
                candidates = list(relevant[g]) + [int(x) for x in rng.choice(400, 40, replace=False)]
                candidates = list(dict.fromkeys(candidates))
                scores = {c: rng.normal() + (shift if c in relevant[g] else 0.0) for c in candidates}
                top = sorted(scores, key=lambda c: -scores[c])[:30]
                for rank, c in enumerate(top, 1):
                    f.write(f"g{g} Q0 l{c} {rank} {scores[c]:.6f} r{i}\n")
        runs.append(p)
    return q, runs


def exact_t(d) -> float:
    """The paired t statistic of the differences `d`, computed in rationals, rounded once."""
    x = [Fraction(float(v)) for v in d]
    n = len(x)
    mean = sum(x) / n
    var = sum((v - mean) ** 2 for v in x) / (n - 1)
    t2 = mean * mean / (var / n)
    return math.copysign(math.sqrt(float(t2)), float(mean))


compared = [0]


def per_goal(q, run, measures):
    r = lemma_eval.evaluate(q, run, measures, per_goal=True)
    return r.per_goal


def check_against_scipy(q, runs, measures, all_pairs):
    rows = lemma_eval.compare(q, runs, measures, all_pairs=all_pairs, permutations=200, seed=1)
    values = [per_goal(q, r, measures) for r in runs]
    goals = sorted(values[0])
    labels = [str(r) for r in runs]
    pairs = (
        [(a, b) for a in range(len(runs)) for b in range(a + 1, len(runs))]
        if all_pairs
        else [(0, b) for b in range(1, len(runs))]
    )
    assert len(rows) == len(measures) * len(pairs)
    checked = 0
    for row, (m, (a, b)) in zip(rows, [(m, p) for m in measures for p in pairs]):
        assert (row["measure"], row["run_a"], row["run_b"]) == (m, labels[a], labels[b])
        va = np.array([values[a][g][m] for g in goals])
        vb = np.array([values[b][g][m] for g in goals])
        want = stats.ttest_rel(va, vb).pvalue
        if np.all(va == vb):
            # SciPy's 0 / 0 is NaN; identical values are no evidence of a difference: p = 1.
            assert math.isnan(want) and row["p_t"] == 1.0
        elif want < 1e-290:
            # Subnormal or zero: no relative precision left in either.
            assert row["p_t"] < 1e-280, (m, a, b, row["p_t"], want)
        else:
            # Far in the tail p is ill-conditioned in t (d ln p / d ln t is about t² there): t's
            # last bit, which depends on how the sums are rounded (NumPy's pairwise, compensated
            # here), moves p by more than 1e-12. There p is checked against SciPy's t
            # distribution at t computed exactly (rationals, rounded once).
            t = exact_t(vb - va)
            ref = 2 * stats.t.sf(abs(t), len(va) - 1)
            assert math.isclose(row["p_t"], ref, rel_tol=1e-12, abs_tol=0.0), (m, a, b, row["p_t"], ref)
            if want > 1e-20:
                assert math.isclose(row["p_t"], want, rel_tol=1e-12, abs_tol=0.0), (m, a, b, row["p_t"], want)
                compared[0] += 1
        assert math.isclose(row["mean_a"], va.mean(), rel_tol=1e-13)
        assert math.isclose(row["mean_b"], vb.mean(), rel_tol=1e-13)
        assert math.isclose(row["diff"], (vb - va).mean(), rel_tol=1e-12, abs_tol=1e-15)
        d = vb - va
        if d.std() > 0:
            assert math.isclose(row["effect"], d.mean() / d.std(ddof=1), rel_tol=1e-12)
        assert (row["wins"], row["ties"], row["losses"]) == (
            int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
        checked += 1
    return rows, checked


def test_p_t_equals_scipy_ttest_rel(tmp_path):
    checked = 0
    smallest = 1.0
    # Goal counts from 3 (2 degrees of freedom) to 1,500; runs from equal to far better.
    for goals, seed in [(3, 1), (5, 2), (12, 3), (40, 4), (250, 5), (1500, 6)]:
        q, runs = write_runs(tmp_path, goals, [0.5, 0.6, 1.5, 3.0], seed)
        rows, n = check_against_scipy(q, runs, MEASURES, all_pairs=(goals <= 40))
        checked += n
        smallest = min([smallest] + [r["p_t"] for r in rows if r["p_t"] > 1e-290])
    assert checked >= 150
    # Most rows are compared with ttest_rel itself.
    assert compared[0] >= 100
    # The tail is checked too, not only p-values near 1.
    assert smallest < 1e-30


@pytest.mark.parametrize("correction", sorted(CORRECTIONS))
@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_corrections_equal_statsmodels(tmp_path, correction, test):
    q, runs = write_runs(tmp_path, 60, [0.5, 0.55, 0.7, 0.9], 7)
    rows = lemma_eval.compare(
        q, runs, MEASURES, all_pairs=True, test=test, correction=correction, permutations=500
    )
    key = {"t": "p_t", "randomization": "p_randomization", "bootstrap": "p_bootstrap"}[test]
    p = np.array([r[key] for r in rows])
    want = multipletests(p, method=CORRECTIONS[correction])[1]
    got = np.array([r["p_adjusted"] for r in rows])
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    assert [r["significant"] for r in rows] == [bool(x < 0.05) for x in got]
    # Some are significant, some not: the family is not trivial.
    assert 0 < sum(r["significant"] for r in rows) < len(rows) or correction != "bh"


def test_none_leaves_p_values(tmp_path):
    q, runs = write_runs(tmp_path, 30, [0.5, 0.9], 8)
    rows = lemma_eval.compare(q, runs, ["AP"], correction="none")
    assert rows[0]["p_adjusted"] == rows[0]["p_t"]


def test_a_run_against_itself(tmp_path):
    q, runs = write_runs(tmp_path, 50, [0.7], 9)
    for row in lemma_eval.compare(q, [runs[0], runs[0]], MEASURES, test="randomization"):
        assert row["diff"] == 0 and row["p_t"] == 1 and row["p_randomization"] == 1
        assert row["p_adjusted"] == 1 and row["ci_low"] == row["ci_high"] == 0
        assert (row["wins"], row["ties"], row["losses"]) == (0, 50, 0)


def test_seeded_and_the_command_agrees(tmp_path):
    q, runs = write_runs(tmp_path, 80, [0.5, 0.8, 0.6], 10)
    one = lemma_eval.compare(q, runs, ["AP", "RR"], seed=5, permutations=1000, labels=["x", "y", "z"])
    two = lemma_eval.compare(q, runs, ["AP", "RR"], seed=5, permutations=1000, labels=["x", "y", "z"])
    assert one == two
    other = lemma_eval.compare(q, runs, ["AP", "RR"], seed=6, permutations=1000, labels=["x", "y", "z"])
    assert [r["p_randomization"] for r in one] != [r["p_randomization"] for r in other]
    tsv = cli("compare", q, *runs, "-m", "AP", "-m", "RR", "--seed", "5", "--permutations", "1000",
              "--labels", "x,y,z", "--format", "tsv")
    got = list(csv.DictReader(io.StringIO(tsv), delimiter="\t"))
    assert len(got) == len(one)
    for c, p in zip(got, one):
        for k, v in c.items():
            if k in ("measure", "run_a", "run_b"):
                assert v == p[k]
            else:
                assert float(v) == p[k], (k, v, p[k])


def test_bad_arguments_and_warnings(tmp_path):
    q, runs = write_runs(tmp_path, 10, [0.5, 0.6], 11)
    with pytest.raises(ValueError, match="labels: 1 names for 2 runs"):
        lemma_eval.compare(q, runs, labels=["a"])
    with pytest.raises(ValueError, match='correction="x": expected "holm", "bonferroni", "bh", "none"'):
        lemma_eval.compare(q, runs, correction="x")
    with pytest.raises(ValueError, match="compare tests means of per-goal values: `NumRel`"):
        lemma_eval.compare(q, runs, ["NumRel"])
    with pytest.raises(ValueError, match="at least two runs"):
        lemma_eval.compare(q, runs[:1])
    with pytest.raises(TypeError, match="runs: expected a list of paths"):
        lemma_eval.compare(q, runs[0])
    one = tmp_path / "one"
    one.write_text("g1 0 a 1\n")
    ra, rb = tmp_path / "ra", tmp_path / "rb"
    ra.write_text("g1 Q0 a 1 2 t\n")
    rb.write_text("g1 Q0 b 1 2 t\ng1 Q0 a 2 1 t\n")
    with pytest.warns(lemma_eval.LemmaEvalWarning, match="1 goal in common: no test can be made"):
        rows = lemma_eval.compare(one, [ra, rb], ["RR"])
    assert math.isnan(rows[0]["p_t"]) and math.isnan(rows[0]["p_adjusted"])
    assert rows[0]["diff"] == -0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lemma_eval.compare(q, runs, ["AP"])
    # A run without g1: evaluated as empty (missing="zero"), or left out (missing="skip"); the
    # warnings name the arguments as Python spells them.
    two = tmp_path / "two"
    two.write_text("g1 0 a 1\ng2 0 b 1\ng3 0 c 1\n")
    full, part = tmp_path / "full", tmp_path / "part"
    full.write_text("g1 Q0 a 1 2 t\ng2 Q0 x 1 2 t\ng2 Q0 b 2 1 t\ng3 Q0 c 1 2 t\n")
    part.write_text("g2 Q0 b 1 2 t\ng3 Q0 c 1 2 t\n")
    with pytest.warns(lemma_eval.LemmaEvalWarning, match=r'1 goals have no predictions: .*\(missing="zero"\)'):
        rows = lemma_eval.compare(two, [full, part], ["RR"])
    assert (rows[0]["mean_a"], rows[0]["mean_b"]) == (2.5 / 3, 2 / 3)
    with pytest.warns(lemma_eval.LemmaEvalWarning, match=r'1 goals of the other runs .*missing="skip"'):
        rows = lemma_eval.compare(two, [full, part], ["RR"], missing="skip")
    assert (rows[0]["mean_a"], rows[0]["mean_b"], rows[0]["wins"]) == (0.75, 1.0, 1)
