"""The Python door at the command's level: its options, its warnings as LemmaEvalWarning, its
errors naming Python's arguments, values of the wrong type refused with a TypeError that says
why, and matrices, name lists and dicts judged by the command's own checks."""

import threading
import warnings

import numpy as np
import pytest

import lemma_eval
from conftest import cli, cli_json

TRUTH = {"g1": ["a", "b"], "g2": ["c"]}
LEMMAS = ["a", "b", "c", "x"]
# g1 ranks a, c, x, b; g2 ranks c, a, b, x.
SCORES = np.array([[0.9, 0.1, 0.5, 0.3], [0.2, 0.1, 0.8, 0.05]], np.float32)


def test_version_is_the_commands():
    assert cli("--version").split() == ["lemma-eval", lemma_eval.__version__]


def test_universe_enables_auc_and_its_absence_names_the_argument():
    # AUC over a universe of 10: g1's relevant a (rank 1) and b (rank 3) outrank 8 and 7 of the
    # 8 non-relevant lemmas (the 7 unranked ones count below every ranked lemma): 15/16;
    # g2's c at rank 1: 1.
    r = lemma_eval.evaluate(TRUTH, {"g1": ["a", "x", "b"], "g2": ["c"]}, ["AUC"], universe=10)
    assert r.summary == {"AUC": (15 / 16 + 1) / 2}
    with pytest.raises(ValueError, match=r"AUC needs the universe size: pass universe=N"):
        lemma_eval.evaluate(TRUTH, {"g1": ["a"]}, ["AUC"])
    # A matrix knows its universe: its columns.
    m = lemma_eval.evaluate(TRUTH, SCORES, ["AUC"], goal_names=["g1", "g2"], lemma_names=LEMMAS)
    # g1: a outranks 2 of the 2 non-relevant (c, x), b outranks none: 2/4; g2: c outranks all 3.
    assert m.summary == {"AUC": (2 / 4 + 1) / 2}


def test_warnings_are_the_commands(tmp_path):
    with pytest.warns(lemma_eval.LemmaEvalWarning, match="no goal of the predictions has an actual set"):
        r = lemma_eval.evaluate(TRUTH, {"zz": ["a"]}, ["AP"])
    # The actual sets' goals are evaluated as empty rankings (AP 0): the mean is a real 0.
    assert r.summary == {"AP": 0.0} and r.counts["evaluated_empty"] > 0 and r.warnings
    # Over no goal at all a mean is missing (None), as the command prints it (NA); a sum is 0.
    with pytest.warns(lemma_eval.LemmaEvalWarning):
        r = lemma_eval.evaluate(TRUTH, {"zz": ["a"]}, ["AP", "NumRet"], missing="skip")
    assert r.summary == {"AP": None, "NumRet": 0.0} and r.counts["evaluated"] == 0
    with pytest.warns(lemma_eval.LemmaEvalWarning, match="1 of the predictions' 2 goals have no actual set"):
        lemma_eval.evaluate(TRUTH, {"g1": ["a"], "zz": ["a"]}, ["AP"])
    # The command warns of the same, in the same words.
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("g1 0 a 1\n")
    r.write_text("g1 Q0 a 1 1 t\nzz Q0 a 1 1 t\n")
    with pytest.warns(lemma_eval.LemmaEvalWarning) as got:
        lemma_eval.evaluate(q, r, ["AP"])
    import subprocess
    from conftest import BIN
    err = subprocess.run([BIN, "eval", q, r, "-m", "AP"], capture_output=True, text=True).stderr
    assert f"lemma-eval: warning: {got[0].message}" in err
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lemma_eval.evaluate(TRUTH, {"g1": ["a"]}, ["AP"])  # every goal known: no warning


