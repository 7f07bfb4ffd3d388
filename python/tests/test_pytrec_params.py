"""lemma_eval.RelevanceEvaluator with trec_eval's parameter forms (against pytrec_eval where it
takes them), and with judgment groups (``relevance_format="qrels_jg"``, against the command)."""

import math

import pytest
import pytrec_eval

import lemma_eval
from conftest import cli, read_qrels, read_run


@pytest.fixture(scope="module", params=[4, 5])
def generated(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"p{request.param}")
    q, r = d / "qrels", d / "run"
    cli("gen", "--goals", "120", "--universe", "1500", "--depth", "80", "--ties", "0.4",
        "--graded", "--empty-share", "0.1", "--unretrieved-share", "0.3",
        "--seed", str(request.param), "--qrels", q, "--run", r)
    return read_qrels(q), read_run(r)


@pytest.mark.parametrize(
    "ms",
    [
        {"P.5,7,3"},
        {"recall.20,2000"},
        {"Rprec_mult.5.0,0.2,0.35"},
        {"ndcg_cut.10,20,23.4"},
        {"success.2,5,20"},
        {"iprec_at_recall.0.25,0.75"},
        {"11pt_avg.0.25"},
        {"11pt_avg.0.5,0.25"},
        {"11pt_avg.0.25", "11pt_avg.0.75", "map"},
        {"11pt_avg.0.2,0.5,0.8", "ndcg_cut.5,23.4", "P.3"},
    ],
)
def test_parameter_forms_equal_pytrec_eval(generated, ms):
    """Each value to the bit; pytrec_eval names 11pt_avg without its levels, and hands them to
    trec_eval sorted (``11pt_avg.0.5,0.25`` is ``11pt_avg.0.25,0.5``, where trec_eval's command
    line reads them in the order given)."""
    qrels, run = generated
    want = pytrec_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    got = lemma_eval.RelevanceEvaluator(qrels, ms).evaluate(run)
    assert got == want


def test_custom_gains_by_hand():
    """pytrec_eval aborts on custom gains (`ndcg.1=3`); the value is trec_eval's: grades a 2,
    b 0, c 1, d 3, ranking b a x c, gains 1 -> 3 and 2 -> 9 (3 -> 3): DCG 9/log2(3) +
    3/log2(5), ideal 9 + 3/log2(3) + 3/log2(4)."""
    qrels = {"g1": {"a": 2, "b": 0, "c": 1, "d": 3}}
    run = {"g1": {"b": 0.9, "a": 0.8, "x": 0.7, "c": 0.6}}
    got = lemma_eval.RelevanceEvaluator(qrels, {"ndcg.1=3,2=9"}).evaluate(run)
    dcg = 9 / math.log2(3) + 3 / math.log2(5)
    ideal = 9 + 3 / math.log2(3) + 3 / math.log2(4)
    assert got == {"g1": {"ndcg_1=3,2=9": pytest.approx(dcg / ideal, abs=1e-15)}}
    # The gains each grade has without parameters: ndcg itself.
    same = lemma_eval.RelevanceEvaluator(qrels, {"ndcg.1=1,2=2", "map"}).evaluate(run)
    plain = lemma_eval.RelevanceEvaluator(qrels, {"ndcg", "map"}).evaluate(run)
    assert same["g1"]["ndcg_1=1,2=2"] == plain["g1"]["ndcg"]
    with pytest.raises(ValueError, match="malformed pair"):
        lemma_eval.RelevanceEvaluator(qrels, {"ndcg.1=3,2"})


# g1 has groups a (d1, d3 relevant; d5 not) and b (d2, d6 relevant; d4 not); g2 group a alone.
JG = {
    "g1": {"a": {"d1": 1, "d3": 1, "d5": 0}, "b": {"d2": 1, "d4": 0, "d6": 1}},
    "g2": {"a": {"d1": 1}},
}
RUN = {
    "g1": {"d1": 0.9, "d2": 0.8, "d3": 0.7, "d4": 0.6, "d5": 0.5},
    "g2": {"d1": 0.9, "d9": 0.8},
    "g3": {"d1": 0.9},
}


def test_judgment_groups_by_hand():
    got = lemma_eval.RelevanceEvaluator(
        JG, {"map_avgjg", "P_avgjg.2,5", "Rprec_mult_avgjg.2.0"}, relevance_format="qrels_jg"
    ).evaluate(RUN)
    # g1: AP (1 + 2/3)/2 in group a, (1/2)/2 in b; P@5 2/5 and 1/5; Rprec_mult 2.0 at rank 4:
    # 2/4 and 1/4. g2: AP 1, P@5 1/5, rank 2: 1/2. g3 has no judgments: no goal.
    ap_a, ap_b = (1 + 2 / 3) / 2, 0.5 / 2
    assert got == {
        "g1": {
            "map_avgjg": (ap_a + ap_b) / 2,
            "P_avgjg_2": 0.5,
            "P_avgjg_5": (2 / 5 + 1 / 5) / 2,
            "Rprec_mult_avgjg_2.00": (2 / 4 + 1 / 4) / 2,
        },
        "g2": {"map_avgjg": 1.0, "P_avgjg_2": 0.5, "P_avgjg_5": 0.2,
               "Rprec_mult_avgjg_2.00": 0.5},
    }


def test_judgment_groups_equal_the_command(generated, tmp_path):
    """Judgments split into up to three groups per goal; every per-goal value as
    ``lemma-eval trec_eval --trec-version 9 -q -R qrels_jg -m qrels_jg`` prints it."""
    qrels, run = generated
    jg: dict = {}
    for i, (goal, docs) in enumerate(sorted(qrels.items())):
        for j, (doc, grade) in enumerate(sorted(docs.items())):
            jg.setdefault(goal, {}).setdefault("abc"[(i * j + j) % (1 + i % 3)], {})[doc] = grade
    q, r = tmp_path / "jg", tmp_path / "run"
    q.write_text("".join(
        f"{g} {group} {d} {v}\n" for g, per in jg.items() for group, docs in per.items()
        for d, v in docs.items()
    ))
    r.write_text("".join(
        f"{g} Q0 {d} 0 {s!r} t\n" for g, docs in run.items() for d, s in docs.items()
    ))
    printed: dict = {}
    for line in cli("trec_eval", "--trec-version", "9", "-q", "-R", "qrels_jg", "-m",
                    "qrels_jg", q, r).splitlines():
        name, goal, value = (f.strip() for f in line.split("\t"))
        if goal != "all":
            printed.setdefault(goal, {})[name] = value
    got = lemma_eval.RelevanceEvaluator(jg, {"qrels_jg"}, relevance_format="qrels_jg").evaluate(run)
    assert set(got) == set(printed)
    for goal, per in printed.items():
        assert {n: f"{got[goal][n]:.4f}" for n in per} == per, goal
    assert {"runid", "num_q"} <= set(next(iter(got.values())))


def test_judgment_group_measures_need_their_format():
    with pytest.raises(ValueError, match="relevance_format='qrels_jg'"):
        lemma_eval.RelevanceEvaluator({"q": {"d": 1}}, {"map_avgjg"})
    with pytest.raises(ValueError, match="reads ordinary judgments"):
        lemma_eval.RelevanceEvaluator(JG, {"map"}, relevance_format="qrels_jg")
    with pytest.raises(ValueError, match="relevance_format must be"):
        lemma_eval.RelevanceEvaluator(JG, {"map"}, relevance_format="prefs")
