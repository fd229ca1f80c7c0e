"""What a plan's and a release's fields must be, checked as one is built.

A record built from a file (whose content hash anyone who can write it can
recompute) either reads as one made by a release, or is refused here.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable

import numpy as np
import pandas as pd

from skattr.exceptions import InvalidParameterError

__all__: list = []


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _refuse_field(record, name: str, must: str, value):
    raise InvalidParameterError(
        f"A {type(record).__name__}'s {name} must be {must}; got {value!r:.80}.")


def _check_plan_fields(plan) -> None:
    """Refuse a plan (or release) whose fields a report could not read.

    Every field is checked for its type, shape and range: a record built
    from a file (whose content hash anyone who can write it can recompute)
    either reads as one made by a release, or is refused here, so that
    ``summary()``, ``to_dict()`` and the rest never fail on it later.
    """
    for name in ("mechanism", "calibration", "theta", "guarantee"):
        if not isinstance(getattr(plan, name), str):
            _refuse_field(plan, name, "a str", getattr(plan, name))
    for name in ("statistics", "secrets"):
        value = getattr(plan, name)
        if not (isinstance(value, tuple)
                and all(isinstance(v, str) for v in value)):
            _refuse_field(plan, name, "a tuple of str", value)
    k = len(plan.statistics)
    if k == 0 or plan.noise_law.k != k:
        _refuse_field(plan, "statistics",
                      f"one label per statistic the noise is added to "
                      f"({plan.noise_law.k})", plan.statistics)
    if not (isinstance(plan.n, numbers.Integral) and not isinstance(plan.n, bool)
            and plan.n >= 1):
        _refuse_field(plan, "n", "a positive int", plan.n)
    if not (_is_real(plan.epsilon) and 0 < plan.epsilon < math.inf):
        _refuse_field(plan, "epsilon", "a positive finite number", plan.epsilon)
    if not (_is_real(plan.delta) and 0 <= plan.delta < 1):
        _refuse_field(plan, "delta", "a number in [0, 1)", plan.delta)
    if not (_is_real(plan.sensitivity) and 0 <= plan.sensitivity < math.inf):
        _refuse_field(plan, "sensitivity", "a finite number >= 0",
                      plan.sensitivity)
    variance = plan.inherent_variance
    if not (isinstance(variance, tuple) and all(
            _is_real(v) and math.isfinite(v) for v in variance)):
        _refuse_field(plan, "inherent_variance", "a tuple of finite numbers",
                      variance)
    if plan.error_ratio is not None and not (
            _is_real(plan.error_ratio) and 0 <= plan.error_ratio <= math.inf):
        # inf when the optimal mechanism's expected error is 0 and this one's
        # is not (a huge epsilon); NaN is refused.
        _refuse_field(plan, "error_ratio", "None or a number >= 0 (not NaN)",
                      plan.error_ratio)
    covariance = plan.noise_law.covariance
    if not (covariance.shape == (k, k) and np.all(np.isfinite(covariance))
            and np.all(np.diagonal(covariance) >= 0)):
        _refuse_field(plan, "noise_law", "noise of finite variance on each "
                      "statistic", plan.noise_law)
    _check_clipping(plan, plan.clipping)


def _check_clipping(plan, clipping) -> None:
    """Refuse a clipping record a report could not read."""
    if clipping is None:
        return
    # Read by its fields (skattr._clipping is a layer above this module).
    if not (isinstance(getattr(clipping, "ranges", None), tuple)
            and isinstance(getattr(clipping, "source", None), str)
            and isinstance(getattr(clipping, "note", None), str)):
        _refuse_field(plan, "clipping", "None or a Clipping record", clipping)
    for entry in clipping.ranges:
        if not (isinstance(entry, tuple) and len(entry) == 3
                and isinstance(entry[0], Hashable)
                and all(_is_real(v) and math.isfinite(v) for v in entry[1:])
                and entry[1] <= entry[2]):
            _refuse_field(plan, "clipping", "ranges of (column, low, high) "
                          "with finite low <= high", entry)


def _check_values(release, name: str, values, k: int) -> None:
    if not (isinstance(values, pd.Series) and len(values) == k
            and pd.api.types.is_numeric_dtype(values.dtype)
            and not pd.api.types.is_bool_dtype(values.dtype)):
        _refuse_field(release, name, f"a Series of {k} numbers, one per "
                      "statistic", values)
    if not np.all(np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))):
        _refuse_field(release, name, "finite numbers", values.tolist())
