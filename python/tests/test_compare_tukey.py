"""lemma_eval.compare(test="tukey") against SciPy: on per-goal values of generated runs (the
values lemma_eval.evaluate gives per goal), each pair's p-value equals
scipy.stats.tukey_hsd(*runs).pvalue to 1e-10 absolute (SciPy's studentized range integrates to
1e-11 absolute), below and above SciPy's switch to infinite degrees of freedom (100,000), and
the difference equals its statistic; the command gives the same rows."""

import csv
import io
import math

import numpy as np
import pytest
from scipy import stats

import lemma_eval
from conftest import cli
from test_compare import MEASURES, per_goal, write_runs


def check_tukey(q, runs, measures):
    rows = lemma_eval.compare(q, runs, measures, all_pairs=True, test="tukey", permutations=100)
    values = [per_goal(q, r, measures) for r in runs]
    goals = sorted(values[0])
    pairs = [(a, b) for a in range(len(runs)) for b in range(a + 1, len(runs))]
    assert len(rows) == len(measures) * len(pairs)
    checked = []
    scipy = {m: stats.tukey_hsd(*[np.array([v[g][m] for g in goals]) for v in values]) for m in measures}
    for row, (m, (a, b)) in zip(rows, [(m, p) for m in measures for p in pairs]):
        want = scipy[m]
        assert (row["run_a"], row["run_b"]) == (str(runs[a]), str(runs[b]))
        assert math.isclose(row["diff"], want.statistic[b][a], rel_tol=1e-12, abs_tol=1e-15)
        assert abs(row["p_tukey"] - want.pvalue[a][b]) <= 1e-10, (m, a, b, row["p_tukey"], want.pvalue[a][b])
        assert row["p_adjusted"] == row["p_tukey"]
        assert row["significant"] == (row["p_tukey"] < 0.05)
        checked.append(row["p_tukey"])
    return rows, checked


def test_tukey_equals_scipy(tmp_path):
    ps = []
    # 3 to 6 runs; 4 to 300 goals (degrees of freedom from 9 to 1,794).
    for goals, quality, seed in [
        (4, [0.5, 0.6, 1.5], 21),
        (12, [0.5, 0.6, 1.5, 3.0], 22),
        (60, [0.5, 0.55, 0.7, 0.9, 1.2], 23),
        (300, [0.5, 0.52, 0.6, 0.8, 1.0, 2.0], 24),
    ]:
        q, runs = write_runs(tmp_path, goals, quality, seed)
        _, p = check_tukey(q, runs, MEASURES)
        ps += p
    assert len(ps) >= 100
    # From clear differences to none: small and large p-values both checked.
    assert min(ps) < 1e-6 and max(ps) > 0.5
    assert 0.05 < np.mean([p < 0.05 for p in ps]) < 0.95


def write_fast(d, goals: int, quality, seed: int):
    """`goals` goals with one relevant lemma each; one run per entry of `quality`, the relevant
    lemma ranked among 5 at rank 1 with that probability, else uniformly or not at all."""
    rng = np.random.default_rng(seed)
    q = d / f"fq{seed}"
    q.write_text("".join(f"g{g} 0 r 1\n" for g in range(goals)))
    runs = []
    for i, good in enumerate(quality):
        rank = np.where(rng.random(goals) < good, 1, rng.integers(2, 7, goals))
        lines = []
        for g in range(goals):
            for r in range(1, 6):
                lemma = "r" if r == rank[g] else f"x{r}"
                lines.append(f"g{g} Q0 {lemma} {r} {10 - r} t\n")
        p = d / f"fr{seed}_{i}"
        p.write_text("".join(lines))
        runs.append(p)
    return q, runs


def test_tukey_past_scipys_switch_to_infinite_df(tmp_path):
    # 3 runs of 40,000 goals: 119,997 degrees of freedom, where SciPy (and lemma-eval) take the
    # limit of infinite degrees of freedom; and 3 runs of 33,000: 98,997, the full integral.
    for goals, seed in [(40_000, 31), (33_000, 32)]:
        q, runs = write_fast(tmp_path, goals, [0.40, 0.41, 0.43], seed)
        _, ps = check_tukey(q, runs, ["RR", "P@1"])
        assert min(ps) < 0.01 and max(ps) > 0.05


def test_the_command_agrees_and_refuses(tmp_path):
    q, runs = write_runs(tmp_path, 50, [0.5, 0.8, 0.6], 25)
    rows = lemma_eval.compare(q, runs, ["AP", "RR"], all_pairs=True, test="tukey", labels=["x", "y", "z"])
    tsv = cli("compare", q, *runs, "-m", "AP", "-m", "RR", "--all-pairs", "--test", "tukey",
              "--labels", "x,y,z", "--format", "tsv")
    got = list(csv.DictReader(io.StringIO(tsv), delimiter="\t"))
    assert len(got) == len(rows) == 6
    for c, p in zip(got, rows):
        assert float(c["p_adjusted"]) == p["p_tukey"]
    with pytest.raises(ValueError, match="add --all-pairs"):
        lemma_eval.compare(q, runs, test="tukey")
    # Other tests leave p_tukey out.
    assert all(r["p_tukey"] is None for r in lemma_eval.compare(q, runs, ["AP"]))
