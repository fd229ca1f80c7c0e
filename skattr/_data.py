"""The pandas reading of rows: the primitives every data backend is built on.

A release reads the private frame once, for the column totals of a linear
statistic (or a statistic's value); ``fit`` reads the reference data for the
secret's indicator and per-group sufficient statistics (counts, means and
centred sums of cross-products of the records' contributions), or, for the
Theta models that resample records, the contributions themselves. The
functions here read pandas frames (or one chunk of rows); the data backends
(:mod:`skattr.backends`) are the only callers that choose which rows:
the pandas backend calls them on the whole frame, the Dask backend on each
partition, merging the results.

The per-group statistics are kept as (count, mean, centred cross-products), the
form that merges exactly across chunks (Chan, Golub and LeVeque 1983), rather
than raw sums of products, whose differences lose every digit when a column's
mean is large against its spread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from skattr._validation import (
    _numeric_dtype,
    check_columns,
    check_finite,
    column_sums,
    numeric_block,
)

__all__ = [
    "GroupStatistics",
    "clip_frame",
    "column_hash_sums",
    "column_ranges",
    "column_totals",
    "digests",
    "group_statistics",
    "hash_sums",
    "numeric_values",
    "record_contributions",
    "rows_digest",
    "secret_indicator",
    "statistics_of",
    "statistic_values",
]


@dataclass(frozen=True)
class GroupStatistics:
    """Sufficient statistics of the contributions h in and out of a group.

    Attributes
    ----------
    count : ndarray of shape (2,)
        Records out of (index 0) and in (index 1) the secret's group.
    mean : ndarray of shape (2, k)
        Mean contribution on each side.
    m2 : ndarray of shape (2, k, k)
        Centred sums of cross-products, sum (h - mean)(h - mean)^T, each side.
    """

    count: np.ndarray
    mean: np.ndarray
    m2: np.ndarray

    def covariance(self, side: int) -> np.ndarray:
        """Return the population covariance (ddof = 0) of one side's rows."""
        return self.m2[side] / self.count[side]

    def merge(self, other: GroupStatistics) -> GroupStatistics:
        """Combine the statistics of two disjoint chunks of records (Chan et al.).

        Examples
        --------
        >>> import numpy as np
        >>> h = np.arange(12.0).reshape(6, 2) ** 2
        >>> z = np.array([0, 1, 0, 1, 1, 0])
        >>> whole = statistics_of(h, z)
        >>> parts = statistics_of(h[:2], z[:2]).merge(statistics_of(h[2:], z[2:]))
        >>> bool(np.allclose(whole.m2, parts.m2) and np.allclose(whole.mean,
        ...                                                       parts.mean))
        True
        """
        count = self.count + other.count
        safe = np.where(count > 0, count, 1)
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.count / safe)[:, None]
        weight = (self.count * other.count / safe)[:, None, None]
        m2 = self.m2 + other.m2 + weight * np.einsum("gi,gj->gij", delta, delta)
        return GroupStatistics(count=count, mean=mean, m2=m2)


def _columns_major(h: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Return the rows of h where mask holds, as a (k, m) array.

    A frame's columns reach here contiguous (h is column-major), and selecting
    along the record axis of h.T keeps them so: the means and the centring then
    stream through each column, where ``h[mask]`` would gather into row-major
    order and make both several times slower.
    """
    return h.T.compress(mask, axis=1)


def statistics_of(h: np.ndarray, z: np.ndarray) -> GroupStatistics:
    """Return the GroupStatistics of contributions h (n, k) split by z in {0, 1}.

    The in-memory implementation behind :func:`group_statistics`, for callers
    that already hold the contributions (bootstrap replicates).
    """
    k = h.shape[1]
    count = np.zeros(2)
    mean = np.zeros((2, k))
    m2 = np.zeros((2, k, k))
    inside = np.asarray(z) == 1
    for side, mask in ((0, ~inside), (1, inside)):
        rows = _columns_major(h, mask)
        count[side] = rows.shape[1]
        if rows.shape[1]:
            mean[side] = rows.mean(axis=1)
            centred = rows - mean[side][:, None]
            # Values beyond about 1e154 overflow to inf here, which the
            # models refuse with what to do (rescale): no RuntimeWarning.
            with np.errstate(over="ignore", invalid="ignore"):
                m2[side] = centred @ centred.T
    return GroupStatistics(count=count, mean=mean, m2=m2)


def column_totals(frame: pd.DataFrame, query, columns, *,
                  what: str = "the private data", clip=None) -> np.ndarray:
    """Sum over the records of a linear query's contributions, one per statistic.

    The release path: per-column sums, never an (n, k) copy of the data.
    ``clip`` (``{column: (low, high)}``) clips those columns' values first,
    as :func:`clip_frame` does: a mean or sum column one at a time (every
    value is clipped, whether or not it lies outside, so the time taken does
    not depend on how many do); a count reading a clipped column counts the
    clipped values.
    """
    if not clip:
        return query.totals(frame, columns, what=what)
    out = []
    for part in getattr(query, "parts", (query,)):
        cols = part.columns if part.columns is not None else columns
        if not part.kind.counts:
            out.append(np.array([_clipped_sum(frame, c, clip.get(c), what)
                                 for c in cols]))
        else:
            used = {c: clip[c] for c in cols if c in clip}
            out.append(part.totals(clip_frame(frame, used, what=what) if used
                                   else frame, cols, what=what))
    return np.concatenate(out)


# Values clipped and summed per block: 2 MB of float64, within the cache.
_CLIP_BLOCK = 1 << 18


def _clipped_sum(frame: pd.DataFrame, column, bounds, what: str) -> float:
    """Return the sum of a column's values clipped to ``bounds`` (None: as they are)."""
    if bounds is None:
        return float(column_sums(frame, [column], what=what)[0])
    check_columns(frame, [column], what=what)
    col = frame[column]
    dtype = _numeric_dtype(col, column, what)
    # The column itself, not a one-column frame (which would copy it).
    values = (col.to_numpy() if isinstance(dtype, np.dtype)
              and dtype.kind in "biuf"
              else col.to_numpy(dtype=np.float64, na_value=np.nan))
    low, high = np.float64(bounds[0]), np.float64(bounds[1])
    floats = values.dtype.kind == "f"
    # A block at a time through one float64 buffer that stays in cache: the
    # column is read from memory once and no column-sized copy is made.
    buffer = np.empty(min(len(values), _CLIP_BLOCK), dtype=np.float64)
    total = np.float64(0.0)
    finite = True
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, len(values), _CLIP_BLOCK):
            block = values[start:start + _CLIP_BLOCK]
            # A finite sum rules out NaN and infinity in one cheap pass; an
            # overflowing one of finite values is what clipping is for.
            if floats and finite and not np.isfinite(np.add.reduce(block)):
                finite = bool(np.isfinite(block).all())
            out = buffer[:len(block)]
            out[...] = block
            # Clipped in float64 (a clip of mixed types is far slower).
            np.clip(out, low, high, out=out)
            total += np.add.reduce(out)
    if not finite:
        check_finite(values[:, None], [column], what=what)
    return float(total)


