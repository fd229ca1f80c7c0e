"""The Dask backend: one pass over a Dask DataFrame per job.

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
imports it until a Dask DataFrame is met, and
:meth:`DaskBackend.register_accessor` registers ``.attrpriv`` on Dask
DataFrames when :mod:`dask.dataframe` is imported, before or after skattr.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import sys
import weakref
from typing import Callable

import numpy as np
import pandas as pd

from skattr._data import (
    GroupStatistics,
    column_hash_sums,
    numeric_values,
    record_contributions,
    secret_indicator,
    statistics_of,
)
from skattr._data import (
    clip_frame as pandas_clip_frame,
)
from skattr._data import (
    column_ranges as pandas_column_ranges,
)
from skattr._data import (
    column_totals as pandas_column_totals,
)
from skattr._data import (
    digests as pandas_digests,
)
from skattr._data import (
    hash_sums as pandas_hash_sums,
)
from skattr._kinds import kinds, query_kind
from skattr._query import check_present
from skattr.backends._protocol import DataBackend
from skattr.backends._reading import current_reading, one_reading
from skattr.exceptions import (
    DataValidationError,
    NotCertifiableError,
)

__all__ = ["EXACT_STATISTICS", "DaskBackend", "check_releasable", "clip_frame",
           "collect", "column_ranges", "exact_statistic", "group_statistics",
           "hash_sums", "is_dask_frame", "is_dask_series", "release_totals",
           "row_count", "schema"]


def is_dask_frame(obj) -> bool:
    """Whether ``obj`` is a Dask DataFrame (without importing Dask)."""
    module = type(obj).__module__ or ""
    return (module.split(".")[0] in ("dask", "dask_expr")
            and hasattr(obj, "npartitions")
            and isinstance(getattr(obj, "dtypes", None), pd.Series))


def is_dask_series(obj) -> bool:
    """Whether ``obj`` is a Dask Series (without importing Dask)."""
    module = type(obj).__module__ or ""
    return (module.split(".")[0] in ("dask", "dask_expr")
            and hasattr(obj, "npartitions") and hasattr(obj, "to_frame")
            and not is_dask_frame(obj))


def schema(X):
    """Return X, or a Dask frame's empty pandas frame of the same columns.

    scikit-learn's checks of the feature names read it without a pass over
    the data.
    """
    return X._meta if is_dask_frame(X) else X


# The clipped frames clip_frame made, by id: (the frame clipped, the
# clipping, its data's name). Their passes read the frame clipped and clip
# each partition, so that what a pass reports is the source's own rows, the
# same as the unclipped passes of the same release read.
_CLIPPED: dict[int, tuple] = {}


# A column selection's name in the task graph -> the name of the frame it was
# selected from (DaskBackend.select, issue 42): a reading keys the data
# source, so a pass over the release's selected columns is checked against
# the passes over the whole frame (its rows counted, a ledger's opening).
_SELECTED: dict[str, str] = {}
_SELECTED_KEPT = 4096


def _reading_key(source) -> str:
    """Return the name a reading keeps ``source``'s reports under."""
    return _SELECTED.get(source._name, source._name)


def _source(frame) -> tuple:
    """Return (the frame a pass reads, the clippings of each partition, in order)."""
    clips = []
    while id(frame) in _CLIPPED:
        frame, clip, what = _CLIPPED[id(frame)]
        clips.insert(0, (clip, what))
    return frame, clips


def _clipped(part: pd.DataFrame, clips) -> pd.DataFrame:
    for clip, what in clips:
        part = (pandas_clip_frame(part, clip, what=what) if len(part)
                else part.astype(dict.fromkeys(clip, np.float64)))
    return part


