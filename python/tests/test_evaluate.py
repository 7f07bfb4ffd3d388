"""Every way into lemma_eval.evaluate gives the command's values, bit for bit."""

import numpy as np
import pytest

import lemma_eval
from conftest import cli, cli_json, read_qrels, read_run, trec_ranked

MEASURES = ["AP", "P@5", "R@10", "RR", "nDCG@10", "Rprec", "P@20"]


def test_worked_example():
    # x a y b c z against {a, b, c}: AP = (1/2 + 2/4 + 3/5) / 3, P@2 = 1/2, RR = 1/2.
    r = lemma_eval.evaluate(
        {"g": ["a", "b", "c"]}, {"g": ["x", "a", "y", "b", "c", "z"]}, ["AP", "P@2", "RR"]
    )
    assert r.summary == {"AP": (1 / 2 + 2 / 4 + 3 / 5) / 3, "P@2": 0.5, "RR": 0.5}
    assert r.counts["evaluated"] == 1
    # Scored pairs ranked by score: c, a, then x and b tied at 0.5 (trec_eval: name descending,
    # so x before b).
    r = lemma_eval.evaluate(
        {"g": {"a": 1, "b": 1, "c": 1}},
        {"g": {"a": 0.8, "b": 0.5, "c": 0.9, "x": 0.5}},
        ["P@2", "RR", "P@3"],
    )
    assert r.summary == {"P@2": 1.0, "RR": 1.0, "P@3": 2 / 3}


def test_paths_equal_the_command(workload):
    q, r = workload
    want = cli_json(q, r, "--per-goal", *sum((["-m", m] for m in MEASURES), []))
    got = lemma_eval.evaluate(q, str(r), MEASURES, per_goal=True)
    assert got.summary == want["summary"]
    assert got.per_goal == {row["goal"]: row["values"] for row in want["per_goal"]}
    assert got.counts["evaluated"] == want["goals"]["evaluated"]
    assert got.counts["evaluated_empty"] == want["goals"]["evaluated_empty"]


def test_default_measures_equal_the_command(workload):
    q, r = workload
    want = cli_json(q, r)
    got = lemma_eval.evaluate(q, r)
    # A Depth measure's value is its mean (the command's JSON also gives its median and reach).
    assert got.summary == {
        k: v["mean"] if isinstance(v, dict) else v for k, v in want["summary"].items()
    }
    assert isinstance(want["summary"]["Depth(recall=1.0)"], dict)


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_dicts_equal_the_command(workload, missing):
    q, r = workload
    want = cli_json(q, r, "--missing", missing, *sum((["-m", m] for m in MEASURES), []))
    qrels, run = read_qrels(q), read_run(r)
    got = lemma_eval.evaluate(qrels, run, MEASURES, missing=missing)
    assert got.summary == want["summary"]
    got = lemma_eval.evaluate(qrels, trec_ranked(run), MEASURES, missing=missing)
    assert got.summary == want["summary"]


def test_name_lists_as_actual_sets(tmp_path, workload):
    q, r = workload
    qrels = read_qrels(q)
    binary = {g: [l for l, grade in ls.items() if grade >= 1] for g, ls in qrels.items()}
    q1 = tmp_path / "binary.qrels"
    q1.write_text("".join(f"{g} 0 {l} 1\n" for g, ls in binary.items() for l in ls))
    want = cli_json(q1, r, *sum((["-m", m] for m in ["AP", "P@5", "RR"]), []))
    got = lemma_eval.evaluate(binary, read_run(r), ["AP", "P@5", "RR"])
    assert got.summary == want["summary"]


def test_matrix_equals_the_command(tmp_path):
    q, m = tmp_path / "q", tmp_path / "m.npy"
    gn, ln = tmp_path / "goals", tmp_path / "lemmas"
    cli("gen", "--goals", "40", "--universe", "500", "--full", "--format", "npy", "--seed", "3",
        "--qrels", q, "--run", m, "--goal-names", gn, "--lemma-names", ln)
    ms = ["AP", "P@10", "RR", "nDCG@10"]
    want = cli_json(q, m, "--goal-names", gn, "--lemma-names", ln, "--per-goal",
                    *sum((["-m", x] for x in ms), []))
    by_path = lemma_eval.evaluate(q, m, ms, goal_names=gn, lemma_names=ln, per_goal=True)
    assert by_path.summary == want["summary"]
    goals = gn.read_text().split("\n")[:-1]
    lemmas = ln.read_text().split("\n")[:-1]
    matrix = np.load(m)
    for a in (matrix, matrix.astype(np.float64)):
        got = lemma_eval.evaluate(q, a, ms, goal_names=goals, lemma_names=lemmas, per_goal=True)
        assert got.summary == want["summary"]
        assert got.per_goal == by_path.per_goal


