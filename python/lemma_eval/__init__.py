"""Score ranked premise predictions against the truth: exact, streamed, mergeable.

>>> import lemma_eval
>>> r = lemma_eval.evaluate({"g": ["a", "b"]}, {"g": ["x", "a", "b"]}, ["RR", "P@2"])
>>> r.summary
{'RR': 0.5, 'P@2': 0.5}

``actual`` and ``predicted`` are paths (every format the command reads) or objects in memory;
the evaluation runs in Rust with the GIL released, through the engine the command uses: files
are read as ``lemma-eval eval`` reads them (sorted qrels along a plain TREC run, in memory
independent of the number of goals), matrices ranked without sorting a row. ``Session`` takes
goals one at a time (a validation loop); ``merge`` combines travelling summaries exactly (see
``lemma_eval.ray``).
"""

from __future__ import annotations

import math
import os
import warnings
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _native

__all__ = [
    "compare",
    "convert_corpus",
    "evaluate",
    "merge",
    "report",
    "Result",
    "Session",
    "RelevanceEvaluator",
    "trec_eval",
    "TrecEvalResult",
    "supported_measures",
    "supported_nicknames",
    "parse_qrel",
    "parse_run",
    "compute_aggregated_measure",
    "LemmaEvalWarning",
    "__version__",
]

__version__: str = _native.__version__

PathLike = Union[str, "os.PathLike[str]"]


class LemmaEvalWarning(UserWarning):
    """What the command prints on stderr as ``lemma-eval: warning: ...``: predictions whose goals
    have no actual set (the wrong files, or goal names that differ)."""


def _warn(messages: Iterable[str], stacklevel: int = 3) -> None:
    for m in messages:
        warnings.warn(m, LemmaEvalWarning, stacklevel=stacklevel)


class Result:
    """What an evaluation gives: ``summary`` (measure -> value), ``per_goal`` (goal -> measure
    -> value, when asked for), ``counts`` (goals evaluated and skipped, by reason, named as in
    ``eval --format json``), ``actual_read`` (how the actual sets were read: ``kind`` ``joined``,
    ``held`` or ``given``, the command's description and figures), ``warnings`` and
    ``summary_bytes()``, the travelling summary (the bytes ``eval --summary-out`` writes), kept
    when asked for (``mergeable=True``, or a shard); ``lacking_shards`` lists the shards a
    ``merge(..., partial=True)`` lacks (empty otherwise); ``strata`` each stratum's ``summary``
    and ``counts`` by its label (``evaluate(..., by=...)``; empty otherwise); ``premises``, with
    ``corpus=``, what the premise protocol counted (``goals``, ``masked``, ``not_in_corpus``,
    ``goals_in_unlisted_files``, ``relevant_inaccessible``, ``goals_past_last_premise``;
    ``None`` otherwise)."""

    __slots__ = (
        "summary", "per_goal", "counts", "actual_read", "warnings", "_bytes", "lacking_shards",
        "_values", "strata", "premises",
    )

    def __init__(self, outcome: tuple) -> None:
        summary, rows, counts, partial, warned, read, strata, premises = outcome
        self.summary: Dict[str, Optional[float]] = dict(summary)
        keys = [k for k, _ in summary]
        self.per_goal: Optional[Dict[str, Dict[str, float]]] = None
        if rows is not None:
            self.per_goal = {goal: _values(keys, values) for goal, values in rows}
        self.counts: Dict[str, int] = dict(counts)
        self.actual_read: Dict[str, Any] = dict(read)
        self.warnings: List[str] = list(warned)
        self._bytes: Optional[bytes] = bytes(partial) if partial is not None else None
        self.lacking_shards: List[Dict[str, Any]] = []
        self._values: Optional[bytes] = None
        self.premises: Optional[Dict[str, int]] = dict(premises) if premises is not None else None
        self.strata: Dict[str, Dict[str, Any]] = {
            label: {"summary": dict(values), "counts": dict(c)} for label, values, c in strata
        }

    def summary_bytes(self) -> bytes:
        """The travelling summary: merge it with others' with :func:`merge` or ``lemma-eval
        merge``. Kept by ``evaluate(..., mergeable=True)`` (and for every shard)."""
        if self._bytes is None:
            raise ValueError(
                "summary_bytes: this result kept no travelling summary; evaluate with "
                "mergeable=True (or shard=(I, N)) to keep it (as eval --summary-out: the actual "
                "sets are then held in memory)"
            )
        return self._bytes

    def values_bytes(self) -> bytes:
        """Each goal's values: the bytes ``eval --values-out`` writes. Written to a file, its
        path is a run :func:`compare` takes. Kept by ``evaluate(..., keep_values=True)``."""
        if self._values is None:
            raise ValueError(
                "values_bytes: this result kept no values; evaluate a path with keep_values=True"
            )
        return self._values

    def __repr__(self) -> str:
        return f"Result(summary={self.summary!r}, counts={self.counts!r})"


def _values(keys: Sequence[str], values: Sequence[Optional[float]]) -> Dict[str, float]:
    return {k: v for k, v in zip(keys, values) if v is not None}


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


def _matrix(x: Any, what: str = "predicted") -> Tuple[Any, int, int, int, int, str]:
    """A 2-D float array as the native side reads it: the (C-contiguous) array that owns the
    data, its address, size in bytes, shape and NumPy type string."""
    import numpy as np

    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor
        x = x.detach().cpu().numpy()
    a = np.asarray(x)
    if a.ndim != 2:
        raise ValueError(f"{what}: expected a 2-D array [goals, lemmas], got {a.ndim}-D")
    if a.dtype.kind != "f" or a.dtype.itemsize not in (4, 8):
        raise ValueError(f"{what}: expected float32 or float64 scores, got {a.dtype}")
    a = np.ascontiguousarray(a)
    info = a.__array_interface__
    return a, int(info["data"][0]), int(a.nbytes), int(a.shape[0]), int(a.shape[1]), info["typestr"]


