"""A ledger's file: fingerprints of its data, and its JSON.

The file holds the budget, the secret, Theta, every release (its record,
statistics, noise and joint epsilon), and fingerprints of the private and
reference data (row counts and hashes of columns), so that a ledger loaded
on the same data keeps counting its budget. Since schema 3 it is written by
skattr's one codec (:mod:`skattr._persistence`: exact values, a content
hash, skattr's own classes only); files of schemas 1 and 2 (skattr 0.2's
own format) are still read.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from skattr._ledger._choice import NOISES
from skattr._ledger._entry import LedgerEntry
from skattr._persistence import check_size_and_depth, persistable
from skattr._persistence import from_json as load
from skattr._persistence import to_json as save
from skattr._query import Query, StackedQuery
from skattr._release import Release
from skattr._secret import Secret
from skattr._statistic import Statistic
from skattr.backends import backend_of, is_frame, one_reading
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    PersistenceError,
    SkattrError,
)
from skattr.theta import ExpertTheta, GroupMoments, JointGaussian, Resample

__all__ = ["SCHEMA_VERSION", "LedgerFile", "from_json", "open_ledger",
           "record_to_store", "storable_statistic", "sync_from_store",
           "to_json"]

#: Version of a ledger's file (``Ledger.to_json``): 3 is skattr's one codec;
#: 1 and 2 were skattr 0.2's own JSON, still read.
SCHEMA_VERSION = 3


def _fingerprint_v1(frame: pd.DataFrame, columns) -> dict:
    """Return schema 1's row count and SHA-256 of each named column's values."""
    hashes = {}
    for c in columns:
        match = [col for col in frame.columns if str(col) == c]
        if len(match) != 1:
            hashes[c] = None
            continue
        values = pd.util.hash_pandas_object(frame[match[0]], index=False)
        hashes[c] = hashlib.sha256(values.to_numpy().tobytes()).hexdigest()
    return {"rows": int(len(frame)), "columns": hashes}


def _fingerprint(frame, columns) -> dict:
    """Row count and 128-bit hashes of the named columns' values, pandas or Dask.

    Each column's hash, and one of its rows across all the named columns,
    is a pair of sums modulo 2^64 over the rows of a 64-bit hash of each
    value (:meth:`skattr.backends.DataBackend.hash_sums`): partial sums add
    up across partitions, so a Dask frame and the pandas frame of the same
    rows have the same fingerprint, however they are partitioned. It
    identifies the rows and each column's values, not the order of the rows.
    """
    names = {}
    for c in columns:
        match = [col for col in frame.columns if str(col) == c]
        if len(match) == 1:
            names[c] = match[0]
    rows, sums = backend_of(frame).hash_sums(frame, list(names.values()))
    hashes = {c: None for c in columns}
    hashes.update({c: sums[i] for i, c in enumerate(names)})
    return {"rows": rows, "columns": hashes, "records": sums[-1]}


def _check_fingerprint(frame, saved: dict, what: str, schema: int) -> None:
    if schema == 1:
        if not isinstance(frame, pd.DataFrame):
            raise InvalidParameterError(
                f"A ledger file of schema 1 checks the {what} as a pandas "
                "DataFrame; pass it as one (ddf.compute()).")
        now = _fingerprint_v1(frame, sorted(saved["columns"]))
    elif is_frame(frame):
        now = _fingerprint(frame, sorted(saved["columns"]))
    else:
        raise InvalidParameterError(
            f"The {what} must be a pandas or Dask DataFrame.")
    if now["rows"] != saved["rows"]:
        raise DataValidationError(
            f"The {what} has {now['rows']} rows; the ledger was opened on "
            f"{saved['rows']}. A ledger covers one dataset: open a new one for "
            "other data.")
    changed = [c for c, h in saved["columns"].items() if now["columns"][c] != h]
    if not changed and now.get("records") != saved.get("records"):
        changed = ["(their rows together)"]
    if changed:
        raise DataValidationError(
            f"The {what}'s column(s) {changed} differ from those the ledger "
            "was opened on (their hashes changed). A ledger covers one "
            "dataset: open a new one for other data.")


def _bounds_from_json(record):
    """Return the ``bounds=`` :func:`_bounds_to_json` wrote."""
    if record is None or isinstance(record, str):
        return record
    if "columns" in record:
        return {c: (lo, hi) for c, lo, hi in record["columns"]}
    pairs = record["pairs"]
    return tuple(pairs) if pairs and not isinstance(pairs[0], list) else [
        tuple(p) for p in pairs]


def _secret_from_json(record: dict):
    record = dict(record)
    for f in ("pairs", "sets"):
        if record.get(f) is not None:
            record[f] = [tuple(p) for p in record[f]]
    if record.get("support") is not None:
        record["support"] = tuple(record["support"])
    return Secret(**record)


def _model_from_json(record):
    kind = {"GroupMoments": GroupMoments, "JointGaussian": JointGaussian}
    values = dict(record["fields"])
    values["columns"] = tuple(values["columns"])
    return kind[record["type"]](**values)


def _theta_from_json(record):
    if not isinstance(record, dict):
        return record
    if "resample" in record:
        # Files written before exact_quantiles or moment_bounds existed drew
        # those laws.
        return Resample(**{"exact_quantiles": False, "moment_bounds": False,
                           **record["resample"]})
    expert = record["expert"]
    models = ({k: [_model_from_json(m) for m in v] for k, v in expert["models"]}
              if expert["by_column"] else
              [_model_from_json(m) for m in expert["models"]])
    return ExpertTheta(models, description=expert["description"])


def _statistic_from_json(record) -> tuple:
    """Return (query, columns) from :func:`_statistic_to_json`'s output."""
    if record["kind"] == "statistic":
        fields = dict(record["fields"])
        for f in ("columns", "q", "labels"):
            if fields[f] is not None:
                fields[f] = tuple(fields[f])
        return Statistic(**fields), tuple(record["columns"])
    return _query_from_json(record["query"]), tuple(record["columns"])


