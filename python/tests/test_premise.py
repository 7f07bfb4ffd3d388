"""Premise selection from Python: the hand-built library of fixtures/premise (its README gives
the values), through the engine path the command takes, and the errors with Python's names."""

import json
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
        "relevant_inaccessible": 1, "goals_past_last_premise": 0,
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
    measures = MEASURES + ["R(origin=in-file)@3", "R(origin=imported)@3"]
    ms = [a for m in measures for a in ("-m", m)]
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
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = lemma_eval.evaluate(F / actual, predicted, measures, corpus=CORPUS,
                                            mask=mask, **extra, **kw)
                for m in measures:
                    v = w["summary"][m]
                    assert r.summary[m] == (v["mean"] if isinstance(v, dict) else v), (actual, mask, m)
                assert r.premises == w["premises"], (actual, mask)
            # The matrix's rows pushed to a Session, in two batches.
            s = lemma_eval.Session(F / actual, measures, corpus=CORPUS, mask=mask, per_goal=True,
                                   lemma_names=lemmas, **extra)
            s.push_scores(goals[:2], scores[:2])
            s.push_scores(goals[2:], scores[2:])
            res = s.result()
            for m in measures:
                v = want["summary"][m]
                assert res.summary[m] == (v["mean"] if isinstance(v, dict) else v), (actual, mask, m)
            assert res.premises == want["premises"], (actual, mask)
    # The hand-computed goal g1 (crates/cli/tests/cli/premise.rs: a2 ends exactly at the theorem).
    r, _ = _evaluate(F / "actual.jsonl", scores, corpus=CORPUS, mask="accessible",
                     goal_names=goals, lemma_names=lemmas)
    assert r.per_goal["g1"]["AP"] == pytest.approx((1 / 2 + 2 / 3 + 3 / 4) / 3, abs=1e-12)
    assert r.per_goal["g1"]["Leak@3"] == pytest.approx(2 / 3, abs=1e-12)
    assert r.per_goal["g1"]["LeakRank"] == 2


def test_a_binary_corpus_reads_as_its_text(tmp_path):
    """``convert_corpus`` writes the binary form ``lemma-eval convert --corpus`` writes (the same
    bytes), and ``corpus=`` reads it with the text's values and counts; damage is a ValueError
    naming the file, and a corpus that cannot be read converts to nothing."""
    lec = tmp_path / "corpus.lec"
    assert lemma_eval.convert_corpus(CORPUS, lec) == {"files": 4, "premises": 11, "skipped": 4}
    cli("convert", "--corpus", CORPUS, "-o", tmp_path / "by-cli.lec")
    assert lec.read_bytes() == (tmp_path / "by-cli.lec").read_bytes()
    assert lec.read_bytes()[:8] == b"LECORPUS"
    for predicted in [F / "run.txt", F / "predictions.jsonl"]:
        for mask in ["none", "accessible"]:
            text, tw = _evaluate(F / "actual.jsonl", predicted, corpus=CORPUS, mask=mask)
            binary, bw = _evaluate(F / "actual.jsonl", predicted, corpus=lec, mask=mask)
            assert binary.per_goal == text.per_goal and binary.summary == text.summary
            assert binary.premises == text.premises
            assert bw == tw
    r, _ = _evaluate(F / "actual.jsonl", F / "run.txt", corpus=lec, mask="accessible")
    assert r.per_goal["g1"]["AP"] == pytest.approx((1 / 1 + 2 / 3 + 3 / 4) / 3, abs=1e-12)
    bad = tmp_path / "bad.lec"
    b = bytearray(lec.read_bytes())
    b[len(b) // 2] ^= 1
    bad.write_bytes(bytes(b))
    with pytest.raises(ValueError, match=r"bad.lec: corrupt or truncated binary corpus: checksum mismatch"):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], corpus=bad)
    cycle = tmp_path / "cycle.jsonl"
    cycle.write_text('{"path": "A", "imports": ["B"], "premises": []}\n'
                     '{"path": "B", "imports": ["A"], "premises": []}\n')
    with pytest.raises(ValueError, match=r"cycle.jsonl:2: .*the imports form a cycle"):
        lemma_eval.convert_corpus(cycle, tmp_path / "none.lec")
    assert not (tmp_path / "none.lec").exists()
    with pytest.raises(ValueError, match=r"is also an input"):
        lemma_eval.convert_corpus(lec, lec)