# The options every entry point hands to the engine, named as the command's flags.
_OPTIONS = (
    "relevance_level", "missing", "ties", "depth", "threads", "order", "duplicates",
    "interpolation", "keep_zero_relevant", "universe", "regroup", "hold_actual", "memory",
    "corpus", "mask", "goals", "strict", "strict_gold", "group_by", "by", "train_premises",
    "judged_only",
)


def _options(scope: Mapping[str, Any]) -> Dict[str, Any]:
    """The engine's options among a function's arguments (its ``locals()``)."""
    return {k: scope[k] for k in _OPTIONS if k in scope}


def _evaluator(actual: Any, measures: Any, options: Dict[str, Any], trec9: bool = False) -> Any:
    return _native.NativeEvaluator(
        _actual(actual),
        _measures(measures),
        options.get("relevance_level", 1),
        options.get("missing", "zero"),
        options.get("ties", "trec"),
        options.get("depth"),
        options.get("threads"),
        trec9,
        options.get("order"),
        options.get("duplicates", "first"),
        options.get("interpolation", "textbook"),
        options.get("keep_zero_relevant", False),
        options.get("universe"),
        options.get("regroup", False),
        options.get("hold_actual", False),
        options.get("memory"),
        _path_or_none(options.get("corpus")),
        options.get("mask", "none"),
        _path_or_none(options.get("goals")),
        options.get("strict", False),
        options.get("strict_gold", False),
        options.get("group_by"),
        _by(options.get("by")),
        _path_or_none(options.get("train_premises")),
        options.get("judged_only", False),
    )


def _by(by: Union[None, str, Iterable[str]]) -> Optional[List[str]]:
    if by is None:
        return None
    if isinstance(by, str):
        return [by]
    return [str(k) for k in by]


def _path_or_none(p: Any) -> Optional[str]:
    return os.fspath(p) if p is not None else None


def _push_dicts(session: Any, predicted: Mapping) -> None:
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