def test_values_of_the_wrong_type_are_type_errors():
    with pytest.raises(TypeError, match="a set has no order"):
        lemma_eval.evaluate(TRUTH, {"g1", "g2"})
    with pytest.raises(TypeError, match="goal `g1`: a ranking must be in rank order, got a set"):
        lemma_eval.evaluate(TRUTH, {"g1": {"a", "b"}})
    with pytest.raises(TypeError, match=r"goal names are str, got int 1"):
        lemma_eval.evaluate(TRUTH, {1: ["a"]})
    with pytest.raises(TypeError, match=r"actual: goal names are str, got int 7"):
        lemma_eval.evaluate({7: ["a"]}, {"g1": ["a"]})
    with pytest.raises(TypeError, match=r"threads: expected an int"):
        lemma_eval.evaluate(TRUTH, {"g1": ["a"]}, threads="2")
    s = lemma_eval.Session(TRUTH, ["AP"])
    with pytest.raises(TypeError, match="a ranking must be in rank order"):
        s.push("g1", frozenset(["a"]))


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(threads=-1), r"threads=-1: expected 1 to 1024 worker threads"),
        (dict(threads=0), r"threads=0: expected 1 to 1024"),
        (dict(threads=5000), r"threads=5000: expected 1 to 1024"),
        (dict(threads=2**64), r"threads=18446744073709551616: expected 1 to 1024"),
        (dict(depth=-3), r"depth=-3: expected an int >= 0"),
        (dict(universe=0), r"universe=0: expected an int >= 1"),
        (dict(relevance_level=2**40), r"relevance_level=1099511627776: expected a 32-bit int"),
        (dict(memory="lots"), r"memory=`lots`: expected a size such as 512M"),
        (dict(memory=-1), r"memory=-1: expected a size in bytes"),
        (dict(ties="random"), r'ties="random": expected "trec", "group", "file"'),
        (dict(order="best"), r'order="best": expected "score", "file"'),
        (dict(interpolation="x"), r'interpolation="x": expected "textbook", "trec10", "trec9"'),
    ],
)
def test_absurd_options_are_value_errors(options, message):
    with pytest.raises(ValueError, match=message):
        lemma_eval.evaluate(TRUTH, {"g1": ["a"]}, ["AP"], **options)


def test_shards_out_of_range_are_value_errors(tmp_path):
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("g1 0 a 1\n")
    r.write_text("g1 Q0 a 1 1 t\n")
    for shard in [(0, 2), (3, 2), (-1, 2), (1, -2), (1, 0)]:
        with pytest.raises(ValueError, match=r"shard=.*expected \(I, N\) with 1 <= I <= N"):
            lemma_eval.evaluate(q, r, shard=shard)


def test_errors_name_the_arguments_not_the_flags(tmp_path):
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("g1 0 a 1\ng2 0 b 1\n")
    r.write_text("g1 Q0 a 1 1 t\ng2 Q0 b 1 1 t\ng1 Q0 c 2 0.5 t\n")
    with pytest.raises(ValueError, match=r"or pass regroup=True \(which sorts it by goal, in memory or on disk within memory=\)") as e:
        lemma_eval.evaluate(q, r)
    assert "--" not in str(e.value)
    assert lemma_eval.evaluate(q, r, ["RR"], regroup=True).summary == {"RR": 1.0}
    np.save(tmp_path / "m.npy", SCORES)
    with pytest.raises(ValueError, match=r"needs its names: goal_names= and lemma_names=, or names="):
        lemma_eval.evaluate(q, tmp_path / "m.npy")


def test_a_dict_changed_while_it_is_read_is_a_runtime_error():
    """A goal's list whose iteration adds a goal to the run (another thread could do the same
    while the GIL is released): Python's RuntimeError, not PyO3's PanicException, which `except
    Exception` would miss."""

    class Growing(list):
        def __iter__(self):
            run["g9"] = ["x"]
            return super().__iter__()

    run = {"g1": Growing(["a"]), "g2": ["c"]}
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        lemma_eval.evaluate(TRUTH, run, ["AP"])

    class Score:
        """A number that is no float: read through its __float__, which changes the run."""

        def __float__(self):
            run["g9"] = {"x": 1.0}
            return 0.5

    run = {"g1": {"a": Score()}, "g2": {"c": 0.5}}
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        lemma_eval.evaluate(TRUTH, run, ["AP"])