def test_summary_bytes_equal_summary_out_and_merge(tmp_path, workload):
    q, r = workload
    out = tmp_path / "s.sum"
    cli("eval", q, r, "-m", "AP", "-m", "P@5", "--quiet", "--summary-out", out, "-o", "/dev/null")
    got = lemma_eval.evaluate(q, r, ["AP", "P@5"], mergeable=True)
    assert got.summary_bytes() == out.read_bytes()
    # Shards of the run (whole goals), each evaluated apart, merge into the one result.
    run = read_run(r)
    goals = list(run)
    shards = [{g: run[g] for g in goals[i::3]} for i in range(3)]
    parts = [lemma_eval.evaluate(q, s, ["AP", "P@5"], mergeable=True) for s in shards]
    merged = lemma_eval.merge(parts, keys=["AP", "P@5"])
    assert merged.summary == got.summary
    assert merged.counts == got.counts
    assert lemma_eval.merge([p.summary_bytes() for p in parts]).summary == {
        "AP": got.summary["AP"], "P@5": got.summary["P@5"]}


def test_bad_inputs_raise_with_the_commands_message(tmp_path, workload):
    q, r = workload
    with pytest.raises(FileNotFoundError, match="nope"):
        lemma_eval.evaluate(q, tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="nope"):
        lemma_eval.evaluate(tmp_path / "nope", r)
    bad = tmp_path / "bad.run"
    bad.write_text("g0 Q0 a 1 1.0 t\ng0 Q0 b 2 high t\n")
    with pytest.raises(ValueError, match=r"bad\.run:2: expected a finite number as the score"):
        lemma_eval.evaluate(q, bad)
    with pytest.raises(ValueError, match="measure"):
        lemma_eval.evaluate(q, r, ["NoSuchMeasure"])
    with pytest.raises(ValueError, match="whitespace"):
        lemma_eval.evaluate({"g": ["a b"]}, {"g": ["a"]})
    with pytest.raises(ValueError, match="shards must hold disjoint goals"):
        lemma_eval.merge([lemma_eval.evaluate(q, r, mergeable=True).summary_bytes()] * 2)
    with pytest.raises(ValueError):
        lemma_eval.merge([b"LEMSUMRY not a summary"])
    with pytest.raises(ValueError, match="ties"):
        lemma_eval.evaluate(q, r, ties="random")
    with pytest.raises(TypeError):
        lemma_eval.evaluate(q, 42)
    with pytest.raises(ValueError, match="shape"):
        lemma_eval.evaluate(q, np.zeros((2, 3), np.float32), goal_names=["a"], lemma_names=["x", "y", "z"])