def evaluate(
    actual: Any,
    predicted: Any,
    measures: Union[None, str, Sequence[str]] = None,
    *,
    per_goal: bool = False,
    relevance_level: int = 1,
    missing: str = "zero",
    ties: str = "trec",
    order: Optional[str] = None,
    duplicates: str = "first",
    depth: Optional[int] = None,
    interpolation: str = "textbook",
    keep_zero_relevant: bool = False,
    universe: Optional[int] = None,
    regroup: bool = False,
    hold_actual: bool = False,
    memory: Union[None, int, str] = None,
    threads: Optional[int] = None,
    goal_names: Any = None,
    lemma_names: Any = None,
    names: Optional[PathLike] = None,
    shard: Optional[Tuple[int, int]] = None,
    mergeable: bool = False,
    keep_values: bool = False,
    mmap: bool = False,
    corpus: Optional[PathLike] = None,
    mask: str = "none",
    goals: Optional[PathLike] = None,
    strict: bool = False,
    strict_gold: bool = False,
    group_by: Optional[str] = None,
    by: Union[None, str, Sequence[str]] = None,
    train_premises: Optional[PathLike] = None,
) -> Result:
    """Evaluates ``predicted`` against ``actual``, as ``lemma-eval eval`` does.

    ``actual``: a path, ``{goal: {lemma: grade}}`` or ``{goal: iterable of lemma names}``.
    ``predicted``: a path (TREC run, JSONL, store, ``.npy`` with ``goal_names`` and
    ``lemma_names`` or ``names``), ``{goal: {lemma: score}}`` (ranked by score, trec_eval's tie
    rule), ``{goal: [lemma, ...]}`` (in rank order) or a 2-D float array ``[goals, lemmas]``
    (NumPy, or anything ``numpy.asarray`` takes) with ``goal_names`` and ``lemma_names`` (lists,
    or files of names; with ``corpus=``, a matrix given ``goal_names`` alone has the corpus's
    premises for columns, in its order: ReProver's ``all_premises``). ``measures``: names as the
    command takes them (``AP``, ``P@10``, ``ndcg_cut.10``, ...); the command's defaults when
    ``None``.

    The options are the command's flags: ``relevance_level`` (``--relevance-level``),
    ``missing`` (``"zero"`` or ``"skip"``), ``ties`` (``"trec"``, ``"group"``, ``"file"``),
    ``order`` (``"score"`` or ``"file"``), ``duplicates`` (``"first"`` or ``"error"``),
    ``depth``, ``interpolation`` (``"textbook"``, ``"trec10"``, ``"trec9"``),
    ``keep_zero_relevant``, ``universe`` (enables AUC), ``regroup``, ``hold_actual``, ``memory``
    (bytes, or ``"512M"``), ``threads`` (at most the cores are used), ``mmap``.
    ``shard=(I, N)`` evaluates shard I (1-based) of N of a plain text file, as ``--shard I/N``;
    ``mergeable=True`` keeps the travelling summary (``Result.summary_bytes()``, as
    ``--summary-out``); ``keep_values=True`` (a path only) keeps each goal's values
    (``Result.values_bytes()``, as ``--values-out``: written to a file, :func:`compare` takes its
    path as a run). Warnings the command prints are raised as :class:`LemmaEvalWarning`.

    Premise selection (``--corpus``, ``--mask``, ``--goals``, ``--strict``, ``--strict-gold``):
    ``corpus`` is LeanDojo's ``corpus.jsonl`` or its binary form (:func:`convert_corpus`);
    ``mask="accessible"`` removes the premises not
    accessible at each goal's theorem before ranks are given; ``goals`` a JSONL file of goal
    places (``goal_id``, ``file_path``, ``theorem_pos``) adding to the actual sets' records;
    ``Leak@k``, ``LeakRank``, ``R(origin=in-file)@k`` and ``R(origin=imported)@k`` need
    ``corpus`` (an origin measure's summary is its mean over the goals with relevant premises of
    that origin; ``None`` when there is none). Predictions as paths (TREC, JSONL, stores,
    ``.npy``), score arrays or dicts.

    ``group_by`` (``--group-by``): ``"theorem"``, ``"file"`` or any key of the goal records
    (the actual sets' JSONL records, then ``goals``); the summary is then the mean over groups
    of each group's mean, and ``Result.counts["groups"]`` counts the groups.

    ``by`` (``--by``, a key or a list of them): besides the overall summary, one per stratum of
    goals, in ``Result.strata`` (``{"gold-size=2-3": {"summary": {...}, "counts": {...}}}``):
    ``"gold-size"`` (R in ``1``, ``2-3``, ``4-7``, ``8-15``, ``16+``), ``"novelty"`` (``novel``
    when a relevant premise is not in ``train_premises``, a file of names one a line, else
    ``seen``), or a record key as ``group_by`` reads it. ``"origin"`` splits recall rather than
    goals: each ``R@k`` is followed by ``R(origin=in-file)@k`` and ``R(origin=imported)@k``
    (needs ``corpus``).
    """
    options = _options(locals())
    if isinstance(predicted, (set, frozenset)):
        raise TypeError(
            "predicted: a set has no order (its order is its hash order, another in every "
            "process): pass {goal: [lemma, ...]} in rank order or {goal: {lemma: score}}"
        )
    if keep_values and not _is_path(predicted):
        raise ValueError("keep_values: the values of a path's predictions only; pass a path")
    if shard is not None and not _is_path(predicted):
        raise ValueError("shard: a shard is a byte range of a file; predicted must be a path")
    ev = _evaluator(actual, measures, options)
    if _is_path(predicted):
        if goal_names is None and lemma_names is not None:
            raise ValueError(
                "a score matrix needs its names: goal_names= and lemma_names=, or names="
            )
        out, values = ev.evaluate_path(
            os.fspath(predicted),
            per_goal,
            goal_names,
            lemma_names,
            shard,
            mergeable,
            os.fspath(names) if names is not None else None,
            mmap,
            keep_values,
        )
    elif _is_array(predicted) or hasattr(predicted, "__array__"):
        if goal_names is None or lemma_names is None and corpus is None:
            raise ValueError(
                "a score matrix needs its names: goal_names= and lemma_names= (with corpus=, "
                "goal_names= alone: its columns are the corpus's premises)"
            )
        a, ptr, nbytes, rows, cols, typestr = _matrix(predicted)
        out = ev.evaluate_array(
            a, ptr, nbytes, rows, cols, typestr, goal_names, lemma_names, per_goal, mergeable
        )
    elif isinstance(predicted, Mapping):
        session = ev.session()
        session.keep_rows(per_goal)
        _push_dicts(session, predicted)
        out = session.finish()
        if not mergeable:
            out = out[:3] + (None,) + out[4:]
    else:
        raise TypeError(
            "predicted: expected a path, {goal: {lemma: score}}, {goal: [lemma, ...]} or a 2-D "
            f"array, got {type(predicted).__name__}"
        )
    result = Result(out)
    if _is_path(predicted):
        result._values = bytes(values) if values is not None else None
    _warn(result.warnings)
    return result


