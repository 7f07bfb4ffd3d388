"""The rest of pytrec_eval's module in lemma_eval: ``supported_measures``, ``supported_nicknames``,
``parse_qrel``, ``parse_run``, ``compute_aggregated_measure``, nicknames and the empty measure set
in ``RelevanceEvaluator``; each against pytrec_eval-terrier (trec_eval 9.0.8) or hand-computed
values."""

import io
import math
import random
import sys

import pytest
import pytrec_eval

import lemma_eval
from conftest import cli, read_qrels, read_run

QRELS = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}}
RUN = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {"d1": 1.0, "d2": 2.0, "d3": 0.5}}


@pytest.fixture(scope="module", params=[4, 5])
def generated(request, tmp_path_factory):
    """Generated qrels and run with ties, graded and negative judgments, goals without judgments,
    without predictions, and with only an empty judgment set."""
    d = tmp_path_factory.mktemp(f"api{request.param}")
    q, r = d / "qrels", d / "run"
    cli("gen", "--goals", "80", "--universe", "800", "--depth", "60", "--ties", "0.4",
        "--graded", "--empty-share", "0.1", "--unretrieved-share", "0.3",
        "--seed", str(request.param), "--qrels", q, "--run", r)
    qrels, run = read_qrels(q), read_run(r)
    rng = random.Random(request.param)
    for goal in list(qrels)[::7]:
        for lemma in list(qrels[goal])[::2]:
            qrels[goal][lemma] = -1
    run["only-in-run"] = {"a": 1.0, "b": 2.0}
    qrels["judged-empty"] = {}
    run["judged-empty"] = {"a": 1.0}
    goals = list(run)
    rng.shuffle(goals)
    return qrels, {g: run[g] for g in goals}


def test_the_module_names_pytrec_eval_has():
    for name in ["supported_measures", "supported_nicknames", "parse_qrel", "parse_run",
                 "compute_aggregated_measure", "RelevanceEvaluator"]:
        assert hasattr(pytrec_eval, name), name
        assert name in lemma_eval.__all__, name


def test_supported_measures_are_pytrec_evals_names_that_lemma_eval_computes():
    assert lemma_eval.supported_measures <= set(pytrec_eval.supported_measures)
    assert {"runid", "num_q", "map", "gm_map", "P", "ndcg_cut", "set_F", "success"} <= (
        lemma_eval.supported_measures
    )
    # Not computed: refused by name, not silently dropped.
    missing = set(pytrec_eval.supported_measures) - lemma_eval.supported_measures
    for name in missing:
        with pytest.raises(ValueError):
            lemma_eval.RelevanceEvaluator(QRELS, {name})


def test_every_supported_measure_equals_pytrec_eval(generated):
    qrels, run = generated
    ms = set(lemma_eval.supported_measures)
    want = pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    got = lemma_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    assert got == want
    assert "only-in-run" not in got and "judged-empty" not in got
    assert len(next(iter(got.values()))) > 60


@pytest.mark.parametrize("nickname", ["official", "set", "all_trec"])
def test_nicknames_give_pytrec_evals_values(generated, nickname):
    """A nickname gives the measures of pytrec_eval's that lemma-eval computes, with its values;
    ``official`` is computed whole."""
    qrels, run = generated
    assert lemma_eval.supported_nicknames[nickname] == (
        set(pytrec_eval.supported_nicknames[nickname]) & lemma_eval.supported_measures
    )
    want = pytrec_eval.RelevanceEvaluator(qrels, {nickname}).evaluate(run)
    got = lemma_eval.RelevanceEvaluator(qrels, {nickname}).evaluate(run)
    assert set(got) == set(want)
    for goal in want:
        for name, value in got[goal].items():
            assert want[goal][name] == value, (goal, name)
        lacking = {n for n in want[goal] if n not in got[goal]}
        assert {n.split("_")[0] for n in lacking} <= {
            m.split("_")[0] for m in set(pytrec_eval.supported_measures)
            - lemma_eval.supported_measures
        }, lacking
        if nickname == "official":
            assert got[goal] == want[goal]