def test_unmasked_with_the_corpus():
    r, _ = _evaluate(F / "actual.jsonl", F / "run.txt", corpus=CORPUS)
    assert r.per_goal["g1"]["AP"] == pytest.approx((1 / 2 + 2 / 6 + 3 / 8) / 3, abs=1e-12)
    assert r.per_goal["g1"]["Leak@3"] == pytest.approx(2 / 3, abs=1e-12)


def test_a_place_past_its_files_last_premise(tmp_path):
    """g1 at A.lean (20, 2), past a4's end (20, 1); g2 at B.lean (10, 10), past B.bar's (10,
    9); g3 at C.baz's end exactly: two goals counted and named, ranked as placed (g1 then ranks
    a3 and a4: AP (1 + 2/4 + 3/6) / 3), the command's counts; strict=True an error."""
    late = tmp_path / "late.jsonl"
    late.write_text(
        '{"goal_id": "g3", "file_path": "C.lean", "theorem_pos": [11, 2]}\n'
        '{"goal_id": "g2", "file_path": "B.lean", "theorem_pos": [10, 10]}\n'
        '{"goal_id": "g1", "file_path": "A.lean", "theorem_pos": [20, 2]}\n'
    )
    for predicted in [F / "run.txt", _run_dict()]:
        r, warned = _evaluate(
            F / "actual.jsonl", predicted, corpus=CORPUS, mask="accessible", goals=late
        )
        assert r.per_goal["g1"]["AP"] == pytest.approx(2 / 3, abs=1e-12)
        assert r.per_goal["g2"]["AP"] == 0.5
        assert r.per_goal["g3"]["AP"] == 1.0
        assert r.premises["goals_past_last_premise"] == 2
        assert any(
            "2 goals stand past the end of their file's last premise (the first by name: goal "
            "`g1` in `A.lean`)" in w
            for w in warned
        ), warned
    want = cli_json(
        F / "actual.jsonl", F / "run.txt", "-m", "AP", "--corpus", str(CORPUS),
        "--mask", "accessible", "--goals", str(late),
    )
    assert want["premises"] == r.premises
    with pytest.raises(ValueError, match=r"goal `g1` stands at 20:2 in `A.lean`, past the end .*\(strict=True\)"):
        lemma_eval.evaluate(
            F / "actual.jsonl", F / "run.txt", ["AP"], corpus=CORPUS, mask="accessible",
            goals=late, strict=True,
        )


def test_a_corpus_past_the_files_bound_is_refused(tmp_path):
    big = tmp_path / "big.jsonl"
    big.write_text("".join(f'{{"path": "F{i}.lean"}}\n' for i in range(65_537)))
    with pytest.raises(ValueError, match=r"big.jsonl:65537: file `F65536.lean` is one more than a corpus may list"):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], corpus=big)
    with pytest.raises(ValueError, match=r"one more than a corpus may list"):
        lemma_eval.convert_corpus(big, tmp_path / "big.lec")
    assert not (tmp_path / "big.lec").exists()


def test_errors_name_python_arguments():
    with pytest.raises(ValueError, match=r"run.txt:10: goal `g2`: relevant premise `a1`.*\(strict_gold=True\)"):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], corpus=CORPUS, strict_gold=True)
    with pytest.raises(ValueError, match=r"premise `zz` \(goal `g1`\) is not defined by the corpus .*\(strict=True\)"):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], corpus=CORPUS, strict=True)
    with pytest.raises(ValueError, match=r"has no record giving its place: mask=\"accessible\", .* or in goals=\)"):
        lemma_eval.evaluate(F / "qrels.txt", F / "run.txt", ["AP"], corpus=CORPUS, mask="accessible")
    with pytest.raises(ValueError, match=r"LeakRank needs the corpus: pass corpus="):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["LeakRank"])
    with pytest.raises(ValueError, match=r"mask= needs corpus="):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], mask="accessible")
    with pytest.raises(ValueError, match=r'mask="everything": expected "none", "accessible"'):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], corpus=CORPUS, mask="everything")
    with pytest.raises(FileNotFoundError):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["AP"], corpus=F / "nope.jsonl")
    with pytest.raises(ValueError, match=r"Leak@3 needs the corpus"):
        lemma_eval.Session(F / "actual.jsonl", ["Leak@3"])
    with pytest.raises(ValueError, match=r"goal `g3` has no record giving its place"):
        lemma_eval.evaluate(F / "qrels.txt", {"g3": ["c2"]}, ["AP"], corpus=CORPUS, mask="accessible")


