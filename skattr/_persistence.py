"""Save and load skattr's objects as JSON: data only, skattr's own types only.

``to_json`` writes a mechanism (its parameters and, when fitted, what ``fit``
learned), a :class:`~skattr.Plan` or a :class:`~skattr.Release` as JSON text;
``from_json`` reads it back. No pickle and no code: a file holds numbers,
strings, arrays and the names of skattr classes, and loading builds only the
classes on an explicit allowlist (:func:`allowed_types`), looked up by name,
never imported from a module the file names. A Python function (a lambda
predicate, a statistic of one's own) is code, so it is refused on saving;
:mod:`skattr.predicates` states predicates as data.

The file::

    {"sha256": "<hex digest>",
     "skattr": {"schema": 1, "version": "0.3.0", "object": <the object>}}

The digest is SHA-256 over the canonical serialisation of the ``"skattr"``
part (:func:`canonical`: keys sorted, no spaces, ASCII). It detects a file
corrupted or edited by accident; it is not a signature: whoever edits a file
on purpose can recompute it. Keep files where only trusted people can write,
or sign them.

Values are encoded exactly. JSON numbers are read back as the same Python
int or float (floats are written by ``repr``, the shortest text that reads
back to the same double; infinities and NaN as strings); every other value is
an object tagged by ``"type"``: ``tuple``, ``dict`` (its items as pairs, so
that keys of any type and their order survive), ``set``, ``frozenset``,
``numpy`` (a NumPy scalar and its dtype), ``ndarray`` (dtype, shape and the
values in C order), ``Series``, ``Index``, ``RangeIndex``, ``MultiIndex``
(pandas, with their dtypes and names), ``Generator`` and ``RandomState`` (a
NumPy generator's state at saving), ``method`` (a bound method of an
allowlisted object, by name, from :data:`_METHODS`), ``object`` and
``estimator``.

Objects are saved generically, so fields and parameters added later round-trip
without changes here: a dataclass by the fields its ``__init__`` takes (a
private field with a default is a cache and starts empty again), a mechanism
by ``get_params()`` and the attributes ``fit`` set, other allowlisted classes
by their attributes (``__dict__``), and a class registered with its
``arguments`` (:class:`~skattr.bayes.ParameterNetwork`) by them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import math
import re
import types

import numpy as np
import pandas as pd

from skattr._version import __version__
from skattr.exceptions import PersistenceError

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "SCHEMA_VERSION", "allowed_types",
           "canonical", "check_size_and_depth", "from_json", "to_json"]

#: Version of the JSON layout written by :func:`to_json`.
SCHEMA_VERSION = 1

# NumPy dtype kinds stored as lists: bool, integers, floats, str, objects.
_KINDS = frozenset("biufUO")
# Bound methods a fitted object may hold (MomentLaws.weight is Query.weight).
_METHODS = frozenset({"weight"})
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937")
# Index and Series dtypes other than NumPy's: pandas' strings.
_PANDAS_DTYPES = frozenset({"str", "string"})

#: The largest file from_json reads (checked before it is parsed): a saved
#: mechanism or ledger is kilobytes to a few megabytes.
MAX_FILE_BYTES = 64 * 2**20
#: The deepest nesting of JSON arrays and objects a file may have (checked
#: before it is parsed); skattr writes fewer than 40 levels.
MAX_DEPTH = 200
#: Arrays a file builds may take at most this many bytes per byte of the
#: file, plus a MiB: a number written in JSON takes at least 2 characters
#: for its 8 bytes (4 bytes a character), and a string array's elements
#: are about as wide as their text, so a file skattr wrote stays below; a declared dtype
#: or shape that would allocate more (one long string making every element
#: of a string array that long) is refused before anything is allocated.
_BYTES_PER_FILE_BYTE = 16
#: The widest string element an array may declare (its dtype's itemsize).
_MAX_ITEMSIZE = 2**16
# A JSON string (escapes included), and what is not a bracket.
# (An unterminated string runs to the end, a last lone backslash included:
# a match begun at a quote never fails, so re.sub never rescans the rest of
# the file from the next quote, and a file of escaped quotes is linear, not
# quadratic. Found by review; one ending in a backslash took 196 s at 80 KB.)
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")

_PREDICATES_HINT = (
    "skattr saves no code: state the predicate with skattr.predicates "
    "(Above, AtLeast, Below, AtMost, Between, Equals, OneOf, combined with &, "
    "| and ~) instead of a function, or a category value; a Statistic of your "
    "own function cannot be saved.")


#: The classes a file may name, by qualified name. Each registers itself
#: where it is defined (:func:`persistable`); the estimators through the
#: mechanisms' registry. This module imports nothing of skattr's above it.
_ALLOWED: dict[str, type] = {}
#: The registered estimators (saved by their parameters and fitted state).
_ESTIMATORS: set = set()
#: Classes saved by their constructor's arguments, not their attributes:
#: qualified name -> a function of an instance returning the arguments.
_CONSTRUCTED: dict = {}
#: Functions that import the modules defining the allowed classes: the
#: package imports its subpackages on first use, so a file may name a class
#: whose module is not imported yet. skattr's ``__init__`` registers one;
#: this module still imports nothing above it.
_IMPORTERS: list = []


def register_importer(importer) -> None:
    """Run ``importer()`` before a file's classes are looked up."""
    _IMPORTERS.append(importer)