def test_nickname_beside_parameters(generated):
    qrels, run = generated
    ms = {"official", "P_7", "ndcg_cut.3"}
    want = pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    got = lemma_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    assert got == want
    assert "P_7" in next(iter(got.values())) and "P_5" not in next(iter(got.values()))


@pytest.mark.parametrize("empty", [set(), [], (), frozenset()])
def test_an_empty_measure_set_gives_an_empty_dict_per_goal(generated, empty):
    qrels, run = generated
    want = pytrec_eval.RelevanceEvaluator(qrels, empty).evaluate(run)
    got = lemma_eval.RelevanceEvaluator(qrels, empty).evaluate(run)
    assert got == want
    assert got and all(v == {} for v in got.values())
    assert lemma_eval.RelevanceEvaluator(QRELS, empty).evaluate(RUN) == {"q1": {}, "q2": {}}


def test_an_empty_run_gives_an_empty_dict():
    for ms in [{"map"}, set()]:
        assert pytrec_eval.RelevanceEvaluator(QRELS, ms).evaluate({}) == {}
        assert lemma_eval.RelevanceEvaluator(QRELS, ms).evaluate({}) == {}


@pytest.mark.parametrize("ms", [{"map", "ndcg"}, set(), {}])
def test_qrels_without_a_judged_goal_give_no_goal(ms):
    """No qrels, or only goals with no judgment: pytrec_eval evaluates any run to ``{}``."""
    for qrels in [{}, {"q1": {}}]:
        for run in [RUN, {}]:
            want = pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
            assert want == {}
            assert lemma_eval.RelevanceEvaluator(qrels, ms).evaluate(run) == want


def test_runid_alone():
    """runid is no number: pytrec_eval reports whatever its slot holds (0, or uninitialised
    memory when it is the only measure); lemma_eval reports 0, for the same goals."""
    want = pytrec_eval.RelevanceEvaluator(QRELS, {"runid"}).evaluate(RUN)
    got = lemma_eval.RelevanceEvaluator(QRELS, {"runid"}).evaluate(RUN)
    assert {g: set(v) for g, v in got.items()} == {g: set(v) for g, v in want.items()}
    assert got == {"q1": {"runid": 0.0}, "q2": {"runid": 0.0}}


def test_hand_computed_values():
    """q1 ranks d3, d1, d2 (d2 relevant at 3); q2 ranks d2, d1, d3 (relevant at 1 and 3)."""
    got = lemma_eval.RelevanceEvaluator(QRELS, {"map", "recip_rank", "P_5", "num_rel_ret"}).evaluate(
        RUN
    )
    assert got["q1"] == {"map": 1 / 3, "recip_rank": 1 / 3, "P_5": 0.2, "num_rel_ret": 1.0}
    assert got["q2"]["map"] == pytest.approx(5 / 6, abs=1e-15)
    assert got["q2"]["recip_rank"] == 1.0
    assert got["q2"]["P_5"] == 0.4
    want = pytrec_eval.RelevanceEvaluator(
        QRELS, {"map", "recip_rank", "P_5", "num_rel_ret"}
    ).evaluate(RUN)
    assert got == want


QREL_TEXT = "q1 0 d1 0\nq1 0 d2 1\n  q2 0 d9 -1 \nq2 0 d3 2\nq1 0 d7 3\n"
RUN_TEXT = "q1 Q0 d3 1 1.5 r\nq1 Q0 d1 2 1e-3 r\n\tq2 Q0 d2 1 -2 r\nq2 Q0 d1 7 0.5 tag\n"