def _run_dict(ranked: bool = False):
    run: dict = {}
    for line in (F / "run.txt").read_text().splitlines():
        g, _, p, _, score, _ = line.split()
        run.setdefault(g, {})[p] = float(score)
    if ranked:
        # The TREC rule: score descending, equal scores by name descending (g3's c2 before c1).
        return {g: sorted(sorted(d, reverse=True), key=lambda p: -d[p]) for g, d in run.items()}
    return run


def test_dicts_and_sessions_are_masked_as_the_command_masks():
    """Pushed goals (dicts of scores or of ranked names, and a Session's pushes) under the
    corpus: the command's values on run.txt, its counts, its warnings; the hand-computed g1."""
    c = str(CORPUS)
    ms = MEASURES + ["R(origin=in-file)@3", "R(origin=imported)@3"]
    flags = [a for m in ms for a in ("-m", m)]
    for mask in ["none", "accessible"]:
        want = cli_json(F / "actual.jsonl", F / "run.txt", "--corpus", c, "--mask", mask, *flags,
                        "--per-goal")
        for ranked in [False, True]:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                r = lemma_eval.evaluate(F / "actual.jsonl", _run_dict(ranked), ms, per_goal=True,
                                        corpus=CORPUS, mask=mask)
            for m in ms:
                v = want["summary"][m]
                assert r.summary[m] == (v["mean"] if isinstance(v, dict) else v), (mask, ranked, m)
            assert r.premises == want["premises"], (mask, ranked)
            assert any("`zz` for goal `g1`" in str(w.message) for w in caught)
        s = lemma_eval.Session(F / "actual.jsonl", ms, corpus=CORPUS, mask=mask, per_goal=True)
        for g, d in _run_dict().items():
            s.push(g, d)
        res = s.result()
        assert res.premises == want["premises"]
        assert res.per_goal == r.per_goal
    # Masked, g1 as by hand: `a2 c1 c2 b1 a1`, relevant at 1, 3, 4.
    assert r.per_goal["g1"]["AP"] == pytest.approx((1 / 1 + 2 / 3 + 3 / 4) / 3, abs=1e-12)
    assert r.per_goal["g1"]["Leak@3"] == pytest.approx(2 / 3, abs=1e-12)


def test_shards_merge_only_under_one_corpus_and_mask():
    """Summary bytes record the mask and the corpus: the shards of a masked evaluation merge
    into its summary (sessions' bytes too); a part evaluated
    without the corpus, or unmasked, is refused, naming what differs."""
    ms = ["AP", "R@3", "RR"]
    kw = {"corpus": CORPUS, "mask": "accessible"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ms, **kw)
        first = lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ms, shard=(1, 2), **kw)
        s = lemma_eval.Session(F / "actual.jsonl", ms, **kw)
        run = _run_dict()
        for g in sorted(run)[1:]:
            s.push(g, run[g])
        pushed = s.summary_bytes()
        s = lemma_eval.Session(F / "actual.jsonl", ms, **kw)
        s.push(sorted(run)[0], run[sorted(run)[0]])
        merged = lemma_eval.merge([s.summary_bytes(), pushed])
        assert merged.summary == whole.summary
        # What the protocol counted travels with the bytes.
        assert merged.premises == whole.premises
        assert whole.premises["masked"] == 6
        second = {
            "no corpus": lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ms, shard=(2, 2)),
            "unmasked": lemma_eval.evaluate(
                F / "actual.jsonl", F / "run.txt", ms, shard=(2, 2), corpus=CORPUS),
        }
        assert lemma_eval.merge([first, lemma_eval.evaluate(
            F / "actual.jsonl", F / "run.txt", ms, shard=(2, 2), **kw)]).summary == whole.summary
    with pytest.raises(ValueError, match="different options: corpus: given vs none"):
        lemma_eval.merge([first, second["no corpus"]])
    with pytest.raises(ValueError, match="different options: mask: accessible vs none"):
        lemma_eval.merge([first, second["unmasked"]])


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


