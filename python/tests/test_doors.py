"""One engine behind every door, from Python: evaluate() on paths, on dicts (scored and ranked)
and on arrays, a Session fed goal by goal or in batches and merged across sessions in any
grouping, shards merged, and Ray give the command's values and counts, bit for bit, on generated
inputs with ties, graded judgments, goals missing on either side and the run's goals shuffled.
(crates/cli/tests/cli/doors.rs holds the Rust doors to the same values.)"""

import random
import warnings

import numpy as np
import pytest

import lemma_eval
from conftest import cli, cli_json, read_qrels, read_run, trec_ranked

MEASURES = ["AP", "P@5", "R@10", "RR", "nDCG@10", "Rprec", "Bpref", "NumRel", "Depth(recall=1.0)"]
DEPTH = "Depth(recall=1.0)"


@pytest.fixture(autouse=True)
def quiet():
    # These inputs have goals without an actual set on purpose.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lemma_eval.LemmaEvalWarning)
        yield


def blocks(path):
    out, last = [], None
    for line in path.read_text().splitlines(keepends=True):
        g = line.split()[0]
        if g != last:
            out.append([])
            last = g
        out[-1].append(line)
    return ["".join(b) for b in out]


@pytest.fixture(scope="module", params=[(7, False), (7, True), (19, True)])
def inputs(request, tmp_path_factory):
    """Qrels and a run: every 7th goal of the run dropped (goals the run never ranks), goals of the
    run without an actual set, and (shuffled) the run's goals in a seeded order."""
    seed, shuffled = request.param
    d = tmp_path_factory.mktemp("doors")
    q, g = d / "qrels", d / "gen.run"
    cli("gen", "--goals", "200", "--universe", "600", "--depth", "40", "--ties", "0.3",
        "--graded", "--empty-share", "0.15", "--unretrieved-share", "0.2", "--seed", str(seed),
        "--qrels", q, "--run", g)
    bs = [b for i, b in enumerate(blocks(g)) if i % 7 != 3]
    if shuffled:
        random.Random(seed).shuffle(bs)
    r = d / "run"
    r.write_text("".join(bs))
    want = cli_json(q, r, *sum((["-m", m] for m in MEASURES), []), "--per-goal")
    return q, r, want


def summary_of(want):
    s = dict(want["summary"])
    s[DEPTH] = s[DEPTH]["mean"]
    return s


def per_goal_of(want):
    return {row["goal"]: {k: v for k, v in row["values"].items() if v is not None}
            for row in want["per_goal"]}


def same(result, want, door):
    assert result.summary == summary_of(want), door
    assert result.counts == want["goals"], door
    if result.per_goal is not None:
        assert result.per_goal == per_goal_of(want), door


def test_evaluate_on_paths_dicts_and_shards(inputs):
    q, r, want = inputs
    got = lemma_eval.evaluate(q, r, MEASURES, per_goal=True)
    same(got, want, "paths")
    assert got.actual_read["kind"] == "joined"
    same(lemma_eval.evaluate(q, r, MEASURES, per_goal=True, hold_actual=True), want, "held")
    qrels, run = read_qrels(q), read_run(r)
    same(lemma_eval.evaluate(qrels, run, MEASURES, per_goal=True), want, "scored dicts")
    same(lemma_eval.evaluate(qrels, trec_ranked(run), MEASURES, per_goal=True), want, "ranked")
    parts = [lemma_eval.evaluate(q, r, MEASURES, shard=(i, 5)) for i in (3, 1, 5, 2, 4)]
    same(lemma_eval.merge(parts, keys=MEASURES), want, "shards")