def persistable(cls=None, *, estimator: bool = False, arguments=None):
    """Class decorator: allow ``cls`` in skattr's JSON files, by its name.

    Parameters
    ----------
    cls : type
        A skattr class (defined in a ``skattr.`` module), its qualified name
        unique among the allowed ones.
    estimator : bool, default=False
        A mechanism: saved by ``get_params()`` and the attributes ``fit``
        set.
    arguments : callable or None, default=None
        A function of an instance returning the keyword arguments that
        rebuild it (for a class that keeps what its arguments are not).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from skattr._persistence import persistable
    >>> persistable(int)
    Traceback (most recent call last):
    ...
    TypeError: int is not a skattr class; only skattr's own classes are saved.
    """
    def register(cls):
        if not cls.__module__.startswith("skattr."):
            raise TypeError(f"{cls.__qualname__} is not a skattr class; only "
                            "skattr's own classes are saved.")
        name = cls.__qualname__
        if _ALLOWED.setdefault(name, cls) is not cls:
            raise TypeError(f"Two allowlisted classes are named {name!r}.")
        if estimator:
            _ESTIMATORS.add(cls)
        if arguments is not None:
            _CONSTRUCTED[name] = arguments
        return cls

    return register if cls is None else register(cls)


def allowed_types() -> dict[str, type]:
    """Return the classes a file may name, by name: skattr's own, registered.

    Every registered mechanism, every noise law, the query, secret, predicate
    and release records, and the Theta specs, models and laws that ``fit``
    stores; each registered itself with :func:`persistable`. A name outside
    this table is refused on loading; no module named in a file is ever
    imported.
    """
    for importer in _IMPORTERS:
        importer()
    return dict(_ALLOWED)


def canonical(payload) -> str:
    """Return the one text the content hash is computed over.

    Keys sorted, no whitespace, ASCII only, and no NaN or infinity literals
    (they are strings in a skattr file), so equal payloads have equal text.
    """
    return json.dumps(payload, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True, allow_nan=False)


def _digest(payload) -> str:
    return hashlib.sha256(canonical(payload).encode("ascii")).hexdigest()


def to_json(obj) -> str:
    """Return ``obj`` as JSON text that :func:`from_json` reads back exactly.

    Raises
    ------
    PersistenceError
        ``obj`` holds a function or a type skattr does not save; the message
        names where, and what to use instead.
    """
    payload = {"schema": SCHEMA_VERSION, "version": __version__,
               "object": _Encoder(allowed_types()).encode(obj, type(obj).__name__)}
    return json.dumps({"sha256": _digest(payload), "skattr": payload},
                      sort_keys=True, ensure_ascii=True, allow_nan=False)