def _origin_library(d):
    """crates/cli/tests/cli/premise.rs's `origin_library`: L.lean (l1 ending at (1, 5), l2 at (2, 5))
    and M.lean importing it (m1 at (3, 4), m2 exactly at (5, 2), m3 at (5, 3)); t1 at M.lean
    (5, 2) with m2, m3 in-file, l1 imported and ghost (not in the corpus); t2 at L.lean (9, 0)
    with l1 in-file and m1 imported (not accessible); t3 at M.lean with l2, no predictions."""
    def p(n, end):
        return {"full_name": n, "code": f"theorem {n} : True := trivial", "start": [end[0], 1],
                "end": end, "kind": "theorem"}
    (d / "corpus.jsonl").write_text("\n".join(json.dumps(f) for f in [
        {"path": "L.lean", "imports": [], "premises": [p("l1", [1, 5]), p("l2", [2, 5])]},
        {"path": "M.lean", "imports": ["L.lean"],
         "premises": [p("m1", [3, 4]), p("m2", [5, 2]), p("m3", [5, 3])]},
    ]) + "\n")
    (d / "actual.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"goal_id": "t1", "file_path": "M.lean", "theorem_pos": [5, 2],
         "premises": ["m2", "m3", "l1", "ghost"]},
        {"goal_id": "t2", "file_path": "L.lean", "theorem_pos": [9, 0], "premises": ["l1", "m1"]},
        {"goal_id": "t3", "file_path": "M.lean", "theorem_pos": [9, 0], "premises": ["l2"]},
    ]) + "\n")
    (d / "run.txt").write_text("t1 Q0 m3 1 0.9 r\nt1 Q0 l2 2 0.8 r\nt1 Q0 m2 3 0.7 r\n"
                               "t1 Q0 ghost 4 0.6 r\nt1 Q0 l1 5 0.5 r\nt2 Q0 m1 1 0.9 r\n"
                               "t2 Q0 l1 2 0.8 r\n")
    return d / "actual.jsonl", d / "run.txt", d / "corpus.jsonl"


ORIGIN = ["R(origin=in-file)@1", "R(origin=in-file)@2", "R(origin=imported)@2",
          "R(origin=imported)@3", "R@3"]


def test_recall_by_origin(tmp_path):
    """Masked: t1 ranks l2 m2 l1, t2 l1, t3 nothing. A goal with no relevant premise of an origin
    has no value; the summary is the mean over the goals that have some."""
    a, run, corpus = _origin_library(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lemma_eval.LemmaEvalWarning)
        r = lemma_eval.evaluate(a, run, ORIGIN, corpus=corpus, mask="accessible", per_goal=True,
                                by=["file"])
    assert r.per_goal["t1"] == pytest.approx({
        "R(origin=in-file)@1": 0, "R(origin=in-file)@2": 1 / 2, "R(origin=imported)@2": 0,
        "R(origin=imported)@3": 1, "R@3": 2 / 4}, abs=1e-15)
    assert r.per_goal["t3"] == {"R(origin=imported)@2": 0, "R(origin=imported)@3": 0, "R@3": 0}
    assert r.summary == pytest.approx({
        "R(origin=in-file)@1": (0 + 1) / 2, "R(origin=in-file)@2": (1 / 2 + 1) / 2,
        "R(origin=imported)@2": 0, "R(origin=imported)@3": (1 + 0 + 0) / 3,
        "R@3": (2 / 4 + 1 / 2 + 0) / 3}, abs=1e-15)
    # Per stratum: M.lean holds t1 and t3, L.lean t2.
    assert r.strata["file=M.lean"]["summary"]["R(origin=in-file)@2"] == 1 / 2
    assert r.strata["file=M.lean"]["summary"]["R(origin=imported)@3"] == 1 / 2
    assert r.strata["file=L.lean"]["summary"]["R(origin=in-file)@2"] == 1
    # The command gives the same means (and the coverage Python leaves out).
    ms = [x for m in ORIGIN for x in ("-m", m)]
    want = cli_json(a, run, "--corpus", str(corpus), "--mask", "accessible", *ms)
    for m in ORIGIN:
        w = want["summary"][m]
        assert r.summary[m] == (w["mean"] if isinstance(w, dict) else w), m
    assert want["summary"]["R(origin=in-file)@2"]["coverage"] == 2 / 3
    with pytest.raises(ValueError, match=r"R\(origin=in-file\)@2 needs the corpus"):
        lemma_eval.evaluate(a, run, ["R(origin=in-file)@2"])
    # compare: each origin measure over the goals that have premises of its origin.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lemma_eval.LemmaEvalWarning)
        rows = lemma_eval.compare(a, [run, run], ["R(origin=in-file)@2", "R@3"], corpus=corpus,
                                  mask="accessible")
    assert [(x["measure"], x["mean_a"], x["ties"]) for x in rows] == [
        ("R(origin=in-file)@2", 3 / 4, 2), ("R@3", r.summary["R@3"], 3)]


