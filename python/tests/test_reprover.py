"""A ReProver-shaped predictions pickle (its classes from a module that is gone when it is read)
gives hand-checked R@1, R@10, MRR and LeanAgent's Success@1."""

import dataclasses
import json
import pathlib
import pickle
import re
import subprocess
import sys
import time
import tracemalloc
import types

import numpy as np
import pytest

from lemma_eval import _safepickle, reprover


def _make_pickle(path, protocol=pickle.DEFAULT_PROTOCOL, numpy_scores=False):
    """Records shaped as ReProver's retrieval/main.py predict writes them: Premise and Pos objects
    of a module `common` that does not exist when the pickle is read."""
    common = types.ModuleType("common")

    @dataclasses.dataclass(unsafe_hash=True)
    class Premise:
        path: str
        full_name: str
        start: object
        end: object
        code: str

    @dataclasses.dataclass(frozen=True)
    class Pos:
        line_nb: int
        column_nb: int

    for cls in (Premise, Pos):
        cls.__module__ = "common"
        cls.__qualname__ = cls.__name__
        setattr(common, cls.__name__, cls)
    sys.modules["common"] = common
    try:
        def p(name):
            return Premise("Mathlib/X.lean", name, Pos(1, 0), Pos(2, 0), f"theorem {name}")

        names = [f"L{i}" for i in range(20)]
        records = [
            # Goal 1: positives {L0, L5}; retrieved L0 first, L5 at rank 12.
            # R@1 = 1/2, R@10 = 1/2, RR = 1, Success@1 = 1.
            {"file_path": "Mathlib/A.lean", "full_name": "A.t", "start": Pos(3, 4), "tactic_idx": 0,
             "context": object.__new__(Premise), "all_pos_premises": [p("L0"), p("L5")],
             "retrieved_premises": [p(n) for n in ["L0"] + names[6:16] + ["L5"]],
             "scores": [1.0 - i / 100 for i in range(12)]},
            # Goal 2: positives {L1, L2, L3}; L2 at rank 3, L3 at rank 10, L1 never.
            # R@1 = 0, R@10 = 2/3, RR = 1/3, Success@1 = 0.
            {"file_path": "Mathlib/A.lean", "full_name": "A.t", "start": Pos(3, 4), "tactic_idx": 1,
             "context": None, "all_pos_premises": [p("L1"), p("L2"), p("L3")],
             "retrieved_premises": [p(n) for n in ["L9", "L8", "L2", "L7", "L6", "L10", "L11",
                                                    "L12", "L13", "L3", "L14"]],
             "scores": [0.5] * 11},
            # Goal 3: no positives: skipped, as ReProver skips it.
            {"file_path": "Mathlib/B.lean", "full_name": "B.u", "start": Pos(7, 0), "tactic_idx": 0,
             "context": None, "all_pos_premises": [], "retrieved_premises": [p("L4")],
             "scores": [0.9]},
        ]
        if numpy_scores:
            for r in records:
                r["scores"] = np.array(r["scores"], dtype=np.float32)
        with open(path, "wb") as f:
            pickle.dump(records, f, protocol=protocol)
    finally:
        del sys.modules["common"]


