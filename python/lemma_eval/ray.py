"""Evaluation spread over a Ray cluster: one task per shard, each returning its travelling
summary, merged on the driver into exactly the single-process result.

>>> import ray, lemma_eval.ray
>>> ray.init()                          # one machine; ray.init(address="auto") on a cluster
>>> r = lemma_eval.ray.evaluate("qrels.txt", "run.txt", ["AP", "P@10"], num_shards=64)

``predicted`` is a plain text file (shards are byte ranges cut at goal boundaries) or a list of
files of any format (whole files per shard). Paths must be readable by every node (a shared file
system); ``actual`` may also be a dict, which travels through Ray's object store.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any, List, Optional, Sequence, Union

import ray

import lemma_eval

__all__ = ["evaluate"]


@ray.remote(num_cpus=1)
def _shard(actual: Any, predicted: Any, measures: Any, shard: Any, options: dict) -> tuple:
    """Evaluates one shard (a byte range of one file, or whole files): its summary's bytes and the
    measures' keys."""
    files = predicted if isinstance(predicted, list) else [predicted]
    parts = [
        lemma_eval.evaluate(actual, f, measures, shard=shard, mergeable=True, **options)
        for f in files
    ]
    keys = list(parts[0].summary)
    if len(parts) == 1:
        return parts[0].summary_bytes(), keys
    return lemma_eval.merge(parts, keys=keys).summary_bytes(), keys


def evaluate(
    actual: Any,
    predicted: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    measures: Union[None, str, Sequence[str]] = None,
    num_shards: Optional[int] = None,
    *,
    progress: bool = True,
    **options: Any,
) -> lemma_eval.Result:
    """:func:`lemma_eval.evaluate` as ``num_shards`` Ray tasks (default: twice the cluster's
    CPUs, at most one per file for a list of files), merged on the driver. Each task uses one
    thread unless ``threads`` says otherwise. ``progress`` prints shards done / total to stderr.
    Ray must be started (``ray.init()``); it is started on this machine otherwise."""
    if not ray.is_initialized():
        ray.init()
    if num_shards is not None and num_shards < 1:
        raise ValueError(f"num_shards={num_shards}: expected at least 1")
    if options.get("per_goal"):
        raise ValueError("per_goal: the shards' summaries merge; evaluate with per_goal in one process")
    options.setdefault("threads", 1)
    if isinstance(actual, Mapping):
        actual_ref: Any = ray.put(dict(actual))
    else:
        actual_ref = os.fspath(actual)
    ms = [measures] if isinstance(measures, str) else (list(measures) if measures else None)
    if isinstance(predicted, (str, os.PathLike)):
        path = os.fspath(predicted)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: cannot open: No such file or directory")
        n = num_shards or max(1, 2 * int(ray.cluster_resources().get("CPU", 1)))
        tasks = [_shard.remote(actual_ref, path, ms, (i + 1, n), options) for i in range(n)]
    else:
        if isinstance(predicted, Mapping):
            raise TypeError(
                "predicted: a path or a list of paths (files the tasks read); evaluate a dict "
                "of predictions with lemma_eval.evaluate"
            )
        files = [os.fspath(p) for p in predicted]
        if not files:
            raise ValueError("predicted: an empty list of files")
        n = min(num_shards or len(files), len(files))
        groups: List[List[str]] = [files[i::n] for i in range(n)]
        tasks = [_shard.remote(actual_ref, g, ms, None, options) for g in groups]
    done: List[Any] = [None] * len(tasks)
    index = {t: i for i, t in enumerate(tasks)}
    pending = list(tasks)
    finished = 0
    # On a terminal one line redrawn; in a log file a line per update.
    tty = progress and sys.stderr.isatty()
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for t in ready:
            done[index[t]] = ray.get(t)  # raises the task's error (ValueError, FileNotFoundError)
            finished += 1
        if tty:
            print(f"\rlemma-eval: shards done {finished}/{len(tasks)}", end="", file=sys.stderr)
        elif progress:
            print(f"lemma-eval: shards done {finished}/{len(tasks)}", file=sys.stderr)
    if tty:
        print(file=sys.stderr)
    keys = done[0][1]
    return lemma_eval.merge([b for b, _ in done], keys=keys)