def test_by_origin_splits_each_recall_at_k(tmp_path):
    """``by="origin"`` follows each R@k with its two origin measures, valued as when asked for by
    name (t1 masked ranks l2 m2 l1: in-file@2 1/2, imported@2 0; t2 in-file@2 1), in the summary,
    per goal and per stratum; a Session alike; the command's values."""
    a, run, corpus = _origin_library(tmp_path)
    named = ["R@2", "R(origin=in-file)@2", "R(origin=imported)@2", "AP"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lemma_eval.LemmaEvalWarning)
        split = lemma_eval.evaluate(a, run, ["R@2", "AP"], corpus=corpus, mask="accessible",
                                    per_goal=True, by=["origin", "file"])
        want = lemma_eval.evaluate(a, run, named, corpus=corpus, mask="accessible", per_goal=True,
                                   by="file")
    assert list(split.summary) == named
    assert split.summary == want.summary
    assert split.per_goal == want.per_goal
    assert split.strata == want.strata
    assert split.summary["R(origin=in-file)@2"] == (1 / 2 + 1) / 2
    assert split.per_goal["t1"]["R(origin=in-file)@2"] == 1 / 2
    assert split.per_goal["t2"]["R(origin=in-file)@2"] == 1
    assert "R(origin=in-file)@2" not in split.per_goal["t3"]
    assert split.strata["file=M.lean"]["summary"]["R(origin=in-file)@2"] == 1 / 2
    cli = cli_json(a, run, "--corpus", str(corpus), "--mask", "accessible", "-m", "R@2",
                   "--by", "origin")
    assert cli["summary"]["R(origin=in-file)@2"]["mean"] == split.summary["R(origin=in-file)@2"]
    assert cli["summary"]["R(origin=in-file)@2"]["coverage"] == 2 / 3
    # A session pushed the same rankings.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lemma_eval.LemmaEvalWarning)
        s = lemma_eval.Session(a, ["R@2"], corpus=corpus, mask="accessible", by="origin")
        s.push("t1", ["m3", "l2", "m2", "ghost", "l1"])
        s.push("t2", ["m1", "l1"])
        r = s.result()
    assert r.summary == {k: want.summary[k] for k in named[:3]}
    with pytest.raises(ValueError, match=r'by="origin" splits recall by where the corpus defines each relevant premise: pass corpus='):
        lemma_eval.evaluate(a, run, ["R@2"], by="origin")
    with pytest.raises(ValueError, match=r'by="origin" splits R@k: ask for an R@k measure'):
        lemma_eval.evaluate(a, run, ["AP"], by="origin", corpus=corpus)
    # compare compares the split measures, and refuses strata of goals rather than ignore them.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lemma_eval.LemmaEvalWarning)
        rows = lemma_eval.compare(a, [run, run], ["R@2"], corpus=corpus, mask="accessible",
                                  by="origin")
        assert [x["measure"] for x in rows] == named[:3]
        assert rows[1]["mean_a"] == split.summary["R(origin=in-file)@2"]
        with pytest.raises(ValueError, match=r'by="file": compare tests the runs over all'):
            lemma_eval.compare(a, [run, run], ["R@2"], corpus=corpus, by=["origin", "file"])


def test_leaks_are_refused_under_tie_groups():
    with pytest.raises(ValueError, match=r'Leak@1 under ties="group": the leak measures read'):
        lemma_eval.evaluate(F / "actual.jsonl", F / "run.txt", ["Leak@1"], corpus=CORPUS,
                            ties="group")


def _all_premises(corpus):
    """ReProver's ``corpus.all_premises`` names, written from its rules: files in order, each
    file's premises in order, skipping a null name, one with ``user__.n``, empty code, and a
    bracketed mutual list."""
    names = []
    for line in corpus.read_text().splitlines():
        for p in json.loads(line)["premises"]:
            n = p["full_name"]
            if n is None or "user__.n" in n or p["code"] == "" or (
                    n.startswith("[") and n.endswith("]")):
                continue
            names.append(n)
    return names