def test_dicts_changed_by_another_thread_never_panic():
    truth = {f"g{i}": ["a"] for i in range(2000)}
    run = {f"g{i}": ["a", "b"] for i in range(2000)}
    stop = threading.Event()

    def churn():
        i = 0
        while not stop.is_set():
            run[f"new{i}"] = ["a"]
            run.pop(f"new{i}", None)
            i += 1

    t = threading.Thread(target=churn)
    t.start()
    try:
        for _ in range(20):
            try:
                lemma_eval.evaluate(truth, run, ["RR"])
            except RuntimeError as e:
                assert "changed" in str(e)
    finally:
        stop.set()
        t.join()


def test_counts_are_named_as_in_json(tmp_path):
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("g1 0 a 1\ng2 0 b 1\ng3 0 c 0\n")
    r.write_text("g1 Q0 a 1 1 t\nzz Q0 a 1 1 t\n")
    want = cli_json(q, r, "-m", "RR")["goals"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lemma_eval.LemmaEvalWarning)
        got = lemma_eval.evaluate(q, r, ["RR"]).counts
    assert got == want == {"evaluated": 2, "evaluated_empty": 1, "skipped_no_actual_set": 1,
                           "skipped_no_relevant": 1, "skipped_no_predictions": 0}


def test_matrices_and_names_are_judged_as_the_command_judges_them(tmp_path):
    q = tmp_path / "q"
    q.write_text("g1 0 a 1\ng1 0 b 1\ng2 0 c 1\n")
    m = tmp_path / "m.npy"
    gn, ln = tmp_path / "goals", tmp_path / "lemmas"
    gn.write_text("g1\ng2\n")
    # Blank lines after the last name: the command accepts them, so does Python.
    ln.write_text("a\nb\nc\nx\n\n\n")
    # NaN in an unjudged column: allowed (it never outranks a judged lemma's score).
    scores = SCORES.copy()
    scores[0, 3] = np.nan
    np.save(m, scores)
    want = cli_json(q, m, "--goal-names", gn, "--lemma-names", ln, "-m", "AP", "-m", "RR")
    # g1: a at 1, b below c (and the NaN): AP (1 + 2/3) / 2; g2: c at 1.
    assert want["summary"] == {"AP": ((1 + 2 / 3) / 2 + 1) / 2, "RR": 1.0}
    for names in ((gn, ln), (["g1", "g2"], ["a", "b", "c", "x"])):
        r = lemma_eval.evaluate(q, scores, ["AP", "RR"], goal_names=names[0], lemma_names=names[1])
        assert r.summary == want["summary"]
        assert lemma_eval.evaluate(q, m, ["AP", "RR"], goal_names=names[0],
                                   lemma_names=names[1]).summary == want["summary"]
    # A lemma name given to two columns: refused by both, naming both columns.
    dup = tmp_path / "dup"
    dup.write_text("a\na\nc\nx\n")
    import subprocess
    from conftest import BIN
    err = subprocess.run([BIN, "eval", q, m, "--goal-names", gn, "--lemma-names", dup],
                         capture_output=True, text=True).stderr
    assert "`a` names column 1 and column 2" in err
    with pytest.raises(ValueError, match="`a` names column 1 and column 2"):
        lemma_eval.evaluate(q, scores, ["AP"], goal_names=["g1", "g2"], lemma_names=["a", "a", "c", "x"])
    with pytest.raises(ValueError, match="`a` names column 1 and column 2"):
        lemma_eval.Session(q, ["AP"], lemma_names=["a", "a", "c", "x"])
    # Big-endian arrays and files: the same values.
    np.save(tmp_path / "be.npy", scores.astype(">f4"))
    be = cli_json(q, tmp_path / "be.npy", "--goal-names", gn, "--lemma-names", ln, "-m", "AP", "-m", "RR")
    assert be["summary"] == want["summary"]
    assert lemma_eval.evaluate(q, scores.astype(">f8"), ["AP", "RR"], goal_names=gn,
                               lemma_names=ln).summary == want["summary"]
    # A NaN in a judged column is an error in both.
    scores[0, 0] = np.nan
    with pytest.raises(ValueError, match="the score of lemma `a` is NaN"):
        lemma_eval.evaluate(q, scores, ["AP"], goal_names=gn, lemma_names=ln)