def _query_from_json(record) -> Query:
    statistic, columns, value = record
    return Query(statistic, list(columns), value)


def storable_statistic(query, columns) -> tuple | None:
    """Return (query, columns) of a Laplace release's statistic, or None.

    None for a statistic of a Python function, which no file holds (code is
    never saved): its joint law with other statistics cannot be certified
    after loading, and a loaded ledger says so.
    """
    return None if getattr(query, "func", None) is not None else (
        query, tuple(columns))


@persistable
@dataclass(frozen=True)
class LedgerFile:
    """What a ledger's file holds (schema 3).

    Attributes
    ----------
    budget : tuple
    secret : Secret
    theta : str or Theta spec
    law : str
    bounds : object
        The ledger's clipping policy.
    data, reference : dict or None
        Fingerprints of the private and reference data.
    releases : tuple of LedgerEntry
    theta_seed : int or None
        The seed of the joint draws of different Laplace statistics.
    noise : str
        The noise of every release that names no mechanism (``"auto"`` in
        files written before it was kept).
    schema : int
    """

    budget: tuple
    secret: object
    theta: object
    law: str
    bounds: object
    data: dict
    reference: dict | None
    releases: tuple
    theta_seed: int | None = None
    noise: str = "auto"
    schema: int = SCHEMA_VERSION


def _record(ledger, releases: tuple, reference=None) -> LedgerFile:
    """Return the ledger's :class:`LedgerFile` with ``releases``."""
    if reference is None and ledger.reference is not None:
        reference = _fingerprint(ledger.reference,
                                 sorted(map(str, ledger.reference.columns)))
    # The fingerprint of the data its releases read (one reading with them).
    with one_reading(ledger._reading):
        data = _fingerprint(ledger._data, sorted(ledger._columns))
    return LedgerFile(
        budget=tuple(ledger.budget), secret=ledger.secret, theta=ledger.theta,
        law=ledger.law, bounds=ledger.bounds, data=data,
        reference=reference, releases=releases,
        theta_seed=ledger._laplace.seed, noise=ledger.noise)


def to_json(ledger) -> str:
    """Return the ledger's file: no data, no pickle, a content hash."""
    return save(_record(ledger, tuple(ledger.releases)))


