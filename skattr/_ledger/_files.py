"""A ledger's file: fingerprints of its data, and its JSON (schemas 1 and 2).

The file holds the budget, the secret, Theta, every release's statistics,
noise and joint epsilon, and fingerprints of the private and reference data
(row counts and hashes of columns), so that a ledger loaded on the same data
keeps counting its budget; a content hash detects corruption.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from skattr._ledger._entry import LedgerEntry
from skattr._query import Query
from skattr._secret import Secret
from skattr._statistic import Statistic
from skattr.backends import backend_of, is_frame
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.theta import ExpertTheta, GroupMoments, JointGaussian, Resample

__all__ = ["SCHEMA_VERSION", "from_json", "statistic_to_json", "to_json"]

#: Version of the JSON a ledger is saved as (``Ledger.to_json``).
SCHEMA_VERSION = 2


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


def _plain(value):
    """Return a JSON-ready value, or raise for one that cannot be stored."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    raise InvalidParameterError(
        f"The ledger cannot store {value!r} ({type(value).__name__}): state "
        "secrets and counted values by plain values (numbers, strings), not "
        "predicates, to save a ledger.")


def _bounds_to_json(bounds):
    """Return ``bounds=`` as JSON: a name, None, column triples or pairs."""
    if bounds is None or isinstance(bounds, str):
        return bounds
    if isinstance(bounds, dict):
        return {"columns": [[_plain(c), *map(float, v)]
                            for c, v in bounds.items()]}
    return {"pairs": np.asarray(bounds, dtype=float).tolist()}


def _bounds_from_json(record):
    """Return the ``bounds=`` :func:`_bounds_to_json` wrote."""
    if record is None or isinstance(record, str):
        return record
    if "columns" in record:
        return {c: (lo, hi) for c, lo, hi in record["columns"]}
    pairs = record["pairs"]
    return tuple(pairs) if pairs and not isinstance(pairs[0], list) else [
        tuple(p) for p in pairs]


def _secret_to_json(secret) -> dict:
    fields = ("column", "property", "value", "pairs", "window", "support",
              "sets", "set_reading")
    return {f: _plain(getattr(secret, f)) for f in fields}


def _secret_from_json(record: dict):
    record = dict(record)
    for f in ("pairs", "sets"):
        if record.get(f) is not None:
            record[f] = [tuple(p) for p in record[f]]
    if record.get("support") is not None:
        record["support"] = tuple(record["support"])
    return Secret(**record)


_RESAMPLE_FIELDS = ("n_draws", "failure_share", "max_exact", "random_state",
                    "replace", "exact_quantiles", "moment_bounds")


def _model_to_json(model) -> dict:
    """Return a GroupMoments or JointGaussian as plain data (arrays as lists)."""
    from dataclasses import fields

    return {"type": type(model).__name__,
            "fields": {f.name: _plain(np.asarray(v).tolist()
                                      if isinstance(v, np.ndarray) else v)
                       for f in fields(model)
                       for v in [getattr(model, f.name)]}}


def _model_from_json(record):
    kind = {"GroupMoments": GroupMoments, "JointGaussian": JointGaussian}
    values = dict(record["fields"])
    values["columns"] = tuple(values["columns"])
    return kind[record["type"]](**values)


def _theta_to_json(theta):
    if isinstance(theta, str):
        return theta
    if isinstance(theta, Resample):
        return {"resample": {f: _plain(getattr(theta, f))
                             for f in _RESAMPLE_FIELDS}}
    if isinstance(theta, ExpertTheta) and theta.parameters is None:
        models = theta.models
        return {"expert": {
            "description": theta.description,
            "models": (
                [[_plain(k), [_model_to_json(m) for m in v]]
                 for k, v in models.items()] if isinstance(models, dict)
                else [_model_to_json(m) for m in models]),
            "by_column": isinstance(models, dict)}}
    raise InvalidParameterError(
        f"The ledger can store Theta given by name ('auto', 'moments', "
        f"'gaussian'), a Resample or an ExpertTheta of stated models; "
        f"{type(theta).__name__} objects are not stored yet.")


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


_STATISTIC_FIELDS = ("statistic", "columns", "q", "ddof", "proportiontocut",
                     "add_constant", "labels")


def statistic_to_json(query, columns) -> dict | None:
    """Return a released statistic as plain data, or None for a function."""
    try:
        if isinstance(query, Statistic):
            if query.func is not None:
                return None
            fields = {f: _plain(getattr(query, f)) for f in _STATISTIC_FIELDS}
            return {"kind": "statistic", "fields": fields,
                    "columns": _plain(list(columns))}
        return {"kind": "query", "query": _query_to_json(query),
                "columns": _plain(list(columns))}
    except InvalidParameterError:
        return None                 # a predicate: not stored


def _statistic_from_json(record) -> tuple:
    """Return (query, columns) from :func:`_statistic_to_json`'s output."""
    if record["kind"] == "statistic":
        fields = dict(record["fields"])
        for f in ("columns", "q", "labels"):
            if fields[f] is not None:
                fields[f] = tuple(fields[f])
        return Statistic(**fields), tuple(record["columns"])
    return _query_from_json(record["query"]), tuple(record["columns"])


