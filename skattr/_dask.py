"""The Dask side of the data seam: one pass over a Dask DataFrame per job.

skattr's releases and its moment Theta need only sufficient statistics: the
row count and the column totals of a linear statistic, or per secret group
the counts, means and centred cross-products of the records' contributions.
Each is computed here by one :meth:`dask.dataframe.DataFrame.reduction`: the
pandas code of :mod:`skattr._data` runs on every partition (so a partition
raises exactly the error pandas would, NaN included), the partial results are
merged in partition order (sums, and Chan, Golub and LeVeque's pairwise
update for the centred cross-products), and the result comes back to the
driver, where calibration, certificates and noise stay. Nothing here is lazy:
a release is drawn once, on the driver.

The Thetas that read the records themselves (bootstrap and resampling
replicates, exact laws) collect the columns they use to the driver in one
pass (:func:`collect`): the same numbers as pandas, in the same order.

Dask is an optional dependency (``pip install 'skattr[dask]'``): nothing here
imports it until a Dask DataFrame is met, and :func:`install_accessor`
registers ``.attrpriv`` on Dask DataFrames when :mod:`dask.dataframe` is
imported, before or after skattr.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from typing import Callable

import numpy as np
import pandas as pd

from skattr.exceptions import MissingDependencyError, NotCertifiableError

__all__ = ["check_releasable", "collect", "group_statistics", "install_accessor",
           "is_dask_frame", "release_totals", "row_count", "schema"]


def is_dask_frame(obj) -> bool:
    """Whether ``obj`` is a Dask DataFrame (without importing Dask)."""
    module = type(obj).__module__ or ""
    return (module.split(".")[0] in ("dask", "dask_expr")
            and hasattr(obj, "npartitions") and hasattr(obj, "columns"))


def schema(X):
    """Return X, or a Dask frame's empty pandas frame of the same columns.

    scikit-learn's checks of the feature names read it without a pass over
    the data.
    """
    return X._meta if is_dask_frame(X) else X


def _reduce(frame, chunk: Callable[[pd.DataFrame], np.ndarray],
            merge: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Apply ``chunk`` to every partition and merge the vectors, in one pass.

    ``chunk`` maps a pandas partition to a float vector of fixed length;
    ``merge`` combines two such vectors (associative). Partial results are
    merged in partition order, so the result does not depend on the
    scheduler.
    """

    def on_partition(part: pd.DataFrame) -> pd.Series:
        return pd.Series(np.asarray(chunk(part), dtype=float))

    def merged(rows: pd.DataFrame) -> pd.Series:
        vectors = rows.to_numpy(dtype=float)
        out = vectors[0]
        for vector in vectors[1:]:
            out = merge(out, vector)
        return pd.Series(out)

    result = frame.reduction(on_partition, aggregate=merged, combine=merged,
                             meta=(None, "f8"))
    return np.asarray(result.compute(), dtype=float)


def check_releasable(frame, query) -> None:
    """Refuse a statistic of a Dask frame that one pass cannot give exactly.

    Sums, means, counts and proportions are sums over the records, exact and
    independent of the partitioning; other statistics are refused before
    anything is fitted.
    """
    if is_dask_frame(frame) and not getattr(query, "is_linear", False):
        raise NotCertifiableError(
            f"The {query.statistic} of a Dask DataFrame is not computed here: "
            "only sums, means, counts and proportions are exact and independent "
            "of the partitioning in one pass. Release it from pandas data "
            "(ddf[columns].compute()).")


def row_count(frame) -> int:
    """Return the number of rows (one pass that reads no column's values)."""
    return int(_reduce(frame, lambda part: [len(part)], np.add)[0])


def release_totals(frame, query, columns, secrets=(), *,
                   what: str = "the private data",
                   check: Callable[[pd.DataFrame], object] | None = None
                   ) -> tuple[int, np.ndarray]:
    """Return (n, column totals of a linear query) of a Dask frame, one pass.

    Each partition is checked as pandas checks the whole frame (the used
    columns, a numeric secret column for missing values, and ``check``) and
    summed by :func:`skattr._data.column_totals`; the partial sums add up.
    """
    from skattr._data import column_totals
    from skattr._query import check_present

    numeric_secrets = [s.column for s in secrets
                       if s.column in frame.columns
                       and pd.api.types.is_numeric_dtype(frame[s.column].dtype)]

    def chunk(part):
        for column in numeric_secrets:
            check_present(part[column], column, what=what)
        if check is not None:
            check(part)
        return [len(part), *np.atleast_1d(column_totals(part, query, columns,
                                                        what=what))]

    out = _reduce(frame, chunk, np.add)
    return int(out[0]), out[1:]


