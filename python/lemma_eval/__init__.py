"""Score ranked premise predictions against the truth: exact, streamed, mergeable.

>>> import lemma_eval
>>> r = lemma_eval.evaluate({"g": ["a", "b"]}, {"g": ["x", "a", "b"]}, ["RR", "P@2"])
>>> r.summary
{'RR': 0.5, 'P@2': 0.5}

``actual`` and ``predicted`` are paths (every format the command reads) or objects in memory;
the evaluation runs in Rust with the GIL released. ``Result.summary_bytes()`` travels to another
process and ``merge`` combines such summaries exactly (see ``lemma_eval.ray``).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _native

__all__ = ["evaluate", "merge", "Result", "RelevanceEvaluator"]

PathLike = Union[str, "os.PathLike[str]"]


class Result:
    """What an evaluation gives: ``summary`` (measure -> value), ``per_goal`` (goal -> measure
    -> value, when asked for), ``counts`` (goals evaluated and skipped, by reason) and
    ``summary_bytes()``, the travelling summary (the bytes ``eval --summary-out`` writes);
    ``lacking_shards`` lists the shards a ``merge(..., partial=True)`` lacks (empty otherwise)."""

    __slots__ = ("summary", "per_goal", "counts", "_bytes", "lacking_shards")

    def __init__(self, outcome: tuple) -> None:
        summary, rows, counts, partial = outcome
        self.summary: Dict[str, Optional[float]] = dict(summary)
        keys = [k for k, _ in summary]
        self.per_goal: Optional[Dict[str, Dict[str, float]]] = None
        if rows is not None:
            self.per_goal = {
                goal: {k: v for k, v in zip(keys, values) if v is not None}
                for goal, values in rows
            }
        self.counts: Dict[str, int] = dict(counts)
        self._bytes: bytes = bytes(partial) if partial is not None else b""
        self.lacking_shards: List[Dict[str, Any]] = []

    def summary_bytes(self) -> bytes:
        """The travelling summary: merge it with others' with :func:`merge` or ``lemma-eval
        merge``."""
        return self._bytes

    def __repr__(self) -> str:
        return f"Result(summary={self.summary!r}, counts={self.counts!r})"


def _measures(measures: Union[None, str, Iterable[str]]) -> Optional[List[str]]:
    if measures is None:
        return None
    if isinstance(measures, str):
        return [measures]
    return [str(m) for m in measures]


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike))


def _actual(actual: Any) -> Any:
    if _is_path(actual):
        return os.fspath(actual)
    if isinstance(actual, Mapping):
        # Inner mappings of other types (MappingProxyType, ...) as dicts: their grades count.
        if all(type(v) is dict or not isinstance(v, Mapping) for v in actual.values()):
            return actual if isinstance(actual, dict) else dict(actual)
        return {g: dict(v) if isinstance(v, Mapping) else v for g, v in actual.items()}
    raise TypeError(
        "actual: expected a path, {goal: {lemma: grade}} or {goal: iterable of lemma names}, "
        f"got {type(actual).__name__}"
    )


def _is_array(x: Any) -> bool:
    return hasattr(x, "ndim") and hasattr(x, "dtype") and hasattr(x, "shape")


def _names(names: Any, what: str) -> List[str]:
    if names is None:
        raise ValueError(f"a score matrix needs {what}")
    if _is_path(names):
        with open(os.fspath(names), encoding="utf-8") as f:
            return [line.rstrip("\n") for line in f]
    return [str(n) for n in names]


def _push_matrix(session: Any, matrix: Any, goal_names: Any, lemma_names: Any) -> None:
    import numpy as np

    if matrix.ndim != 2:
        raise ValueError(f"predicted: expected a 2-D array [goals, lemmas], got {matrix.ndim}-D")
    goals = _names(goal_names, "goal_names")
    lemmas = _names(lemma_names, "lemma_names")
    if len(goals) != matrix.shape[0] or len(lemmas) != matrix.shape[1]:
        raise ValueError(
            f"predicted: shape {tuple(matrix.shape)} but {len(goals)} goal names and "
            f"{len(lemmas)} lemma names"
        )
    f64 = matrix.dtype == np.float64
    dtype = "<f8" if f64 else "<f4"
    if matrix.dtype not in (np.float32, np.float64):
        raise ValueError(f"predicted: expected float32 or float64 scores, got {matrix.dtype}")
    session.set_lemma_names(lemmas)
    for goal, row in zip(goals, matrix):
        session.push_row(goal, np.ascontiguousarray(row, dtype=dtype).tobytes(), f64)


def _evaluate_with(
    ev: Any,
    predicted: Any,
    per_goal: bool,
    goal_names: Any = None,
    lemma_names: Any = None,
    shard: Optional[Tuple[int, int]] = None,
) -> Result:
    if shard is not None and not _is_path(predicted):
        raise ValueError("shard: a shard is a byte range of a file; predicted must be a path")
    if _is_path(predicted):
        path = os.fspath(predicted)
        if (goal_names is None) != (lemma_names is None):
            raise ValueError("a score matrix needs both goal_names and lemma_names")
        if goal_names is not None and not (_is_path(goal_names) and _is_path(lemma_names)):
            import numpy as np

            if shard is not None:
                raise ValueError("shard: a shard is a byte range of a text file, not of a matrix")

            return _evaluate_with(ev, np.load(path, mmap_mode="r"), per_goal, goal_names, lemma_names)
        gn = os.fspath(goal_names) if goal_names is not None else None
        ln = os.fspath(lemma_names) if lemma_names is not None else None
        return Result(ev.evaluate_path(path, per_goal, gn, ln, tuple(shard) if shard else None))
    session = ev.session()
    session.keep_rows(per_goal)
    if _is_array(predicted):
        _push_matrix(session, predicted, goal_names, lemma_names)
    elif isinstance(predicted, Mapping):
        run = predicted if isinstance(predicted, dict) else dict(predicted)
        scored = [isinstance(v, Mapping) for v in run.values()]
        if all(scored) and scored:
            if not all(type(v) is dict for v in run.values()):
                run = {g: dict(v) for g, v in run.items()}
            session.push_scored_dict(run)
        elif not any(scored):
            session.push_ranked_dict(run)
        else:
            raise ValueError(
                "predicted: expected every goal's value to be a dict of lemma -> score, or every "
                "goal's a list of lemma names in rank order; found both"
            )
    else:
        raise TypeError(
            "predicted: expected a path, {goal: {lemma: score}}, {goal: [lemma, ...]} or a 2-D "
            f"array, got {type(predicted).__name__}"
        )
    return Result(session.finish())


def evaluate(
    actual: Any,
    predicted: Any,
    measures: Union[None, str, Sequence[str]] = None,
    *,
    per_goal: bool = False,
    relevance_level: int = 1,
    missing: str = "zero",
    ties: str = "trec",
    depth: Optional[int] = None,
    threads: Optional[int] = None,
    goal_names: Any = None,
    lemma_names: Any = None,
    shard: Optional[Tuple[int, int]] = None,
) -> Result:
    """Evaluates ``predicted`` against ``actual``.

    ``actual``: a path, ``{goal: {lemma: grade}}`` or ``{goal: iterable of lemma names}``.
    ``predicted``: a path (TREC run, JSONL, store, ``.npy`` with ``goal_names`` and
    ``lemma_names``), ``{goal: {lemma: score}}`` (ranked by score, trec_eval's tie rule),
    ``{goal: [lemma, ...]}`` (in rank order) or a 2-D float array ``[goals, lemmas]`` with
    ``goal_names`` and ``lemma_names``. ``measures``: names as the command takes them (``AP``,
    ``P@10``, ``ndcg_cut.10``, ...); the command's defaults when ``None``. The options are the
    command's (``--relevance-level``, ``--missing``, ``--ties``, ``--depth``, ``--threads``).
    ``shard=(I, N)`` evaluates shard I (1-based) of N of a plain text file, as ``--shard I/N``:
    the shards' ``summary_bytes()`` merge into the whole file's result.
    """
    ev = _native.NativeEvaluator(
        _actual(actual),
        _measures(measures),
        relevance_level,
        missing,
        ties,
        depth,
        threads,
    )
    return _evaluate_with(ev, predicted, per_goal, goal_names, lemma_names, shard)


def merge(
    parts: Iterable[Union[bytes, Result]],
    keys: Optional[Sequence[str]] = None,
    *,
    partial: bool = False,
) -> Result:
    """Merges travelling summaries (``Result.summary_bytes()``, ``--summary-out`` files' bytes)
    of shards of one evaluation into the result one evaluation would give. ``keys`` names the
    measures (their own names by default).

    The checks are ``lemma-eval merge``'s, each part named ``parts[i]``: a ``ValueError`` for other
    options or actual sets, goals in two parts, a shard given twice, shards of one file cut into
    different numbers, and shards missing (``shards 3-8 of 8 of run.txt (...) are missing``).
    With ``partial=True`` missing shards are no error: the summary is of the goals the shards
    given ranked, and ``lacking_shards`` lists what is missing, one dict per predictions file:
    ``{"predictions": name, "bytes": length, "fingerprint": 16 hex digits, "of": N, "shards":
    [(first, last), ...], "missing": count}``. ``summary_bytes()`` of such a result merges later
    with the shards it lacks."""
    blobs = [p.summary_bytes() if isinstance(p, Result) else bytes(p) for p in parts]
    outcome, lacking = _native.merge(
        blobs, list(keys) if keys is not None else None, partial=bool(partial)
    )
    r = Result(outcome)
    r.lacking_shards = [
        {
            "predictions": name,
            "bytes": size,
            "fingerprint": f"{fingerprint:016x}",
            "of": n,
            "shards": [tuple(s) for s in shards],
            "missing": sum(b - a + 1 for a, b in shards),
        }
        for name, size, fingerprint, n, shards in lacking
    ]
    return r


def _pytrec_name(measure: str) -> str:
    """A measure as pytrec_eval also spells it, ``base_p1,p2`` for ``base.p1,p2`` (``P_5``,
    ``ndcg_cut_10``, ``iprec_at_recall_0.10``), in the form trec_eval takes; any other name as it
    is (an unknown one is then refused by name)."""
    try:
        _native.NativeEvaluator.trec_measures([measure])
        return measure
    except ValueError:
        pass
    m = re.fullmatch(r"(.+?)_([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)", measure)
    if m is None:
        return measure
    dotted = f"{m.group(1)}.{m.group(2)}"
    try:
        _native.NativeEvaluator.trec_measures([dotted])
        return dotted
    except ValueError:
        return measure


def _merge_parameters(measures: Iterable[str]) -> List[str]:
    """pytrec_eval's reading of a set of measures: the parameters of one measure given in
    several elements are taken together (``{"P.5", "P.10"}`` is ``P.5,10``), where trec_eval's
    command line keeps the first ``-m`` with parameters. A bare name stays as it is when no
    element gives it parameters."""
    params: Dict[str, List[str]] = {}
    for m in sorted(set(measures)):
        base, dot, rest = m.partition(".")
        got = params.setdefault(base, [])
        for p in rest.split(",") if dot else []:
            if p not in got:
                got.append(p)
    return [f"{b}.{','.join(p)}" if p else b for b, p in params.items()]


class RelevanceEvaluator:
    """pytrec_eval's ``RelevanceEvaluator``: ``evaluate(run)`` returns ``{goal: {measure:
    value}}`` with trec_eval 9.0.8's values, for the goals of the run that have judgments.
    Switch by changing the import."""

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
    ) -> None:
        if judged_docs_only_flag:
            raise ValueError("judged_docs_only_flag is not supported")
        measures = [_pytrec_name(m) for m in measures]
        pairs = _native.NativeEvaluator.trec_measures(_merge_parameters(measures))
        native = [n for _, n in pairs if n is not None]
        self._ev = _native.NativeEvaluator(
            _actual(query_relevance),
            native,
            relevance_level,
            "skip",
            "trec",
            None,
            None,
            True,
        )
        index = {k: i for i, k in enumerate(self._ev.keys)}
        # (printed name, index of the value or None, how pytrec_eval reports it per goal).
        # pytrec_eval names set_F without its parameter.
        self._columns = [
            ("set_F" if p.startswith("set_F_") else p, index[n] if n is not None else None)
            for p, n in pairs
        ]

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> Dict[str, Dict[str, float]]:
        session = self._ev.session()
        session.keep_rows(True)
        session.push_scored_dict(scores if isinstance(scores, dict) else dict(scores))
        _, rows, _, _ = session.finish()
        out: Dict[str, Dict[str, float]] = {}
        for goal, values in rows:
            per: Dict[str, float] = {}
            for name, i in self._columns:
                v = values[i] if i is not None else None
                if name == "num_q":
                    v = 1.0
                elif name == "gm_map":
                    # trec_eval keeps a goal's log AP (floored at 1e-5); the mean is exponentiated.
                    v = math.log(max(v if v is not None else 0.0, 0.00001))
                per[name] = float(v) if v is not None else 0.0
            out[goal] = per
        return out