def test_session_values_and_summaries():
    s = lemma_eval.Session(TRUTH, ["AP", "RR"], lemma_names=LEMMAS)
    assert s.measures == ["AP", "RR"]
    # g1's row: a, c, x, b: AP (1 + 2/4) / 2, RR 1.
    assert s.push_scores(["g1"], SCORES[:1]) == [{"AP": 0.75, "RR": 1.0}]
    assert s.values == {"AP": 0.75, "RR": 1.0}
    # g2 not pushed yet: evaluated as empty in the summary so far.
    assert s.summary() == {"AP": 0.75 / 2, "RR": 0.5}
    assert s.counts["evaluated_empty"] == 1
    assert s.push("g2", {"c": 0.8, "a": 0.2}) == {"AP": 1.0, "RR": 1.0}
    assert s.push("zz", ["a"]) is None  # no actual set: skipped
    # A batch with a goal pushed before is refused whole; the session goes on unchanged.
    with pytest.raises(ValueError, match="pushed twice"):
        s.push_scores(["g2"], SCORES[1:])
    assert s.summary() == {"AP": (0.75 + 1) / 2, "RR": 1.0}
    # A goal pushed twice one at a time is refused; the session goes on unchanged.
    with pytest.raises(ValueError, match="pushed twice"):
        s.push("g1", ["a"])
    assert s.summary() == {"AP": (0.75 + 1) / 2, "RR": 1.0}
    assert s.counts["evaluated"] == 2


def test_a_relevant_lemma_outside_the_columns_is_named():
    """A row ranks every column: a relevant lemma that is none of them is named, and refused as
    by the command (the columns are the universe); the session goes on without the goal."""
    s = lemma_eval.Session({"g1": {"a": 1, "zz": 1}, "g2": {"b": 1}}, ["R@2"],
                           lemma_names=["a", "b", "c"])
    rows = np.array([[0.9, 0.1, 0.5], [0.2, 0.3, 0.4]], dtype=np.float32)
    with pytest.raises(ValueError, match=r"goal `g1`: relevant lemma `zz` is not among the 3 "
                                         r"lemmas of the matrix's columns \(1 of the goal's"):
        s.push_scores(["g1"], rows[:1])
    # g2's row ranks c b a: b second.
    assert s.push_scores(["g2"], rows[1:]) == [{"R@2": 1.0}]


def test_a_failed_push_leaves_the_session_as_it_was():
    s = lemma_eval.Session(TRUTH, ["AP", "RR"], lemma_names=LEMMAS, duplicates="error")
    before = (s.summary(), s.counts)
    with pytest.raises(ValueError, match="goal `g2`: lemma `c` appears twice"):
        s.push("g2", ["c", "a", "c"])
    with pytest.raises(ValueError, match="expected a finite score"):
        s.push("g2", {"c": float("nan"), "a": 0.2})
    assert (s.summary(), s.counts) == before
    # The goal pushed again, correctly: c first (relevant), AP 1 and RR 1 as in a fresh session.
    assert s.push("g2", ["c", "a"]) == {"AP": 1.0, "RR": 1.0}
    fresh = lemma_eval.Session(TRUTH, ["AP", "RR"], lemma_names=LEMMAS, duplicates="error")
    fresh.push("g2", ["c", "a"])
    assert (s.summary(), s.counts) == (fresh.summary(), fresh.counts)


def test_session_batches_refused_whole():
    s = lemma_eval.Session(TRUTH, ["AP"], lemma_names=LEMMAS)
    s.push("g2", ["c"])
    with pytest.raises(ValueError, match="goal `g2`: the goal was pushed twice"):
        s.push_scores(["g1", "g2"], SCORES)
    with pytest.raises(ValueError, match="shape"):
        s.push_scores(["g1"], SCORES)
    with pytest.raises(ValueError, match="2-D"):
        s.push_scores(["g1"], SCORES[0])