def test_parse_qrel_and_parse_run_read_as_pytrec_eval():
    qrel = lemma_eval.parse_qrel(io.StringIO(QREL_TEXT))
    run = lemma_eval.parse_run(io.StringIO(RUN_TEXT))
    assert qrel == {"q1": {"d1": 0, "d2": 1, "d7": 3}, "q2": {"d9": -1, "d3": 2}}
    assert run == {"q1": {"d3": 1.5, "d1": 0.001}, "q2": {"d2": -2.0, "d1": 0.5}}
    assert qrel == pytrec_eval.parse_qrel(io.StringIO(QREL_TEXT))
    assert run == pytrec_eval.parse_run(io.StringIO(RUN_TEXT))
    assert type(qrel["q1"]["d1"]) is int and type(run["q1"]["d3"]) is float
    # defaultdicts, as pytrec_eval's: a goal not read is an empty dict.
    assert qrel["nope"] == {} and run["nope"] == {}


def test_parse_from_a_file_and_evaluate(tmp_path):
    (tmp_path / "q").write_text(QREL_TEXT)
    (tmp_path / "r").write_text(RUN_TEXT)
    with open(tmp_path / "q") as fq, open(tmp_path / "r") as fr:
        qrel, run = lemma_eval.parse_qrel(fq), lemma_eval.parse_run(fr)
    got = lemma_eval.RelevanceEvaluator(qrel, {"map", "ndcg"}).evaluate(run)
    assert got == pytrec_eval.RelevanceEvaluator(qrel, {"map", "ndcg"}).evaluate(run)


@pytest.mark.parametrize(
    "parse,text",
    [
        (lemma_eval.parse_qrel, "q 0 d 1\nq 0 d 0\n"),
        (lemma_eval.parse_run, "q Q0 d 1 1 r\nq Q0 d 2 0.5 r\n"),
    ],
)
def test_a_lemma_twice_is_an_assertion_error(parse, text):
    with pytest.raises(AssertionError):
        parse(io.StringIO(text))


@pytest.mark.parametrize(
    "parse,text",
    [(lemma_eval.parse_qrel, "q 0 d\n"), (lemma_eval.parse_run, "q Q0 d 1 1\n")],
)
def test_a_short_line_is_an_error(parse, text):
    with pytest.raises(ValueError):
        parse(io.StringIO(text))


def _values(rng, n, kind):
    if kind == "int":
        return [rng.randrange(0, 1000) for _ in range(n)]
    return [rng.random() * 10 ** rng.randint(-6, 1) * rng.choice([-1, 1]) for _ in range(n)]


CASES = [
    (measure, n, kind, seed)
    for seed, n in enumerate([1, 2, 3, 7, 8, 9, 16, 17, 100, 128, 129, 130, 257, 1000, 4099])
    for measure, kind in [("map", "float"), ("gm_map", "float"), ("gm_bpref", "float"),
                          ("num_ret", "int"), ("num_rel", "float"), ("P_5", "float")]
]


@pytest.mark.parametrize("measure,n,kind,seed", CASES)
def test_compute_aggregated_measure_bitwise(measure, n, kind, seed, monkeypatch):
    vals = _values(random.Random(seed * 31 + len(measure)), n, kind)
    want = pytrec_eval.compute_aggregated_measure(measure, vals)
    got = lemma_eval.compute_aggregated_measure(measure, vals)
    assert type(got) is float
    assert got == want, (got, want)
    # The same bits without NumPy: the same pairwise sum; gm_'s exp is Python's (NumPy's own exp,
    # chosen by the CPU's vector extensions, is not correctly rounded: within one ulp of it).
    monkeypatch.setitem(sys.modules, "numpy", None)
    plain = lemma_eval.compute_aggregated_measure(measure, vals)
    if measure.startswith("gm_"):
        assert abs(plain - want) <= math.ulp(want), (plain, want)
    else:
        assert plain == want, (plain, want)


def test_compute_aggregated_measure_by_hand(monkeypatch):
    for numpy_hidden in [False, True]:
        if numpy_hidden:
            monkeypatch.setitem(sys.modules, "numpy", None)
        agg = lemma_eval.compute_aggregated_measure
        assert agg("num_q", [1, 1, 1]) == 3.0
        assert agg("map", [0.25, 0.75]) == 0.5
        assert agg("gm_map", [math.log(0.25), math.log(1.0)]) == pytest.approx(0.5, rel=1e-15)
        assert agg("map", iter([1.0, 0.0])) == 0.5