@pytest.mark.parametrize("protocol", range(0, pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("numpy_scores", [False, True])
def test_reprover_numbers(tmp_path, protocol, numpy_scores):
    path = tmp_path / "predictions.pickle"
    _make_pickle(path, protocol, numpy_scores)
    assert "common" not in sys.modules
    actual, predicted = reprover.load(path)
    assert list(predicted) == [
        "Mathlib/A.lean:A.t@3,4#0", "Mathlib/A.lean:A.t@3,4#1", "Mathlib/B.lean:B.u@7,0#0"]
    assert actual["Mathlib/A.lean:A.t@3,4#0"] == ["L0", "L5"]
    assert "Mathlib/B.lean:B.u@7,0#0" not in actual
    r = reprover.evaluate(path)
    assert r.summary == {
        "R@1": (1 / 2 + 0) / 2,
        "R@10": (1 / 2 + 2 / 3) / 2,
        "RR": (1 + 1 / 3) / 2,
    }
    assert r.counts["evaluated"] == 2
    assert r.counts["skipped_no_actual_set"] == 1
    assert reprover.evaluate(path, ["Success@1"]).summary == {"Success@1": 0.5}


def test_not_a_pickle(tmp_path):
    bad = tmp_path / "bad.pickle"
    bad.write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match="not a predictions pickle"):
        reprover.load(bad)
    with pytest.raises(FileNotFoundError):
        reprover.load(tmp_path / "missing.pickle")


def test_objects_become_dicts_of_their_attributes(tmp_path):
    path = tmp_path / "predictions.pickle"
    _make_pickle(path, numpy_scores=True)
    records = _safepickle.load(path)
    premise = records[0]["all_pos_premises"][0]
    assert isinstance(premise, _safepickle.PickledObject)
    assert premise.pickled_class == "common.Premise"
    assert premise["full_name"] == premise.full_name == "L0"
    assert dict(premise.start) == {"line_nb": 1, "column_nb": 0}
    assert records[0]["start"].pickled_class == "common.Pos"
    # float32 scores read as numbers: 1 - i/100 rounded to float32.
    assert records[0]["scores"] == [float(np.float32(1.0 - i / 100)) for i in range(12)]
    # ReProver writes start as [line, column] lists too.
    records = [{"file_path": "A.lean", "full_name": "t", "start": [3, 4], "tactic_idx": 0,
                "all_pos_premises": ["a"], "retrieved_premises": ["b", "a"]}]
    path.write_bytes(pickle.dumps(records))
    assert reprover.load(path) == ({"A.lean:t@3,4#0": ["a"]}, {"A.lean:t@3,4#0": ["b", "a"]})


# Crafted pickles: what each does under pickle.load is in its comment. None of it may happen.

# BUILD with a (None, {"exists": bool}) state on the class pathlib.Path: setattr(Path, "exists",
# bool) in the interpreter that reads it.
_SETATTR = (b"\x80\x02cpathlib\nPath\nN}X\x06\x00\x00\x00existscbuiltins\nbool\ns\x86b.")
# The same through STACK_GLOBAL (protocol 4), inside a list of records.
_SETATTR_4 = (b"\x80\x04]\x8c\x07pathlib\x8c\x04Path\x93N}\x8c\x06exists\x8c\x08builtins"
              b"\x8c\x04bool\x93s\x86ba.")
# bytearray(2**30): 1 GiB from 29 bytes.
_BOMB = b"\x80\x02cbuiltins\nbytearray\nJ\x00\x00\x00@\x85R."
# A BINBYTES8 claiming 2^40 bytes, a LONG4 claiming 2^31 - 1, a BINUNICODE8 claiming 2^62.
_LENGTHS = [b"\x80\x04\x8e" + (1 << 40).to_bytes(8, "little") + b".",
            b"\x80\x02\x8b\xff\xff\xff\x7f.",
            b"\x80\x04\x8d" + (1 << 62).to_bytes(8, "little") + b"."]


def test_build_on_a_class_sets_nothing(tmp_path):
    exists = pathlib.Path.exists
    path = tmp_path / "setattr.pickle"
    try:
        for crafted in (_SETATTR, _SETATTR_4):
            path.write_bytes(crafted)
            with pytest.raises(ValueError, match=r"BUILD on a class or function \(pathlib\.Path\)"):
                reprover.load(path)
            assert pathlib.Path.exists is exists
    finally:
        pathlib.Path.exists = exists


def test_a_memory_bomb_is_refused_at_once(tmp_path):
    path = tmp_path / "bomb.pickle"
    for crafted in [_BOMB] + _LENGTHS:
        path.write_bytes(crafted)
        tracemalloc.start()
        started = time.perf_counter()
        with pytest.raises(ValueError, match="not a predictions pickle"):
            reprover.load(path)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 1 << 20, (crafted, peak)
        assert time.perf_counter() - started < 1.0
    # The call is never made: bytearray(2**30) is a holder of its name and argument.
    bomb = _safepickle.loads(_BOMB)
    assert (bomb.pickled_class, bomb.pickled_args) == ("builtins.bytearray", (1 << 30,))


def test_limits(tmp_path):
    path = tmp_path / "records.pickle"
    path.write_bytes(pickle.dumps(list(range(1000))))
    with pytest.raises(ValueError, match=r"more than 100 values: over the limit \(max_objects\)"):
        reprover.load(path, max_objects=100)
    with pytest.raises(ValueError, match=r"over the limit of 100 \(max_bytes\)"):
        reprover.load(path, max_bytes=100)
    assert _safepickle.load(path) == list(range(1000))


def test_calls_are_never_made(tmp_path):
    marker = tmp_path / "ran"
    cmd = f"touch {marker}".encode()
    crafted = [
        # os.system("touch ...") by GLOBAL + REDUCE, protocol 0.
        b"cos\nsystem\n(S'" + cmd + b"'\ntR.",
        # posix.system by STACK_GLOBAL, as the file_path of a record.
        b"\x80\x04]}\x8c\tfile_path\x8c\x05posix\x8c\x06system\x93\x8c" + bytes([len(cmd)])
        + cmd + b"\x85Rsa.",
        # subprocess.call(["sh", "-c", ...]) by INST, and builtins.eval by OBJ.
        b"((S'sh'\nS'-c'\nS'" + cmd + b"'\nlisubprocess\ncall\n.",
        b"(cbuiltins\neval\nS'__import__(\"os\").system(\"" + cmd + b"\")'\no.",
        # copyreg._reconstructor of a class whose construction would run code: only a holder.
        b"ccopyreg\n_reconstructor\n(cos\n_wrap_close\ncbuiltins\nobject\nNtR.",
    ]
    path = tmp_path / "call.pickle"
    for c in crafted:
        path.write_bytes(c)
        with pytest.raises(ValueError):
            reprover.load(path)
        assert not marker.exists(), c
        # Read as plain data: each call a holder naming its function.
        assert isinstance(_safepickle.loads(c), (_safepickle.PickledObject, list))
    # Under pickle itself, the first one runs: the test would see it.
    assert subprocess.run([sys.executable, "-c", "import pickle,sys; pickle.loads(sys.stdin.buffer.read())"],
                          input=crafted[0]).returncode == 0
    assert marker.exists()


def test_masked_with_a_corpus(tmp_path):
    """The records' places: A.t in Mathlib/A.lean, which imports Mathlib/X.lean (L0-L9) and not
    Mathlib/Y.lean (L10-L19)."""
    path = tmp_path / "predictions.pickle"
    _make_pickle(path)
    corpus = tmp_path / "corpus.jsonl"

    def file(p, imports, names):
        prem = [{"full_name": n, "code": f"theorem {n}", "start": [i + 1, 0], "end": [i + 1, 5],
                 "kind": "theorem"} for i, n in enumerate(names)]
        return json.dumps({"path": p, "imports": imports, "premises": prem})

    corpus.write_text("\n".join([
        file("Mathlib/X.lean", [], [f"L{i}" for i in range(10)]),
        file("Mathlib/Y.lean", [], [f"L{i}" for i in range(10, 20)]),
        file("Mathlib/A.lean", ["Mathlib/X.lean"], []),
        file("Mathlib/B.lean", [], []),
    ]) + "\n")
    ms = ["R@1", "R@10", "RR", "Leak@10", "LeakRank"]
    r = reprover.evaluate(path, ms, corpus=corpus, mask="accessible", per_goal=True)
    g1, g2 = "Mathlib/A.lean:A.t@3,4#0", "Mathlib/A.lean:A.t@3,4#1"
    # Goal 1 masked: L0 L6 L7 L8 L9 L5 (L10-L15 removed): R@10 = 1; unmasked top 10 holds
    # L10-L14, the first inaccessible at rank 6. Goal 2 masked: L9 L8 L2 L7 L6 L3: R@10 = 2/3,
    # RR = 1/3; unmasked top 10 holds L10-L13, the first at rank 6.
    assert r.per_goal[g1] == {"R@1": 0.5, "R@10": 1.0, "RR": 1.0, "Leak@10": 0.5, "LeakRank": 6}
    assert r.per_goal[g2] == pytest.approx(
        {"R@1": 0.0, "R@10": 2 / 3, "RR": 1 / 3, "Leak@10": 0.4, "LeakRank": 6}, abs=1e-15)
    assert r.summary == pytest.approx(
        {"R@1": 1 / 4, "R@10": 5 / 6, "RR": 2 / 3, "Leak@10": 0.45, "LeakRank": 6}, abs=1e-15)
    assert r.premises["masked"] == 6 + 5
    # One theorem, two states: grouped by theorem, one group of the same means.
    g = reprover.evaluate(path, ["R@10"], corpus=corpus, mask="accessible", group_by="theorem")
    assert g.counts["groups"] == 1 and g.summary["R@10"] == pytest.approx(5 / 6, abs=1e-15)
    # Every relevant premise is defined in another file than A.lean: R(origin=imported)@10 is
    # R@10, and no goal has one in-file (no value, no mean).
    o = reprover.evaluate(path, ["R(origin=imported)@10", "R(origin=in-file)@10"], corpus=corpus,
                          mask="accessible")
    assert o.summary == {"R(origin=imported)@10": r.summary["R@10"], "R(origin=in-file)@10": None}
    # Without the corpus, the dict path as before.
    assert reprover.evaluate(path, ["R@10"]).summary == {"R@10": (1 / 2 + 2 / 3) / 2}
    # An error names the pickle's record, not the files written from it (gone by then).
    corpus.write_text("\n".join([
        file("Mathlib/X.lean", [], [f"L{i}" for i in range(10)]),
        file("Mathlib/Y.lean", [], [f"L{i}" for i in range(10, 14)]),
        file("Mathlib/A.lean", ["Mathlib/X.lean"], []),
    ]) + "\n")
    with pytest.raises(ValueError) as e:
        reprover.evaluate(path, ["R@10"], corpus=corpus, mask="accessible", strict=True)
    msg = str(e.value)
    assert re.search(r"predictions\.pickle: record [01]: .*premise `L1[4-9]`", msg), msg
    assert "predictions.jsonl" not in msg and "(byte" not in msg, msg
