"""Premise selection from Python: the hand-built library of fixtures/premise (its README gives
the values), through the engine path the command takes, and the errors with Python's names."""

import warnings

import numpy as np
import pytest

import lemma_eval
from conftest import ROOT, cli, cli_json

F = ROOT / "fixtures" / "premise"
CORPUS = F / "corpus.jsonl"
MEASURES = ["AP", "P@3", "R@3", "RR", "Leak@3", "LeakRank"]


def _evaluate(actual, predicted, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = lemma_eval.evaluate(actual, predicted, MEASURES, per_goal=True, **kw)
    return r, [str(w.message) for w in caught]


def test_masked_values_are_the_hand_computed_ones():
    r, warned = _evaluate(F / "actual.jsonl", F / "run.txt", corpus=CORPUS, mask="accessible")
    g1_ap = (1 / 1 + 2 / 3 + 3 / 4) / 3
    assert r.per_goal["g1"]["AP"] == pytest.approx(g1_ap, abs=1e-12)
    assert r.per_goal["g1"]["P@3"] == pytest.approx(2 / 3, abs=1e-12)
    assert r.per_goal["g2"]["AP"] == 0.5
    assert r.per_goal["g2"]["R@3"] == 0.5
    assert r.per_goal["g1"]["Leak@3"] == pytest.approx(2 / 3, abs=1e-12)
    assert r.per_goal["g2"]["LeakRank"] == 1.0
    assert "LeakRank" not in r.per_goal["g3"]  # undefined: no inaccessible premise
    assert r.summary["AP"] == pytest.approx((g1_ap + 0.5 + 1) / 3, abs=1e-12)
    assert r.summary["R@3"] == pytest.approx((2 / 3 + 1 / 2 + 1) / 3, abs=1e-12)
    assert r.summary["Leak@3"] == pytest.approx((2 / 3 + 1 / 3) / 3, abs=1e-12)
    assert r.summary["LeakRank"] == 1.0
    assert any("`zz` for goal `g1`" in w for w in warned), warned
    assert any("`a1` of goal `g2`" in w for w in warned), warned
    # Masked: d1, a3, zz, a4 of g1 and a1, d1 of g2; zz not in the corpus; g2's a1 inaccessible.
    assert r.premises == {
        "goals": 3, "masked": 6, "not_in_corpus": 1, "goals_in_unlisted_files": 0,
        "relevant_inaccessible": 1,
    }
    assert lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"]).premises is None


def test_the_command_and_python_agree():
    c = str(CORPUS)
    ms = [a for m in MEASURES for a in ("-m", m)]
    for actual, predicted, extra in [
        ("actual.jsonl", "run.txt", {}),
        ("actual.jsonl", "predictions.jsonl", {}),
        ("qrels.txt", "run.txt", {"goals": F / "goals.jsonl"}),
    ]:
        flags = ["--goals", str(F / "goals.jsonl")] if extra else []
        want = cli_json(F / actual, F / predicted, "--corpus", c, "--mask", "accessible", *ms, *flags)
        r, _ = _evaluate(F / actual, F / predicted, corpus=CORPUS, mask="accessible", **extra)
        for m in MEASURES:
            w = want["summary"][m]
            assert r.summary[m] == (w["mean"] if isinstance(w, dict) else w), (actual, predicted, m)
        assert r.premises == want["premises"], (actual, predicted)


def test_arrays_npy_files_and_stores_agree_with_the_command(tmp_path):
    """A score matrix (in memory and as a ``.npy`` file, ties among the scores) and a converted
    store, under ``corpus=``/``mask=``/``goals=``: the command's values and counts."""
    lemmas = ["a1", "a2", "a3", "a4", "b1", "c1", "c2", "d1", "zz"]
    goals = ["g1", "g2", "g3"]
    scores = np.array([
        [0.1, 0.5, 0.9, 0.3, 0.5, 0.95, 0.2, 0.8, 0.6],
        [0.9, 0.0, 0.1, 0.1, 0.7, 0.8, 0.3, 0.6, 0.1],
        [0.5, 0.4, 0.4, 0.4, 0.2, 0.5, 0.5, 0.1, 0.9],
    ], dtype=np.float32)
    npy = tmp_path / "s.npy"
    np.save(npy, scores)
    (tmp_path / "goals.txt").write_text("".join(g + "\n" for g in goals))
    (tmp_path / "lemmas.txt").write_text("".join(n + "\n" for n in lemmas))
    store = tmp_path / "run.store"
    cli("convert", F / "actual.jsonl", F / "run.txt", "-o", store)
    c = str(CORPUS)
    ms = [a for m in MEASURES for a in ("-m", m)]
    names = ["--goal-names", str(tmp_path / "goals.txt"), "--lemma-names", str(tmp_path / "lemmas.txt")]
    for actual, extra, flags in [
        ("actual.jsonl", {}, []),
        ("qrels.txt", {"goals": F / "goals.jsonl"}, ["--goals", str(F / "goals.jsonl")]),
    ]:
        for mask in ["none", "accessible"]:
            want = cli_json(F / actual, npy, "--corpus", c, "--mask", mask, *ms, *flags, *names)
            wstore = cli_json(F / actual, store, "--corpus", c, "--mask", mask, *ms, *flags)
            for predicted, kw, w in [
                (scores, {"goal_names": goals, "lemma_names": lemmas}, want),
                (npy, {"goal_names": tmp_path / "goals.txt", "lemma_names": tmp_path / "lemmas.txt"}, want),
                (store, {}, wstore),
            ]:
                r, _ = _evaluate(F / actual, predicted, corpus=CORPUS, mask=mask, **extra, **kw)
                for m in MEASURES:
                    v = w["summary"][m]
                    assert r.summary[m] == (v["mean"] if isinstance(v, dict) else v), (actual, mask, m)
                assert r.premises == w["premises"], (actual, mask)
    # The hand-computed goal g1 (crates/cli/tests/premise.rs: a2 ends exactly at the theorem).
    r, _ = _evaluate(F / "actual.jsonl", scores, corpus=CORPUS, mask="accessible",
                     goal_names=goals, lemma_names=lemmas)
    assert r.per_goal["g1"]["AP"] == pytest.approx((1 / 2 + 2 / 3 + 3 / 4) / 3, abs=1e-12)
    assert r.per_goal["g1"]["Leak@3"] == pytest.approx(2 / 3, abs=1e-12)
    assert r.per_goal["g1"]["LeakRank"] == 2


def test_unmasked_with_the_corpus():
    r, _ = _evaluate(F / "actual.jsonl", F / "run.txt", corpus=CORPUS)
    assert r.per_goal["g1"]["AP"] == pytest.approx((1 / 2 + 2 / 6 + 3 / 8) / 3, abs=1e-12)
    assert r.per_goal["g1"]["Leak@3"] == pytest.approx(2 / 3, abs=1e-12)


def test_errors_name_python_arguments():
    with pytest.raises(ValueError, match=r"run.txt:10: goal `g2`: relevant premise `a1`.*\(strict_gold=True\)"):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], corpus=CORPUS, strict_gold=True)
    with pytest.raises(ValueError, match=r"premise `zz` \(goal `g1`\) is not defined by the corpus .*\(strict=True\)"):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], corpus=CORPUS, strict=True)
    with pytest.raises(ValueError, match=r"has no record giving its place: mask=\"accessible\" .* or in goals=\)"):
        lemma_eval.evaluate(F / "qrels.txt", F / "run.txt", ["AP"], corpus=CORPUS, mask="accessible")
    with pytest.raises(ValueError, match=r"LeakRank needs the corpus: pass corpus="):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["LeakRank"])
    with pytest.raises(ValueError, match=r"mask= needs corpus="):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], mask="accessible")
    with pytest.raises(ValueError, match=r'mask="everything": expected "none", "accessible"'):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], corpus=CORPUS, mask="everything")
    with pytest.raises(FileNotFoundError):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], corpus=F / "nope.jsonl")
    with pytest.raises(ValueError, match=r"pushed goals cannot be masked yet"):
        lemma_eval.evaluate(F / "actual.jsonl", {"g1": ["a2"]}, ["AP"], corpus=CORPUS)


def test_compare_masks_as_evaluate_does():
    """``compare`` takes the premise options: each run's mean under ``mask="accessible"`` is
    ``evaluate``'s masked mean, not the unmasked one; the TREC run and the JSONL predictions
    rank alike (difference 0, every goal a tie)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lemma_eval.LemmaEvalWarning)
        masked = lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP", "R@3"],
                                     corpus=CORPUS, mask="accessible").summary
        plain = lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP", "R@3"]).summary
        rows = lemma_eval.compare(F / "actual.jsonl", [F / "run.txt", F / "predictions.jsonl"],
                                  ["AP", "R@3"], corpus=CORPUS, mask="accessible")
    for row in rows:
        m = row["measure"]
        assert row["mean_a"] == row["mean_b"] == masked[m] != plain[m]
        assert (row["diff"], row["wins"], row["ties"], row["losses"]) == (0, 0, 3, 0)
    assert masked["R@3"] == pytest.approx(13 / 18, rel=1e-15)
