"""A pickle reader that runs nothing: it walks the pickle's opcodes (:func:`pickletools.genops`,
which decodes them without executing any) and builds plain data only.

* ``dict``, ``list``, ``tuple``, ``set``, ``frozenset``, ``str``, ``bytes``, ``int``, ``float``,
  ``bool`` and ``None`` are built as themselves (``bytearray`` as ``bytes``; ``OrderedDict`` and
  ``defaultdict`` as ``dict``; a ``pathlib`` path as its ``str``).
* An object of any class becomes a :class:`PickledObject`: a ``dict`` of its state's attributes
  (also readable as attributes), with the class's name. No class is imported, no constructor,
  ``__setstate__`` or ``__reduce__`` function is called, no attribute of anything but such a
  holder is ever set.
* A call the pickle asks for (``REDUCE``) is never made. The few that only rebuild data are
  interpreted (``copyreg._reconstructor``, the containers above, ``_codecs.encode`` of a latin-1
  string, ``pathlib`` paths, numpy arrays, dtypes and scalars of numbers: arrays become lists of
  numbers); any other becomes a :class:`PickledObject` naming the function and holding its
  arguments.
* Refused with a :class:`ValueError` naming the byte: a file larger than ``max_bytes``, more
  than ``max_objects`` values built, a ``BUILD`` on anything but such a holder (a class named by
  the pickle, a list), persistent ids, extension codes, out-of-band buffers, and pickles that are
  malformed (a stack or memo out of order, an unhashable key).

A length field claiming more bytes than the file holds is refused when read (nothing is allocated
for it); every value costs at least one opcode and one byte of the file, and ``max_objects``
bounds how many are built, so the memory taken is bounded by the limits, not by what the pickle
claims.
"""

from __future__ import annotations

import io
import os
import pickletools
import struct
from typing import Any, BinaryIO, Dict, List, Optional, Tuple

__all__ = ["PickledObject", "load", "loads", "MAX_BYTES", "MAX_OBJECTS"]

#: The largest pickle :func:`load` reads by default (bytes).
MAX_BYTES = 4 << 30
#: The most values :func:`load` builds by default (each opcode builds at most one).
MAX_OBJECTS = 100_000_000


class PickledObject(dict):
    """An object of a class named by a pickle, as plain data: the keys are its state's
    attributes (``obj["full_name"]``, or ``obj.full_name``). ``pickled_class`` is the class's
    ``module.name`` (or the function's, for a call the reader does not make), ``pickled_args``
    the arguments it was to be built with, ``pickled_state`` a state that is not a dict of
    attributes, ``pickled_items`` and ``pickled_mapping`` what the pickle appended or set as items
    (a list or dict subclass; ``None`` when nothing). Equal and hashed by identity."""

    __slots__ = ("pickled_class", "pickled_args", "pickled_state", "pickled_items",
                 "pickled_mapping")

    def __init__(self, cls: str, args: Tuple[Any, ...] = ()) -> None:
        super().__init__()
        self.pickled_class = cls
        self.pickled_args = args
        self.pickled_state: Any = None
        self.pickled_items: Optional[List[Any]] = None
        self.pickled_mapping: Optional[Dict[Any, Any]] = None

    __hash__ = object.__hash__  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        return f"<{self.pickled_class} object from a pickle, {len(self)} attributes>"


class _Global(str):
    """A class or function a pickle names (``GLOBAL``): its name only, nothing imported. It is a
    ``str`` (``"module.name"``), which is what it reads as where the pickle holds it as a value."""

    def __new__(cls, module: str, name: str) -> "_Global":
        g = super().__new__(cls, f"{module}.{name}")
        g.module = module
        g.name = name
        return g

    @property
    def dotted(self) -> str:
        return str.__str__(self)


class _Array(PickledObject):
    """A numpy array being rebuilt (``numpy.ndarray`` until ``BUILD`` gives its state): then a
    list of numbers in its place, and in the memo entries that held it."""

    __slots__ = ("memo_keys",)

    def __init__(self) -> None:
        super().__init__("numpy.ndarray")
        self.memo_keys: List[int] = []


class _DType(PickledObject):
    """A numpy dtype (``numpy.dtype('f8', ...)``), its byte order from ``BUILD``."""

    __slots__ = ("code", "order")

    def __init__(self, code: str, args: Tuple[Any, ...]) -> None:
        super().__init__("numpy.dtype", args)
        self.code = code
        self.order = "="


_MARK = object()