def compare(
    actual: Any,
    runs: Sequence[PathLike],
    measures: Union[None, str, Sequence[str]] = None,
    *,
    labels: Optional[Sequence[str]] = None,
    all_pairs: bool = False,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int = 0,
    relevance_level: int = 1,
    missing: str = "zero",
    ties: str = "trec",
    order: Optional[str] = None,
    duplicates: str = "first",
    depth: Optional[int] = None,
    interpolation: str = "textbook",
    keep_zero_relevant: bool = False,
    universe: Optional[int] = None,
    threads: Optional[int] = None,
    goal_names: Optional[PathLike] = None,
    lemma_names: Optional[PathLike] = None,
    names: Optional[PathLike] = None,
    mmap: bool = False,
    group_by: Optional[str] = None,
    by: Union[None, str, Sequence[str]] = None,
    systems: Optional[Mapping[str, Sequence[PathLike]]] = None,
    corpus: Optional[PathLike] = None,
    mask: str = "none",
    goals: Optional[PathLike] = None,
    strict: bool = False,
    strict_gold: bool = False,
) -> List[Dict[str, Any]]:
    """Compares runs, as ``lemma-eval compare`` does: each run evaluated against ``actual`` (a
    path or a dict, as :func:`evaluate` takes it), then, for each measure and pair of runs (the
    first against each other, or every pair with ``all_pairs=True``), a dict with the fields of
    the command's tsv: ``measure``, ``run_a``, ``run_b``, ``mean_a``, ``mean_b``, ``diff``
    (mean of b - a), ``p_t`` (paired t-test), ``p_randomization`` (Fisher's, ``permutations``
    sign patterns, ``seed``), ``p_adjusted`` (the ``test``'s p-value, ``"t"``,
    ``"randomization"`` or ``"bootstrap"``, adjusted by ``correction``, ``"holm"``,
    ``"bonferroni"``, ``"bh"`` or ``"none"``, over every comparison; or ``"tukey"``, with
    ``all_pairs=True``: Tukey's HSD over every run, as ``scipy.stats.tukey_hsd``, adjusted for
    every pair already and not corrected further), ``ci_low`` and ``ci_high``
    (bootstrap 95% interval of ``diff``), ``effect`` (mean / sd of the differences), ``wins``,
    ``ties``, ``losses`` (goals where b is higher, equal, lower); and ``p_bootstrap``,
    ``p_tukey`` (None unless ``test="tukey"``) and ``significant`` (``p_adjusted < alpha``).
    Undefined values (fewer than two goals) are NaN.

    ``runs`` are paths of any kind ``evaluate`` reads (``.npy`` matrices with ``goal_names`` and
    ``lemma_names``, or ``names``), or values files (``Result.values_bytes()`` or ``eval
    --values-out`` written to a file: read, not evaluated, giving the rows the run gives);
    ``labels`` names them (default: the paths as given). The
    other options are :func:`evaluate`'s, the premise protocol's (``corpus``, ``mask``,
    ``goals``, ``strict``, ``strict_gold``) included; with ``group_by`` (:func:`evaluate`'s, ``--group-by``)
    the tests' units are the groups of goals, each run's value of a group the mean of its goals',
    and the means are means over groups. ``by="origin"`` compares each ``R@k``'s split by origin
    too (strata of goals are refused: the tests are over all the goals). ``systems`` (``--system NAME=RUN1,RUN2``) maps a name to
    several runs of one system (seeds, folds), compared after ``runs`` as one run whose value of
    a goal is the mean of its runs'. Warnings (goals a run lacks, fewer than two goals) are
    raised as :class:`LemmaEvalWarning`.
    """
    if isinstance(runs, (str, bytes)) or hasattr(runs, "__fspath__"):
        raise TypeError("runs: expected a list of paths, got one path")
    runs = list(runs)
    for r in runs:
        if not _is_path(r):
            raise TypeError(f"runs: expected paths, got {type(r).__name__}")
    grouped = None
    if systems is not None:
        grouped = []
        for name, members in systems.items():
            if isinstance(members, (str, bytes)) or hasattr(members, "__fspath__"):
                raise TypeError(f"systems[{name!r}]: expected a list of paths, got one path")
            members = list(members)
            if not members or not all(_is_path(m) for m in members):
                raise TypeError(f"systems[{name!r}]: expected a non-empty list of paths")
            grouped.append((str(name), [os.fspath(m) for m in members]))
    options = _options(locals())
    ev = _evaluator(actual, measures, options)
    rows, warned, _goals = ev.compare(
        [os.fspath(r) for r in runs],
        list(labels) if labels is not None else None,
        all_pairs,
        test,
        correction,
        float(alpha),
        permutations,
        seed,
        os.fspath(goal_names) if goal_names is not None else None,
        os.fspath(lemma_names) if lemma_names is not None else None,
        os.fspath(names) if names is not None else None,
        mmap,
        grouped,
    )
    _warn(warned)
    return rows


def report(
    actual: Any,
    runs: Sequence[PathLike],
    output: Optional[PathLike] = None,
    *,
    relevance_level: int = 1,
    missing: str = "zero",
    ties: str = "trec",
    order: Optional[str] = None,
    duplicates: str = "first",
    depth: Optional[int] = None,
    interpolation: str = "textbook",
    keep_zero_relevant: bool = False,
    universe: Optional[int] = None,
    regroup: bool = False,
    memory: Union[None, int, str] = None,
    threads: Optional[int] = None,
    corpus: Optional[PathLike] = None,
    mask: str = "none",
    goals: Optional[PathLike] = None,
    strict: bool = False,
    strict_gold: bool = False,
    group_by: Optional[str] = None,
    by: Union[None, str, Sequence[str]] = None,
    train_premises: Optional[PathLike] = None,
) -> str:
    """The page ``lemma-eval report`` writes, as one self-contained HTML string: every run's
    summary, goal counts, curves and distributions, each run against the first; with
    ``corpus`` the leak rate, recall by origin and the premise counts; with ``by`` a section per
    stratum; under ``group_by`` the means over groups. Made by the command's own code, so the
    page's figures are the command's.

    ``actual`` is a path or a dict (as :func:`evaluate` takes it), ``runs`` paths of TREC or
    JSONL runs; the options are :func:`evaluate`'s (the premise protocol's, ``group_by``, ``by``
    and ``train_premises`` included). With ``output`` the page is also written there as the
    command writes ``-o``: whole or not at all, and refused (a ``ValueError``, before any work)
    when it would replace one of the files read.
    """
    if isinstance(runs, (str, bytes)) or hasattr(runs, "__fspath__"):
        raise TypeError("runs: expected a list of paths, got one path")
    runs = list(runs)
    if not runs:
        raise ValueError("runs: expected at least one run")
    for r in runs:
        if not _is_path(r):
            raise TypeError(f"runs: expected paths, got {type(r).__name__}")
    options = _options(locals())
    ev = _evaluator(actual, None, options)
    inputs = []
    if _is_path(actual):
        inputs.append(("actual sets", os.fspath(actual)))
    read = [os.fspath(actual)] if _is_path(actual) else []
    read += [os.fspath(p) for p in [*runs, corpus, goals, train_premises] if p is not None]
    html = ev.report(
        [os.fspath(r) for r in runs],
        inputs,
        _report_call(actual, runs, output, options),
        os.fspath(output) if output is not None else None,
        read,
    )
    return html