def test_aggregates_of_an_evaluation_equal_pytrec_evals(generated):
    qrels, run = generated
    ms = {"map", "gm_map", "num_ret", "ndcg_cut_10"}
    got = lemma_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    want = pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    for m in ["map", "gm_map", "num_ret", "ndcg_cut_10"]:
        a = lemma_eval.compute_aggregated_measure(m, [v[m] for v in got.values()])
        b = pytrec_eval.compute_aggregated_measure(m, [v[m] for v in want.values()])
        assert a == b, m


def test_utility_with_coefficients_from_the_counts(generated):
    """pytrec_eval cannot pass utility's coefficients (its name reading keeps one number, and
    trec_eval then refuses the count): checked against its counts instead, per goal."""
    qrels, run = generated
    counts = pytrec_eval.RelevanceEvaluator(qrels, {"num_ret", "num_rel", "num_rel_ret"}).evaluate(
        run
    )
    got = lemma_eval.RelevanceEvaluator(qrels, {"utility.2,-1,0.5,0.25"}).evaluate(run)
    assert set(got) == set(counts)
    for goal, c in counts.items():
        n, r, s = c["num_ret"], c["num_rel"], c["num_rel_ret"]
        want = 2 * s + -1 * (n - s) + 0.5 * (r - s) + 0.25 * (s - n - r)
        assert got[goal] == {"utility": want}, goal


def test_new_set_measures_by_hand():
    """q1: n = 3, R = 1, s = 1; q2: n = 3, R = 2, s = 2 (d1 unjudged)."""
    ms = {"set_map", "set_relative_P", "num_nonrel_judged_ret", "utility", "gm_bpref"}
    got = lemma_eval.RelevanceEvaluator(QRELS, ms).evaluate(RUN)
    assert got["q1"]["set_map"] == 1 / 3 and got["q2"]["set_map"] == 4 / 6
    assert got["q1"]["set_relative_P"] == 1.0 and got["q2"]["set_relative_P"] == 1.0
    assert got["q1"]["num_nonrel_judged_ret"] == 2.0 and got["q2"]["num_nonrel_judged_ret"] == 0.0
    assert got["q1"]["utility"] == -1.0 and got["q2"]["utility"] == 1.0
    # q1: d2 below two judged non-relevant (N = 2, R = 1): 1 - 1/1 = 0, floored at 1e-5.
    assert got["q1"]["gm_bpref"] == math.log(1e-5) and got["q2"]["gm_bpref"] == 0.0
    assert got == pytrec_eval.RelevanceEvaluator(QRELS, ms).evaluate(RUN)


def test_judged_docs_only_flag_equals_pytrec_eval(generated):
    """pytrec_eval's ``judged_docs_only_flag`` (trec_eval's -J): only the judged lemmas are
    ranked; every measure both compute, bit for bit, except where a goal is left with no judged
    lemma and trec_eval divides 0 by 0 (``iprec_at_recall``, ``11pt_avg``): lemma-eval gives 0
    there (docs/METRICS.md §8.3)."""
    qrels, run = generated
    ms = set(lemma_eval.supported_measures)
    want = pytrec_eval.RelevanceEvaluator(qrels, ms, judged_docs_only_flag=True).evaluate(run)
    got = lemma_eval.RelevanceEvaluator(qrels, ms, judged_docs_only_flag=True).evaluate(run)
    assert set(got) == set(want)
    for goal, values in want.items():
        assert set(got[goal]) == set(values), goal
        for name, v in values.items():
            if math.isnan(v):
                assert got[goal][name] == 0.0 and got[goal]["num_ret"] == 0.0, (goal, name)
            else:
                assert got[goal][name] == v, (goal, name, got[goal][name], v)
    plain = lemma_eval.RelevanceEvaluator(qrels, {"num_ret"}).evaluate(run)
    assert any(got[g]["num_ret"] < plain[g]["num_ret"] for g in got)
