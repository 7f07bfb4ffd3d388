"""group_by= (--group-by): means over groups of goals, against sums done by hand."""

import json

import pytest

import lemma_eval

# Seven goals, one relevant premise `rel` each, ranked at k (AP = 1/k): theorems T1 {g1},
# T2 {g2, g3}, T3 {g4, g5, g6} (groups of 1, 2 and 3 goals), g7 with no theorem.
GOALS = [
    ("g1", 1, "T1"),
    ("g2", 2, "T2"),
    ("g3", 4, "T2"),
    ("g4", 1, "T3"),
    ("g5", 2, "T3"),
    ("g6", 3, "T3"),
    ("g7", 2, None),
]


@pytest.fixture
def files(tmp_path):
    actual, run = tmp_path / "actual.jsonl", tmp_path / "run.txt"
    lines, ranked = [], []
    for g, k, t in GOALS:
        rec = {"goal_id": g, "premises": ["rel"]}
        if t:
            rec["theorem"] = t
        lines.append(json.dumps(rec))
        for r in range(1, k + 1):
            ranked.append(f"{g} Q0 {'rel' if r == k else 'x%d' % r} {r} {10 - r} run")
    actual.write_text("\n".join(lines) + "\n")
    run.write_text("\n".join(ranked) + "\n")
    return str(actual), str(run)


def test_means_over_groups(files):
    actual, run = files
    flat = lemma_eval.evaluate(actual, run, ["AP", "NumRel"])
    assert flat.summary["AP"] == pytest.approx(49 / 84, abs=1e-15)
    assert "groups" not in flat.counts
    with pytest.warns(lemma_eval.LemmaEvalWarning, match="each is a group of its own"):
        r = lemma_eval.evaluate(actual, run, ["AP", "NumRel"], group_by="theorem")
    # (1 + 3/8 + 11/18 + 1/2) / 4
    assert r.summary["AP"] == pytest.approx(179 / 288, abs=1e-15)
    assert r.summary["NumRel"] == 7
    assert r.counts["groups"] == 4 and r.counts["evaluated"] == 7


def test_every_goal_its_own_group_is_ungrouped(files):
    actual, run = files
    ms = ["AP", "P@2", "RR", "GM_AP", "NumRet"]
    own = lemma_eval.evaluate(actual, run, ms, group_by="goal_id")
    flat = lemma_eval.evaluate(actual, run, ms)
    assert own.summary == flat.summary
    assert own.counts["groups"] == 7


def test_strict_and_refusals(files):
    actual, run = files
    with pytest.raises(Exception, match="goal `g7` has no `theorem` or `full_name`"):
        lemma_eval.evaluate(actual, run, ["AP"], group_by="theorem", strict=True)
    with pytest.raises(Exception, match="LeakRank|Depth"):
        lemma_eval.evaluate(actual, run, ["AP", "Depth(recall=1.0)"], group_by="theorem")
    # An empty key is refused as the command refuses `--group-by ""`.
    with pytest.raises(ValueError, match="group_by: expected theorem, file or a record key"):
        lemma_eval.evaluate(actual, run, ["AP"], group_by="")


def test_a_session_means_over_groups(files):
    # The pushed goals give evaluate's means over groups; their summary file is refused (it
    # would merge into per-goal means).
    actual, _ = files
    s = lemma_eval.Session(actual, ["AP", "NumRel"], group_by="theorem")
    for g, k, _ in GOALS:
        s.push(g, ["rel" if r == k else "x%d" % r for r in range(1, k + 1)])
    with pytest.raises(ValueError, match='group_by="theorem": a summary that travels'):
        s.summary_bytes()
    with pytest.warns(lemma_eval.LemmaEvalWarning, match="each is a group of its own"):
        r = s.result()
    assert r.summary["AP"] == pytest.approx(179 / 288, abs=1e-15)
    assert r.counts["groups"] == 4 and r.counts["evaluated"] == 7
    assert any("each is a group of its own" in w for w in r.warnings), r.warnings
    # Under strict=True the goal without a theorem is an error, as for evaluate.
    s = lemma_eval.Session(actual, ["AP"], group_by="theorem", strict=True)
    s.push("g7", ["x1", "rel"])
    with pytest.raises(ValueError, match="goal `g7` has no `theorem`"):
        s.result()
