"""A ReProver-shaped predictions pickle (its classes from a module that is gone when it is read)
gives hand-checked R@1, R@10, MRR and LeanAgent's Success@1."""

import dataclasses
import pickle
import sys
import types

import pytest

from lemma_eval import reprover


def _make_pickle(path):
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
        with open(path, "wb") as f:
            pickle.dump(records, f)
    finally:
        del sys.modules["common"]


def test_reprover_numbers(tmp_path):
    path = tmp_path / "predictions.pickle"
    _make_pickle(path)
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