def _report_call(actual: Any, runs: List[Any], output: Any, options: Dict[str, Any]) -> str:
    """How a page made by :func:`report` names its call: the arguments given, options that
    differ from their defaults, paths as strings."""
    defaults = report.__kwdefaults__ or {}
    shown = lambda v: repr(os.fspath(v)) if _is_path(v) else repr(v)  # noqa: E731
    words = [shown(actual) if _is_path(actual) else "{...}", repr([os.fspath(r) for r in runs])]
    if output is not None:
        words.append(shown(output))
    words += [f"{k}={shown(v)}" for k, v in options.items() if v != defaults.get(k)]
    return f"lemma_eval.report({', '.join(words)})"


class TrecEvalResult:
    """What :func:`trec_eval` gives: ``summary``, the command's summary lines as ``{name:
    value}`` (``runid`` a str and ``num_q`` an int when asked for, the counts ints, the others
    floats; z-scores, all floats, with ``zscores=``), ``per_goal`` (``{goal: {name: value}}``,
    goals in byte order, with ``per_goal=True``; else ``None``) and ``counts`` (goals evaluated
    and skipped, by reason)."""

    __slots__ = ("summary", "per_goal", "counts")

    def __init__(self, outcome: tuple, z: bool) -> None:
        names, runid, num_q, summary, rows, counts = outcome

        def value(v: float, count: bool) -> Union[int, float]:
            return int(v) if count and not z else v

        self.summary: Dict[str, Any] = {}
        if runid is not None:
            self.summary["runid"] = runid
        if num_q is not None:
            self.summary["num_q"] = float(num_q) if z else num_q
        for (name, count), v in zip(names, summary):
            self.summary[name] = value(v, count)
        self.per_goal: Optional[Dict[str, Dict[str, Union[int, float]]]] = None
        if rows is not None:
            self.per_goal = {
                goal: {name: value(v, count) for (name, count), v in zip(names, values)}
                for goal, values in rows
            }
        self.counts: Dict[str, int] = dict(counts)

    def __repr__(self) -> str:
        return f"TrecEvalResult(summary={self.summary!r})"


def trec_eval(
    qrels: PathLike,
    run: PathLike,
    measures: Union[None, str, Iterable[str]] = None,
    *,
    relevance_format: str = "prefs",
    per_goal: bool = False,
    complete: bool = False,
    max_docs: Optional[int] = None,
    trec_version: Union[int, str] = 10,
    zscores: Optional[PathLike] = None,
    memory: Union[None, int, str] = None,
) -> TrecEvalResult:
    """``lemma-eval trec_eval -R prefs`` (or ``-R qrels_prefs``) on two files, its values as
    doubles: trec_eval's preference measures (``prefs_simp``, ``prefs_pair``, ``prefs_avgjg``,
    ..., docs/METRICS.md §8.5), which pytrec_eval's ``RelevanceEvaluator`` cannot compute (it
    takes qrels only).

    ``qrels`` is a preference file (``relevance_format="prefs"``: lines ``goal group subgroup
    lemma level``) or qrels read as preferences (``"qrels_prefs"``); ``run`` a TREC run.
    ``measures`` are trec_eval's ``-m`` arguments (default ``all_prefs``; ``runid`` and
    ``num_q`` are the summary's only other names); ``per_goal`` is ``-q``, ``complete`` ``-c``,
    ``max_docs`` ``-M``, ``trec_version`` 10 or 9 (``--trec-version``), ``zscores`` a z-score file
    (``-Z``), ``memory`` the command's ``--memory``. The evaluation is the command's (the same
    engine function prints its lines), with the GIL released. Bad input raises ``ValueError``
    with the command's message (``FileNotFoundError`` for a missing file).
    """
    names = _measures(measures) or ["all_prefs"]
    outcome = _native.trec_eval_prefs(
        os.fspath(qrels),
        os.fspath(run),
        names,
        str(relevance_format),
        bool(per_goal),
        bool(complete),
        None if max_docs is None else int(max_docs),
        str(trec_version),
        None if zscores is None else os.fspath(zscores),
        memory,
    )
    return TrecEvalResult(outcome, zscores is not None)


def convert_corpus(corpus: PathLike, output: PathLike) -> Dict[str, int]:
    """Writes a LeanDojo ``corpus.jsonl`` (plain, ``.gz``, ``.zst``) in binary form at ``output``
    (``lemma-eval convert --corpus``), whole or not at all: ``corpus=`` then reads it with no
    parsing, with the numbers the text gives (a library of 200,000 premises in a few
    hundredths of a second rather than a tenth or more). Returns the counts read: ``{"files",
    "premises", "skipped"}``. A ``ValueError`` names the file and line of a bad corpus."""
    files, premises, skipped = _native.convert_corpus(os.fspath(corpus), os.fspath(output))
    return {"files": files, "premises": premises, "skipped": skipped}


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


