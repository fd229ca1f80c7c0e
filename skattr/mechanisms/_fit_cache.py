"""Fitted Theta, and its plans, kept across releases on the same data.

``df.attrpriv.mean(...)`` builds and fits its estimators on every call; the
second release on the same reference, with the same statistic, secret and
parameters but epsilon, the noise source and the progress bar (none of which
a fit reads), reuses what the first fitted (issue 28), and a release again
at the same n and epsilon reuses its plan too (issue 42: the plan of a mean
of 200 records took 0.17-0.37 CPU-s, a median of 10^7 records 22-27).

The key holds content, never identity: a 128-bit digest of every row of the
frame Theta is fitted on (:func:`skattr._data.rows_digest`, independent of
the rows' order unless a Theta draws records with a stated seed), its
shape, columns and dtypes, and the ``repr`` of the statistic, the secrets
and the parameters. A fit reads the reference alone
(:meth:`~skattr.mechanisms._registry.Registry.fit_candidates` hands each
estimator the resolved reference; the private data is checked there, on
every call, but never read by a fit), so of the private data the key holds
the shape, columns and dtypes (what ``fit``'s checks and a plan's n read),
not its values: a second release on other private data of the same size
plans with the Theta a fresh fit would give, and computes its own
statistic. With ``reference="self"`` (or none: the differential-privacy
baselines are fitted on the private data), the private data is the frame
digested, and its fit is kept in this process's memory like any other (the
last :data:`SIZE`; :func:`clear` drops them). The digest costs one pandas
hash of each of its values: 1.2-1.7 CPU-s for 10^7 rows x 5 columns,
against 29 CPU-s for a median's first release from such a reference
(``benchmarks/bench_reuse.py``); private data beside a reference is not
hashed, whatever its size. No size is excluded.

A parameter whose ``repr`` may not say all it holds (an array, a callable, a
Theta object other than a frozen dataclass of plain fields, or one that
draws afresh at every fit) is not cached: the release is fitted afresh, as
before, so a cache hit can never give another data's Theta. Nor are Dask
frames. The last :data:`SIZE` keys are kept; each hit hands out copies of
the fitted estimators, with their own noise, sharing one
:class:`PlanMemo` per fitted estimator: a plan is a function of the fitted
Theta, n and the parameters (never of the noise source), so the copies
reuse each other's plans.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
import threading
from collections import OrderedDict

import pandas as pd

from skattr._data import rows_digest
from skattr._kinds import query_kind

__all__ = ["PLANS", "SIZE", "PlanMemo", "cached_fits", "clear",
           "computed_once", "fresh", "remember"]

#: How many (data, statistic, parameters) keys are kept.
SIZE = 8
#: How many plans each fitted estimator's memo keeps (every epsilon a
#: ledger's ``epsilon="remaining"`` tries is one: about 15 a call).
PLANS = 256
#: Parameters no fit reads: set on each copy instead.
_UNFITTED = ("epsilon", "random_state", "progress")

_FITS: OrderedDict = OrderedDict()
_MADE: OrderedDict = OrderedDict()
_LOCK = threading.Lock()


def _plain(value) -> bool:
    """Whether ``repr(value)`` says everything ``value`` holds.

    Plain values and containers of them; and a frozen dataclass whose every
    field is shown by its repr and plain (a Theta stated as
    ``Resample(random_state=0)``, a law as ``AssumeGaussian(...)``), unless
    it draws afresh at every fit (``random_state=None``: two fits differ).
    """
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    if (dataclasses.is_dataclass(value) and not isinstance(value, type)
            and value.__dataclass_params__.frozen):
        fields = dataclasses.fields(value)
        if any("random_state" == f.name and getattr(value, f.name) is None
               for f in fields):
            return False
        return all(f.repr and _plain(getattr(value, f.name)) for f in fields)
    return False


def _frame_key(frame, *, content: bool, ordered: bool = False) -> tuple | None:
    """Return a frame's shape, columns and dtypes, and its rows' digest if asked.

    The digest counts the rows' order if ``ordered``. None when the frame
    cannot be keyed (not in memory, duplicated column labels, values pandas
    would hash alike).
    """
    if not isinstance(frame, pd.DataFrame) or not frame.columns.is_unique:
        return None               # the fit refuses duplicates, in its own words
    schema = (frame.shape, tuple(map(repr, frame.columns)),
              tuple(repr(t) for t in frame.dtypes))
    if not content:
        return schema
    for column in frame.columns:
        # pandas hashes an object column's values through str(): 1 and "1"
        # hash alike, though a secret or a count tells them apart. Text
        # columns only (found by review), and a categorical's categories
        # likewise (its values are hashed as its categories).
        values = frame[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.cat.categories
        if values.dtype == object and pd.api.types.infer_dtype(
                values, skipna=True) not in ("string", "empty"):
            return None
    try:
        digest = rows_digest(frame, ordered=ordered)
    except (TypeError, ValueError):
        return None               # unhashable values: not cached
    return (*schema, digest)


def _stated(*objects) -> str | None:
    """Return the objects' repr, or None when a repr may hide what they do.

    A function's repr names its address, not its code (a stacked query's
    count of a predicate, found by review); any " at 0x" marks one.
    """
    text = repr(objects)
    return None if " at 0x" in text or "<lambda>" in text else text


def _key(mechanism, query, secret, reference, data, params) -> tuple | None:
    stated = {k: v for k, v in params.items() if k not in _UNFITTED}
    if not _plain(stated):
        return None
    secrets = tuple(secret) if isinstance(secret, (list, tuple)) else (secret,)
    parts = getattr(query, "parts", (query,))
    if any(callable(getattr(s, "value", None)) for s in secrets) or any(
            callable(getattr(p, "value", None))
            or getattr(query_kind(p), "opaque", False) for p in parts):
        return None               # a lambda's repr does not say what it does
    described = _stated(query, secrets, sorted(stated.items()))
    if described is None:
        return None
    # A seeded fit that draws records (a bootstrap, a Monte Carlo Theta)
    # draws others from the same rows in another order: the order counts.
    ordered = re.search(r"random_state=(?!None)", described) is not None
    if isinstance(reference, str) or reference is None:
        # Theta is fitted on the private data itself ("self"), or the
        # estimators read only its columns (no reference: the baselines).
        frames = (_frame_key(data, content=True, ordered=ordered),)
    else:
        frames = (_frame_key(reference, content=True, ordered=ordered),
                  _frame_key(data, content=False))
    if None in frames:
        return None
    return (mechanism, described, reference if isinstance(reference, str)
            or reference is None else "reference", *frames)


def cached_fits(mechanism, query, secret, reference, data, params):
    """Return ``(key, fits)``: the outcomes fitted before for this key, or {}.

    ``key`` is None when the release is not cacheable; otherwise the caller
    stores its ``fits`` with :func:`remember` after fitting.
    """
    key = _key(mechanism, query, secret, reference, data, params)
    if key is None:
        return None, {}
    with _LOCK:
        fits = _FITS.get(key)
        if fits is not None:
            _FITS.move_to_end(key)
            return key, dict(fits)
    return key, {}


def remember(key, fits: dict) -> None:
    """Keep ``fits`` (name -> fitted estimator or refusal) under ``key``.

    Each estimator kept is a copy of the one given; both share a new
    :class:`PlanMemo`, as will every copy :func:`fresh` hands out.
    """
    if key is None:
        return
    kept = {}
    for name, est in fits.items():
        if not isinstance(est, Exception):
            if getattr(est, "_shared_plans", None) is None:
                est._shared_plans = PlanMemo()
            est = copy.copy(est)
        kept[name] = est
    with _LOCK:
        _FITS[key] = kept
        _FITS.move_to_end(key)
        while len(_FITS) > SIZE:
            _FITS.popitem(last=False)


def fresh(est, params):
    """Return a copy of a fitted estimator with this release's epsilon and noise."""
    if isinstance(est, Exception):
        return est
    mine = copy.copy(est)
    # A parameter this release leaves out takes the class's default, never
    # the first release's (its seed would replay that release's noise).
    defaults = inspect.signature(type(est).__init__).parameters
    mine.set_params(**{k: params[k] if k in params else defaults[k].default
                       for k in _UNFITTED if k in defaults})
    mine._start_releases()
    mine._shared_plans = getattr(est, "_shared_plans", None)
    return mine