# Python 2 names the containers under __builtin__; numpy moved its modules to numpy._core.
_BUILTINS = ("builtins", "__builtin__")
_CONTAINERS = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset, "dict": dict,
               "bytes": bytes, "str": str, "int": int, "float": float, "bool": bool}
_NUMPY_CORE = ("numpy.core.multiarray", "numpy._core.multiarray")
_NUMPY_NUMERIC = ("numpy.core.numeric", "numpy._core.numeric")
_PATHS = ("PosixPath", "PurePosixPath", "WindowsPath", "PureWindowsPath", "Path", "PurePath")
# numpy dtype codes read as numbers: struct's code for each.
_STRUCT = {"f8": "d", "f4": "f", "f2": "e", "i8": "q", "i4": "i", "i2": "h", "i1": "b",
           "u8": "Q", "u4": "I", "u2": "H", "u1": "B", "b1": "?"}


class _Bounded:
    """A reader that never asks its file for more than is left: a length field claiming 2^62
    bytes reads what there is (and :mod:`pickletools` then refuses it), allocating nothing more."""

    def __init__(self, f: BinaryIO, size: int) -> None:
        self.f = f
        self.left = size
        self.pos = 0

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        b = self.f.read(n)
        self.left -= len(b)
        self.pos += len(b)
        return b

    def readline(self) -> bytes:
        b = self.f.readline(self.left)
        self.left -= len(b)
        self.pos += len(b)
        return b

    def tell(self) -> int:
        return self.pos