def _restored(cls, record: LedgerFile, data, reference, random_state):
    """Return a ledger of ``record``'s header (no releases) on checked data."""
    # The data checked is the data the ledger reads from then on.
    with one_reading(since="since the ledger was opened"):
        _check_data(data, record.data, reference, record.reference, 3)
        ledger = cls(data, secret=record.secret, reference=reference,
                     budget=tuple(record.budget), theta=record.theta,
                     law=record.law, random_state=random_state,
                     bounds=record.bounds, noise=record.noise)
    ledger._laplace.seed = record.theta_seed
    ledger._columns.update(record.data["columns"])
    return ledger


def _adopt(ledger, entries) -> None:
    """Append loaded releases to a ledger, with their statistics' queries."""
    for entry in entries:
        if not isinstance(entry, LedgerEntry):
            raise PersistenceError("A ledger's release record is not a release.")
        stored = (entry.laplace or {}).get("statistic")
        if stored is not None:
            held = set(map(str, ledger._data.columns))
            missing = sorted({str(c) for c in stored[1]} - held)
            if missing:
                # Its statistic restated on these data would read nothing.
                raise PersistenceError(
                    f"A release of the ledger file reads column(s) {missing}, "
                    "which the private data do not hold: the file is not this "
                    "dataset's ledger, or it was altered. Use the file the "
                    "ledger wrote, on the data it was opened on.")
        ledger.releases.append(entry)
        if stored is not None:
            ledger._laplace.queries.setdefault(entry.laplace["key"],
                                               tuple(stored))