def statistic_values(frame: pd.DataFrame, query, columns, *,
                     what: str = "the private data", clip=None) -> np.ndarray:
    """Return the exact value of a non-linear statistic on the frame.

    ``clip`` clips the named columns first (:func:`clip_frame`).
    """
    if clip:
        frame = clip_frame(frame, clip, what=what)
    return query.values(frame, columns, what=what)


def column_ranges(frame, columns, *, what: str = "the reference data"
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Return the least and largest value of each column (numeric, finite).

    The ranges ``bounds="reference"`` clips to, and the robust ranges'
    bounds: public reference data only.
    """
    block = numeric_values(frame, list(columns), what=what)
    return block.min(axis=0), block.max(axis=0)


def clip_frame(frame, clip: dict, *, what: str = "the private data"):
    """Return the frame with each column of ``clip`` clipped to its (low, high).

    The columns are checked first (numeric, no NaN or infinite value: those
    are refused, never clipped); the caller's frame is not modified.
    """
    if not clip:
        return frame
    columns = list(clip)
    block = numeric_values(frame, columns, what=what)
    low, high = np.array([clip[c] for c in columns], dtype=float).T
    clipped = np.clip(block, low, high)
    out = frame.copy(deep=False)
    for j, c in enumerate(columns):
        out[c] = clipped[:, j]
    return out


def numeric_values(frame: pd.DataFrame, columns, *,
                   what: str = "the private data") -> np.ndarray:
    """Return the columns as a checked float64 (n, k) block (numeric, finite).

    What a non-linear statistic's exact value reads; the Dask backend reads a
    partition's rows through it.
    """
    return numeric_block(frame, columns, what=what)


def secret_indicator(frame: pd.DataFrame, secret, *,
                     what: str = "the reference data") -> np.ndarray:
    """Return the secret's attribute of each record (0/1, or its value)."""
    return secret.indicator(frame, what=what)


def record_contributions(frame: pd.DataFrame, query, columns, *,
                         what: str = "the reference data") -> np.ndarray:
    """Return the (n, k) contributions h(x_j) of a linear query, a row a record.

    For the Theta models that need the records themselves (bootstrap and
    resampling replicates, value frequencies of exact laws, the joint Gaussian
    check); everything that sufficient statistics answer goes through
    :func:`group_statistics`.
    """
    return query.contributions(frame, columns, what=what)


def group_statistics(frame: pd.DataFrame, query, columns, secrets, *,
                     what: str = "the reference data") -> list[GroupStatistics]:
    """Per-group sufficient statistics of the contributions, one per secret.

    The contributions are computed once and split by each secret's group.

    Examples
    --------
    >>> import pandas as pd, skattr
    >>> frame = pd.DataFrame({"s": [0, 1, 1, 0], "x": [1.0, 2.0, 4.0, 3.0]})
    >>> secret = skattr.Secret.proportion("s", 1, pairs=[(0.4, 0.6)])
    >>> (stats,) = group_statistics(frame, skattr.Query.mean(["x"]), ("x",),
    ...                             [secret])
    >>> stats.count.tolist(), stats.mean[:, 0].tolist(), stats.m2[:, 0, 0].tolist()
    ([2.0, 2.0], [2.0, 3.0], [2.0, 2.0])
    """
    h = record_contributions(frame, query, columns, what=what)
    return [statistics_of(h, secret_indicator(frame, s, what=what))
            for s in secrets]


_MIX = np.uint64(0xBF58476D1CE4E5B9)


def hash_sums(frame: pd.DataFrame, columns) -> list[int]:
    """Return sums mod 2^64 of each column's value hashes (two each) and rows'.

    Of ``pandas.util.hash_pandas_object``'s 64-bit hash of each value, and of
    a mix of it: sums add across chunks of rows, so the digests a backend
    makes of them depend neither on the rows' order nor on their chunks.
    """
    sums = []
    for hashes in ([pd.util.hash_pandas_object(frame[c], index=False)
                    for c in columns]
                   + [pd.util.hash_pandas_object(frame[list(columns)],
                                                 index=False)]):
        sums += _summed(hashes)
    return sums


def rows_digest(frame: pd.DataFrame, *, ordered: bool = False) -> str:
    """Return a 128-bit hex digest of the rows of ``frame``, in any order.

    The last digest of :func:`hash_sums` alone: pandas' 64-bit hash of each
    row (its values in the columns' order) summed, and a mix of it summed,
    modulo 2^64. Equal multisets of rows give equal digests; the rows' order
    and the index do not count, unless ``ordered``: then each row's hash is
    first mixed with its position (a seeded fit that draws rows depends on
    their order). One hash of each value, where :func:`hash_sums` takes two
    (each column's own, then the rows'): on 10^7 rows x 5 columns 1.2-1.7
    CPU-s against 2.9-4.9 (``benchmarks/bench_reuse.py``).
    """
    hashes = pd.util.hash_pandas_object(frame, index=False)
    if ordered:
        with np.errstate(over="ignore"):
            h = hashes.to_numpy(dtype=np.uint64)
            h = (h + np.arange(h.size, dtype=np.uint64) * _MIX) * _MIX
            hashes = pd.Series(h ^ (h >> np.uint64(29)))
    return digests(_summed(hashes))[0]


def _summed(hashes: pd.Series) -> list[int]:
    """Return the two sums mod 2^64 of 64-bit hashes: as they are, and mixed."""
    with np.errstate(over="ignore"):
        h = hashes.to_numpy(dtype=np.uint64)
        mixed = (h ^ (h >> np.uint64(31))) * _MIX
        return [int(h.sum(dtype=np.uint64)), int(mixed.sum(dtype=np.uint64))]


#: Rows mixed at a time by column_hash_sums: the words stay in cache.
_BLOCK = 1 << 15


def _words(values: pd.Series) -> np.ndarray | None:
    """Return the values as 64-bit words, for NumPy numbers, bools and times."""
    dtype = values.dtype
    if not isinstance(dtype, np.dtype) or dtype.kind not in "biufmM":
        return None
    array = values.to_numpy()
    if dtype.kind == "b" or (dtype.kind in "iu" and dtype.itemsize < 8):
        array = array.astype(np.int64)
    elif dtype.kind == "f" and dtype.itemsize < 8:
        array = array.astype(np.float64)
    return np.ascontiguousarray(array).view(np.uint64)


def column_hash_sums(frame: pd.DataFrame, columns) -> tuple[int, ...]:
    """Return each column's sum mod 2^64 of a 64-bit hash of each value.

    What a pass over a chunk of rows reports of the columns it read, so that
    the passes of a release can check they read the same values
    (:class:`skattr.backends.Reading`). A number, bool or time is hashed
    from its 64 bits by a multiply and a xor-shift, in blocks that stay in
    cache (about 2 ns a value, a sixth of ``pandas.util.hash_pandas_object``,
    which hashes the other dtypes). The sum does not depend on the order of
    the rows; it is no cryptographic digest.
    """
    sums = []
    with np.errstate(over="ignore"):
        for c in columns:
            words = _words(frame[c])
            if words is None:
                sums.append(int(pd.util.hash_pandas_object(frame[c], index=False)
                                .to_numpy(dtype=np.uint64).sum(dtype=np.uint64)))
                continue
            total = np.uint64(0)
            mixed = np.empty(min(_BLOCK, words.size), dtype=np.uint64)
            shifted = np.empty_like(mixed)
            for start in range(0, words.size, _BLOCK):
                block = words[start:start + _BLOCK]
                h, t = mixed[:block.size], shifted[:block.size]
                np.multiply(block, _MIX, out=h)
                np.right_shift(h, np.uint64(32), out=t)
                np.bitwise_xor(h, t, out=h)
                total += h.sum(dtype=np.uint64)
            sums.append(int(total))
    return tuple(sums)


def digests(sums: list[int]) -> list[str]:
    """Return the 128-bit hex digests of :func:`hash_sums`' pairs of sums."""
    return [f"{sums[2 * j]:016x}{sums[2 * j + 1]:016x}"
            for j in range(len(sums) // 2)]