def test_sessions_in_any_batching_and_grouping(inputs):
    q, r, want = inputs
    run = read_run(r)
    goals = list(run)
    # Goal by goal: each goal's values at once.
    s = lemma_eval.Session(q, MEASURES, per_goal=True)
    pg = per_goal_of(want)
    for g in goals:
        v = s.push(g, run[g])
        assert v == pg.get(g), g
        assert s.values == v
    same(s.result(), want, "session")
    # Several sessions, each a random part of the goals, merged in a random grouping: by
    # merge() of sessions and by their summary_bytes().
    rng = random.Random(len(goals))
    for k in (2, 5):
        first = lemma_eval.Session(q, MEASURES)
        sessions = [first] + [first.fork() for _ in range(k - 1)]
        for g in goals:
            rng.choice(sessions).push(g, run[g])
        blobs = [x.summary_bytes() for x in sessions]
        rng.shuffle(blobs)
        same(lemma_eval.merge(blobs, keys=MEASURES), want, f"{k} sessions' bytes")
        order = sessions[1:]
        rng.shuffle(order)
        for x in order:
            first.merge(x)
        assert first.summary() == summary_of(want)
        same(first.result(), want, f"{k} sessions merged")


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """A dense matrix (120 goals x 900 lemmas, ties) and the command's values on it."""
    d = tmp_path_factory.mktemp("matrix")
    q, m, gn, ln = d / "qrels", d / "m.npy", d / "goals", d / "lemmas"
    cli("gen", "--format", "npy", "--goals", "120", "--universe", "900", "--graded",
        "--ties", "0.2", "--empty-share", "0.1", "--seed", "8", "--qrels", q, "--run", m,
        "--goal-names", gn, "--lemma-names", ln)
    want = cli_json(q, m, "--goal-names", gn, "--lemma-names", ln,
                    *sum((["-m", x] for x in MEASURES), []), "--per-goal")
    return q, m, gn, ln, want


def test_arrays_and_batches_of_rows_equal_the_matrix_file(matrix):
    q, m, gn, ln, want = matrix
    goals = gn.read_text().split()
    lemmas = ln.read_text().split()
    a = np.load(m)
    same(lemma_eval.evaluate(q, m, MEASURES, goal_names=gn, lemma_names=ln, per_goal=True),
         want, "npy path")
    for arr in (a, a.astype(np.float64), a.astype(">f4"), np.asfortranarray(a)):
        same(lemma_eval.evaluate(q, arr, MEASURES, goal_names=goals, lemma_names=lemmas,
                                 per_goal=True), want, f"array {arr.dtype}")
    pg = per_goal_of(want)
    rng = random.Random(3)
    for trial in range(3):
        s = lemma_eval.Session(q, MEASURES, lemma_names=lemmas, per_goal=True)
        order = list(range(len(goals)))
        rng.shuffle(order)
        at = 0
        while at < len(order):
            n = rng.randint(1, 17)
            rows = order[at:at + n]
            got = s.push_scores([goals[i] for i in rows], a[rows])
            for i, v in zip(rows, got):
                assert v == pg.get(goals[i]), goals[i]
            at += n
        same(s.result(), want, f"push_scores trial {trial}")


def test_ray_equals_the_command(inputs):
    ray = pytest.importorskip("ray")
    import lemma_eval.ray

    q, r, want = inputs
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        got = lemma_eval.ray.evaluate(q, r, MEASURES, num_shards=3, progress=False)
    finally:
        ray.shutdown()
    same(got, want, "ray")


def test_strata_equal_the_command(inputs, tmp_path):
    q, r, _ = inputs
    rows = [line.split() for line in q.read_text().splitlines() if line.strip()]
    lemmas = sorted({f[2] for f in rows})
    train = tmp_path / "train.txt"
    train.write_text("".join(f"{x}\n" for x in lemmas[::2]))
    goal_names = list(dict.fromkeys(f[0] for f in rows))
    goals = tmp_path / "goals.jsonl"
    goals.write_text("".join(
        f'{{"goal_id": "{g}", "file_path": "F{i % 3}.lean"}}\n'
        for i, g in enumerate(goal_names) if i % 12 != 5))
    by = ["gold-size", "novelty", "file"]
    flags = sum((["--by", k] for k in by), []) + ["--train-premises", str(train), "--goals", str(goals)]
    want = cli_json(q, r, *sum((["-m", m] for m in MEASURES), []), *flags)
    got = lemma_eval.evaluate(q, r, MEASURES, by=by, train_premises=train, goals=goals)
    assert got.summary == summary_of(want)
    assert list(got.strata) == [s["stratum"] for s in want["strata"]]
    assert "novelty=novel" in got.strata and "file=F0.lean" in got.strata
    for s in want["strata"]:
        mine = got.strata[s["stratum"]]
        assert mine["summary"] == summary_of(s), s["stratum"]
        assert mine["counts"] == s["goals"], s["stratum"]
