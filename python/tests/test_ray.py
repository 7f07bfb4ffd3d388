"""lemma_eval.ray on a local Ray with 2 CPUs: 8 and more shards merge into the single-process result
bit for bit; shards of one file by byte ranges (lemma_eval.evaluate(shard=...)) too."""

import pytest

ray = pytest.importorskip("ray")

import lemma_eval  # noqa: E402
import lemma_eval.ray  # noqa: E402
from conftest import read_qrels  # noqa: E402

MEASURES = ["AP", "P@5", "R@10", "RR", "nDCG@10", "Depth(recall=1.0)"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_byte_range_shards_merge_exactly(workload):
    q, r = workload
    one = lemma_eval.evaluate(q, r, MEASURES)
    for n in (1, 3, 8, 13):
        parts = [lemma_eval.evaluate(q, r, MEASURES, shard=(i, n)) for i in range(1, n + 1)]
        merged = lemma_eval.merge(parts, keys=MEASURES)
        assert merged.summary == one.summary, n
        assert merged.counts == one.counts, n
    with pytest.raises(ValueError, match="shard"):
        lemma_eval.evaluate(q, r, shard=(0, 2))


def test_ray_equals_one_process(local_ray, workload, tmp_path, capsys):
    q, r = workload
    one = lemma_eval.evaluate(q, r, MEASURES, mergeable=True)
    got = lemma_eval.ray.evaluate(q, r, MEASURES, num_shards=8)
    assert got.summary == one.summary
    assert got.counts == one.counts
    assert got.summary_bytes() == one.summary_bytes()
    # stderr is no terminal here: a line per update, no carriage return.
    err = capsys.readouterr().err
    assert [l for l in err.splitlines() if "shards done" in l] == [
        f"lemma-eval: shards done {k}/8" for k in range(1, 9)
    ]
    assert "\r" not in err
    # Actual sets as a dict, through the object store; whole files per shard.
    lines = r.read_text().splitlines(keepends=True)
    files, goal, out = [], None, None
    for line in lines:
        g = line.split()[0]
        if g != goal:
            goal = g
            if len(files) < 10 or out is None:
                files.append(tmp_path / f"part{len(files)}.run")
                out = files[-1]
        with open(out, "a") as f:
            f.write(line)
    assert len(files) == 10
    got = lemma_eval.ray.evaluate(read_qrels(q), files, MEASURES, progress=False)
    want = lemma_eval.evaluate(read_qrels(q), r, MEASURES)
    assert got.summary == want.summary
    assert got.counts == want.counts


def test_ray_under_the_premise_protocol_equals_one_process(local_ray):
    """Shards evaluated under the corpus and its mask (fixtures/premise) merge into the
    single-process result: means, counts and the protocol's counts."""
    import pathlib

    d = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "premise"
    actual, run, corpus = d / "actual.jsonl", d / "run.txt", d / "corpus.jsonl"
    ms = ["AP", "RR", "Leak@3", "LeakRank"]
    one = lemma_eval.evaluate(actual, run, ms, corpus=corpus, mask="accessible")
    got = lemma_eval.ray.evaluate(actual, run, ms, num_shards=3, progress=False,
                                  corpus=corpus, mask="accessible")
    assert got.summary == one.summary
    assert got.counts == one.counts
    assert got.premises == one.premises
    # The hand-computed masked AP of the fixture (fixtures/premise/README.md): g1 (1 + 2/3 +
    # 3/4) / 3, g2 1/2, g3 1.
    g1 = (1 + 2 / 3 + 3 / 4) / 3
    assert abs(got.summary["AP"] - (g1 + 0.5 + 1.0) / 3) < 1e-12
    # Without the corpus the same shards give the unmasked mean: each shard applied the mask.
    plain = lemma_eval.ray.evaluate(actual, run, ms[:2], num_shards=3, progress=False)
    assert plain.summary["AP"] != got.summary["AP"]


def test_ray_errors_raise(local_ray, workload, tmp_path):
    q, _ = workload
    with pytest.raises(FileNotFoundError):
        lemma_eval.ray.evaluate(q, tmp_path / "missing.run")
    bad = tmp_path / "bad.run"
    bad.write_text("g0 Q0 a 1 1.0 t\n" * 3 + "g1 Q0 b 1 high t\n")
    with pytest.raises(ValueError, match="bad.run:4: expected a finite number"):
        lemma_eval.ray.evaluate(q, bad, num_shards=2, progress=False)
    # A dict of predictions is not a list of files: a TypeError before any task runs.
    with pytest.raises(TypeError, match="a path or a list of paths"):
        lemma_eval.ray.evaluate(q, {"g0": ["a"]})