def _pass(frame, chunk: Callable[[pd.DataFrame], object],
          merge: Callable[[list], object], read=(), *,
          what: str = "the data", split_every=None):
    """Apply ``chunk`` to every partition and ``merge`` the results, in one pass.

    ``merge`` combines a list of partial results (in partition order, so the
    result does not depend on the scheduler). The same pass reports each
    partition's row count and the hash sums of the columns it ``read``
    (:func:`skattr._data.column_hash_sums`, after ``chunk`` has checked
    them) to the reading open (:func:`skattr.backends.one_reading`), which
    refuses data that changed since an earlier pass.
    """
    source, clips = _source(frame)
    read = [c for c in dict.fromkeys(read) if c in source.columns]

    # Each partial result travels as one object, not as a row of a wide
    # frame: histograms hold thousands of numbers.
    def on_partition(part: pd.DataFrame) -> pd.Series:
        payload = chunk(_clipped(part, clips))
        holder = np.empty(1, dtype=object)
        holder[0] = (payload, [(len(part), column_hash_sums(part, read))])
        return pd.Series(holder)

    def merged(rows: pd.DataFrame) -> pd.Series:
        items = rows.iloc[:, 0].to_list()
        holder = np.empty(1, dtype=object)
        holder[0] = (merge([payload for payload, _ in items]),
                     [p for _, parts in items for p in parts])
        return pd.Series(holder)

    result = source.reduction(on_partition, aggregate=merged, combine=merged,
                              meta=(None, "object"), split_every=split_every)
    payload, partitions = result.compute().iloc[0]
    reading = current_reading()
    if reading is not None:
        reading.check(_reading_key(source), partitions, read, what=what)
    return payload


def _reduce(frame, chunk: Callable[[pd.DataFrame], np.ndarray],
            merge: Callable[[np.ndarray, np.ndarray], np.ndarray], read=(),
            what: str = "the data") -> np.ndarray:
    """Apply ``chunk`` to every partition and merge the vectors, in one pass.

    ``chunk`` maps a pandas partition to a float vector of fixed length;
    ``merge`` combines two such vectors (associative). ``read`` names the
    columns ``chunk`` reads, reported to the reading (:func:`_pass`).
    """
    return np.asarray(_pass(
        frame, lambda part: np.asarray(chunk(part), dtype=float),
        lambda vectors: functools.reduce(merge, vectors), read, what=what),
        dtype=float)


def _gather(frame, chunk: Callable[[pd.DataFrame], pd.DataFrame], read=(),
            what: str = "the data") -> pd.DataFrame:
    """Return the frames ``chunk`` picks of each partition, concatenated, one pass."""
    from dask.dataframe.dispatch import concat

    return _pass(frame, chunk, lambda frames: concat(list(frames)), read,
                 what=what, split_every=False)


#: Non-linear statistics computed exactly on a Dask frame (besides the sums):
#: those whose kind says how (by moments or order statistics).
EXACT_STATISTICS = tuple(k.name for k in kinds(linear=False) if k.lazy_exact)

# Bins of each histogram pass of the exact quantiles, and the most values of
# one bin collected to the driver (a larger bin is split by another pass).
_BINS = 4096
_MAX_COLLECTED = 2_000_000


def check_releasable(frame, query) -> None:
    """Refuse a statistic of a Dask frame that cannot be computed exactly.

    Sums, means, counts and proportions (one pass), the standard deviation
    (one pass of Chan merges) and medians and quantiles (histogram passes,
    :func:`exact_statistic`) are exact and independent of the partitioning;
    other statistics are refused before anything is fitted.
    """
    if not is_dask_frame(frame) or getattr(query, "is_linear", False):
        return
    kind = query_kind(query)
    if kind is None or kind.lazy_exact is None:
        raise NotCertifiableError(
            f"The {query.statistic} of a Dask DataFrame is not computed here: "
            "sums, means, counts, proportions, standard deviations, medians and "
            "quantiles are computed exactly and independently of the "
            "partitioning; a trimmed mean, a regression or a function is not. "
            "Release it from pandas data (ddf[columns].compute()).")


def row_count(frame, *, what: str | None = None) -> int:
    """Return the number of rows (one pass that reads no column's values).

    With ``what``, an empty frame is refused as pandas data would be.
    """
    n = int(_reduce(frame, lambda part: [len(part)], np.add, (),
                    what or "the data")[0])
    if what is not None and n == 0:
        raise DataValidationError(
            f"Found array with 0 sample(s) while a minimum of 1 is required: "
            f"{what} has 0 rows. Pass a non-empty frame.")
    return n