def _query_to_json(query) -> list:
    return [query.statistic, _plain(list(query.columns)), _plain(query.value)]


def _query_from_json(record) -> Query:
    statistic, columns, value = record
    return Query(statistic, list(columns), value)


def _payload(ledger) -> dict:
    """Return a ledger as the plain data its file holds."""
    return {
        "schema": SCHEMA_VERSION,
        "budget": list(ledger.budget),
        "secret": _secret_to_json(ledger.secret),
        "theta": _theta_to_json(ledger.theta),
        "theta_seed": ledger._laplace.seed,
        "law": ledger.law,
        "bounds": _bounds_to_json(ledger.bounds),
        "data": _fingerprint(ledger._data, sorted(ledger._columns)),
        "reference": (None if ledger.reference is None else
                      _fingerprint(ledger.reference,
                                   sorted(map(str, ledger.reference.columns)))),
        "releases": [{
            "statistics": [[_query_to_json(b), w] for b, w in e.statistics],
            "noise_cov": np.asarray(e.noise_cov).tolist(),
            "joint_epsilon": e.joint_epsilon,
            "laplace": e.laplace,
            "joint_delta": e.joint_delta,
            # Values as [label, value] pairs: their order survives the
            # sorted keys of the file.
            "record": {**e.as_record(),
                       "values": [[k, v] for k, v in
                                  e.as_record()["values"].items()]},
        } for e in ledger.releases],
    }

def to_json(ledger) -> str:
    """Serialise the ledger (no data, no pickle) to keep it between sessions.

    The file holds the budget, the secret, Theta (its name, a
    ``Resample``'s parameters and the seed of the joint draws, or an
    ``ExpertTheta``'s models), every release's statistics, noise and
    joint epsilon, fingerprints of the private data (its row count and a
    hash of each released column) and of the reference data, a schema
    version and a content hash.
    """
    payload = _payload(ledger)
    body = json.dumps(payload, sort_keys=True, allow_nan=True)
    return json.dumps({"skattr_ledger": payload,
                       "sha256": hashlib.sha256(body.encode()).hexdigest()},
                      sort_keys=True, indent=1)

def from_json(cls, text: str, data, *, reference=None, random_state=None):
    """Load a ledger saved by :meth:`to_json`, on the same private data.

    Raises
    ------
    DataValidationError
        The file is malformed or tampered with (its content hash does not
        match), of another schema version, or ``data`` (or ``reference``)
        is not the dataset the ledger was opened on: its row count or a
        released column's hash differs.
    """
    try:
        outer = json.loads(text)
        payload = outer["skattr_ledger"]
        digest = outer["sha256"]
    except (TypeError, ValueError, KeyError) as exc:
        raise DataValidationError(
            "This is not a skattr ledger file (to_json's output).") from exc
    body = json.dumps(payload, sort_keys=True, allow_nan=True)
    if hashlib.sha256(body.encode()).hexdigest() != digest:
        raise DataValidationError(
            "The ledger file's content hash does not match: it was altered "
            "after it was saved. Use the file to_json wrote.")
    schema = payload.get("schema")
    if schema not in (1, SCHEMA_VERSION):
        raise DataValidationError(
            f"The ledger file has schema {schema!r}; this skattr reads "
            f"schemas 1 and {SCHEMA_VERSION}.")
    if not is_frame(data):
        raise InvalidParameterError(
            "from_json needs the private DataFrame the ledger was opened on "
            "(pandas or Dask).")
    saved = payload["data"]
    _check_fingerprint(data, saved, "private data", schema)
    if payload["reference"] is not None:
        if reference is None:
            raise InvalidParameterError(
                "The ledger was opened with reference data; pass the same "
                "reference= to from_json.")
        _check_fingerprint(reference, payload["reference"], "reference data",
                           schema)
    ledger = cls(data, secret=_secret_from_json(payload["secret"]),
                 reference=reference, budget=tuple(payload["budget"]),
                 theta=_theta_from_json(payload["theta"]),
                 law=payload["law"], random_state=random_state,
                 # Files written before clipping: their releases clipped
                 # nothing.
                 bounds=_bounds_from_json(payload.get("bounds")))
    ledger._laplace.seed = payload.get("theta_seed")
    for e in payload["releases"]:
        statistics = tuple((_query_from_json(q), float(w))
                           for q, w in e["statistics"])
        record = {**e["record"], "values": dict(
            (k, v) for k, v in e["record"]["values"])}
        ledger.releases.append(LedgerEntry(
            None, statistics, np.asarray(e["noise_cov"], dtype=float),
            float(e["joint_epsilon"]), record, e["laplace"],
            e["joint_delta"]))
        stored = (e["laplace"] or {}).get("statistic")
        if stored is not None:
            ledger._laplace.queries.setdefault(
                e["laplace"]["key"], _statistic_from_json(stored))
    ledger._columns.update(saved["columns"])
    return ledger
