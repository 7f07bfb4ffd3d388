"""lemma_eval.RelevanceEvaluator against pytrec_eval's own (trec_eval 9.0.8) on generated runs with
ties, graded truth and goals on one side only: the same goals, measures and values."""

import math

import pytest
import pytrec_eval

import lemma_eval
from conftest import cli, read_qrels, read_run

# Every trec_eval measure both pytrec_eval and lemma-eval compute.
MEASURES = [
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall", "11pt_avg", "ndcg", "ndcg_cut", "map_cut", "relative_P",
    "success", "set_P", "set_recall", "set_F", "gm_bpref", "utility", "set_relative_P", "set_map",
    "num_nonrel_judged_ret", "infAP", "Rprec_mult", "binG", "G", "ndcg_rel", "Rndcg", "relstring",
]


@pytest.fixture(scope="module", params=[1, 2, 3])
def generated(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"g{request.param}")
    q, r = d / "qrels", d / "run"
    cli("gen", "--goals", "150", "--universe", "2000", "--depth", "100", "--ties", "0.4",
        "--graded", "--empty-share", "0.1", "--unretrieved-share", "0.3",
        "--seed", str(request.param), "--qrels", q, "--run", r)
    qrels, run = read_qrels(q), read_run(r)
    # Goals only in the run, and scores that tie only once rounded to f32.
    run["only-in-run"] = {"a": 1.0, "b": 2.0}
    run[next(iter(run))]["f32-tie"] = 0.1 + 1e-12
    return qrels, run


@pytest.mark.parametrize("level", [1, 2])
def test_values_equal_pytrec_eval(generated, level):
    qrels, run = generated
    want = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES), relevance_level=level).evaluate(run)
    got = lemma_eval.RelevanceEvaluator(qrels, set(MEASURES), relevance_level=level).evaluate(run)
    assert set(got) == set(want)
    for goal in want:
        assert set(got[goal]) == set(want[goal]), goal
        for name, value in want[goal].items():
            assert got[goal][name] == value, (goal, name, got[goal][name], value)


def test_parameterised_names(generated):
    qrels, run = generated
    ms = {"P.3,7", "ndcg_cut.5", "map", "recip_rank"}
    want = pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    got = lemma_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    assert got == want
    assert set(next(iter(got.values()))) == {"P_3", "P_7", "ndcg_cut_5", "map", "recip_rank"}


@pytest.mark.parametrize(
    "ms",
    [
        {"P.5", "P.10"},
        {"ndcg_cut.5", "ndcg_cut.10", "map_cut.3"},
        {"P.5,10", "P.20", "map_cut.5", "map_cut.10"},
        {"P", "P.7", "recall", "recall.5"},
    ],
)
def test_one_measure_given_in_several_elements(generated, ms):
    """pytrec_eval takes the parameters of one measure across the set's elements together
    ({"P.5", "P.10"} gives P_5 and P_10); trec_eval's command line would keep only one."""
    qrels, run = generated
    want = pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    got = lemma_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    assert got == want
    assert {"P_5", "P_10"} <= set(next(iter(got.values()))) or "P.5" not in ms


def test_bad_measure():
    with pytest.raises(ValueError, match="illegal measure"):
        lemma_eval.RelevanceEvaluator({"q": {"d": 1}}, {"no_such_measure"})


def test_gm_map_is_the_log_of_ap():
    got = lemma_eval.RelevanceEvaluator({"q": {"a": 1, "b": 1}}, {"map", "gm_map"}).evaluate(
        {"q": {"a": 2.0, "x": 3.0, "y": 1.0}}
    )
    assert got["q"]["map"] == 0.25
    assert got["q"]["gm_map"] == math.log(0.25)


def test_goals_named_with_a_hash_and_read_only_inner_mappings():
    """A goal whose name starts with `#` is a goal (in qrels text it would be a comment line), and
    the grades of an inner mapping that is not a dict count: both as pytrec_eval gives them."""
    from types import MappingProxyType

    qrels = {"#q": {"a": 1}, "r": {"b": 1}}
    run = {"#q": {"a": 1.0}, "r": {"x": 1.0, "b": 0.5}}
    want = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    assert want == {"#q": {"map": 1.0}, "r": {"map": 0.5}}
    assert lemma_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run) == want
    # a (grade 0) at 1, c (-1) at 2, b (2) at 3: one relevant lemma, found at rank 3.
    graded = {"q": MappingProxyType({"a": 0, "b": 2, "c": -1})}
    got = lemma_eval.RelevanceEvaluator(graded, {"map", "num_rel"}).evaluate(
        {"q": {"a": 0.9, "b": 0.5, "c": 0.7}}
    )
    assert got == {"q": {"map": pytest.approx(1 / 3, abs=1e-15), "num_rel": 1.0}}


def test_underscore_names_and_set_f_as_pytrec_eval_gives_them():
    """pytrec_eval also takes ``base_params`` (``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``)
    and reports ``set_F.x`` as ``set_F``; its value for beta² = 0.5 is trec_eval's to the bit
    (P = 2/3, R = 1: 0.75, where beta² one ulp off gave 0.7499999999999999)."""
    qrels = {"q": {"a": 1, "b": 1}, "r": {"c": 2, "d": 0}}
    run = {"q": {"a": 0.9, "x": 0.8, "b": 0.7}, "r": {"d": 0.5, "c": 0.4, "y": 0.3}}
    for ms in [
        {"P_5", "ndcg_cut_10", "recall_10", "map_cut_3", "success_1", "iprec_at_recall_0.10"},
        {"P_5,10", "map"},
        {"set_F.0.5"},
        {"set_F.2"},
        {"set_F.1"},
    ]:
        want = pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
        got = lemma_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
        assert got == want, ms
    assert lemma_eval.RelevanceEvaluator(qrels, {"set_F.0.5"}).evaluate(run)["q"] == {"set_F": 0.75}
    with pytest.raises(ValueError, match="illegal measure"):
        lemma_eval.RelevanceEvaluator(qrels, {"Q_5"})