class _Reader:
    def __init__(self, name: str, max_objects: int) -> None:
        self.name = name
        self.max_objects = max_objects
        self.built = 0
        self.stack: List[Any] = []
        self.marks: List[int] = []
        self.memo: Dict[int, Any] = {}
        self.pos = 0

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{self.name}: byte {self.pos}: {what}")

    def push(self, x: Any) -> None:
        self.stack.append(x)

    def pop(self) -> Any:
        if not self.stack or (self.marks and len(self.stack) == self.marks[-1]):
            raise self.fail("the pickle pops a value it has not pushed")
        return self.stack.pop()

    def top(self) -> Any:
        if not self.stack or (self.marks and len(self.stack) == self.marks[-1]):
            raise self.fail("the pickle reads a value it has not pushed")
        return self.stack[-1]

    def pop_mark(self) -> List[Any]:
        if not self.marks:
            raise self.fail("the pickle reads to a mark it has not set")
        at = self.marks.pop()
        items = self.stack[at:]
        del self.stack[at:]
        return items

    def run(self, f: Any) -> Any:
        try:
            for op, arg, pos in pickletools.genops(f):
                self.pos = pos if pos is not None else self.pos
                self.built += 1
                if self.built > self.max_objects:
                    raise self.fail(
                        f"more than {self.max_objects} values: over the limit (max_objects)")
                if op.name == "STOP":
                    if len(self.stack) != 1 or self.marks:
                        raise self.fail("the pickle ends with its stack unbalanced")
                    return self.stack[0]
                self.step(op.name, arg)
        except ValueError as e:
            if str(e).startswith(f"{self.name}: "):
                raise
            raise self.fail(f"not a valid pickle ({e})") from None
        except (RecursionError, MemoryError, OverflowError, struct.error, UnicodeError) as e:
            raise self.fail(f"not a valid pickle ({type(e).__name__}: {e})") from None
        raise self.fail("the pickle ends without its STOP")

    def step(self, name: str, arg: Any) -> None:  # noqa: C901 (one branch an opcode)
        push = self.push
        if name in ("PROTO", "FRAME"):
            return
        if name in ("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT",
                    "BINFLOAT", "STRING", "BINSTRING", "SHORT_BINSTRING", "BINBYTES",
                    "SHORT_BINBYTES", "BINBYTES8", "UNICODE", "SHORT_BINUNICODE", "BINUNICODE",
                    "BINUNICODE8"):
            push(arg)
        elif name == "BYTEARRAY8":
            push(bytes(arg))
        elif name == "NONE":
            push(None)
        elif name == "NEWTRUE":
            push(True)
        elif name == "NEWFALSE":
            push(False)
        elif name == "MARK":
            self.marks.append(len(self.stack))
        elif name == "POP":
            if self.marks and len(self.stack) == self.marks[-1]:
                self.marks.pop()  # POP of a mark, as pickle does
            else:
                self.pop()
        elif name == "POP_MARK":
            self.pop_mark()
        elif name == "DUP":
            push(self.top())
        elif name == "EMPTY_LIST":
            push([])
        elif name == "EMPTY_TUPLE":
            push(())
        elif name == "EMPTY_DICT":
            push({})
        elif name == "EMPTY_SET":
            push(set())
        elif name == "LIST":
            push(self.pop_mark())
        elif name == "TUPLE":
            push(tuple(self.pop_mark()))
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(name[-1])
            items = [self.pop() for _ in range(n)]
            push(tuple(reversed(items)))
        elif name == "DICT":
            items = self.pop_mark()
            d: Dict[Any, Any] = {}
            self.set_items(d, items)
            push(d)
        elif name == "FROZENSET":
            push(self.hashed(frozenset, self.pop_mark()))
        elif name == "APPEND":
            x = self.pop()
            self.extend(self.top(), [x])
        elif name == "APPENDS":
            items = self.pop_mark()
            self.extend(self.top(), items)
        elif name == "SETITEM":
            v = self.pop()
            k = self.pop()
            self.set_items(self.target_mapping(self.top()), [k, v])
        elif name == "SETITEMS":
            items = self.pop_mark()
            self.set_items(self.target_mapping(self.top()), items)
        elif name == "ADDITEMS":
            items = self.pop_mark()
            s = self.top()
            if not isinstance(s, set):
                raise self.fail(f"ADDITEMS to a {type(s).__name__}, not a set")
            try:
                s.update(items)
            except TypeError as e:
                raise self.fail(f"an unhashable set member ({e})") from None
        elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
            if not isinstance(arg, int) or arg < 0:
                raise self.fail("a negative memo index")
            self.memoize(arg)
        elif name == "MEMOIZE":
            self.memoize(len(self.memo))
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            try:
                push(self.memo[arg])
            except KeyError:
                raise self.fail(f"memo entry {arg} read before it is written") from None
        elif name == "GLOBAL":
            module, _, gname = str(arg).partition(" ")
            push(_Global(module, gname))
        elif name == "STACK_GLOBAL":
            gname = self.pop()
            module = self.pop()
            if not isinstance(module, str) or not isinstance(gname, str):
                raise self.fail("STACK_GLOBAL of names that are not strings")
            push(_Global(module, gname))
        elif name == "REDUCE":
            args = self.pop()
            func = self.pop()
            push(self.call(func, args))
        elif name == "NEWOBJ":
            args = self.pop()
            cls = self.pop()
            push(self.new_object(cls, args))
        elif name == "NEWOBJ_EX":
            self.pop()  # keyword arguments: kept nowhere, as nothing is constructed
            args = self.pop()
            cls = self.pop()
            push(self.new_object(cls, args))
        elif name == "INST":
            module, _, gname = str(arg).partition(" ")
            push(self.new_object(_Global(module, gname), tuple(self.pop_mark())))
        elif name == "OBJ":
            items = self.pop_mark()
            if not items:
                raise self.fail("OBJ without a class")
            push(self.new_object(items[0], tuple(items[1:])))
        elif name == "BUILD":
            state = self.pop()
            self.build(self.top(), state)
        elif name in ("PERSID", "BINPERSID"):
            raise self.fail("a persistent id: this reader resolves none (unsupported)")
        elif name in ("EXT1", "EXT2", "EXT4"):
            raise self.fail("an extension code: this reader resolves none (unsupported)")
        elif name in ("NEXT_BUFFER", "READONLY_BUFFER"):
            raise self.fail("an out-of-band buffer: unsupported")
        else:
            raise self.fail(f"opcode {name}: unsupported")

    def memoize(self, key: int) -> None:
        x = self.top()
        self.memo[key] = x
        if isinstance(x, _Array):
            x.memo_keys.append(key)

    def hashed(self, kind: Any, items: Any) -> Any:
        try:
            return kind(items)
        except TypeError as e:
            raise self.fail(f"an unhashable set member ({e})") from None

    def extend(self, target: Any, items: List[Any]) -> None:
        if isinstance(target, list):
            target.extend(items)
        elif isinstance(target, PickledObject):
            if target.pickled_items is None:
                target.pickled_items = []
            target.pickled_items.extend(items)
        else:
            raise self.fail(f"APPEND to a {_kind(target)}, not a list")

    def target_mapping(self, target: Any) -> Dict[Any, Any]:
        if isinstance(target, PickledObject):
            if target.pickled_mapping is None:
                target.pickled_mapping = {}
            return target.pickled_mapping
        if isinstance(target, dict):
            return target
        raise self.fail(f"SETITEM on a {_kind(target)}, not a dict")

    def set_items(self, d: Dict[Any, Any], items: List[Any]) -> None:
        if len(items) % 2:
            raise self.fail("a dict's items are not in pairs")
        try:
            for i in range(0, len(items), 2):
                d[items[i]] = items[i + 1]
        except TypeError as e:
            raise self.fail(f"an unhashable dict key ({e})") from None

    def new_object(self, cls: Any, args: Any) -> Any:
        if not isinstance(cls, _Global):
            raise self.fail(f"an object of a {_kind(cls)}, not of a class the pickle names")
        if not isinstance(args, tuple):
            raise self.fail("an object's arguments are not a tuple")
        # A subclass of a container pickled by copyreg.__newobj__ is still an object of a class.
        return PickledObject(cls.dotted, args)

    def call(self, func: Any, args: Any) -> Any:
        if not isinstance(func, _Global):
            raise self.fail(f"a call of a {_kind(func)}, not of a function the pickle names")
        if not isinstance(args, tuple):
            raise self.fail("a call's arguments are not a tuple")
        m, n = func.module, func.name
        if (m, n) == ("copyreg", "_reconstructor"):
            if len(args) != 3 or not isinstance(args[0], _Global):
                raise self.fail("copyreg._reconstructor(class, base, state) of other arguments")
            return PickledObject(args[0].dotted)
        if m in _BUILTINS and n in _CONTAINERS:
            if n in ("list", "tuple", "set", "frozenset", "dict") and len(args) <= 1:
                items = args[0] if args else ()
                if not isinstance(items, (list, tuple, set, frozenset, dict)):
                    raise self.fail(f"{n}() of a {_kind(items)}")
                return self.hashed(_CONTAINERS[n], items)
            if n == "bytes" and len(args) <= 1 and all(isinstance(a, bytes) for a in args):
                return bytes(*args)
            if n in ("str", "int", "float", "bool") and len(args) == 1 and isinstance(
                    args[0], (str, int, float, bool)) and not isinstance(args[0], bytes):
                if n != "str" and isinstance(args[0], str) and len(args[0]) > 64:
                    raise self.fail(f"{n}() of a string of {len(args[0])} characters")
                try:
                    return _CONTAINERS[n](args[0])
                except ValueError as e:
                    raise self.fail(f"{n}() of {args[0]!r:.40}: {e}") from None
        if m in _BUILTINS and n == "bytearray" and len(args) == 1 and isinstance(args[0], bytes):
            return args[0]
        if m == "collections" and n in ("OrderedDict", "defaultdict"):
            # OrderedDict(items) or defaultdict(factory, items); the items usually follow as
            # SETITEMS. The factory is a name, never called.
            items = args[1:] if n == "defaultdict" else args
            d: Dict[Any, Any] = {}
            if items and isinstance(items[0], dict):
                d.update(items[0])
            elif items and isinstance(items[0], (list, tuple)):
                pairs = items[0]
                if not all(isinstance(kv, (list, tuple)) and len(kv) == 2 for kv in pairs):
                    raise self.fail(f"{n}() of items that are not pairs")
                self.set_items(d, [x for kv in pairs for x in kv])
            return d
        if (m, n) == ("_codecs", "encode"):
            if (len(args) == 2 and isinstance(args[0], str)
                    and args[1] in ("latin1", "latin-1", "iso-8859-1")):
                try:
                    return args[0].encode("latin-1")
                except UnicodeEncodeError as e:
                    raise self.fail(f"_codecs.encode: {e}") from None
        if m in ("pathlib", "pathlib._local") and n in _PATHS:
            if all(isinstance(a, str) for a in args):
                sep = "\\" if "Windows" in n else "/"
                return _join_path(args, sep)
        if m in _NUMPY_CORE and n == "_reconstruct":
            return _Array()
        if m == "numpy" and n == "dtype" and args and isinstance(args[0], str):
            return _DType(args[0], args)
        if m in _NUMPY_CORE and n == "scalar" and len(args) == 2:
            dtype, data = args
            if isinstance(dtype, _DType) and isinstance(data, bytes):
                values = self.numbers(dtype, data)
                if values is not None and len(values) == 1:
                    return values[0]
        if m in _NUMPY_NUMERIC and n == "_frombuffer" and len(args) == 4:
            data, dtype, shape, _order = args
            if isinstance(dtype, _DType) and isinstance(data, bytes):
                values = self.numbers(dtype, data)
                if values is not None:
                    return _shaped(values, shape)
        # Not made: a holder of its name and arguments.
        return PickledObject(func.dotted, args)

    def build(self, target: Any, state: Any) -> None:
        if isinstance(target, _DType):
            if isinstance(state, tuple) and len(state) > 1 and state[1] in ("<", ">", "|", "="):
                target.order = state[1]
            target.pickled_state = state
        elif isinstance(target, _Array):
            # (version, shape, dtype, Fortran order, data): the data as numbers when it can be.
            target.pickled_state = state
            if not (isinstance(state, tuple) and len(state) == 5):
                return
            _, shape, dtype, fortran, data = state
            values: Optional[List[Any]] = None
            if isinstance(dtype, _DType) and isinstance(data, bytes):
                values = self.numbers(dtype, data)
            elif isinstance(data, list):
                values = data
            if values is None or (fortran and isinstance(shape, tuple) and len(shape) > 1):
                return  # kept as the holder of its state
            array = _shaped(values, shape)
            self.stack[-1] = array
            for k in target.memo_keys:
                if self.memo.get(k) is target:
                    self.memo[k] = array
        elif isinstance(target, PickledObject):
            slots = None
            if isinstance(state, tuple) and len(state) == 2 and (
                    state[0] is None or isinstance(state[0], dict)) and (
                    state[1] is None or isinstance(state[1], dict)):
                state, slots = state
            if isinstance(state, dict):
                self.set_attributes(target, state)
            elif state is not None:
                target.pickled_state = state
            if slots:
                self.set_attributes(target, slots)
        else:
            raise self.fail(
                f"BUILD on a {_kind(target)}: only objects of a class can take a state")

    def set_attributes(self, target: PickledObject, state: Dict[Any, Any]) -> None:
        for k, v in state.items():
            if not isinstance(k, str):
                raise self.fail(f"an attribute named by a {_kind(k)}, not a string")
            target[k] = v

    def numbers(self, dtype: _DType, data: bytes) -> Optional[List[Any]]:
        code = _STRUCT.get(dtype.code.lstrip("<>=|"))
        if code is None:
            return None
        order = dtype.code[0] if dtype.code[0] in "<>=|" else dtype.order
        size = struct.calcsize(code)
        if len(data) % size:
            raise self.fail(f"an array of {len(data)} bytes, not a multiple of {size}")
        n = len(data) // size
        if self.built + n > self.max_objects:
            raise self.fail(f"more than {self.max_objects} values: over the limit (max_objects)")
        self.built += n
        prefix = ">" if order == ">" else "<"
        return list(struct.unpack(f"{prefix}{n}{code}", data))