def release_totals(frame, query, columns, secrets=(), *,
                   what: str = "the private data",
                   check: Callable[[pd.DataFrame], object] | None = None
                   ) -> tuple[int, np.ndarray]:
    """Return (n, column totals of a linear query) of a Dask frame, one pass.

    Each partition is checked as pandas checks the whole frame (the used
    columns, a numeric secret column for missing values, and ``check``) and
    summed by :func:`skattr._data.column_totals`; the partial sums add up.
    """
    numeric_secrets = _numeric_secrets(frame, secrets)

    def chunk(part):
        for column in numeric_secrets:
            check_present(part[column], column, what=what)
        if check is not None:
            check(part)
        return [len(part), *np.atleast_1d(pandas_column_totals(
            part, query, columns, what=what))]

    out = _reduce(frame, chunk, np.add, [*columns, *numeric_secrets], what)
    return int(out[0]), out[1:]


def column_ranges(frame, columns, *, what: str = "the reference data"
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Return the least and largest value of each column of a Dask frame, one pass.

    Each partition is read by :func:`skattr._data.column_ranges` (checked as
    pandas checks the whole frame); an empty partition changes nothing.
    """
    k = len(columns)

    def chunk(part):
        if not len(part):
            return np.concatenate([np.full(k, np.inf), np.full(k, -np.inf)])
        low, high = pandas_column_ranges(part, columns, what=what)
        return np.concatenate([low, high])

    def merge(left, right):
        return np.concatenate([np.minimum(left[:k], right[:k]),
                               np.maximum(left[k:], right[k:])])

    out = _reduce(frame, chunk, merge, columns, what)
    if not np.all(np.isfinite(out)):
        raise DataValidationError(
            f"Found array with 0 sample(s) while a minimum of 1 is required: "
            f"{what} has 0 rows. Pass a non-empty frame.")
    return out[:k], out[k:]


def clip_frame(frame, clip: dict, *, what: str = "the private data"):
    """Return a Dask frame whose columns of ``clip`` are clipped (lazily).

    Each partition goes through :func:`skattr._data.clip_frame`, which
    checks its columns as pandas checks a frame.
    """
    clip = dict(clip)
    clipped = frame.map_partitions(lambda part: _clipped(part, [(clip, what)]),
                                   meta=frame._meta.astype(
                                       dict.fromkeys(clip, np.float64)))
    # skattr's passes over it read the frame itself (see _source).
    _CLIPPED[id(clipped)] = (frame, clip, what)
    weakref.finalize(clipped, _CLIPPED.pop, id(clipped), None)
    return clipped


def _flatten(stats) -> np.ndarray:
    return np.concatenate([stats.count, stats.mean.ravel(), stats.m2.ravel()])


def _unflatten(vector: np.ndarray, k: int):
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

    out = _reduce(frame, chunk, merge,
                  [*columns, *(s.column for s in secrets)], what)
    return int(out[0]), [_unflatten(out[1 + i * width:1 + (i + 1) * width], k)
                         for i in range(len(secrets))]


def _numeric_secrets(frame, secrets) -> list:
    """Return the secrets' numeric columns (checked for missing values)."""
    return [s.column for s in secrets if s.column in frame.columns
            and pd.api.types.is_numeric_dtype(frame[s.column].dtype)]


def _column_moments(frame, columns, what, secrets=()):
    """Return (n, per-column min, max, mean, centred sum of squares), one pass.

    Each partition's numeric secret columns are checked for missing values,
    as a release of pandas data checks them.
    """
    k = len(columns)
    checked = _numeric_secrets(frame, secrets)

    def chunk(part):
        for column in checked:
            check_present(part[column], column, what=what)
        if len(part) == 0:
            return np.concatenate([[0.0], np.full(k, np.inf), np.full(k, -np.inf),
                                   np.zeros(2 * k)])
        block = numeric_values(part, columns, what=what)
        mean = block.mean(axis=0)
        return np.concatenate([[len(block)], block.min(axis=0),
                               block.max(axis=0), mean,
                               ((block - mean) ** 2).sum(axis=0)])

    def merge(left, right):
        n_l, n_r = left[0], right[0]
        n = n_l + n_r
        mean_l, mean_r = left[1 + 2 * k:1 + 3 * k], right[1 + 2 * k:1 + 3 * k]
        delta = mean_r - mean_l
        mean = mean_l + delta * (n_r / n if n else 0.0)
        m2 = (left[1 + 3 * k:] + right[1 + 3 * k:]
              + delta**2 * (n_l * n_r / n if n else 0.0))
        return np.concatenate([[n], np.minimum(left[1:1 + k], right[1:1 + k]),
                               np.maximum(left[1 + k:1 + 2 * k],
                                          right[1 + k:1 + 2 * k]), mean, m2])

    out = _reduce(frame, chunk, merge, [*columns, *checked], what)
    return (int(out[0]), out[1:1 + k], out[1 + k:1 + 2 * k],
            out[1 + 2 * k:1 + 3 * k], out[1 + 3 * k:])


def _bins(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """Bin of each value among _BINS equal bins of [low, high] (monotone)."""
    if high <= low:
        return np.zeros(values.shape, dtype=np.int64)
    width = (high - low) / _BINS
    return np.clip(np.floor((values - low) / width), 0, _BINS - 1).astype(np.int64)


def _order_statistics(frame, columns, ranks, low, high, what) -> dict:
    """Return {(column, rank): value}: the exact order statistics wanted.

    ``ranks[j]`` are 0-based ranks of column j, ``low[j]``/``high[j]`` its
    range. A histogram pass counts the values in equal bins (and keeps each
    bin's least and largest value); the bin holding a rank is then either one
    value (its least equals its largest) or narrow enough to collect, sorted
    on the driver; a bin too full to collect is split by another pass over
    its own range. Binning is monotone in the value, so a rank's bin and its
    place in the bin give the value exactly.
    """
    # (column, rank) -> (range low, range high, values below the range)
    todo = {(j, int(r)): (float(low[j]), float(high[j]), 0)
            for j, rs in enumerate(ranks) for r in rs}
    found = {}
    while todo:
        ranges = sorted({(j, lo, hi) for (j, _), (lo, hi, _) in todo.items()})

        def chunk(part, ranges=ranges):
            out = []
            block = (numeric_values(part, columns, what=what) if len(part)
                     else np.zeros((0, len(columns))))
            for j, lo, hi in ranges:
                x = block[:, j]
                x = np.sort(x[(x >= lo) & (x <= hi)])
                b = _bins(x, lo, hi)
                counts = np.bincount(b, minlength=_BINS).astype(float)
                ends = np.cumsum(counts).astype(np.int64)
                starts = ends - counts.astype(np.int64)
                has = counts > 0
                least = np.full(_BINS, np.inf)
                most = np.full(_BINS, -np.inf)
                least[has] = x[starts[has]]
                most[has] = x[ends[has] - 1]
                out.append(np.concatenate([counts, least, most]))
            return np.concatenate(out)

        def merge(left, right, ranges=ranges):
            out = []
            for i in range(len(ranges)):
                a = left[i * 3 * _BINS:(i + 1) * 3 * _BINS]
                b = right[i * 3 * _BINS:(i + 1) * 3 * _BINS]
                out.append(np.concatenate([
                    a[:_BINS] + b[:_BINS],
                    np.minimum(a[_BINS:2 * _BINS], b[_BINS:2 * _BINS]),
                    np.maximum(a[2 * _BINS:], b[2 * _BINS:])]))
            return np.concatenate(out)

        histogram = _reduce(frame, chunk, merge, columns, what)
        wanted = {}                      # (j, lo, hi, bin) -> ranks in it
        next_todo = {}
        for i, (j, lo, hi) in enumerate(ranges):
            part = histogram[i * 3 * _BINS:(i + 1) * 3 * _BINS]
            counts, least, most = (part[:_BINS], part[_BINS:2 * _BINS],
                                   part[2 * _BINS:])
            ends = np.cumsum(counts)
            for (jj, r), (lo2, hi2, below) in todo.items():
                if (jj, lo2, hi2) != (j, lo, hi):
                    continue
                b = int(np.searchsorted(ends, r - below, side="right"))
                before = below + (int(ends[b - 1]) if b else 0)
                if least[b] == most[b]:
                    found[(j, r)] = float(least[b])
                elif counts[b] > _MAX_COLLECTED:
                    next_todo[(j, r)] = (float(least[b]), float(most[b]), before)
                else:
                    wanted.setdefault((j, lo, hi, b), []).append((r, before))
        if wanted:
            keys = sorted(wanted)

            def pick(part, keys=keys):
                if not len(part):
                    return pd.DataFrame({"key": np.zeros(0, dtype=np.int64),
                                         "value": np.zeros(0)})
                block = numeric_values(part, columns, what=what)
                keep_key, keep_value = [], []
                for i, (j, lo, hi, b) in enumerate(keys):
                    x = block[:, j]
                    inside = (x >= lo) & (x <= hi)
                    x = x[inside]
                    x = x[_bins(x, lo, hi) == b]
                    keep_key.append(np.full(x.size, i, dtype=np.int64))
                    keep_value.append(x)
                return pd.DataFrame({"key": np.concatenate(keep_key),
                                     "value": np.concatenate(keep_value)})

            picked = _gather(frame, pick, columns, what)
            for i, key in enumerate(keys):
                values = np.sort(picked["value"].to_numpy()[
                    picked["key"].to_numpy() == i])
                for r, before in wanted[key]:
                    found[(key[0], r)] = float(values[r - before])
        todo = next_todo
    return found


def exact_statistic(frame, query, columns, *, what: str = "the private data",
                    secrets=()) -> tuple[int, np.ndarray]:
    """Return (n, the exact median, quantiles or std) of a Dask frame's columns.

    The values equal NumPy's on the whole column: the standard deviation from
    one pass of per-partition moments merged by Chan's update (to rounding);
    medians and quantiles exactly, from their order statistics
    (:func:`_order_statistics`: one pass for the range, one histogram pass,
    one pass collecting the bins that hold the ranks), combined as
    ``numpy.median`` and ``numpy.quantile`` (linear) combine them. The
    passes are one reading (:func:`skattr.backends.one_reading`): data that
    changes between them is refused.
    """
    with one_reading():
        return _exact_statistic(frame, query, columns, what, secrets)


def _exact_statistic(frame, query, columns, what, secrets):
    columns = list(columns)
    n, low, high, _, m2 = _column_moments(frame, columns, what, secrets)
    kind = query.kind
    need = kind.min_rows(query)
    if n < need:
        raise DataValidationError(
            f"{what} has {n} row(s); the {query.statistic} of {columns} needs at "
            f"least {need}. Pass more rows.")
    plan = kind.order_plan(query, n)
    if plan is None:
        # A std: from each column's moments (the kind's lazy_exact).
        with np.errstate(over="ignore", invalid="ignore"):
            return n, np.sqrt(m2 / (n - query.ddof))
    # Order statistics: the one or two around each level, combined as NumPy
    # combines them (the kind's interpolation).
    ranks = [sorted({r for b, a, _ in plan for r in (b, a)})] * len(columns)
    found = _order_statistics(frame, columns, ranks, low, high, what)
    return n, np.array([
        float(kind.interpolate(np.float64(found[(j, b)]),
                               np.float64(found[(j, a)]), t))
        for j in range(len(columns)) for b, a, t in plan])


def hash_sums(frame, columns) -> tuple[int, list[str]]:
    """Return (rows, a 128-bit hex digest per column and one of the rows).

    Each digest is two sums modulo 2^64 over the rows: of
    ``pandas.util.hash_pandas_object``'s 64-bit hash of each value, and of a
    mix of it. Sums add across partitions, so the digests do not depend on
    the partitioning (nor on the order of the rows), and a pandas frame and
    a Dask frame of the same rows give the same ones. A Dask frame is read
    in one pass; the partial sums travel as 16-bit limbs, which add up
    exactly in floating point.
    """
    columns = list(columns)

    def chunk(part):
        limbs = [(value >> (16 * i)) & 0xFFFF
                 for value in pandas_hash_sums(part, columns)
                 for i in range(4)]
        return [len(part), *limbs]

    out = _reduce(frame, chunk, np.add, columns)
    rows = int(out[0])
    limbs = [int(v) for v in out[1:]]
    sums = [sum(limbs[4 * j + i] << (16 * i) for i in range(4)) % 2**64
            for j in range(len(limbs) // 4)]
    return rows, pandas_digests(sums)


def collect(frame, columns) -> pd.DataFrame:
    """Return the named columns of a Dask frame as one pandas frame, one pass.

    For the Thetas that read the records themselves; the rows keep their
    order (partition by partition), so every number equals pandas'.
    """
    columns = list(dict.fromkeys(columns))
    return _gather(frame, lambda part: part[columns], columns)


# ------------------------------------------------------------ the accessor
def _register(name: str, accessor: type) -> None:
    """Register an accessor on Dask DataFrames (dask.dataframe is imported)."""
    from dask.dataframe.extensions import register_dataframe_accessor

    module = sys.modules["dask.dataframe"]
    done = getattr(module, "_skattr_registered", set())
    if name in done:
        return
    register_dataframe_accessor(name)(accessor)
    module._skattr_registered = done | {name}


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Register the accessors right after ``dask.dataframe`` is first imported."""

    def __init__(self):
        self.accessors: dict[str, type] = {}

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
            for name, accessor in self.accessors.items():
                _register(name, accessor)

        loader.exec_module = exec_module
        return spec


class DaskBackend(DataBackend):
    """Dask DataFrames: every job one pass of pandas code over the partitions."""

    name = "dask"
    lazy = True

    def recognizes(self, obj) -> bool:
        return is_dask_frame(obj) or is_dask_series(obj)

    def as_frame(self, obj, *, what: str):
        return obj if is_dask_frame(obj) else obj.to_frame()    # still lazy

    def schema(self, frame) -> pd.DataFrame:
        return schema(frame)

    def row_count(self, frame, *, what: str | None = None) -> int:
        return row_count(frame, what=what)

    def select(self, frame, columns):
        """Return the named columns, lazily; a reading keys them as ``frame``."""
        picked = frame[list(columns)]
        if len(_SELECTED) >= _SELECTED_KEPT:
            _SELECTED.pop(next(iter(_SELECTED)))
        _SELECTED[picked._name] = _reading_key(frame)
        return picked

    def check_releasable(self, frame, query) -> None:
        check_releasable(frame, query)

    def check_secrets(self, frame, secrets, *, what: str) -> None:
        """Check nothing now: each partition is checked in the release's pass."""

    def statistic(self, frame, query, columns, *, secrets=(), clip=None,
                  what: str = "the private data"):
        if clip:
            frame = clip_frame(frame, clip, what=what)
        check_releasable(frame, query)
        if not query.is_linear:
            return exact_statistic(frame, query, columns, what=what,
                                   secrets=secrets)
        n, totals = release_totals(frame, query, columns, secrets, what=what)
        if n < 1:
            raise DataValidationError(
                "Found array with 0 sample(s) while a minimum of 1 is required: "
                f"{what} has 0 rows. Pass a non-empty frame.")
        return n, totals * query.weight(n)

    def column_totals(self, frame, query, columns, *, what: str, check=None):
        return release_totals(frame, query, columns, what=what, check=check)

    def group_statistics(self, frame, query, columns, secrets, *,
                         what: str = "the reference data"):
        return group_statistics(frame, query, columns, secrets, what=what)

    def column_ranges(self, frame, columns, *, what: str = "the reference data"):
        return column_ranges(frame, columns, what=what)

    def clip(self, frame, clip: dict, *, what: str = "the private data"):
        return clip_frame(frame, clip, what=what)

    def collect(self, frame, columns) -> pd.DataFrame:
        return collect(frame, columns)

    def hash_sums(self, frame, columns):
        return hash_sums(frame, columns)

    def from_pandas(self, frame: pd.DataFrame, *, chunks: int = 1):
        import dask.dataframe as dd

        return dd.from_pandas(frame, npartitions=chunks)

    def like(self, frame: pd.DataFrame, model):
        return self.from_pandas(frame, chunks=max(1, min(model.npartitions, 2)))

    def register_accessor(self, name: str, accessor: type) -> None:
        """Register now if :mod:`dask.dataframe` is imported, else when it is.

        Importing skattr does not import Dask (a second of start-up).
        """
        if "dask.dataframe" in sys.modules:
            _register(name, accessor)
            return
        if importlib.util.find_spec("dask") is None:
            return
        finder = next((f for f in sys.meta_path
                       if isinstance(f, _RegisterOnImport)), None)
        if finder is None:
            finder = _RegisterOnImport()
            sys.meta_path.insert(0, finder)
        finder.accessors[name] = accessor
