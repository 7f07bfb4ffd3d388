"""lemma_eval.compare(systems=...) (--system NAME=RUN1,RUN2): several runs of one system (seeds)
compared as one, each goal's value the mean of its runs' (from lemma_eval.evaluate per goal,
averaged here); the t-test's p-value equals SciPy's ttest_rel on those means; the command gives
the same rows and shows the spread of the runs' means."""

import csv
import io
import json
import math

import numpy as np
import pytest
from scipy import stats

import lemma_eval
from conftest import cli
from test_compare import per_goal, write_runs

MEASURES = ["AP", "RR", "P@5"]


def test_a_system_is_the_mean_of_its_runs(tmp_path):
    # Run 0 the baseline; runs 1-3 three seeds of one system.
    q, runs = write_runs(tmp_path, 120, [0.6, 0.9, 1.0, 1.1], 51)
    rows = lemma_eval.compare(q, [runs[0]], MEASURES, systems={"new": runs[1:]}, labels=["base"])
    values = [per_goal(q, r, MEASURES) for r in runs]
    goals = sorted(values[0])
    assert [(r["run_a"], r["run_b"]) for r in rows] == [("base", "new")] * 3
    for row in rows:
        m = row["measure"]
        a = np.array([values[0][g][m] for g in goals])
        b = np.array([sum(values[i][g][m] for i in (1, 2, 3)) / 3 for g in goals])
        want = stats.ttest_rel(a, b).pvalue
        assert math.isclose(row["p_t"], want, rel_tol=1e-9), (m, row["p_t"], want)
        assert math.isclose(row["mean_b"], math.fsum(b) / len(b), rel_tol=1e-14)
        d = b - a
        assert (row["wins"], row["ties"], row["losses"]) == (
            int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
    tsv = cli("compare", q, runs[0], "--system", "new=" + ",".join(map(str, runs[1:])),
              "--labels", "base", "-m", "AP", "-m", "RR", "-m", "P@5", "--format", "tsv")
    got = list(csv.DictReader(io.StringIO(tsv), delimiter="\t"))
    for c, p in zip(got, rows):
        for k, v in c.items():
            if k not in ("measure", "run_a", "run_b"):
                assert float(v) == p[k], k
    js = json.loads(cli("compare", q, runs[0], "--system", "new=" + ",".join(map(str, runs[1:])),
                        "-m", "AP", "--format", "json"))
    seeds = [np.mean([values[i][g]["AP"] for g in goals]) for i in (1, 2, 3)]
    assert math.isclose(js["runs"][1]["spread"]["AP"], np.std(seeds, ddof=1), rel_tol=1e-9)
    assert js["runs"][1]["members"] == 3


def test_bad_systems(tmp_path):
    q, runs = write_runs(tmp_path, 10, [0.5, 0.6], 52)
    with pytest.raises(TypeError, match="expected a list of paths, got one path"):
        lemma_eval.compare(q, [runs[0]], systems={"s": runs[1]})
    with pytest.raises(TypeError, match="non-empty list of paths"):
        lemma_eval.compare(q, [runs[0]], systems={"s": []})
    with pytest.raises(ValueError, match="at least two runs"):
        lemma_eval.compare(q, [], systems={"s": runs})
