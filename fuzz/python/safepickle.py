"""Fuzz target (atheris, libFuzzer's flags): any bytes as a pickle for the reader of ReProver's
predictions (python/lemma_eval/_safepickle.py), which must run nothing of it.

Checks, beyond "no exception but ValueError, no hang":
* nothing of the interpreter changes (the classes and functions a crafted pickle would reach:
  pathlib.Path's methods, os.system, builtins);
* a pickle of plain data that pickle itself reads, with every class refused (so that it runs
  nothing either), reads to the same value: the same types (bytearray as bytes), numbers, strings,
  and the same sharing of lists and dicts, cycles included.

Run by scripts/fuzz-pickle (scripts/fuzz runs it as the target `safepickle`).
"""

import builtins
import importlib.util
import io
import math
import os
import pathlib
import pickle
import pickletools
import sys

import atheris

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "safepickle", ROOT / "python" / "lemma_eval" / "_safepickle.py")
safepickle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(safepickle)

# What a crafted pickle run by pickle.load could change: each must stay itself.
_WATCHED = [(pathlib.Path, n) for n in ("exists", "open", "read_bytes", "__init__", "__new__")]
_WATCHED += [(os, "system"), (builtins, "open"), (builtins, "eval"), (pickle, "loads")]
_ORIGINAL = [getattr(o, n) for o, n in _WATCHED]


class _DataOnly(pickle.Unpickler):
    """pickle's own reader, refusing every class and persistent id: it too runs nothing."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global {module}.{name}")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent id")


def _same(a, b, seen):
    """a (the safe reader's) is b (pickle's), structurally; pairs already compared hold."""
    if isinstance(b, bytearray):
        return type(a) is bytes and a == bytes(b)
    if type(a) is not type(b):
        return False
    if isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if not isinstance(b, (list, tuple, dict, set, frozenset)):
        return a == b
    key = (id(a), id(b))
    if key in seen:
        return seen[key]
    seen[key] = True
    if len(a) != len(b):
        seen[key] = False
    elif isinstance(b, dict):
        seen[key] = all(_same(ka, kb, seen) and _same(va, vb, seen)
                        for (ka, va), (kb, vb) in zip(a.items(), b.items()))
    elif isinstance(b, (set, frozenset)):
        # Built from the same members in the same order: the same iteration order.
        seen[key] = all(_same(x, y, seen) for x, y in zip(a, b))
    else:
        seen[key] = all(_same(x, y, seen) for x, y in zip(a, b))
    return seen[key]


def _shares(a, b, ids_a, ids_b):
    """The same containers are shared in both: a container met twice in one is met twice, at
    the same places, in the other."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if not isinstance(y, (list, dict)):
            continue
        met = id(x) in ids_a
        ix, iy = ids_a.setdefault(id(x), len(ids_a)), ids_b.setdefault(id(y), len(ids_b))
        if ix != iy:
            return False
        if met:  # its contents were compared when it was first met
            continue
        if isinstance(y, list):
            stack.extend(zip(x, y))
        else:
            stack.extend(zip(x.values(), y.values()))
    return True


def _memo_small(data: bytes) -> bool:
    """No memo index past 2^16: pickle's own reader keeps its memo as an array as long as the
    largest index (LONG_BINPUT 780000000 takes it 6 GB), the safe reader as a dict."""
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("PUT", "BINPUT", "LONG_BINPUT") and arg > 1 << 16:
            return False
        if op.name == "STOP":
            return True
    return True


def TestOneInput(data: bytes) -> None:
    try:
        got = safepickle.loads(data, max_objects=len(data) + 16)
        read = True
    except ValueError:
        read = False
    for (o, n), v in zip(_WATCHED, _ORIGINAL):
        if getattr(o, n) is not v:
            raise AssertionError(f"{o!r}.{n} changed")
    if not read or not _memo_small(data):
        return
    try:
        want = _DataOnly(io.BytesIO(data)).load()
    except Exception:  # noqa: BLE001 (pickle's errors are of every kind)
        return
    try:
        if not _same(got, want, {}):
            raise AssertionError(f"read {got!r:.200} where pickle reads {want!r:.200}")
        if not _shares(got, want, {}, {}):
            raise AssertionError("containers shared differently than pickle shares them")
    except RecursionError:
        pass


def main() -> None:
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
