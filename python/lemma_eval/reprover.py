"""ReProver / LeanAgent retrieval predictions, read without ReProver installed.

ReProver's ``retrieval/main.py predict`` pickles a list of records, one per tactic: ``file_path``,
``full_name``, ``start``, ``tactic_idx``, ``context``, ``all_pos_premises``,
``retrieved_premises`` and ``scores``. The premises are ReProver's ``Premise`` objects; here each
is read as its ``full_name``, whatever class it was pickled from.

>>> from lemma_eval import reprover
>>> r = reprover.evaluate("predictions.pickle")          # doctest: +SKIP
>>> r.summary                                             # doctest: +SKIP
{'R@1': 0.139, 'R@10': 0.382, 'RR': 0.318}

ReProver's evaluation averages recall over a goal's positives and skips goals without positives;
so does this (those goals have no actual set). ReProver prints R@1 and R@10 as percentages. Use
``Success@1`` for LeanAgent's hit rate (a goal counts 1 when its first premise is a positive).
"""

from __future__ import annotations

import os
import pickle
import re
from typing import Any, Dict, List, Sequence, Tuple

import lemma_eval

__all__ = ["load", "evaluate", "goal_id"]


class _Opaque:
    """Stands for any class of the pickle that is not importable here (ReProver's ``Premise``,
    ``Context``, LeanDojo's ``Pos``): it keeps the object's state, nothing else."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._args = args
        self.__dict__.update(kwargs)

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple) and len(state) == 2:  # (dict, slots)
            state = {**(state[0] or {}), **(state[1] or {})}
        if isinstance(state, dict):
            self.__dict__.update(state)
        else:
            self._state = state


class _Unpickler(pickle.Unpickler):
    """Builds only plain data: containers, numbers, strings, numpy arrays (the scores), paths.
    Every other class becomes an :class:`_Opaque` holder of its state, so that loading runs no
    code of the pickle's choosing."""

    _ALLOWED = {
        ("builtins", n)
        for n in ("set", "frozenset", "list", "dict", "tuple", "str", "int", "float", "bool",
                  "complex", "bytes", "bytearray", "slice", "range", "object")
    } | {
        ("copyreg", "_reconstructor"), ("copyreg", "__newobj__"), ("_codecs", "encode"),
        ("collections", "OrderedDict"), ("collections", "defaultdict"),
        ("pathlib", "PosixPath"), ("pathlib", "WindowsPath"), ("pathlib", "Path"),
        ("numpy", "dtype"), ("numpy", "ndarray"),
        ("numpy.core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "scalar"),
    }

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self._ALLOWED:
            try:
                return super().find_class(module, name)
            except (ImportError, AttributeError):
                pass
        return type(name, (_Opaque,), {"__module__": "lemma_eval.reprover.opaque"})


def _name(premise: Any) -> str:
    if isinstance(premise, str):
        return premise
    if isinstance(premise, dict) and "full_name" in premise:
        return str(premise["full_name"])
    name = getattr(premise, "full_name", None)
    if name is None:
        raise ValueError(f"a premise without a full_name: {premise!r}")
    return str(name)


def _pos(start: Any) -> str:
    if isinstance(start, (list, tuple)):
        return ",".join(str(x) for x in start)
    line = getattr(start, "line_nb", None)
    column = getattr(start, "column_nb", None)
    if line is not None and column is not None:
        return f"{line},{column}"
    return str(start)


_SPACE = re.compile(r"\s+")


def goal_id(record: Dict[str, Any]) -> str:
    """A record's goal id: ``file_path:full_name@start#tactic_idx`` (whitespace replaced by ``_``),
    the key ReProver's evaluation looks predictions up by."""
    gid = f"{record['file_path']}:{record['full_name']}@{_pos(record['start'])}#{record['tactic_idx']}"
    return _SPACE.sub("_", gid)


def load(path: "str | os.PathLike[str]") -> Tuple[Dict[str, List[str]], Dict[str, List[str]]]:
    """The actual sets (``all_pos_premises``) and rankings (``retrieved_premises``, in order) of a
    predictions pickle, keyed by :func:`goal_id`. Goals without positives have no actual set."""
    with open(os.fspath(path), "rb") as f:
        try:
            records = _Unpickler(f).load()
        except (pickle.UnpicklingError, EOFError) as e:
            raise ValueError(f"{os.fspath(path)}: not a predictions pickle ({e})") from None
    if isinstance(records, dict):
        records = list(records.values())
    actual: Dict[str, List[str]] = {}
    predicted: Dict[str, List[str]] = {}
    for i, rec in enumerate(records):
        try:
            gid = goal_id(rec)
            positives = [_name(p) for p in rec["all_pos_premises"]]
            retrieved = [_name(p) for p in rec["retrieved_premises"]]
        except (KeyError, TypeError) as e:
            raise ValueError(
                f"{os.fspath(path)}: record {i}: expected file_path, full_name, start, tactic_idx, "
                f"all_pos_premises and retrieved_premises ({e!r})"
            ) from None
        if gid in predicted:
            raise ValueError(f"{os.fspath(path)}: record {i}: goal {gid} appears twice")
        if positives:
            actual[gid] = list(dict.fromkeys(positives))
        predicted[gid] = retrieved
    return actual, predicted


def evaluate(
    path: "str | os.PathLike[str]",
    measures: Sequence[str] = ("R@1", "R@10", "RR"),
    **options: Any,
) -> lemma_eval.Result:
    """Evaluates a predictions pickle: by default ReProver's R@1, R@10 and MRR (as fractions).
    ``options`` are :func:`lemma_eval.evaluate`'s."""
    actual, predicted = load(path)
    return lemma_eval.evaluate(actual, predicted, list(measures), **options)