def test_premise_numbers_are_reprovers_indices():
    """``push_premise_ids`` takes indices into ReProver's ``all_premises`` (as a list, a tuple or
    a NumPy array): each goal's values and the counts are those of its names pushed, masked or
    not; g1 masked as by hand. A number past the corpus's premises, a negative one, a float, a
    bool or a set raise ValueError and leave the session as it was; without a corpus it raises."""
    all_premises = _all_premises(CORPUS)
    assert all_premises == ["c1", "c2", "C.baz", "b1", "B.bar", "a1", "a2", "a3", "A.foo", "a4",
                            "d1"]
    number = {n: i for i, n in enumerate(all_premises)}
    # run.txt in rank order, without `zz` (no premise of the corpus).
    ranked = {g: [p for p in ps if p in number] for g, ps in _run_dict(ranked=True).items()}
    for mask in ["none", "accessible"]:
        by_name = lemma_eval.Session(F / "actual.jsonl", MEASURES, corpus=CORPUS, mask=mask,
                                     per_goal=True)
        by_number = lemma_eval.Session(F / "actual.jsonl", MEASURES, corpus=CORPUS, mask=mask,
                                       per_goal=True)
        for k, (g, names) in enumerate(ranked.items()):
            ids = [number[n] for n in names]
            ids = [np.array(ids, dtype=np.int64), tuple(ids), ids][k % 3]
            assert by_number.push_premise_ids(g, ids) == by_name.push(g, names), (mask, g)
        a, b = by_name.result(), by_number.result()
        assert b.per_goal == a.per_goal and b.summary == a.summary and b.premises == a.premises
    # Masked, g1 `d1 a2 a3 c1 c2 a4 b1 a1` -> `a2 c1 c2 b1 a1`, relevant at 1, 3, 4.
    assert b.per_goal["g1"]["AP"] == pytest.approx((1 / 1 + 2 / 3 + 3 / 4) / 3, abs=1e-12)
    assert b.per_goal["g1"]["Leak@3"] == pytest.approx(2 / 3, abs=1e-12)
    s = lemma_eval.Session(F / "actual.jsonl", ["AP"], corpus=CORPUS, mask="accessible")
    for bad, match in [([6, 11], r"premise number 11 \(at position 1\): expected a number below "
                                 r"11, the premises of the corpus .*corpus.jsonl"),
                       ([6, 2**40], r"premise number 1099511627776 \(at position 1\): expected a "
                                    r"number below 11"),
                       ([6, -1], r"at position 1: expected a premise number \(an int >= 0\), "
                                 r"got -1"),
                       ([6.0], "at position 0: expected a premise number"),
                       ([True], "at position 0: expected a premise number"),
                       ("a2", "expected premise numbers in rank order"),
                       (np.array([[6, 2], [3, 4]]), r"got a 2-D array of shape \(2, 2\)")]:
        with pytest.raises(ValueError, match=match):
            s.push_premise_ids("g1", bad)
    for bad, match in [({6}, "got a set: a set's order is its hash order"),
                       (6, "expected premise numbers in rank order .*, got a int"),
                       (np.array(6), "expected premise numbers in rank order .*, got a int")]:
        with pytest.raises(TypeError, match=match):
            s.push_premise_ids("g1", bad)
    assert s.summary()["AP"] == 0.0  # nothing pushed: every goal missing, zero
    assert s.push_premise_ids("g1", [6])["AP"] == pytest.approx(1 / 3, abs=1e-12)
    plain = lemma_eval.Session(F / "actual.jsonl", ["AP"])
    for ids in [[0], [-1]]:
        with pytest.raises(ValueError, match=r"give the session a corpus \(corpus=\)"):
            plain.push_premise_ids("g1", ids)


def test_premise_names_with_whitespace_are_ranked_by_number(tmp_path):
    """A corpus may name a premise with whitespace (no line of a run can): by number it is
    ranked as a matrix's column is, and its name pushed is refused as ``push`` refuses it."""
    corpus, actual = tmp_path / "c.jsonl", tmp_path / "a.jsonl"
    corpus.write_text(json.dumps({"path": "A", "imports": [], "premises": [
        {"full_name": n, "code": "c", "end": [i + 1, 1]}
        for i, n in enumerate(["x", "has space", "new\nline"])]}) + "\n")
    actual.write_text(json.dumps({"goal_id": "t", "premises": ["x"]}) + "\n")
    s = lemma_eval.Session(actual, ["RR", "P@2"], corpus=corpus)
    assert s.push_premise_ids("t", [2, 1, 0]) == {"RR": 1 / 3, "P@2": 0.0}
    r = lemma_eval.evaluate(actual, np.array([[0.1, 0.5, 0.9]]), ["RR", "P@2"], goal_names=["t"],
                            corpus=corpus)
    assert r.summary == {"RR": 1 / 3, "P@2": 0.0}
    with pytest.raises(ValueError, match="without whitespace"):
        lemma_eval.Session(actual, ["RR"], corpus=corpus).push("t", ["new\nline", "x"])