def test_ctrl_c_interrupts_an_evaluation(tmp_path, workload):
    """An evaluation waiting on a FIFO that never ends: SIGINT raises KeyboardInterrupt at once."""
    import os
    import signal
    import subprocess
    import sys
    import time

    q, _ = workload
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    code = (
        "import lemma_eval, sys\n"
        "try:\n"
        f"    lemma_eval.evaluate({str(q)!r}, {str(fifo)!r})\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted'); sys.exit(3)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    with open(fifo, "w") as w:  # opened once the evaluation opens it to read
        w.write("g0 Q0 a 1 1.0 t\n")
        w.flush()
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        t = time.monotonic()
        out, _ = p.communicate(timeout=10)
        waited = time.monotonic() - t
    assert p.returncode == 3, out
    assert out.strip() == "interrupted"
    assert waited < 2.0


def test_every_file_format_equals_the_command(tmp_path, workload):
    """JSONL, gzip, zstd-less plain and the binary store, as paths: the command's values."""
    import gzip
    import shutil

    q, r = workload
    gz = tmp_path / "run.gz"
    with open(r, "rb") as f, gzip.open(gz, "wb") as g:
        shutil.copyfileobj(f, g)
    store = tmp_path / "run.store"
    cli("convert", q, r, "-o", store)
    jq, jr = tmp_path / "j.qrels", tmp_path / "j.jsonl"
    cli("gen", "--goals", "100", "--universe", "1000", "--depth", "30", "--format", "jsonl",
        "--seed", "9", "--qrels", jq, "--run", jr)
    ms = ["AP", "P@5", "RR", "nDCG@10"]
    flags = sum((["-m", m] for m in ms), [])
    for actual, predicted in [(q, gz), (q, store), (store, store), (jq, jr)]:
        want = cli_json(actual, predicted, *flags)
        got = lemma_eval.evaluate(actual, predicted, ms)
        assert got.summary == want["summary"], predicted


def test_value_shapes_are_checked():
    """A run or truth dict whose values are not all of one expected shape is an error, never a
    silent reading; mappings other than dicts keep their grades."""
    from types import MappingProxyType

    with pytest.raises(ValueError, match="found both"):
        lemma_eval.evaluate({"g1": ["a"], "g2": ["b"]}, {"g1": ["a"], "g2": {"b": 0.1, "a": 0.9}})
    with pytest.raises(ValueError, match="got a str"):
        lemma_eval.evaluate({"g": ["a"]}, {"g": "abc"})
    with pytest.raises(ValueError, match="got a string"):
        lemma_eval.evaluate({"g": "lemma"}, {"g": ["l"]})
    # Grade 0 in a read-only mapping: not relevant, as in a dict.
    truth = {"g": MappingProxyType({"a": 1, "b": 0})}
    r = lemma_eval.evaluate(truth, {"g": ["b", "a"]}, ["RR", "R@1"])
    assert r.summary == {"RR": 0.5, "R@1": 0.0}
    run = {"g": MappingProxyType({"a": 0.2, "b": 0.9})}
    assert lemma_eval.evaluate(truth, run, ["RR"]).summary == {"RR": 0.5}
    with pytest.raises(ValueError, match="shard"):
        lemma_eval.evaluate(truth, np.zeros((1, 2), np.float32), shard=(1, 2),
                            goal_names=["g"], lemma_names=["a", "b"])


def test_a_failed_session_gives_no_result(workload):
    """A goal pushed twice (through the native session) stops the session: no partial result."""
    from lemma_eval import _native

    q, _ = workload
    ev = _native.NativeEvaluator(str(q), ["RR"])
    s = ev.session()
    s.push_ranked_dict({"g1": ["a"]})
    with pytest.raises(ValueError, match="pushed twice"):
        s.push_scored_dict({f"g{i}": {"a": 1.0} for i in range(200)})
    with pytest.raises(ValueError, match="stopped at an error"):
        s.finish()


@pytest.mark.parametrize("threads", [1, 2, 8])
def test_an_error_in_a_large_scored_dict_is_raised_not_waited_on(threads):
    """A bad score in the first goal of a dict of many goals: the workers stop at it while the
    reader still has batches to hand over; the error comes back (it once waited forever on the
    full channel), with the first bad goal in dict order."""
    truth = {f"g{i}": {"a": 1} for i in range(3000)}
    run = {f"g{i}": {"a": float("nan") if i in (0, 2500) else 0.5} for i in range(3000)}
    with pytest.raises(ValueError, match=r"goal `g0`.*expected a finite score"):
        lemma_eval.evaluate(truth, run, ["AP"], threads=threads)
    ev = lemma_eval.RelevanceEvaluator(truth, {"map"})
    with pytest.raises(ValueError, match=r"goal `g0`"):
        ev.evaluate({g: {"a": float("inf")} for g in truth})


def test_actual_dicts_are_checked_as_qrels_are():
    """Actual sets given as a dict: a goal named `#...` counts (it is no comment line); a grade
    that does not fit 32 bits, a lemma listed twice and a dict without judgments are errors that
    name the goal and lemma; a goal with no lemma has no actual set."""
    r = lemma_eval.evaluate({"#g": ["a"], "h": ["b"]}, {"#g": ["a"], "h": ["x", "b"]}, ["RR"])
    assert r.summary == {"RR": 0.75}
    assert r.counts["evaluated"] == 2
    with pytest.raises(ValueError, match=r"goal `g`, lemma `a`: grade 1099511627776 is out of range"):
        lemma_eval.evaluate({"g": {"a": 2**40}}, {"g": ["a"]})
    with pytest.raises(ValueError, match=r"goal `g`: lemma `a` is judged twice"):
        lemma_eval.evaluate({"g": ["a", "b", "a"]}, {"g": ["a"]})
    with pytest.raises(ValueError, match="has no judgments"):
        lemma_eval.evaluate({"g": []}, {"g": ["a"]})
    r = lemma_eval.evaluate({"g": ["a"], "e": []}, {"g": ["a"], "e": ["a"]}, ["RR"], per_goal=True)
    assert r.counts["skipped_no_actual_set"] == 1
    assert list(r.per_goal) == ["g"]