def _flatten(stats) -> np.ndarray:
    return np.concatenate([stats.count, stats.mean.ravel(), stats.m2.ravel()])


def _unflatten(vector: np.ndarray, k: int):
    from skattr._data import GroupStatistics

    count = vector[:2]
    mean = vector[2:2 + 2 * k].reshape(2, k)
    m2 = vector[2 + 2 * k:].reshape(2, k, k)
    return GroupStatistics(count=count, mean=mean, m2=m2)


def group_statistics(frame, query, columns, secrets, *,
                     what: str = "the reference data") -> tuple[int, list]:
    """Return (n, per-group statistics of each secret) of a Dask frame, one pass.

    Each partition gives its :func:`skattr._data.statistics_of` per secret;
    they merge by Chan, Golub and LeVeque's pairwise update, exactly as
    chunks of a pandas frame would.
    """
    from skattr._data import record_contributions, secret_indicator, statistics_of

    k = len(query.names(columns))
    width = 2 + 2 * k + 2 * k * k

    def chunk(part):
        h = record_contributions(part, query, columns, what=what)
        return np.concatenate([[len(part)]] + [
            _flatten(statistics_of(h, secret_indicator(part, s, what=what)))
            for s in secrets])

    def merge(left, right):
        out = [left[:1] + right[:1]]
        for i in range(len(secrets)):
            part = slice(1 + i * width, 1 + (i + 1) * width)
            out.append(_flatten(_unflatten(left[part], k).merge(
                _unflatten(right[part], k))))
        return np.concatenate(out)

    out = _reduce(frame, chunk, merge)
    return int(out[0]), [_unflatten(out[1 + i * width:1 + (i + 1) * width], k)
                         for i in range(len(secrets))]


def collect(frame, columns) -> pd.DataFrame:
    """Return the named columns of a Dask frame as one pandas frame, one pass.

    For the Thetas that read the records themselves; the rows keep their
    order (partition by partition), so every number equals pandas'.
    """
    return frame[list(dict.fromkeys(columns))].compute()


# ------------------------------------------------------------ the accessor
def _register() -> None:
    """Register ``.attrpriv`` on Dask DataFrames (dask.dataframe is imported)."""
    from dask.dataframe.extensions import register_dataframe_accessor

    from skattr._accessor import AttributePrivacyAccessor

    if getattr(sys.modules["dask.dataframe"], "_skattr_registered", False):
        return
    register_dataframe_accessor("attrpriv")(AttributePrivacyAccessor)
    sys.modules["dask.dataframe"]._skattr_registered = True


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Register the accessor right after ``dask.dataframe`` is first imported."""

    def find_spec(self, name, path=None, target=None):
        if name != "dask.dataframe":
            return None
        sys.meta_path.remove(self)      # find the real module, once
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module):
            run(module)
            sys.meta_path[:] = [f for f in sys.meta_path
                                if not isinstance(f, _RegisterOnImport)]
            _register()

        loader.exec_module = exec_module
        return spec


def install_accessor() -> None:
    """Register ``.attrpriv`` on Dask DataFrames, now or when Dask is imported.

    Importing skattr does not import Dask (a second of start-up): if
    :mod:`dask.dataframe` is already imported the accessor is registered at
    once, otherwise as soon as it is.
    """
    if "dask.dataframe" in sys.modules:
        _register()
    elif importlib.util.find_spec("dask") is not None and not any(
            isinstance(f, _RegisterOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport())


def require_dask() -> None:
    """Raise MissingDependencyError unless Dask's DataFrame is installed."""
    if importlib.util.find_spec("dask") is None:
        raise MissingDependencyError(
            "Dask DataFrames need Dask: pip install 'skattr[dask]'.")