class Session:
    """Goals pushed one at a time, or a batch at a time, each goal's values back at once: the
    push door for a training loop's validation step.

    ``Session(actual, measures, lemma_names=..., per_goal=False, **options)`` takes the actual
    sets and the options of :func:`evaluate` (``per_goal=True`` keeps every goal's values for
    :meth:`result`). ``push(goal, ranking)`` evaluates one goal (lemma names in rank
    order, or ``{lemma: score}``); ``push_premise_ids(goal, ids)`` one ranked as numbers of
    ``corpus=``'s premises (ReProver's ``all_premises`` indices); ``push_scores(goal_ids,
    scores)`` a batch whose scores cover the whole library (a 2-D array ``[batch, lemmas]``,
    columns named by ``lemma_names``, or with ``corpus=`` and no names its premises): a
    judged lemma's rank is counted in one pass over its row, as for a ``.npy`` matrix, no row
    sorted, on all cores with the GIL released. ``values`` holds the last goal's values;
    ``summary()`` the means as finishing now would give them (goals never pushed as ``missing``
    says); ``summary_bytes()`` travels (a DDP rank's, all-gathered, merged exactly with
    :func:`merge`); ``merge(other)`` takes another session's goals. Memory: the actual sets, and
    one small record per goal; no prediction is kept.

    With ``corpus=`` (and ``mask=``, ``goals=``, ``strict=``, ``strict_gold=``, as for
    :func:`evaluate`) pushed names are masked and their leaks measured as a TREC run's are, each
    goal's place read from the actual sets' records or ``goals``; ``result().premises`` holds
    the counts; score rows (``push_scores``) are masked as a ``.npy`` matrix's rows are (the
    columns matched with the corpus once per list of ``lemma_names``).

    ``group_by=`` and ``by=`` (with ``train_premises=``) average over groups and add a summary
    per stratum as :func:`evaluate` does (``result().strata``); a summary file holds neither yet,
    so ``summary_bytes()`` is then refused.
    """

    def __init__(
        self,
        actual: Any,
        measures: Union[None, str, Sequence[str]] = None,
        *,
        lemma_names: Any = None,
        per_goal: bool = False,
        relevance_level: int = 1,
        missing: str = "zero",
        ties: str = "trec",
        order: Optional[str] = None,
        duplicates: str = "first",
        depth: Optional[int] = None,
        interpolation: str = "textbook",
        keep_zero_relevant: bool = False,
        universe: Optional[int] = None,
        threads: Optional[int] = None,
        corpus: Optional[PathLike] = None,
        mask: str = "none",
        goals: Optional[PathLike] = None,
        strict: bool = False,
        strict_gold: bool = False,
        group_by: Optional[str] = None,
        by: Union[None, str, Sequence[str]] = None,
        train_premises: Optional[PathLike] = None,
    ) -> None:
        options = _options(locals())
        self._ev = _evaluator(actual, measures, options)
        self._native = self._ev.session()
        self._native.keep_rows(per_goal)
        self._per_goal = per_goal
        self._keys: List[str] = list(self._ev.keys)
        self.values: Optional[Dict[str, float]] = None
        if lemma_names is not None:
            self._native.set_lemma_names(lemma_names)

    @property
    def measures(self) -> List[str]:
        """The measures' names, in the order of the values."""
        return list(self._keys)

    def push(self, goal: str, ranking: Any) -> Optional[Dict[str, float]]:
        """Evaluates one goal: ``ranking`` is lemma names in rank order (a list or tuple) or a
        dict of lemma -> score. Its values (``None`` when skipped: no actual set, or nothing
        relevant); also in ``values``. A push that fails (a goal pushed before, a score that is
        not a finite number, a repeated lemma under ``duplicates="error"``) raises and leaves
        the session as it was (``values`` still the last goal's): the goal may be pushed again."""
        v = self._native.push(goal, ranking)
        self.values = _values(self._keys, v) if v is not None else None
        return self.values

    def push_premise_ids(self, goal: str, ids: Any) -> Optional[Dict[str, float]]:
        """Evaluates one goal ranked as premises of ``corpus=`` given by number, best first:
        number ``i`` is the corpus's ``i``-th premise (its files in order, each file's premises
        in order, those ReProver's rules skip left out), the index ReProver's
        ``corpus.all_premises`` and the columns of its similarity matrix use, so the indices a
        retriever ranks (``similarities.argsort(...)[j].tolist()``, a NumPy array) are pushed as
        they are. Evaluated as :meth:`push` of the premises' names: masked, with leaks and
        origins alike. Needs ``corpus=``; a number past the corpus's premises raises
        ``ValueError`` and leaves the session as it was."""
        if hasattr(ids, "tolist") and not isinstance(ids, (list, tuple)):
            if getattr(ids, "ndim", 1) > 1:
                raise ValueError(
                    f"predicted: goal `{goal}`: expected premise numbers in rank order (a list, a "
                    f"tuple or a 1-D array of int), got a {ids.ndim}-D array of shape "
                    f"{tuple(ids.shape)}")
            ids = ids.tolist()
        v = self._native.push_premise_ids(goal, ids)
        self.values = _values(self._keys, v) if v is not None else None
        return self.values

    def push_scores(
        self, goal_ids: Sequence[str], scores: Any, lemma_names: Any = None
    ) -> List[Optional[Dict[str, float]]]:
        """Evaluates a batch: ``scores[i]`` scores every lemma (the columns, named by the
        ``lemma_names`` given last, here or at construction; with ``corpus=`` and no names ever
        given, the corpus's premises in its order, ReProver's ``all_premises``) for goal
        ``goal_ids[i]``. Each goal's values (``None`` when skipped), in order; the last also in
        ``values``. A goal pushed before is an error, and then nothing of the batch counts."""
        if lemma_names is not None:
            self._native.set_lemma_names(lemma_names)
        a, ptr, nbytes, rows, cols, typestr = _matrix(scores, "scores")
        goals = list(goal_ids)
        got = self._native.push_dense(goals, a, ptr, nbytes, rows, cols, typestr)
        out = [_values(self._keys, v) if v is not None else None for v in got]
        self.values = out[-1] if out else None
        return out

    def summary(self) -> Dict[str, Optional[float]]:
        """The means as finishing now would give them; the session goes on."""
        values, _, _, _, warned, _, _, _ = self._native.snapshot()
        return dict(values)

    @property
    def counts(self) -> Dict[str, int]:
        """Goals evaluated and skipped so far, by reason (goals never pushed as ``missing``
        says)."""
        return dict(self._native.snapshot()[2])

    def summary_bytes(self) -> bytes:
        """The session so far as a travelling summary: :func:`merge` combines those of several
        sessions (processes, DDP ranks) exactly, the goals none of them pushed counted once."""
        return bytes(self._native.partial())

    def merge(self, other: "Session") -> "Session":
        """Takes ``other``'s goals (a session over the same actual sets and options, built from
        the same :class:`Session`'s evaluator: see :meth:`fork`); ``other`` ends."""
        self._native.merge_from(other._native)
        return self

    def fork(self) -> "Session":
        """A new, empty session of the same actual sets and options (for another thread)."""
        s = Session.__new__(Session)
        s._ev = self._ev
        s._native = self._ev.session()
        s._native.keep_rows(self._per_goal)
        s._per_goal = self._per_goal
        s._keys = self._keys
        s.values = None
        return s

    def result(self) -> Result:
        """Ends the session: the result of every goal (the goals never pushed as ``missing``
        says), with ``per_goal`` when the session was made with ``per_goal=True``. Its warnings
        are raised as :func:`evaluate` raises them (:class:`LemmaEvalWarning`), and kept in
        ``warnings``."""
        result = Result(self._native.finish())
        _warn(result.warnings)
        return result


