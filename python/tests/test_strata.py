"""by= (--by): a summary per stratum of goals, against sums done by hand."""

import json

import pytest

import lemma_eval

# (goal, [(relevant premise, its rank)], theorem). AP: g1 1; g2 (1 + 2/3)/2 = 5/6; g3
# (1/2 + 2/3 + 3/6)/3 = 5/9; g4 (1 + 1 + 3/4 + 4/8)/4 = 13/16; g5 1/2. Trained on p1, p2, p3:
# g3 (p4), g4 (p5) and g5 (p6) are novel.
GOALS = [
    ("g1", [("p1", 1)], "T1"),
    ("g2", [("p1", 1), ("p2", 3)], "T1"),
    ("g3", [("p2", 2), ("p3", 3), ("p4", 6)], "T2"),
    ("g4", [("p1", 1), ("p2", 2), ("p3", 4), ("p5", 8)], "T2"),
    ("g5", [("p6", 2)], None),
]


@pytest.fixture
def files(tmp_path):
    actual, run, train = tmp_path / "actual.jsonl", tmp_path / "run.txt", tmp_path / "train.txt"
    lines, ranked = [], []
    for g, rel, t in GOALS:
        rec = {"goal_id": g, "premises": [p for p, _ in rel]}
        if t:
            rec["theorem"] = t
        lines.append(json.dumps(rec))
        at = {k: p for p, k in rel}
        for r in range(1, max(at) + 1):
            ranked.append(f"{g} Q0 {at.get(r, 'x%d' % r)} {r} {10 - r} run")
    actual.write_text("\n".join(lines) + "\n")
    run.write_text("\n".join(ranked) + "\n")
    train.write_text("p1\np2\n\np3\n")
    return str(actual), str(run), str(train)


def test_strata_against_hand_sums(files):
    actual, run, train = files
    with pytest.warns(lemma_eval.LemmaEvalWarning, match="--by theorem: 1 goals have no"):
        r = lemma_eval.evaluate(
            actual, run, ["AP", "NumRel"], by=["gold-size", "novelty", "theorem"],
            train_premises=train,
        )
    assert r.summary["AP"] == pytest.approx(533 / 720, abs=1e-15)
    assert list(r.strata) == [
        "gold-size=1", "gold-size=2-3", "gold-size=4-7", "novelty=novel", "novelty=seen",
        "theorem=T1", "theorem=T2",
    ]
    want = {
        "gold-size=1": (0.75, 2, 2),
        "gold-size=2-3": (25 / 36, 5, 2),
        "gold-size=4-7": (13 / 16, 4, 1),
        "novelty=novel": (269 / 432, 8, 3),
        "novelty=seen": (11 / 12, 3, 2),
        "theorem=T1": (11 / 12, 3, 2),
        "theorem=T2": (197 / 288, 7, 2),
    }
    for label, (ap, num_rel, goals) in want.items():
        s = r.strata[label]
        assert s["summary"]["AP"] == pytest.approx(ap, abs=1e-15), label
        assert s["summary"]["NumRel"] == num_rel, label
        assert s["counts"]["evaluated"] == goals, label
    # One key as a string; grouped strata count their groups.
    g = lemma_eval.evaluate(
        actual, run, ["AP"], by="novelty", train_premises=train, group_by="goal_id"
    )
    assert list(g.strata) == ["novelty=novel", "novelty=seen"]
    assert g.strata["novelty=novel"]["counts"]["groups"] == 3
    assert lemma_eval.evaluate(actual, run, ["AP"]).strata == {}


def test_a_session_gives_evaluates_strata(files):
    # Goals pushed one at a time (a training loop's validation step) give the strata evaluate
    # gives from the file, to the last bit; their summary file is refused.
    actual, run, train = files
    by = ["gold-size", "novelty", "theorem"]
    with pytest.warns(lemma_eval.LemmaEvalWarning, match="--by theorem: 1 goals have no"):
        want = lemma_eval.evaluate(actual, run, ["AP", "NumRel"], by=by, train_premises=train)
        s = lemma_eval.Session(actual, ["AP", "NumRel"], by=by, train_premises=train)
        for g, rel, _ in GOALS:
            at = {k: p for p, k in rel}
            s.push(g, [at.get(r, "x%d" % r) for r in range(1, max(at) + 1)])
        with pytest.raises(ValueError, match='by="gold-size" by="novelty" by="theorem": a summary'):
            s.summary_bytes()
        got = s.result()
    assert got.summary == want.summary
    assert got.strata == want.strata
    assert got.strata["novelty=novel"]["summary"]["AP"] == pytest.approx(269 / 432, abs=1e-15)

def test_refusals(files):
    actual, run, train = files
    with pytest.raises(Exception, match='by="novelty" needs train_premises='):
        lemma_eval.evaluate(actual, run, ["AP"], by="novelty")
    # A flag the sentence goes on after is the argument's name alone, not `name="is"`.
    with pytest.raises(ValueError, match='^train_premises is read by by="novelty" only$'):
        lemma_eval.evaluate(actual, run, ["AP"], train_premises=train)
    with pytest.raises(Exception, match="goal `g5` has no `theorem` or `full_name`"):
        lemma_eval.evaluate(actual, run, ["AP"], by="theorem", strict=True)
    with pytest.raises(Exception, match="given twice"):
        lemma_eval.evaluate(actual, run, ["AP"], by=["gold-size", "gold-size"])