def test_a_matrix_of_every_premise_is_named_by_the_corpus(tmp_path):
    """With ``corpus=``, a score matrix given ``goal_names`` alone has the corpus's premises for
    columns, in ReProver's ``all_premises`` order: a ``.npy`` path, an array in memory, a
    Session's ``push_scores`` and ``compare`` give what the columns named in that order give,
    and the command's values; g1 by hand (the command's test: masked AP (1/2 + 2/3 + 3/4) / 3).
    Another width raises naming the corpus's count; without a corpus the names are needed."""
    all_premises = _all_premises(CORPUS)
    row = {"c1": 0.95, "c2": 0.2, "C.baz": 0.03, "b1": 0.5, "B.bar": 0.02, "a1": 0.1, "a2": 0.5,
           "a3": 0.9, "A.foo": 0.01, "a4": 0.3, "d1": 0.8}
    scores = np.array([[row[n] for n in all_premises]], dtype=np.float32)
    npy, goals, cols = tmp_path / "s.npy", tmp_path / "goals.txt", tmp_path / "cols.txt"
    np.save(npy, scores)
    goals.write_text("g1\n")
    cols.write_text("\n".join(all_premises) + "\n")
    for mask in ["none", "accessible"]:
        kw = dict(corpus=CORPUS, mask=mask)
        named, _ = _evaluate(F / "actual.jsonl", npy, goal_names=goals, lemma_names=cols, **kw)
        want = cli_json(F / "actual.jsonl", npy, "--goal-names", str(goals), "--corpus",
                        str(CORPUS), "--mask", mask, *[a for m in MEASURES for a in ("-m", m)],
                        "--per-goal")
        for predicted, extra in [(npy, {"goal_names": goals}), (npy, {"goal_names": ["g1"]}),
                                 (scores, {"goal_names": ["g1"]})]:
            r, _ = _evaluate(F / "actual.jsonl", predicted, **extra, **kw)
            assert r.per_goal == named.per_goal and r.premises == named.premises, (mask, extra)
            for m in MEASURES:
                v = want["summary"][m]
                assert r.summary[m] == (v["mean"] if isinstance(v, dict) else v), (mask, m)
        s = lemma_eval.Session(F / "actual.jsonl", MEASURES, **kw)
        assert s.push_scores(["g1"], scores)[0] == named.per_goal["g1"]
        rows = lemma_eval.compare(F / "actual.jsonl", [npy, npy], ["AP"], goal_names=goals, **kw)
        assert rows[0]["mean_a"] == named.summary["AP"]
    assert named.per_goal["g1"]["AP"] == pytest.approx((1 / 2 + 2 / 3 + 3 / 4) / 3, abs=1e-12)
    wide = tmp_path / "wide.npy"
    np.save(wide, np.zeros((1, 12), dtype=np.float32))
    for predicted in [wide, np.zeros((1, 12), dtype=np.float32)]:
        with pytest.raises(ValueError, match=r"shape \(1, 12\): without lemma_names= its "
                                             r"columns are the premises of the corpus .*, "
                                             r"which has 11"):
            lemma_eval.evaluate(F / "actual.jsonl", predicted, ["AP"], goal_names=["g1"],
                                corpus=CORPUS)
    with pytest.raises(ValueError, match=r"scores: shape \(1, 12\): without lemma_names= its "
                                         r"columns are the premises of the corpus .*, which has 11"):
        lemma_eval.Session(F / "actual.jsonl", ["AP"], corpus=CORPUS).push_scores(
            ["g1"], np.zeros((1, 12), dtype=np.float32))
    with pytest.raises(ValueError, match="columns need their names"):
        lemma_eval.Session(F / "actual.jsonl", ["AP"]).push_scores(["g1"], scores)
    with pytest.raises(ValueError, match="with corpus=, goal_names= alone"):
        lemma_eval.evaluate(F / "actual.jsonl", scores, ["AP"], goal_names=["g1"])
