"""Values files from Python: ``evaluate(..., keep_values=True).values_bytes()`` are the bytes
``eval --values-out`` writes, and ``compare`` given their paths returns the rows the runs give."""

import math

import pytest

import lemma_eval
from conftest import cli
from test_compare import write_runs

MEASURES = ["AP", "RR", "nDCG@10"]


def same(a, b):
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def test_values_bytes_are_the_commands_file_and_compare_alike(tmp_path):
    q, runs = write_runs(tmp_path, 60, [0.0, 0.4, 0.8], 3)
    paths = []
    for i, r in enumerate(runs):
        res = lemma_eval.evaluate(q, r, MEASURES, keep_values=True)
        blob = res.values_bytes()
        out = tmp_path / f"cli{i}.values"
        cli("eval", str(q), str(r), *sum((["-m", m] for m in MEASURES), []),
            "--values-out", str(out), "-o", str(tmp_path / "table"), "--quiet")
        assert blob == out.read_bytes()
        p = tmp_path / f"py{i}.values"
        p.write_bytes(blob)
        paths.append(p)
    kw = dict(all_pairs=True, permutations=300, seed=2, labels=["a", "b", "c"])
    want = lemma_eval.compare(q, runs, MEASURES, **kw)
    got = lemma_eval.compare(q, paths, MEASURES, **kw)
    mixed = lemma_eval.compare(q, [runs[0], paths[1], runs[2]], MEASURES, **kw)
    assert len(want) == 9
    for rows in (got, mixed):
        assert [r.keys() for r in rows] == [r.keys() for r in want]
        for r, w in zip(rows, want):
            assert all(same(r[k], w[k]) for k in w), (r, w)


def test_values_of_other_options_are_refused(tmp_path):
    q, runs = write_runs(tmp_path, 20, [0.0, 0.5], 4)
    p = tmp_path / "a.values"
    p.write_bytes(lemma_eval.evaluate(q, runs[0], ["AP"], keep_values=True).values_bytes())
    with pytest.raises(ValueError, match=r"a\.values: evaluated with other options.*ties: trec vs group"):
        lemma_eval.compare(q, [p, runs[1]], ["AP"], ties="group")
    with pytest.raises(ValueError, match=r"a\.values: holds no values of RR"):
        lemma_eval.compare(q, [p, runs[1]], ["RR"])
    with pytest.raises(ValueError, match="keep_values=True"):
        lemma_eval.evaluate(q, runs[0], ["AP"]).values_bytes()
    with pytest.raises(ValueError, match="keep_values"):
        lemma_eval.evaluate(q, {"g0": ["l1"]}, ["AP"], keep_values=True)