def from_json(cls, text: str, data, *, reference=None, random_state=None):
    """Load a ledger's file on the same private (and reference) data.

    Raises
    ------
    PersistenceError
        A file of schema 3 that is malformed or altered (content hash).
    DataValidationError
        A file of schema 1 or 2 that is malformed, altered or of another
        schema; or ``data`` (``reference``) is not the dataset the ledger was
        opened on: its row count or a released column's hash differs.
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise DataValidationError(
            "This is not a skattr ledger file (to_json's output, a str).")
    check_size_and_depth(text)
    try:
        outer = json.loads(text)
    except (TypeError, ValueError, RecursionError) as exc:
        raise DataValidationError(
            "This is not a skattr ledger file (to_json's output).") from exc
    if isinstance(outer, dict) and "skattr_ledger" in outer:
        try:
            return _from_schema_1_or_2(cls, outer, data, reference=reference,
                                       random_state=random_state)
        except (KeyError, TypeError, AttributeError, IndexError,
                ValueError, OverflowError) as exc:
            if isinstance(exc, SkattrError):
                raise
            raise DataValidationError(
                f"The ledger file (schema 1 or 2) is malformed "
                f"({type(exc).__name__}: {exc}). Use the file to_json wrote."
            ) from None
    record = _loaded(text, LedgerFile)
    if type(record.schema) is not int or record.schema != SCHEMA_VERSION:
        raise DataValidationError(
            f"The ledger file has schema {record.schema!r}; this skattr reads "
            f"schemas 1, 2 and {SCHEMA_VERSION}.")
    ledger = _restored(cls, record, data, reference, random_state)
    _adopt(ledger, record.releases)
    return ledger


# ------------------------------------------------------------- the store
#: Parameters of Ledger.open that a store resumed must match when given.
_STORED_DEFAULTS = {"theta": "auto", "law": None, "bounds": "robust",
                    "noise": "auto"}


def open_ledger(cls, store, data, *, reference, random_state, **given):
    """Create or resume the ledger a store holds (:meth:`Ledger.open`).

    ``given`` holds ``secret``, ``budget``, ``theta``, ``law``, ``bounds``
    and ``noise``. A new store needs a secret and a budget; a store resumed
    takes its own, and refuses one given that differs (a parameter left at
    its default takes the stored one).
    """
    with store.transaction() as transaction:
        text = transaction.header()
        if text is None:
            if given.get("secret") is None or given.get("budget") is None:
                raise InvalidParameterError(
                    f"{store!r} holds no ledger yet: pass secret= and budget= "
                    "to create one.")
            ledger = cls(data, reference=reference, random_state=random_state,
                         **{k: v for k, v in given.items() if v is not None
                            or k == "bounds"})
            transaction.set_header(save(_record(ledger, ())))
        else:
            record = _loaded(text, LedgerFile)
            _check_resumed(store, record, given)
            ledger = _restored(cls, record, data, reference, random_state)
            texts = transaction.releases(0)
            _adopt(ledger, [_loaded(t, LedgerEntry) for t in texts])
            if texts:
                ledger._last_stored = _digest(texts[-1])
            if len(ledger.releases) != transaction.count():
                raise PersistenceError(f"{store!r}: the releases changed "
                                       "while they were read.")
    ledger._store = store
    ledger._stored_header = (frozenset(ledger._columns), ledger._laplace.seed)
    return ledger


def _check_resumed(store, record: LedgerFile, given: dict) -> None:
    stored = {"secret": record.secret, "budget": tuple(record.budget),
              "theta": record.theta, "law": record.law,
              "bounds": record.bounds, "noise": record.noise}
    for name, value in given.items():
        if value is None or (name in _STORED_DEFAULTS
                             and _same(value, _STORED_DEFAULTS[name])):
            continue
        if name == "budget":
            try:
                value = tuple(float(v) for v in value)
            except (TypeError, ValueError):
                pass
        if not _same(value, stored[name]):
            raise InvalidParameterError(
                f"{store!r} holds a ledger with {name}={stored[name]!r}; got "
                f"{name}={value!r}. Drop {name}= to resume it, or open "
                "another file for another ledger.")


def _same(a, b) -> bool:
    try:
        return save(a) == save(b)
    except PersistenceError:
        return False


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stored_digest(transaction, index: int) -> str:
    """Return the digest of release ``index`` as the store holds it."""
    return _digest(transaction.releases(index)[0])


def sync_from_store(ledger, transaction) -> None:
    """Read in the releases other processes made since this ledger last looked.

    The store must still hold this ledger's last release, unchanged (its
    digest): a store replaced by an older copy and grown again by other
    releases has as many releases but not the same (found by review).
    """
    count, have = transaction.count(), len(ledger.releases)
    last = (transaction.releases(have - 1)[:1] if have and count >= have
            else [])
    if count < have or (have and (not last or _digest(last[0])
                                  != ledger._last_stored)):
        raise PersistenceError(
            f"The store {ledger._store!r} no longer holds this ledger's "
            f"releases as it recorded them ({count} there, {have} here): it "
            "was replaced by an older copy (or another ledger's). Nothing is "
            "released until it is restored.")
    if count == have:
        return
    record = _loaded(transaction.header(), LedgerFile)
    if record.theta_seed != ledger._laplace.seed:
        # The store's seed was drawn by the process whose releases used it.
        ledger._laplace.seed = record.theta_seed
        ledger._laplace.laws.clear()
    ledger._columns.update(record.data["columns"])
    texts = transaction.releases(have)
    _adopt(ledger, [_loaded(t, LedgerEntry) for t in texts])
    ledger._last_stored = _digest(texts[-1])
    ledger._stored_header = (frozenset(record.data["columns"]),
                             record.theta_seed)


def record_to_store(ledger, transaction, start: int) -> None:
    """Write the releases from ``start`` on, and the header if it changed."""
    for index in range(start, len(ledger.releases)):
        text = save(ledger.releases[index])
        transaction.append(index, text)
        ledger._last_stored = _digest(text)
    header = (frozenset(ledger._columns), ledger._laplace.seed)
    if header != ledger._stored_header:
        transaction.set_header(save(_record(ledger, ())))
        ledger._stored_header = header


def _loaded(text, kind):
    """Load a ledger's header or release and check its fields' shapes.

    The codec builds only skattr's classes, from a file whose hash matched;
    whoever can write the file can recompute the hash, so every field the
    ledger reads is checked here, and a malformed one is a
    :class:`~skattr.exceptions.PersistenceError`, never another exception.
    """
    found = load(text, kind)
    try:
        (_check_header if kind is LedgerFile else _check_entry)(found)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        if isinstance(exc, PersistenceError):
            raise
        raise PersistenceError(
            f"The ledger's {'header' if kind is LedgerFile else 'release'} is "
            f"malformed ({type(exc).__name__}: {exc}); it was not written by "
            "skattr. Nothing was loaded.") from None
    return found


def _number(value, low=-math.inf, high=math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            low <= value <= high):
        raise ValueError(f"{value!r} is not a number in [{low}, {high}]")
    return float(value)


def _fingerprint_shape(saved) -> None:
    if not (isinstance(saved, dict) and isinstance(saved.get("columns"), dict)
            and type(saved.get("rows")) is int and saved["rows"] >= 0
            and all(isinstance(c, str) and (h is None or isinstance(h, str))
                    for c, h in saved["columns"].items())
            and isinstance(saved.get("records", ""), str)
            and set(saved) <= {"rows", "columns", "records"}):
        raise ValueError("a data fingerprint needs rows, and a hash (str) "
                         "or None per column")


def _check_header(record) -> None:
    if type(record.schema) is not int:
        raise ValueError("the schema is not an int")
    if not (isinstance(record.budget, tuple) and len(record.budget) == 2):
        raise ValueError("the budget is not a pair")
    _number(record.budget[0], 0.0)
    _number(record.budget[1], 0.0, 1.0)
    _fingerprint_shape(record.data)
    if record.reference is not None:
        _fingerprint_shape(record.reference)
    if not isinstance(record.law, str):
        raise ValueError("the law is not a name")
    if not (isinstance(record.noise, str) and record.noise in NOISES):
        raise ValueError(f"the noise is not one of {NOISES}")
    if record.theta_seed is not None and not isinstance(record.theta_seed, int):
        raise ValueError("the seed is not an int")
    if not isinstance(record.releases, tuple):
        raise ValueError("the releases are not a tuple")
    for entry in record.releases:
        _check_entry(entry)


_LAPLACE_NUMBERS = ("epsilon", "delta", "beta", "scale")


def _base(query) -> bool:
    """Whether ``query`` is a Gaussian release's base statistic.

    A sum or count (:func:`~skattr._ledger._joint.single_statistics`), or
    one median, quantile or std of one column (no function: code is never
    saved).
    """
    return isinstance(query, Query) or (
        isinstance(query, Statistic) and query.func is None
        and query.columns is not None and len(query.columns) == 1
        and query.n_outputs(query.columns) == 1)


def _check_entry(entry) -> None:
    if not isinstance(entry, LedgerEntry):
        raise ValueError("a release is not a LedgerEntry")
    if not (isinstance(entry.release, Release) or (
            entry.release is None and isinstance(entry.record, dict)
            and isinstance(entry.record.get("values"), dict))):
        raise ValueError("a release holds neither its Release nor its record")
    if not isinstance(entry.statistics, tuple) or not all(
            isinstance(s, tuple) and len(s) == 2 and _base(s[0])
            for s in entry.statistics):
        raise ValueError("the statistics are not (query, weight) pairs")
    for query, weight in entry.statistics:
        hash(query)                     # a key of the joint laws' tables
        _number(weight)
    cov = entry.noise_cov
    if not (isinstance(cov, np.ndarray) and np.all(np.isfinite(cov))):
        raise ValueError("the noise covariance is not a finite array")
    _number(entry.joint_epsilon, 0.0)
    if entry.nonce is not None and (isinstance(entry.nonce, bool) or not (
            isinstance(entry.nonce, int) and 0 <= entry.nonce < 2**64)):
        raise ValueError("the nonce is not a 64-bit whole number")
    if entry.joint_delta is not None:
        _number(entry.joint_delta, 0.0, 1.0)
    laplace = entry.laplace
    kind = None if entry.release is None else entry.release.noise_law.kind
    if laplace is None:
        # A Gaussian release: its values' noise covariance, square.
        if not entry.statistics or cov.shape != (len(entry.statistics),) * 2:
            raise ValueError("the noise covariance does not match the values")
        if entry.release is not None and (
                len(entry.release.values) != len(entry.statistics)
                or not (kind == "gaussian" or entry.release.noiseless)):
            raise ValueError("a Gaussian release's record holds another noise "
                             "or other values")
        return
    if entry.statistics or cov.shape != (0, 0) or (
            kind is not None and "gaussian" in kind.split("+")
            and not entry.release.noiseless):
        raise ValueError("a Laplace release's record holds Gaussian noise")
    if not (isinstance(laplace, dict) and isinstance(laplace.get("key"), str)
            and laplace.get("privacy") in ("dataset", "distributional")
            and isinstance(laplace.get("resample"), bool)
            and isinstance(laplace.get("coupled", False), bool)):
        raise ValueError("a Laplace release's record is incomplete")
    for name in _LAPLACE_NUMBERS:
        _number(laplace[name], 0.0)
    scales = laplace.get("scales")
    if scales is not None:
        values = (entry.release.values.size if entry.release is not None
                  else len(entry.record["values"]))
        if not isinstance(scales, (list, tuple)) or len(scales) != values:
            raise ValueError("a Laplace release's scales do not match its "
                             "values")
        for scale in scales:
            _number(scale, 0.0)
    stored = laplace.get("statistic")
    if stored is not None and not (
            isinstance(stored, tuple) and len(stored) == 2
            and isinstance(stored[0], (Query, StackedQuery, Statistic))
            and isinstance(stored[1], tuple)):
        raise ValueError("a Laplace release's statistic is malformed")


def _check_data(data, saved, reference, saved_reference, schema) -> None:
    if not is_frame(data):
        raise InvalidParameterError(
            "from_json needs the private DataFrame the ledger was opened on "
            "(pandas or Dask).")
    _check_fingerprint(data, saved, "private data", schema)
    if saved_reference is not None:
        if reference is None:
            raise InvalidParameterError(
                "The ledger was opened with reference data; pass the same "
                "reference= to from_json.")
        _check_fingerprint(reference, saved_reference, "reference data", schema)


def _from_schema_1_or_2(cls, outer, data, *, reference, random_state):
    """Load a file of skattr 0.2's own JSON (schemas 1 and 2)."""
    try:
        payload = outer["skattr_ledger"]
        digest = outer["sha256"]
    except (TypeError, KeyError) as exc:
        raise DataValidationError(
            "This is not a skattr ledger file (to_json's output).") from exc
    body = json.dumps(payload, sort_keys=True, allow_nan=True)
    if hashlib.sha256(body.encode()).hexdigest() != digest:
        raise DataValidationError(
            "The ledger file's content hash does not match: it was altered "
            "after it was saved. Use the file to_json wrote.")
    schema = payload.get("schema")
    if schema not in (1, 2):
        raise DataValidationError(
            f"The ledger file has schema {schema!r}; this skattr reads "
            f"schemas 1, 2 and {SCHEMA_VERSION}.")
    saved = payload["data"]
    with one_reading(since="since the ledger was opened"):
        _check_data(data, saved, reference, payload["reference"], schema)
        ledger = cls(data, secret=_secret_from_json(payload["secret"]),
                     reference=reference, budget=tuple(payload["budget"]),
                     theta=_theta_from_json(payload["theta"]),
                     law=payload["law"], random_state=random_state,
                     # Files written before clipping: their releases
                     # clipped nothing.
                     bounds=_bounds_from_json(payload.get("bounds")))
    ledger._laplace.seed = payload.get("theta_seed")
    for e in payload["releases"]:
        statistics = tuple((_query_from_json(q), float(w))
                           for q, w in e["statistics"])
        record = {**e["record"], "values": dict(
            (k, v) for k, v in e["record"]["values"])}
        laplace = e["laplace"]
        if laplace is not None:
            stored = laplace.get("statistic")
            laplace = {**laplace, "statistic": (
                None if stored is None else _statistic_from_json(stored))}
            if laplace["statistic"] is not None:
                ledger._laplace.queries.setdefault(laplace["key"],
                                                   laplace["statistic"])
        cov = np.asarray(e["noise_cov"], dtype=float)
        if cov.size == 0:               # a Laplace release: 0.2 wrote []
            cov = cov.reshape(0, 0)
        ledger.releases.append(LedgerEntry(
            None, statistics, cov,
            float(e["joint_epsilon"]), record, laplace, e["joint_delta"]))
    ledger._columns.update(saved["columns"])
    return ledger
