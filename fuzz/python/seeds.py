"""Writes seeds for the `safepickle` fuzz target into the directory given: ReProver-shaped
predictions (their classes from a module that exists only while they are written), plain data
with shared and cyclic containers, numpy arrays, at every protocol, and crafted pickles that would
run code or allocate under pickle.load."""

import collections
import dataclasses
import pathlib
import pickle
import sys
import types

import numpy as np

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
common = types.ModuleType("common")


@dataclasses.dataclass(unsafe_hash=True)
class Premise:
    path: str
    full_name: str
    start: object
    code: str


@dataclasses.dataclass(frozen=True)
class Pos:
    line_nb: int
    column_nb: int


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self):
        self.a, self.b = 1, [2.5]


for cls in (Premise, Pos, Slotted):
    cls.__module__ = "common"
    cls.__qualname__ = cls.__name__
    setattr(common, cls.__name__, cls)
sys.modules["common"] = common

premises = [Premise("M/X.lean", f"L{i}", Pos(i, 0), f"theorem L{i}") for i in range(6)]
records = [
    {"file_path": "M/A.lean", "full_name": "A.t", "start": Pos(3, 4), "tactic_idx": i,
     "context": None, "all_pos_premises": premises[i:i + 2], "retrieved_premises": premises[::-1],
     "scores": np.linspace(1, 0, 6, dtype=np.float32) if i % 2 else [0.5] * 6}
    for i in range(3)
]
shared = [1, "x"]
cyclic = [shared, shared]
cyclic.append(cyclic)
plain = {"ints": [0, -1, 255, 65536, -(2 ** 31), 2 ** 63, -(2 ** 100)], "floats": [0.5, -0.0, 1e308],
         "text": ["", "é", "a b"], "bytes": [b"", b"\x00\xff"], "ba": bytearray(b"ab"),
         "tuples": [(), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)], "sets": [{1, 2}, frozenset({"a"})],
         "none": [None, True, False], "cyclic": cyclic,
         "od": collections.OrderedDict(a=1), "dd": collections.defaultdict(list, b=[1]),
         "path": pathlib.PurePosixPath("/a/b"), "slotted": Slotted(),
         "arrays": [np.arange(6, dtype=">i8").reshape(2, 3), np.float64(2.5), np.array([True])]}
n = 0
for proto in range(pickle.HIGHEST_PROTOCOL + 1):
    data = plain if proto >= 2 else {k: v for k, v in plain.items() if k != "slotted"}
    for value in (records, data, premises[0]):
        (out / f"seed{n}").write_bytes(pickle.dumps(value, protocol=proto))
        n += 1
del sys.modules["common"]
crafted = [
    b"\x80\x02cpathlib\nPath\nN}X\x06\x00\x00\x00existscbuiltins\nbool\ns\x86b.",
    b"\x80\x04]\x8c\x07pathlib\x8c\x04Path\x93N}\x8c\x06exists\x8c\x08builtins\x8c\x04bool\x93s\x86ba.",
    b"\x80\x02cbuiltins\nbytearray\nJ\x00\x00\x00@\x85R.",
    b"cos\nsystem\n(S'true'\ntR.",
    b"((S'true'\nlisubprocess\ncall\n.",
    b"(cbuiltins\neval\nS'1'\no.",
    b"\x80\x04\x8e" + (1 << 40).to_bytes(8, "little") + b".",
]
for c in crafted:
    (out / f"seed{n}").write_bytes(c)
    n += 1
print(n)