def _join_path(parts: Tuple[str, ...], sep: str) -> str:
    out = ""
    for p in parts:
        if not out or p.startswith(sep):
            out = p
        elif out.endswith(sep):
            out += p
        else:
            out += sep + p
    return out


def _shaped(values: List[Any], shape: Any) -> Any:
    """`values` (C order) as nested lists of `shape`; a flat list when the shape does not fit."""
    if not isinstance(shape, tuple) or not all(isinstance(d, int) and d >= 0 for d in shape):
        return values
    total = 1
    for d in shape:
        total *= d
    if total != len(values) or len(shape) <= 1:
        return values
    for d in reversed(shape[1:]):
        values = [values[i:i + d] for i in range(0, len(values), d)]
    return values


def _kind(x: Any) -> str:
    if isinstance(x, _Global):
        return f"class or function ({x.dotted})"
    if isinstance(x, PickledObject):
        return f"{x.pickled_class} object"
    return type(x).__name__


def loads(data: bytes, *, name: str = "<bytes>", max_bytes: int = MAX_BYTES,
          max_objects: int = MAX_OBJECTS) -> Any:
    """The plain data of the pickle `data` (see the module); errors are ``ValueError`` naming
    `name` and the byte."""
    if len(data) > max_bytes:
        raise ValueError(f"{name}: {len(data)} bytes: over the limit of {max_bytes} (max_bytes)")
    return _Reader(name, max_objects).run(_Bounded(io.BytesIO(data), len(data)))


def load(path: "str | os.PathLike[str]", *, max_bytes: int = MAX_BYTES,
         max_objects: int = MAX_OBJECTS) -> Any:
    """The plain data of the pickle in the file `path` (see the module); errors are
    ``ValueError`` naming the file and the byte (``FileNotFoundError`` and other ``OSError``\\s
    as ``open`` raises them)."""
    name = os.fspath(path)
    with open(name, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise ValueError(f"{name}: {size} bytes: over the limit of {max_bytes} (max_bytes)")
        return _Reader(name, max_objects).run(_Bounded(f, size))