_names, _nicknames = _native.NativeEvaluator.pytrec_supported()

#: The trec_eval measure names lemma-eval computes, as ``pytrec_eval.supported_measures`` lists
#: them (base names, ``runid`` included): ``RelevanceEvaluator`` takes each, with parameters
#: (``P.5,10``) or pytrec_eval's spelling (``P_5``).
supported_measures = frozenset(_names)

#: pytrec_eval's nicknames (``official``, ``set``, ``all_trec``), each the set of its members
#: that lemma-eval computes.
supported_nicknames = {name: frozenset(members) for name, members in _nicknames}


def parse_qrel(f_qrel: Iterable[str]) -> Dict[str, Dict[str, int]]:
    """Reads qrels lines (``goal iteration lemma grade``, e.g. an open file) into ``{goal:
    {lemma: grade}}``, as ``pytrec_eval.parse_qrel`` does: every line has four fields, a
    lemma twice under one goal is an ``AssertionError``; a ``defaultdict``."""
    qrel: Dict[str, Dict[str, int]] = defaultdict(dict)
    for line in f_qrel:
        goal, _, lemma, grade = line.strip().split()
        assert lemma not in qrel[goal], (goal, lemma)
        qrel[goal][lemma] = int(grade)
    return qrel


def parse_run(f_run: Iterable[str]) -> Dict[str, Dict[str, float]]:
    """Reads TREC run lines (``goal Q0 lemma rank score tag``) into ``{goal: {lemma: score}}``,
    as ``pytrec_eval.parse_run`` does: six fields a line, the rank ignored, a lemma twice under
    one goal an ``AssertionError``; a ``defaultdict``."""
    run: Dict[str, Dict[str, float]] = defaultdict(dict)
    for line in f_run:
        goal, _, lemma, _rank, score, _ = line.strip().split()
        assert lemma not in run[goal], (goal, lemma)
        run[goal][lemma] = float(score)
    return run


def _pairwise_sum(a: Sequence[float], lo: int, n: int) -> float:
    """NumPy's pairwise summation of ``a[lo:lo + n]`` (what ``numpy.sum`` and ``numpy.mean`` of a
    float64 array add), for the same bits without NumPy."""
    if n < 8:
        s = -0.0
        for i in range(lo, lo + n):
            s += a[i]
        return s
    if n <= 128:
        r = [a[lo + j] for j in range(8)]
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += a[lo + i + j]
            i += 8
        s = (r[0] + r[1]) + (r[2] + r[3]) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(i, n):
            s += a[lo + k]
        return s
    half = n // 2
    half -= half % 8
    return _pairwise_sum(a, lo, half) + _pairwise_sum(a, lo + half, n - half)


def compute_aggregated_measure(measure: str, values: Iterable[float]) -> float:
    """The summary of one measure over goals' values, as ``pytrec_eval.compute_aggregated_measure``
    gives it: the sum for ``num_*`` counts, ``exp`` of the mean for ``gm_*`` (whose per-goal
    values are logs), the mean otherwise (NaN for no values). The same bits as pytrec_eval's
    (NumPy's summation, here or without NumPy; without NumPy, ``gm_``'s ``exp`` is Python's,
    which NumPy's, chosen by the CPU's vector extensions, may differ from in the last bit)."""
    vals = list(values)
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - exercised with numpy hidden
        np = None
    if np is not None:
        if measure.startswith("num_"):
            return float(np.sum(vals))
        if measure.startswith("gm_"):
            return float(np.exp(np.sum(vals) / len(vals)))
        return float(np.mean(vals))
    return _aggregate_plain(measure, vals)


def _aggregate_plain(measure: str, vals: List[float]) -> float:
    if measure.startswith("num_") and all(isinstance(v, int) for v in vals):
        return float(sum(vals))
    floats = [float(v) for v in vals]
    total = _pairwise_sum(floats, 0, len(floats)) if floats else 0.0
    if measure.startswith("num_"):
        return total
    if not floats:
        return math.nan
    mean = total / len(floats)
    if not measure.startswith("gm_"):
        return mean
    try:
        return math.exp(mean)
    except OverflowError:
        return math.inf


def _pytrec_printed(name: str) -> str:
    """The name pytrec_eval reports for a trec_eval printed name: measures of one value read
    from a parameter list (``set_F_0.5``, ``utility_2,-1,0,0``, ``relstring_20``) without the
    parameters."""
    for base in ("set_F", "utility", "relstring", "11pt_avg"):
        if name.startswith(base + "_"):
            return base
    return name