class PlanMemo:
    """The plans of one fitted estimator, shared by the copies of it.

    A plan is a function of what ``fit`` set, n and the parameters
    (:meth:`~skattr.mechanisms.BaseMechanism._cached_plan` keys it by n and
    the parameters' ``repr``), so every copy of one fitted estimator may
    reuse it. Only plans whose parameters are plain values (whose ``repr``
    says all they hold) are kept; the last :data:`PLANS` of them, under a
    lock (copies may release from several threads). Each copy keeps the
    plans it used in its own dict as well, so a plan it was handed stays
    the same object for it (a ledger checks that).
    """

    def __init__(self):
        self._plans: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, params: dict):
        """Return the plan kept under ``key``, or None."""
        if not _plain(params):
            return None
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                self._plans.move_to_end(key)
            return plan

    def put(self, key, params: dict, plan) -> None:
        """Keep ``plan`` under ``key`` if ``params`` are plain values."""
        if not _plain(params):
            return
        with self._lock:
            self._plans[key] = plan
            self._plans.move_to_end(key)
            while len(self._plans) > PLANS:
                self._plans.popitem(last=False)

    def __len__(self) -> int:
        return len(self._plans)

    def __reduce__(self):
        # A pickled or deep-copied estimator starts an empty memo of its own
        # (a lock does not pickle; the plans are made again when asked).
        return (PlanMemo, ())


def computed_once(what: str, frame, stated: tuple, compute):
    """Return ``compute()``, kept under ``frame``'s rows and ``stated``'s repr.

    For a pure computation from public reference data that new objects
    repeat (each ledger, each ``describe()``: the joint band law of the
    statistics released, issue 42): kept under the same content key as a
    fit (:func:`_frame_key`, the ``repr`` of ``stated``), the last
    :data:`SIZE` of each ``what``. When the frame or a stated object
    cannot be keyed (a function, a Dask frame), it is computed afresh. A
    refusal is raised, never kept.
    """
    frame_key = _frame_key(frame, content=True)
    described = _stated(*stated) if _plain(stated) else None
    if frame_key is None or described is None:
        return compute()
    key = (what, frame_key, described)
    with _LOCK:
        if key in _MADE:
            _MADE.move_to_end(key)
            return _MADE[key]
    made = compute()
    with _LOCK:
        _MADE[key] = made
        _MADE.move_to_end(key)
        kept = [k for k in _MADE if k[0] == what]
        for old in kept[:-SIZE]:
            del _MADE[old]
    return made


def clear() -> None:
    """Forget every fitted Theta, and every computation, kept."""
    with _LOCK:
        _FITS.clear()
        _MADE.clear()
