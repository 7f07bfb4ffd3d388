"""lemma_eval.merge checks a set of shards as `lemma-eval merge` does: missing, repeated and
mismatched shards are a ValueError naming them and the parts; partial=True merges what is given and
lists what it lacks; complete sets merge, in any order, into the whole file's result."""

import re

import pytest

import lemma_eval
from conftest import cli

MEASURES = ["AP", "P@5", "RR", "Depth(recall=1.0)"]


def shards(q, r, n, **kw):
    return [lemma_eval.evaluate(q, r, MEASURES, shard=(i, n), **kw) for i in range(1, n + 1)]


def described(workload):
    """The predictions file as the errors name it: `run (B bytes, fingerprint F)`."""
    got = lemma_eval.merge(shards(*workload, 4)[:1], partial=True).lacking_shards[0]
    return f"{got['predictions']} ({got['bytes']} bytes, fingerprint {got['fingerprint']})"


def test_incomplete_repeated_and_mismatched_sets_raise(workload):
    q, r = workload
    file = re.escape(described(workload))
    p = shards(q, r, 4)
    with pytest.raises(
        ValueError,
        match=rf"^shards 3-4 of 4 of {file} are missing \(given: parts\[0\], parts\[1\]\); "
        r"partial=True merges the shards given$",
    ):
        lemma_eval.merge(p[:2])
    with pytest.raises(ValueError, match=rf"^shard 2 of 4 of {file} is missing \(given: "):
        lemma_eval.merge([p[3], p[0], p[2]], keys=MEASURES)
    with pytest.raises(
        ValueError, match=rf"^shard 2/4 of {file} is given twice: parts\[1\] and parts\[4\]$"
    ):
        lemma_eval.merge(p + [p[1]], partial=True)
    other = lemma_eval.evaluate(q, r, MEASURES, shard=(2, 3))
    with pytest.raises(
        ValueError,
        match=rf"^parts\[0\] is shard 1/4 of {file}, parts\[1\] is shard 2/3 of it: shards of "
        r"one file merge only with shards cut into as many$",
    ):
        lemma_eval.merge([p[0], other], partial=True)
    # A summary of format version 1 records no shards: refused by name.
    v1 = bytearray(p[0].summary_bytes())
    v1[8] = 1
    with pytest.raises(ValueError, match=r"^parts\[1\]: summary format version 1, expected 4: "):
        lemma_eval.merge([p[1], bytes(v1)], partial=True)


def test_partial_merges_list_what_they_lack(workload, tmp_path):
    q, r = workload
    one = lemma_eval.evaluate(q, r, MEASURES, mergeable=True)
    p = shards(q, r, 4)
    # Complete, in any order: the whole file's result, to its bytes.
    for order in ([0, 1, 2, 3], [3, 1, 0, 2]):
        for partial in (False, True):
            m = lemma_eval.merge([p[k] for k in order], keys=MEASURES, partial=partial)
            assert m.summary == one.summary
            assert m.counts == one.counts
            assert m.lacking_shards == []
            assert m.summary_bytes() == one.summary_bytes()
    # Shards 1 and 3 of 4: the goals they ranked, as an evaluation of those goals' lines alone
    # that skips goals without predictions gives them.
    got = lemma_eval.merge([p[2], p[0]], keys=MEASURES, partial=True)
    size = r.stat().st_size
    [lacking] = got.lacking_shards
    assert lacking["predictions"] == r.name
    assert lacking["bytes"] == size
    assert re.fullmatch("[0-9a-f]{16}", lacking["fingerprint"])
    assert (lacking["of"], lacking["shards"], lacking["missing"]) == (4, [(2, 2), (4, 4)], 2)
    ranked = set()
    for i in (1, 3):
        skip = lemma_eval.evaluate(q, r, MEASURES, shard=(i, 4), missing="skip", per_goal=True)
        ranked |= set(skip.per_goal)
    lines = [line for line in r.read_text().splitlines(True) if line.split()[0] in ranked]
    given = tmp_path / "given.run"
    given.write_text("".join(lines))
    want = lemma_eval.evaluate(q, given, MEASURES, missing="skip")
    assert got.summary == want.summary
    assert got.counts["evaluated"] == want.counts["evaluated"]
    assert got.summary != one.summary
    # What the command prints for the same merge names the same shards.
    for k in (0, 2):
        (tmp_path / f"{k}.sum").write_bytes(p[k].summary_bytes())
    out = cli("merge", tmp_path / "0.sum", tmp_path / "2.sum", "--partial", "--quiet",
              "--format", "tsv")
    assert out.endswith(
        f"all\tlacking_shards(predictions={lacking['fingerprint']},of=4,shards=2,4)\t2\n"
    )
    # The partial merge merges later with what it lacks.
    m = lemma_eval.merge([p[3], got, p[1]], keys=MEASURES)
    assert m.summary == one.summary
    assert m.summary_bytes() == one.summary_bytes()