#: trec_eval's measures of judgment groups (``-R qrels_jg``), the printed names' bases.
_JUDGMENT_GROUP_MEASURES = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")


def _judgment_group_measure(name: str) -> bool:
    return any(name == b or name.startswith(b + "_") for b in _JUDGMENT_GROUP_MEASURES)


class RelevanceEvaluator:
    """pytrec_eval's ``RelevanceEvaluator``: ``evaluate(run)`` returns ``{goal: {measure:
    value}}`` with trec_eval 9.0.8's values, for the goals of the run that have judgments.
    Switch by changing the import.

    ``relevance_format="qrels_jg"`` is trec_eval's ``-R qrels_jg``: ``query_relevance`` is then
    ``{goal: {judgment_group: {lemma: grade}}}``, and the measures are ``map_avgjg``,
    ``P_avgjg`` and ``Rprec_mult_avgjg`` (with parameters; the nickname ``qrels_jg``): each
    goal's value is the mean over its groups of the measure against each group's judgments,
    as ``lemma-eval trec_eval -R qrels_jg`` computes it."""

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, Any]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
        relevance_format: str = "qrels",
    ) -> None:
        if relevance_format not in ("qrels", "qrels_jg"):
            raise ValueError(
                f"relevance_format must be 'qrels' or 'qrels_jg', not {relevance_format!r}"
            )
        # pytrec_eval's reading of the names (P_5 spellings, parameters taken together): the
        # engine's.
        # Nicknames (all_trec, official, set) expand as pytrec_eval expands them; an empty set
        # gives every goal an empty dict.
        pairs = _native.NativeEvaluator.pytrec_measures([str(m) for m in measures])
        groups = relevance_format == "qrels_jg"
        for printed, native in pairs:
            if native is None or printed == "num_q" or _judgment_group_measure(printed) == groups:
                continue
            if groups:
                raise ValueError(
                    f"measure `{printed}` reads ordinary judgments: with "
                    "relevance_format='qrels_jg' the measures are map_avgjg, P_avgjg and "
                    "Rprec_mult_avgjg"
                )
            raise ValueError(
                f"measure `{printed}` averages over judgment groups: give "
                "relevance_format='qrels_jg'"
            )
        options = dict(
            relevance_level=relevance_level,
            missing="skip",
            judged_only=bool(judged_docs_only_flag),
        )
        # One evaluator per judgment group (one in all for ordinary judgments), groups in
        # byte order: trec_eval's order of adding them.
        if groups:
            names = sorted({g for per in query_relevance.values() for g in per})
            parts = [
                {q: per[g] for q, per in query_relevance.items() if g in per} for g in names
            ]
        else:
            parts = [dict(query_relevance)]
        self._parts = [p for p in (_Part(q, pairs, options) for q in parts) if p.ev is not None]

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> Dict[str, Dict[str, float]]:
        if not scores or not self._parts:
            return {}
        run = scores if isinstance(scores, dict) else dict(scores)
        if len(self._parts) == 1:
            return self._parts[0].evaluate(run)
        # Each goal's values summed over its groups in order, divided by their number when it
        # is above 1 (trec_eval's arithmetic).
        sums: Dict[str, Dict[str, float]] = {}
        counts: Dict[str, int] = {}
        for part in self._parts:
            for goal, per in part.evaluate(run).items():
                into = sums.setdefault(goal, {})
                for name, v in per.items():
                    into[name] = into.get(name, 0.0) + v
                counts[goal] = counts.get(goal, 0) + 1
        for goal, per in sums.items():
            if counts[goal] > 1:
                for name in per:
                    per[name] = 1.0 if name == "num_q" else per[name] / counts[goal]
        return sums


class _Part:
    """One evaluator of ``RelevanceEvaluator``: the measures against one set of judgments."""

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        pairs: List[Tuple[str, Optional[str]]],
        options: Dict[str, Any],
    ) -> None:
        native = [n for _, n in pairs if n is not None] or ["num_ret"]
        # A goal without judgments is no goal of trec_eval's (pytrec_eval drops it too).
        query_relevance = {g: r for g, r in query_relevance.items() if len(r) > 0}
        # No judged goal: every run evaluates to no goal, as pytrec_eval's does.
        self.ev = None
        self._columns: List[Tuple[str, Optional[int]]] = []
        if not query_relevance:
            return
        self.ev = _evaluator(query_relevance, native, options, trec9=True)
        index = {k: i for i, k in enumerate(self.ev.keys)}
        # (printed name, index of the value or None, how pytrec_eval reports it per goal).
        # pytrec_eval names set_F and utility without their parameters.
        self._columns = [
            (_pytrec_printed(p), index[n] if n is not None else None) for p, n in pairs
        ]

    def evaluate(self, scores: Dict[str, Mapping[str, float]]) -> Dict[str, Dict[str, float]]:
        session = self.ev.session()
        session.keep_rows(True)
        session.push_scored_dict(scores)
        rows = session.finish()[1]
        out: Dict[str, Dict[str, float]] = {}
        for goal, values in rows:
            per: Dict[str, float] = {}
            for name, i in self._columns:
                v = values[i] if i is not None else None
                if name == "num_q":
                    v = 1.0
                elif name.startswith("gm_"):
                    # trec_eval keeps a goal's log AP or Bpref (floored at 1e-5); the mean is
                    # exponentiated.
                    v = math.log(max(v if v is not None else 0.0, 0.00001))
                per[name] = float(v) if v is not None else 0.0
            out[goal] = per
        return out
