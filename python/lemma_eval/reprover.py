"""ReProver / LeanAgent retrieval predictions, read without ReProver installed.

ReProver's ``retrieval/main.py predict`` pickles a list of records, one per tactic: ``file_path``,
``full_name``, ``start``, ``tactic_idx``, ``context``, ``all_pos_premises``,
``retrieved_premises`` and ``scores``. The premises are ReProver's ``Premise`` objects; here each
is read as its ``full_name``, whatever class it was pickled from. The pickle is read by a reader
that runs none of it (:mod:`lemma_eval._safepickle`): nothing is imported or called, objects
become dicts of their attributes, and a pickle over the size or object limits is refused.

>>> from lemma_eval import reprover
>>> r = reprover.evaluate("predictions.pickle")          # doctest: +SKIP
>>> r.summary                                             # doctest: +SKIP
{'R@1': 0.139, 'R@10': 0.382, 'RR': 0.318}

ReProver's evaluation averages recall over a goal's positives and skips goals without positives;
so does this (those goals have no actual set). ReProver prints R@1 and R@10 as percentages. Use
``Success@1`` for LeanAgent's hit rate (a goal counts 1 when its first premise is a positive).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from typing import Any, Dict, List, Sequence, Tuple

import lemma_eval
from lemma_eval import _safepickle

__all__ = ["load", "evaluate", "goal_id"]


def _text(x: Any, what: str) -> str:
    """A name or position part as text: a string, or an integer as its digits."""
    if isinstance(x, str):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    raise ValueError(f"{what}: expected a string, found a {_kind(x)}")


# What a value read from a pickle is, for messages: the loader's own wording.
_kind = _safepickle._kind


def _name(premise: Any) -> str:
    if isinstance(premise, str):
        return premise
    if isinstance(premise, dict) and "full_name" in premise:
        return _text(premise["full_name"], "a premise's full_name")
    raise ValueError(f"a premise without a full_name: a {_kind(premise)}")


def _pos(start: Any) -> str:
    if isinstance(start, (list, tuple)):
        return ",".join(_text(x, "a position") for x in start)
    if isinstance(start, dict) and "line_nb" in start and "column_nb" in start:
        return f"{_text(start['line_nb'], 'a line')},{_text(start['column_nb'], 'a column')}"
    return _text(start, "a position")


_SPACE = re.compile(r"\s+")


def goal_id(record: Dict[str, Any]) -> str:
    """A record's goal id: ``file_path:full_name@start#tactic_idx`` (whitespace replaced by ``_``),
    the key ReProver's evaluation looks predictions up by."""
    gid = (f"{_text(record['file_path'], 'file_path')}:{_text(record['full_name'], 'full_name')}"
           f"@{_pos(record['start'])}#{_text(record['tactic_idx'], 'tactic_idx')}")
    return _SPACE.sub("_", gid)


def load(
    path: "str | os.PathLike[str]",
    *,
    max_bytes: int = _safepickle.MAX_BYTES,
    max_objects: int = _safepickle.MAX_OBJECTS,
) -> Tuple[Dict[str, List[str]], Dict[str, List[str]]]:
    """The actual sets (``all_pos_premises``) and rankings (``retrieved_premises``, in order) of a
    predictions pickle, keyed by :func:`goal_id`. Goals without positives have no actual set.

    The pickle is read as plain data by a reader that runs nothing of it (no class is imported,
    no function called: :mod:`lemma_eval._safepickle`); objects become dicts of their
    attributes. A file over ``max_bytes`` or of more than ``max_objects`` values, or one that is
    not such a pickle, is a ``ValueError`` naming it."""
    name, records = _read(path, max_bytes, max_objects)
    actual: Dict[str, List[str]] = {}
    predicted: Dict[str, List[str]] = {}
    for gid, positives, retrieved, _ in _goals(name, records):
        if positives:
            actual[gid] = positives
        predicted[gid] = retrieved
    return actual, predicted


def _read(path: Any, max_bytes: int, max_objects: int) -> Tuple[str, Any]:
    """The records of a predictions pickle, and its name for messages."""
    name = os.fspath(path)
    try:
        records = _safepickle.load(path, max_bytes=max_bytes, max_objects=max_objects)
    except ValueError as e:
        # "FILE: byte N: what" from the reader.
        detail = str(e)[len(name) + 2:] if str(e).startswith(f"{name}: ") else str(e)
        raise ValueError(f"{name}: not a predictions pickle: {detail}") from None
    if isinstance(records, dict) and not isinstance(records, _safepickle.PickledObject):
        records = list(records.values())
    if not isinstance(records, (list, tuple)):
        raise ValueError(f"{name}: not a predictions pickle: expected a list of records, found a "
                         f"{_kind(records)}")
    return name, records