def from_json(text, expected: type = object):
    """Load what :func:`to_json` wrote, checking it before anything is built.

    Parameters
    ----------
    text : str or bytes
        The file's content.
    expected : type
        The class the file must hold (a subclass is accepted).

    Raises
    ------
    PersistenceError
        The text is not a skattr file, has another schema version, does not
        match its content hash, names a type outside the allowlist, or holds
        another class than ``expected``.
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise PersistenceError(
            f"from_json reads the text to_json wrote (a str); got "
            f"{type(text).__name__}. To read a file: "
            "from_json(pathlib.Path(path).read_text()).")
    check_size_and_depth(text)
    try:
        outer = json.loads(text, object_pairs_hook=_no_duplicates,
                           parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise PersistenceError(
            f"This is not a skattr JSON file: it does not parse as JSON ({exc}). "
            "Pass the text to_json wrote, unaltered.") from exc
    if not (isinstance(outer, dict) and set(outer) == {"sha256", "skattr"}
            and isinstance(outer["skattr"], dict)
            and isinstance(outer["sha256"], str)):
        raise PersistenceError(
            "This is not a skattr JSON file: it needs exactly the keys 'sha256' "
            "and 'skattr' (to_json's layout). Pass the text to_json wrote.")
    payload = outer["skattr"]
    schema = payload.get("schema")
    if schema != SCHEMA_VERSION or isinstance(schema, bool):
        raise PersistenceError(
            f"The file has schema {schema!r}; this skattr reads schema "
            f"{SCHEMA_VERSION}. Load it with the skattr version that wrote it "
            f"({payload.get('version')!r}) and save it again from this one.")
    try:
        digest = _digest(payload)
    except ValueError as exc:          # a number too large for a double
        raise PersistenceError(
            f"This is not a skattr JSON file ({exc}). Pass the text to_json "
            "wrote, unaltered.") from exc
    if digest != outer["sha256"]:
        raise PersistenceError(
            "The file's content does not match its SHA-256 hash: it was "
            "corrupted or edited after it was saved. Use the text to_json "
            "wrote, or save the object again.")
    if set(payload) != {"schema", "version", "object"}:
        raise PersistenceError(
            "The file's 'skattr' part needs exactly the keys 'schema', "
            "'version' and 'object'. Use the text to_json wrote.")
    obj = _Decoder(allowed_types(), budget=_BYTES_PER_FILE_BYTE * len(text)
                   + 2**20).decode(payload["object"])
    if not isinstance(obj, expected):
        raise PersistenceError(
            f"The file holds a {type(obj).__name__}, not a {expected.__name__}; "
            f"load it with {type(obj).__name__}.from_json.")
    return obj


def check_size_and_depth(text) -> None:
    """Refuse a file too large or too deeply nested, before it is parsed.

    The depth counts the brackets outside JSON strings (the strings are
    blanked first, escapes included), in linear time.
    """
    if len(text) > MAX_FILE_BYTES:
        raise PersistenceError(
            f"The file has {len(text):,} characters, over the "
            f"{MAX_FILE_BYTES:,} a skattr file can have; it was not written "
            "by to_json. Nothing was loaded.")
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8", "replace")
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub('""', text))
    marks = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    step = np.where((marks == ord("[")) | (marks == ord("{")), 1, -1)
    depth = int(np.max(np.cumsum(step, dtype=np.int64), initial=0))
    if depth > MAX_DEPTH:
        raise PersistenceError(
            f"The file nests {depth} levels deep, over the {MAX_DEPTH} a "
            "skattr file can; it was not written by to_json. Nothing was "
            "loaded.")


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"a JSON object repeats a key among {sorted(keys)}")
    return dict(pairs)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON (skattr writes it as a string)")


def _float(x: float):
    """Return a float as JSON: a number when finite, else a string."""
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _is_mechanism(cls: type) -> bool:
    return cls in _ESTIMATORS


def _init_fields(cls: type) -> list:
    """Fields ``cls(**...)`` takes, less its caches (private, with a default)."""
    return [f for f in dataclasses.fields(cls) if f.init and not (
        f.name.startswith("_") and (f.default is not dataclasses.MISSING
                                    or f.default_factory is not dataclasses.MISSING))]


class _Encoder:
    """Turn an object into JSON-ready data, refusing what cannot be stored."""

    def __init__(self, allowed: dict[str, type]):
        self.allowed = allowed
        self.active: set[int] = set()

    def refuse(self, value, path: str, why: str):
        code = callable(value) and type(value).__qualname__ not in self.allowed
        hint = _PREDICATES_HINT if code else (
            "skattr saves its own classes, NumPy arrays and scalars, pandas "
            "Series and Index, and Python's plain values.")
        raise PersistenceError(
            f"Cannot save {path}: it is {why} ({type(value).__name__}). {hint}")

    def encode(self, value, path: str):
        if value is None or type(value) in (bool, int, str):
            return value
        if type(value) is float:
            return value if math.isfinite(value) else {"type": "float",
                                                       "value": _float(value)}
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
            self.refuse(value, path, f"a Python function "
                                     f"({getattr(value, '__name__', value)!r})")
        if id(value) in self.active:
            self.refuse(value, path, "a value that contains itself")
        self.active.add(id(value))
        try:
            return self._container(value, path)
        finally:
            self.active.discard(id(value))

    def _items(self, values, path: str) -> list:
        return [self.encode(v, f"{path}[{i}]") for i, v in enumerate(values)]

    def _container(self, value, path: str):
        if type(value) is list:
            return self._items(value, path)
        if type(value) is tuple:
            return {"type": "tuple", "items": self._items(value, path)}
        if type(value) is dict:
            return {"type": "dict", "items": [
                [self.encode(k, f"{path} key {k!r}"), self.encode(v, f"{path}[{k!r}]")]
                for k, v in value.items()]}
        if type(value) in (set, frozenset):
            items = self._items(value, path)
            return {"type": type(value).__name__,
                    "items": sorted(items, key=canonical)}
        if isinstance(value, np.generic):
            return self._scalar(value, path)
        if isinstance(value, np.ndarray):
            # A subclass (a memory map) is saved as the array it views.
            return self._array(np.asarray(value), path)
        if type(value) is pd.Series:
            return self._series(value, path)
        if isinstance(value, pd.Index):
            return self._index(value, path)
        if type(value) is np.random.Generator:
            bits = type(value.bit_generator).__name__
            if bits not in _BIT_GENERATORS:
                self.refuse(value, path, f"a Generator of {bits}")
            return {"type": "Generator", "bit_generator": bits,
                    "state": self.encode(value.bit_generator.state, path)}
        if type(value) is np.random.RandomState:
            return {"type": "RandomState",
                    "state": self.encode(value.get_state(legacy=False), path)}
        if isinstance(value, types.MethodType) and isinstance(
                value.__self__, tuple(self.allowed.values())):
            if value.__name__ not in _METHODS:
                self.refuse(value, path, f"the method {value.__name__!r}")
            return {"type": "method", "name": value.__name__,
                    "of": self.encode(value.__self__, f"{path}.__self__")}
        return self._object(value, path)

    def _scalar(self, value: np.generic, path: str):
        if value.dtype.kind not in _KINDS - {"O"}:
            self.refuse(value, path, f"a NumPy scalar of dtype {value.dtype}")
        item = value.item()
        return {"type": "numpy", "dtype": value.dtype.str,
                "value": _float(item) if isinstance(item, float) else item}

    def _array(self, value: np.ndarray, path: str):
        kind = value.dtype.kind
        if kind not in _KINDS or value.dtype.fields is not None:
            self.refuse(value, path, f"an array of dtype {value.dtype}")
        flat = value.ravel(order="C")
        if kind == "O":
            data = self._items(flat.tolist(), path)
        elif kind == "f":
            data = flat.tolist()
            if not np.isfinite(flat).all():
                data = [_float(x) for x in data]
        else:
            data = flat.tolist()
        out = {"type": "ndarray", "dtype": value.dtype.str,
               "shape": list(value.shape), "data": data}
        if not value.flags.writeable:
            out["readonly"] = True
        return out

    def _dtype(self, dtype, value, path: str) -> str:
        if isinstance(dtype, np.dtype):
            return dtype.str
        if str(dtype) in _PANDAS_DTYPES:
            return str(dtype)
        self.refuse(value, path, f"a pandas object of dtype {dtype}")

    def _values(self, value, path: str) -> dict:
        """Return a Series' or Index's values as an array of their own dtype."""
        if isinstance(value.dtype, np.dtype):
            return self._array(value.to_numpy(), path)
        return self._array(value.to_numpy(dtype=object), path)

    def _series(self, value: pd.Series, path: str):
        out = {"type": "Series",
               "dtype": self._dtype(value.dtype, value, path),
               "values": self._values(value, path),
               "index": self._index(value.index, f"{path}.index"),
               "name": self.encode(value.name, f"{path}.name")}
        if not value.flags.allows_duplicate_labels:
            out["allows_duplicate_labels"] = False
        return out

    def _index(self, value: pd.Index, path: str):
        if type(value) is pd.RangeIndex:
            return {"type": "RangeIndex", "start": value.start, "stop": value.stop,
                    "step": value.step, "name": self.encode(value.name, path)}
        if type(value) is pd.MultiIndex:
            return {"type": "MultiIndex",
                    "tuples": self._items(list(value), path),
                    "names": self._items(list(value.names), path)}
        if type(value) is not pd.Index:
            self.refuse(value, path, f"a pandas {type(value).__name__}")
        return {"type": "Index", "dtype": self._dtype(value.dtype, value, path),
                "values": self._values(value, path),
                "name": self.encode(value.name, f"{path}.name")}

    def _object(self, value, path: str):
        cls = type(value)
        name = cls.__qualname__
        if self.allowed.get(name) is not cls:
            self.refuse(value, path, f"a {cls.__module__}.{name}, not one of the "
                                     "types skattr saves")
        if _is_mechanism(cls):
            return self._mechanism(value, path)
        if name in _CONSTRUCTED:
            fields = _CONSTRUCTED[name](value)
            how = "init"
        elif dataclasses.is_dataclass(cls):
            fields = {f.name: getattr(value, f.name) for f in _init_fields(cls)}
            how = "init"
        else:
            fields = vars(value)
            how = "state"
        return {"type": "object", "class": name,
                how: {k: self.encode(v, f"{path}.{k}") for k, v in fields.items()}}

    def _mechanism(self, est, path: str):
        from sklearn.exceptions import NotFittedError
        from sklearn.utils.validation import check_is_fitted

        params = est.get_params(deep=False)
        try:
            check_is_fitted(est)
            fitted = True
        except NotFittedError:
            fitted = False
        skip = set(params)
        if fitted:
            # What _start_releases sets (the plan cache, the noise generator)
            # is made again on loading, as after fit: never saved. Found on a
            # copy seeded 0, which leaves the caller's generator untouched.
            # (A synthesiser has no releases to restart: none is skipped.)
            fresh = type(est)(**{**params, "random_state": 0})
            if hasattr(fresh, "_start_releases"):
                fresh._start_releases()
                skip |= set(vars(fresh))
        state = {k: v for k, v in vars(est).items() if k not in skip}
        layout = ({"layout": getattr(type(est), "fitted_layout", 1)}
                  if fitted else {})
        return {"type": "estimator", "class": type(est).__qualname__,
                "fitted": fitted, **layout,
                "params": {k: self.encode(v, f"{path}.{k}")
                           for k, v in params.items()},
                "state": {k: self.encode(v, f"{path}.{k}")
                          for k, v in state.items()}}


class _Decoder:
    """Build objects from a file's data, only of allowlisted types.

    ``budget`` is the most bytes its arrays may take together: each array's
    declared size is checked against what is left before it is allocated.
    """

    def __init__(self, allowed: dict[str, type], budget: float = math.inf):
        self.allowed = allowed
        self.budget = budget

    def decode(self, data):
        try:
            return self._decode(data)
        except PersistenceError:
            raise
        except (TypeError, ValueError, KeyError, AttributeError, IndexError,
                OverflowError, RecursionError) as exc:
            raise PersistenceError(
                f"The file's content does not describe a valid skattr object "
                f"({type(exc).__name__}: {exc}). Use the text to_json wrote.") from exc

    def _decode(self, data):
        if data is None or type(data) in (bool, int, float):
            return data
        if type(data) is str:
            return data
        if type(data) is list:
            return [self._decode(v) for v in data]
        if type(data) is not dict:
            raise TypeError(f"unexpected JSON value {data!r}")
        kind = data["type"]
        handler = getattr(self, f"_{kind}", None) if kind in _TAGS else None
        if handler is None:
            raise PersistenceError(
                f"The file holds a value of type {kind!r}, which skattr does not "
                "load. Use the text to_json wrote.")
        return handler(data)

    def _float(self, data):
        return _NONFINITE[data["value"]]

    def _tuple(self, data):
        return tuple(self._decode(v) for v in data["items"])

    def _dict(self, data):
        return {self._decode(k): self._decode(v) for k, v in data["items"]}

    def _set(self, data):
        return {self._decode(v) for v in data["items"]}

    def _frozenset(self, data):
        return frozenset(self._decode(v) for v in data["items"])

    def _numpy(self, data):
        dtype = self._numpy_dtype(data["dtype"], scalar=True)
        value = data["value"]
        if dtype.kind == "f":
            value = _NONFINITE.get(value, value)
        return dtype.type(value)

    @staticmethod
    def _numpy_dtype(text, scalar: bool = False) -> np.dtype:
        if not isinstance(text, str):
            raise TypeError(f"a dtype must be a string; got {text!r}")
        try:
            dtype = np.dtype(text)
        except SyntaxError:
            # NumPy parses a repeat count of "(2,)f8" with ast: ",O" raised
            # a bare SyntaxError (found by the fuzz of ledger files).
            dtype = None
        if dtype is None or dtype.kind not in _KINDS or dtype.fields is not None or (
                scalar and dtype.kind == "O") or dtype.itemsize > _MAX_ITEMSIZE:
            raise PersistenceError(
                f"The file holds values of dtype {text!r}, which skattr does not "
                "load. Use the text to_json wrote.")
        return dtype

    def _ndarray(self, data):
        dtype = self._numpy_dtype(data["dtype"])
        shape = tuple(int(s) for s in data["shape"])
        values = data["data"]
        if any(s < 0 for s in shape) or not isinstance(values, list) or len(
                values) != math.prod(shape):
            raise ValueError(f"an array of shape {shape} needs {math.prod(shape)} "
                             "values")
        size = math.prod(shape) * (8 if dtype.kind == "O" else dtype.itemsize)
        if size > self.budget:
            raise PersistenceError(
                f"The file declares arrays of more than {size:,} bytes, more "
                "than a file of its size can hold; it was not written by "
                "to_json. Nothing was loaded.")
        self.budget -= size
        if dtype.kind == "O":
            out = np.empty(len(values), dtype=object)
            for i, v in enumerate(values):
                out[i] = self._decode(v)
        else:
            if dtype.kind == "f":
                values = [_NONFINITE[v] if isinstance(v, str) else v
                          for v in values]
            for v in values:
                if type(v) not in (bool, int, float, str):
                    raise TypeError(f"an array of dtype {dtype} holds {v!r}")
            out = np.array(values, dtype=dtype)
        out = out.reshape(shape)
        if data.get("readonly"):
            out.flags.writeable = False
        return out

    def _pandas_dtype(self, text):
        return text if text in _PANDAS_DTYPES else self._numpy_dtype(text)

    def _Series(self, data):
        dtype = self._pandas_dtype(data["dtype"])
        series = pd.Series(self._ndarray(data["values"]), index=self._decode(
            data["index"]), name=self._decode(data["name"]), dtype=dtype, copy=True)
        if data.get("allows_duplicate_labels") is False:
            series.flags.allows_duplicate_labels = False
        return series

    def _Index(self, data):
        return pd.Index(self._ndarray(data["values"]),
                        dtype=self._pandas_dtype(data["dtype"]),
                        name=self._decode(data["name"]))

    def _RangeIndex(self, data):
        return pd.RangeIndex(int(data["start"]), int(data["stop"]),
                             int(data["step"]), name=self._decode(data["name"]))

    def _MultiIndex(self, data):
        return pd.MultiIndex.from_tuples(self._decode(data["tuples"]),
                                         names=self._decode(data["names"]))

    def _Generator(self, data):
        bits = data["bit_generator"]
        if bits not in _BIT_GENERATORS:
            raise PersistenceError(
                f"The file holds a generator of {bits!r}, which skattr does not "
                "load. Use the text to_json wrote.")
        bit_generator = getattr(np.random, bits)()
        bit_generator.state = self._decode(data["state"])
        return np.random.Generator(bit_generator)

    def _RandomState(self, data):
        state = self._decode(data["state"])
        if not (isinstance(state, dict) and state.get("bit_generator") == "MT19937"):
            raise PersistenceError(
                "The file holds a RandomState of another bit generator than "
                "MT19937, which skattr does not load. Use the text to_json wrote.")
        random_state = np.random.RandomState()
        random_state.set_state(state)
        return random_state

    def _method(self, data):
        if data["name"] not in _METHODS:
            raise PersistenceError(
                f"The file names the method {data['name']!r}, which skattr does "
                "not load. Use the text to_json wrote.")
        return getattr(self._decode(data["of"]), data["name"])

    def _class(self, name):
        cls = self.allowed.get(name) if isinstance(name, str) else None
        if cls is None:
            raise PersistenceError(
                f"The file names the type {name!r}, which is not among the skattr "
                "classes a file may hold (skattr._persistence.allowed_types()); "
                "nothing was imported or built. Use a file to_json wrote, with "
                "a skattr version that has this class.")
        return cls

    def _fields(self, data, key, cls=None):
        fields = data[key]
        if not isinstance(fields, dict):
            raise TypeError(f"'{key}' must map names to values")
        if cls is not None:
            # Restored attributes are data: none may replace a method or a
            # property of the class.
            taken = [k for k in fields if not k.isidentifier() or hasattr(
                inspect.getattr_static(cls, k, None), "__get__")]
            if taken:
                raise PersistenceError(
                    f"The file sets {taken} on a {cls.__name__}, which names "
                    "a method or property of the class; skattr restores data "
                    "attributes only. Use the text to_json wrote.")
        return {k: self._decode(v) for k, v in fields.items()}

    def _object(self, data):
        cls = self._class(data["class"])
        if _is_mechanism(cls):
            raise TypeError(f"{cls.__name__} is saved as an estimator")
        if "init" in data:
            if not (dataclasses.is_dataclass(cls) or cls.__qualname__ in _CONSTRUCTED):
                raise TypeError(f"{cls.__name__} is not saved by its arguments")
            return cls(**self._fields(data, "init"))
        if dataclasses.is_dataclass(cls) or cls.__qualname__ in _CONSTRUCTED:
            raise TypeError(f"{cls.__name__} is saved by its arguments")
        obj = cls.__new__(cls)
        obj.__dict__.update(self._fields(data, "state", cls))
        return obj

    def _estimator(self, data):
        cls = self._class(data["class"])
        if not _is_mechanism(cls):
            raise TypeError(f"{cls.__name__} is not an estimator")
        est = cls(**self._fields(data, "params"))
        if data["fitted"] is True:
            # The attributes fit sets change with skattr; a file records
            # their layout (files of skattr 0.2 have none: 1).
            saved = data.get("layout", 1)
            if saved != getattr(cls, "fitted_layout", 1):
                raise PersistenceError(
                    f"This {cls.__name__} was fitted by an earlier skattr, "
                    f"whose fitted state (layout {saved!r}) this version does "
                    "not read. Fit it again on its reference data; its "
                    f"parameters load as they are ({cls.__name__}(**params), "
                    "or save it unfitted).")
        est.__dict__.update(self._fields(data, "state", cls))
        if data["fitted"] is True and hasattr(est, "_start_releases"):
            # The noise restarts as after fit: the same integer random_state
            # gives the same sequence of releases as the freshly fitted one.
            est._start_releases()
        return est


_TAGS = frozenset({"float", "tuple", "dict", "set", "frozenset", "numpy", "ndarray",
                   "Series", "Index", "RangeIndex", "MultiIndex", "Generator",
                   "RandomState", "method", "object", "estimator"})