def _goals(name: str, records: Any) -> List[Tuple[str, List[str], List[str], Dict[str, Any]]]:
    """Each record's goal id, positives (distinct, in order), retrieved premises and goal record
    (``file_path``, ``theorem`` and, when its ``start`` is a position, ``theorem_pos``)."""
    out = []
    seen = set()
    for i, rec in enumerate(records):
        try:
            if not isinstance(rec, dict):
                raise TypeError(f"a {_kind(rec)}, not a dict")
            gid = goal_id(rec)
            positives = [_name(p) for p in _sequence(rec["all_pos_premises"])]
            retrieved = [_name(p) for p in _sequence(rec["retrieved_premises"])]
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(
                f"{name}: record {i}: expected file_path, full_name, start, tactic_idx, "
                f"all_pos_premises and retrieved_premises ({e})"
            ) from None
        if gid in seen:
            raise ValueError(f"{name}: record {i}: goal {gid} appears twice")
        seen.add(gid)
        place: Dict[str, Any] = {"file_path": _text(rec["file_path"], "file_path"),
                                 "theorem": _text(rec["full_name"], "full_name")}
        pos = _theorem_pos(rec["start"])
        if pos is not None:
            place["theorem_pos"] = pos
        out.append((gid, list(dict.fromkeys(positives)), retrieved, place))
    return out


def _theorem_pos(start: Any) -> Any:
    """``[line, column]`` of a record's ``start`` (a pair, or a ``Pos``), or None."""
    if isinstance(start, dict) and "line_nb" in start and "column_nb" in start:
        start = (start["line_nb"], start["column_nb"])
    if (isinstance(start, (list, tuple)) and len(start) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in start)):
        return [int(start[0]), int(start[1])]
    return None


def _sequence(x: Any) -> Any:
    """The premises of a record: a list, tuple, set or frozenset."""
    if isinstance(x, (list, tuple, set, frozenset)):
        return x
    raise TypeError(f"premises in a {_kind(x)}, not a list")


def evaluate(
    path: "str | os.PathLike[str]",
    measures: Sequence[str] = ("R@1", "R@10", "RR"),
    **options: Any,
) -> lemma_eval.Result:
    """Evaluates a predictions pickle: by default ReProver's R@1, R@10 and MRR (as fractions).
    ``options`` are :func:`lemma_eval.evaluate`'s. With ``corpus=`` (LeanDojo's
    ``corpus.jsonl``: ``mask="accessible"``, ``Leak@k``, ``LeakRank``, ``R(origin=in-file)@k``),
    ``group_by=`` or ``by=``,
    each goal's place and theorem come from its record (``file_path``, ``full_name``, ``start``):
    the records are written as JSONL files in a temporary directory and evaluated as paths."""
    if not any(options.get(k) for k in ("corpus", "group_by", "by")):
        actual, predicted = load(path)
        return lemma_eval.evaluate(actual, predicted, list(measures), **options)
    name, records = _read(path, _safepickle.MAX_BYTES, _safepickle.MAX_OBJECTS)
    with tempfile.TemporaryDirectory() as d:
        actual_path = os.path.join(d, "actual.jsonl")
        predicted_path = os.path.join(d, "predictions.jsonl")
        # The record of each line of actual.jsonl (those with positives); predictions.jsonl's
        # line i is record i - 1.
        actual_records: List[int] = []
        with open(actual_path, "w", encoding="utf-8") as a, \
                open(predicted_path, "w", encoding="utf-8") as p:
            for i, (gid, positives, retrieved, place) in enumerate(_goals(name, records)):
                if positives:
                    a.write(json.dumps({"goal_id": gid, **place, "premises": positives}) + "\n")
                    actual_records.append(i)
                p.write(json.dumps({"goal_id": gid, "retrieved_premises": retrieved}) + "\n")
        try:
            return lemma_eval.evaluate(actual_path, predicted_path, list(measures), **options)
        except (ValueError, OSError) as e:
            message = _in_pickle(str(e), d, name, actual_records)
            if message == str(e):
                raise
            raise type(e)(message) from None


def _in_pickle(message: str, d: str, name: str, actual_records: List[int]) -> str:
    """``message`` of an evaluation of the JSONL files written in ``d`` from the pickle ``name``:
    each ``FILE:LINE`` of them as the pickle's record (numbered from 0, as the errors reading it
    are), without the byte offsets of the files that no longer exist."""
    pattern = re.escape(os.path.join(d, "")) + r"(predictions|actual)\.jsonl(?::(\d+))?"
    if not re.search(pattern, message):
        return message

    def record(m: "re.Match[str]") -> str:
        if m.group(2) is None:
            return name
        line = int(m.group(2))
        rec = line - 1 if m.group(1) == "predictions" else (
            actual_records[line - 1] if 0 < line <= len(actual_records) else None)
        return name if rec is None else f"{name}: record {rec}"

    return re.sub(r" \(byte \d+\)", "", re.sub(pattern, record, message))
