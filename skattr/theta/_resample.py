"""Theta for any statistic: the laws of F over subsets of the reference records.

The resampling model of Chen and Ohrimenko's experiments (App. C.1), taken as
Theta itself: a dataset whose property is a is n records drawn uniformly, without
replacement, from the public reference data, exactly round(a n) of them from the
secret's group (dataset privacy), or a Binomial(n, a) number of them
(distributional privacy). Every subset is equally likely, so the law of any
statistic F is exact in principle; it is enumerated when the subsets are few and
drawn otherwise, with the draws' error bounded by order statistics. Medians and
quantiles have exact laws at any size (:mod:`skattr.theta._order_laws`). With
replacement, each group's records are i.i.d. draws from its reference records,
so n may exceed the reference data.
"""

from __future__ import annotations

import copy
import itertools
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import stats

from skattr._data import record_contributions, secret_indicator
from skattr._random import (
    _KEYS_PER_BLOCK,
    by_rejection,
    check_random_state,
    draw_k_subsets,
    seed_of,
)
from skattr._secret import grid_tolerance
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.theta._moment_laws import MomentLaws
from skattr.theta._order_laws import OrderLaws

__all__ = ["Resample", "ResampledLaws", "coupled_subsets", "coupled_values",
           "draw_subsets", "iter_subsets", "law_of", "quantile_bounds",
           "tail_bounds"]

# Row positions gathered at once when a statistic is evaluated on many subsets.
_EVAL_BLOCK = 1 << 21

# Row positions of drawn datasets held at once (32 MB of intp): datasets are
# drawn and evaluated a chunk at a time, so a drawn law's memory grows with
# neither the number of datasets, nor their size, nor the reference data (only
# the values kept grow, 8 bytes a statistic a dataset).
CHUNK_POSITIONS = 1 << 22

# Progress bars advance at least this many times over one drawn law.
_TICKS = 100

# Most draws a default ``n_draws`` asks for (a tiny delta needs more: say so).
_MAX_DEFAULT_DRAWS = 2_000_000


def _check_group_sizes(n_inside: int, n_outside: int, k: int, n: int,
                       replace: bool = False) -> None:
    """Raise unless the reference can form a dataset of n with k in the group."""
    if replace:
        return   # fit ensures a record on each side
    if k > n_inside or n - k > n_outside:
        short, need = ((n_inside, k) if k > n_inside else (n_outside, n - k))
        raise NotCertifiableError(
            f"A dataset of {n} records with {k} in the secret's group needs "
            f"{need} records from a side of the reference data that holds "
            f"{short}; pass more reference data, choose other pairs, or draw "
            "with replacement (Resample(replace=True)).")


def _draw(pool: int, k: int, size: int, rng, replace: bool) -> np.ndarray:
    """Positions of ``size`` draws of k of ``range(pool)``, one a row."""
    if replace:
        return rng.integers(0, pool, size=(size, k))
    return draw_k_subsets(pool, k, size, rng)


def draw_subsets(inside: np.ndarray, outside: np.ndarray, counts, n: int,
                 rng: np.random.Generator, *, replace: bool = False
                 ) -> np.ndarray:
    """Draw datasets of n distinct records, ``counts[i]`` of them from ``inside``.

    Parameters
    ----------
    inside, outside : ndarray of int
        Row positions of the reference records in, and out of, the secret's
        group.
    counts : array-like of int, shape (m,)
        The number of group records in each drawn dataset.
    n : int
        Records per dataset.
    rng : numpy.random.Generator or OSEntropy
        Source of the draws, as :func:`skattr._random.check_random_state` gives
        it.
    replace : bool, default=False
        Draw each side's records i.i.d. (with replacement) instead.

    Returns
    -------
    ndarray of shape (m, n)
        Row positions; row i is a uniformly random set of ``counts[i]`` records
        of ``inside`` and ``n - counts[i]`` of ``outside``.

    Raises
    ------
    NotCertifiableError
        If a group holds fewer records than a dataset needs from it.

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.theta._resample import draw_subsets
    >>> rows = draw_subsets(np.arange(5), np.arange(5, 50), [2, 2, 3], 10,
    ...                     np.random.default_rng(0))
    >>> rows.shape, (rows < 5).sum(axis=1).tolist()
    ((3, 10), [2, 2, 3])
    """
    counts = np.asarray(counts, dtype=np.intp)
    out = np.empty((counts.size, n), dtype=np.intp)
    # One pass per distinct group size (at most n + 1), never one per dataset.
    for k in np.unique(counts):
        k = int(k)
        _check_group_sizes(inside.size, outside.size, k, n, replace)
        rows = np.flatnonzero(counts == k)
        out[rows, :k] = inside[_draw(inside.size, k, rows.size, rng, replace)]
        out[rows, k:] = outside[_draw(outside.size, n - k, rows.size, rng,
                                      replace)]
    return out


def _skip_doubles(rng, count: int) -> None:
    """Advance ``rng`` as ``count`` doubles of ``Generator.random`` would."""
    bitgen = rng.bit_generator
    if isinstance(bitgen, (np.random.PCG64, np.random.PCG64DXSM)):
        # One 64-bit step a double: jump there. advance() also drops a
        # 32-bit half-word an earlier draw may have left buffered, which
        # doubles never use, so it is put back.
        before = bitgen.state
        bitgen.advance(count)
        after = bitgen.state
        after["has_uint32"], after["uinteger"] = (before["has_uint32"],
                                                  before["uinteger"])
        bitgen.state = after
        return
    for start in range(0, count, _KEYS_PER_BLOCK):
        rng.random(min(_KEYS_PER_BLOCK, count - start))


class _ReplayedDraw:
    """One call ``_draw(pool, k, size, rng, replace)``, redrawn a few rows at a time.

    Made by a pass that advances ``rng`` exactly as the call would, keeping
    only the generator's state where each part of the call starts (and, when
    k-subsets are drawn by rejection, the round in which each row was drawn
    for the last time). :meth:`take` then redraws the rows in order from
    copies of those states: the same numbers as the one call, never more
    than a few rows at once.

    Notes
    -----
    Every draw it replays (``Generator.random``, ``integers`` and, in
    :func:`iter_subsets`, ``permuted`` along rows) reads the stream row after
    row, so one call on m rows draws what calls on consecutive stretches of
    them draw. :func:`~skattr._random.draw_k_subsets` takes k of a large
    pool by rejection: all rows, then the rows that held a repeat, again and
    again, each round from where the last ended; a row's value is its draw
    in its last round, and round j draws, in order, the rows whose last
    round is j or later, so a stretch of rows reads a stretch of each
    round's draws.
    """

    def __init__(self, pool: int, k: int, size: int, rng, replace: bool,
                 step: int, max_positions: int):
        self.pool, self.k, self.taken = pool, k, 0
        # Rows of random keys drawn at once: the keys are as many as the pool.
        self.keys_rows = max(1, min(_KEYS_PER_BLOCK, max_positions) // pool)
        self.kind = ("empty" if k == 0 else "integers" if replace
                     else "rejection" if by_rejection(pool, k) else "keys")
        self.starts = [copy.deepcopy(rng)]
        if self.kind == "integers":
            for start in range(0, size, step):
                rng.integers(0, pool, size=(min(step, size - start), k))
        elif self.kind == "keys":
            _skip_doubles(rng, size * pool)
        elif self.kind == "rejection":
            self.last = self._rounds(size, rng, step)

    def _rounds(self, size: int, rng, step: int) -> np.ndarray:
        """Draw the rounds of rejection; return each row's last round."""
        last = np.zeros(size, dtype=np.int64)
        drawn = np.arange(size)
        self.starts = []
        while drawn.size:
            last[drawn] = len(self.starts)
            self.starts.append(copy.deepcopy(rng))
            again = []
            for start in range(0, drawn.size, step):
                rows = np.sort(rng.integers(
                    0, self.pool, size=(min(step, drawn.size - start), self.k),
                    dtype=np.intp), axis=1)
                repeats = (rows[:, 1:] == rows[:, :-1]).any(axis=1)
                again.append(drawn[start:start + rows.shape[0]][repeats])
            drawn = np.concatenate(again)
        return last

    def take(self, count: int) -> np.ndarray:
        """Return the next ``count`` rows of the call's result."""
        start, self.taken = self.taken, self.taken + count
        if self.kind == "empty":
            return np.empty((count, 0), dtype=np.intp)
        stream = self.starts[0]
        if self.kind == "integers":
            return stream.integers(0, self.pool, size=(count, self.k))
        out = np.empty((count, self.k), dtype=np.intp)
        if self.kind == "keys":
            block = self.keys_rows
            for at in range(0, count, block):
                keys = stream.random((min(block, count - at), self.pool))
                out[at:at + block] = np.argpartition(keys, self.k - 1,
                                                     axis=1)[:, :self.k]
            return out
        last = self.last[start:start + count]
        for round_, stream in enumerate(self.starts):
            drawn = np.flatnonzero(last >= round_)
            if not drawn.size:
                break
            rows = stream.integers(0, self.pool, size=(drawn.size, self.k),
                                   dtype=np.intp)
            final = last[drawn] == round_
            out[drawn[final]] = rows[final]
        return out


def iter_subsets(inside: np.ndarray, outside: np.ndarray, counts, n: int,
                 rng, *, replace: bool = False, shuffle: bool = False,
                 max_positions: int | None = None):
    """Yield the datasets of :func:`draw_subsets` a chunk at a time.

    The same datasets, number for number with a seeded generator, as
    ``draw_subsets(inside, outside, counts, n, rng, replace=replace)``
    followed, when ``shuffle``, by ``rng.permuted(rows, axis=1)``; but never
    more than ``max_positions`` row positions (or one dataset) at a time,
    whatever the number of datasets, n or the pools' sizes.

    Parameters
    ----------
    inside, outside, counts, n, rng, replace
        As for :func:`draw_subsets`.
    shuffle : bool, default=False
        Put each dataset's records in a uniformly random order.
    max_positions : int or None, default=None
        Most row positions a chunk holds; None is ``CHUNK_POSITIONS`` (2**22,
        32 MB of positions; the chunk's other arrays take about four times
        as much again).

    Yields
    ------
    start : int
        The index of the chunk's first dataset.
    rows : ndarray of shape (chunk, n)
        Row positions, one dataset a row.

    Notes
    -----
    A seeded ``rng`` is first advanced as the one-shot draws would advance
    it, keeping the generator's state where each of their calls starts
    (:class:`_ReplayedDraw`); the chunks are then redrawn from copies of
    those states. Random keys are skipped by jumping the generator, so for
    most draws the extra cost is none; rows drawn by rejection or with
    replacement, and the records' orders, are drawn twice. With the
    operating system's entropy (no state to copy) each chunk is drawn
    afresh: the same law, and nothing to reproduce.

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.theta._resample import draw_subsets, iter_subsets
    >>> inside, outside = np.arange(50), np.arange(50, 500)
    >>> whole = draw_subsets(inside, outside, [20] * 9, 60,
    ...                      np.random.default_rng(0))
    >>> chunks = [rows for _, rows in iter_subsets(
    ...     inside, outside, [20] * 9, 60, np.random.default_rng(0),
    ...     max_positions=120)]
    >>> len(chunks), bool(np.array_equal(np.vstack(chunks), whole))
    (5, True)
    """
    counts = np.asarray(counts, dtype=np.intp)
    m = counts.size
    if max_positions is None:
        max_positions = CHUNK_POSITIONS
    step = max(1, int(max_positions) // max(1, n))
    if m <= step or not hasattr(rng, "bit_generator"):
        for start in range(0, m, step):
            rows = draw_subsets(inside, outside, counts[start:start + step], n,
                                rng, replace=replace)
            yield start, rng.permuted(rows, axis=1) if shuffle else rows
        return
    groups = {}
    for k in np.unique(counts):     # the one-shot call's order of draws
        k = int(k)
        _check_group_sizes(inside.size, outside.size, k, n, replace)
        size = int(np.count_nonzero(counts == k))
        groups[k] = tuple(
            _ReplayedDraw(pool, drawn, size, rng, replace, step, max_positions)
            for pool, drawn in ((inside.size, k), (outside.size, n - k)))
    order = copy.deepcopy(rng)
    if shuffle:
        for start in range(0, m, step):
            # The records' order reads the stream whatever they hold.
            rng.permuted(np.zeros((min(step, m - start), n), dtype=np.uint8),
                         axis=1)
    for start in range(0, m, step):
        chunk = counts[start:start + step]
        rows = np.empty((chunk.size, n), dtype=np.intp)
        for k in np.unique(chunk):
            k = int(k)
            at = np.flatnonzero(chunk == k)
            group, rest = groups[k]
            rows[at, :k] = inside[group.take(at.size)]
            rows[at, k:] = outside[rest.take(at.size)]
        yield start, order.permuted(rows, axis=1) if shuffle else rows


def coupled_subsets(inside: np.ndarray, outside: np.ndarray, k_a, k_b,
                    n: int, rng, order_rng=None, *, shuffle: bool = True,
                    replace: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Draw pairs of datasets, ``k_a[i]`` and ``k_b[i]`` group records, coupled.

    Row i of both results is a dataset of n distinct records; they share
    all but ``|k_a[i] - k_b[i]|`` records, which the one with more group
    records holds from the group and the other from outside it. Marginally,
    each row is uniform over the datasets with its number of group records,
    as :func:`draw_subsets` draws them, and in a uniformly random order.

    Parameters
    ----------
    inside, outside : ndarray of int
        Row positions of the reference records in, and out of, the group.
    k_a, k_b : array-like of int, shape (m,)
        Group records of each dataset of a pair.
    n : int
        Records per dataset.
    rng : numpy.random.Generator or OSEntropy
        Source of the records drawn.
    order_rng : numpy.random.Generator or OSEntropy, default=None
        Source of the records' order (``rng`` when None).
    shuffle : bool, default=True
        Put each pair's records in one uniformly random order; False leaves
        the group's records first (for statistics that ignore the order).
    replace : bool, default=False
        Draw each side's records i.i.d. (with replacement) instead; the
        coupling is the same, since a prefix of i.i.d. draws is i.i.d.

    Returns
    -------
    rows_a, rows_b : ndarray of shape (m, n)

    Notes
    -----
    With G a uniform k_hi-subset of the group in random order and O a
    uniform (n - k_lo)-subset of the rest in random order, the first k of G
    is a uniform k-subset for every k <= k_hi, and likewise for O; the
    dataset with more group records takes G[:k_hi] and O[:n - k_hi], the
    other G[:k_lo] and O[:n - k_lo]. One random permutation per row orders
    both datasets of the pair alike.

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.theta._resample import coupled_subsets
    >>> a, b = coupled_subsets(np.arange(10), np.arange(10, 40), [6, 6], [2, 2],
    ...                        8, np.random.default_rng(0))
    >>> (a < 10).sum(axis=1).tolist(), (b < 10).sum(axis=1).tolist()
    ([6, 6], [2, 2])
    >>> [len(set(x) & set(y)) for x, y in zip(a, b)]
    [4, 4]
    """
    k_a = np.asarray(k_a, dtype=np.int64)
    k_b = np.asarray(k_b, dtype=np.int64)
    m = k_a.size
    hi, lo = np.maximum(k_a, k_b), np.minimum(k_a, k_b)
    top, bottom = int(hi.max(initial=0)), int(lo.min(initial=n))
    _check_group_sizes(inside.size, outside.size, top, n, replace)
    _check_group_sizes(inside.size, outside.size, bottom, n, replace)
    group = rng.permuted(inside[_draw(inside.size, top, m, rng, replace)],
                         axis=1)
    rest = rng.permuted(outside[_draw(outside.size, n - bottom, m, rng,
                                      replace)], axis=1)
    # A placeholder column where a side is empty (never taken).
    if top == 0:
        group = np.zeros((m, 1), dtype=np.intp)
    if n - bottom == 0:
        rest = np.zeros((m, 1), dtype=np.intp)
    column = np.arange(n)
    from_group = np.take_along_axis(
        group, np.broadcast_to(np.minimum(column, group.shape[1] - 1), (m, n)),
        axis=1)

    def dataset(k):
        k = k[:, None]
        from_rest = np.take_along_axis(
            rest, np.clip(column - k, 0, rest.shape[1] - 1), axis=1)
        return np.where(column < k, from_group, from_rest)

    if not shuffle:
        return dataset(k_a), dataset(k_b)
    order = (rng if order_rng is None else order_rng).permuted(
        np.broadcast_to(column, (m, n)), axis=1)
    rows_a = np.take_along_axis(dataset(k_a), order, axis=1)
    rows_b = np.take_along_axis(dataset(k_b), order, axis=1)
    return rows_a, rows_b


def law_of(values: np.ndarray, mass: np.ndarray, privacy: str
           ) -> tuple[np.ndarray, np.ndarray]:
    """Return (support, mass) of the law F takes on datasets of given masses.

    With dataset privacy every dataset is equally likely: the masses are
    whole-number counts of datasets, an exact rational law.
    """
    support, where = np.unique(values, axis=0, return_inverse=True)
    if privacy == "dataset":
        return support, np.bincount(where.ravel()).astype(float)
    law = np.bincount(where.ravel(), weights=mass)
    return support, law / law.sum()


def _ranks(m: int, levels: np.ndarray, failure: float
           ) -> tuple[np.ndarray, np.ndarray]:
    """1-based ranks (s, r) of the order statistics bounding each quantile level.

    r is the least rank with P(Binomial(m, u) >= r) <= failure, s the largest
    with P(Binomial(m, u) <= s - 1) <= failure; r = m + 1 or s = 0 means no draw
    qualifies.
    """
    binom = stats.binom
    upper = binom.ppf(1.0 - failure, m, levels).astype(np.int64) + 1
    # ppf is computed in floating point: step until each tail really is small.
    for _ in range(m + 1):
        wrong = (upper <= m) & (binom.sf(upper - 1, m, levels) > failure)
        if not wrong.any():
            break
        upper[wrong] += 1
    lower = binom.ppf(failure, m, levels).astype(np.int64)
    for _ in range(m + 1):
        wrong = (lower >= 1) & (binom.cdf(lower - 1, m, levels) > failure)
        if not wrong.any():
            break
        lower[wrong] -= 1
    return lower, upper


def quantile_bounds(samples: np.ndarray, levels, failure: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Order statistics bounding a law's quantiles, from i.i.d. draws of it.

    For each level u, ``lower[i] <= Q(u) <= upper[i]``, where Q(u) = inf {x :
    P(F <= x) >= u} is the quantile function of each column, each bound wrong
    with probability at most ``failure`` over the draws.

    Parameters
    ----------
    samples : ndarray of shape (m, d)
        i.i.d. draws.
    levels : array-like of shape (g,), in (0, 1)
        Quantile levels.
    failure : float in (0, 1)
        Probability that a bound is wrong.

    Returns
    -------
    lower, upper : ndarray of shape (g, d)

    Raises
    ------
    NotCertifiableError
        If m is too small for some level's bound.

    Notes
    -----
    P(F < Q(u)) <= u, so the number of draws below Q(u) is stochastically at
    most Binomial(m, u), and the r-th smallest draw falls below Q(u) only if r
    draws do: probability at most P(Binomial(m, u) >= r) <= ``failure``.
    Likewise P(F <= Q(u)) >= u, and the s-th smallest draw exceeds Q(u) only if
    fewer than s draws are at most Q(u): probability at most
    P(Binomial(m, u) <= s - 1). No assumption on the law (atoms included).

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.theta._resample import quantile_bounds
    >>> draws = np.random.default_rng(0).standard_normal((100_000, 1))
    >>> lower, upper = quantile_bounds(draws, [0.001, 0.5], 1e-6)
    >>> bool(lower[0, 0] < -3.09 < upper[0, 0]), bool(lower[1, 0] < 0 < upper[1, 0])
    (True, True)
    """
    levels = np.atleast_1d(np.asarray(levels, dtype=float))
    m = samples.shape[0]
    low, high = _ranks(m, levels, failure)
    if np.any(low < 1) or np.any(high > m):
        tail = float(min(levels.min(), 1 - levels.max()))
        raise NotCertifiableError(
            f"{m} draws cannot bound a tail of mass {tail:.3g} with confidence "
            f"1 - {failure:.3g}; at least {minimum_draws(tail, failure)} are "
            "needed. Raise n_draws or delta.")
    ordered = np.sort(samples, axis=0)
    return ordered[low - 1], ordered[high - 1]


def tail_bounds(samples: np.ndarray, tail: float, failure: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """Bounds with mass at most ``tail`` below ``lower`` and above ``upper``.

    The quantile bounds of :func:`quantile_bounds` at levels ``tail`` and
    ``1 - tail``: P(F < Q(tail)) <= tail and P(F > Q(1 - tail)) <= tail.

    Parameters
    ----------
    samples : ndarray of shape (m, d)
        i.i.d. draws.
    tail : float in (0, 1/2)
        Mass allowed beyond each bound.
    failure : float in (0, 1)
        Probability that a bound is wrong.

    Returns
    -------
    lower, upper : ndarray of shape (d,)

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.theta._resample import tail_bounds
    >>> draws = np.random.default_rng(0).standard_normal((100_000, 1))
    >>> lower, upper = tail_bounds(draws, 1e-3, 1e-6)
    >>> bool(-3.4 < lower[0] < -3.09 < 3.09 < upper[0] < 3.4)
    True
    """
    lower, upper = quantile_bounds(samples, [tail, 1.0 - tail], failure)
    return lower[0], upper[1]


def minimum_draws(tail: float, failure: float) -> int:
    """Return the least m with (1 - tail)^m <= failure: fewer bound no tail."""
    return math.ceil(math.log(failure) / math.log1p(-tail))


@dataclass(frozen=True, eq=False)
class RowEvaluator:
    """f(index) -> (m, d): the query on each subset of rows ``index[i]``.

    Data rather than a closure, so that a fitted resampling Theta can be saved
    (:mod:`skattr._persistence`). ``rows`` holds the per-record contributions
    of a linear query, or what ``query.prepare`` kept of the reference data.
    """

    query: object
    rows: object = field(repr=False)

    def __call__(self, index: np.ndarray) -> np.ndarray:
        if self.query.is_linear:
            # A linear statistic is a weighted sum of per-record contributions.
            return (self.rows[index].sum(axis=1)
                    * self.query.weight(index.shape[1]))
        return self.query.evaluate_rows(self.rows, index)


def row_evaluator(query, frame, columns) -> Callable[[np.ndarray], np.ndarray]:
    """Return f(index) -> (m, d): the query on each subset of rows ``index[i]``."""
    if query.is_linear:
        return RowEvaluator(query, record_contributions(frame, query, columns))
    return RowEvaluator(query, query.prepare(frame, columns,
                                             what="the reference data"))


@dataclass(frozen=True)
class ResampledLaws:
    """The fitted resampling Theta of one secret: laws of F given each value a.

    Built by :meth:`Resample.fit`; the mechanisms call :meth:`exact_law` (every
    subset, when few) or :meth:`drawn_law` (i.i.d. datasets).
    """

    evaluate: Callable = field(repr=False, compare=False)
    inside: np.ndarray = field(repr=False, compare=False)
    outside: np.ndarray = field(repr=False, compare=False)
    ordered: bool
    replace: bool
    order: OrderLaws | None
    n_draws: int | None
    default_draws: int
    failure_share: float
    max_exact: int
    seed: int
    description: str
    _cache: dict = field(default_factory=dict, repr=False, compare=False)
    moments: MomentLaws | None = None

    def draws_needed(self, tail: float, failure: float) -> int:
        """Draws per property value: ``n_draws``, or twice the least that bound a tail.

        The least is the m at which :func:`quantile_bounds` can bound a tail of
        mass ``tail`` with failure probability ``failure``; twice that brings
        the bounds close to the true quantiles.
        """
        if self.n_draws is not None:
            return int(self.n_draws)
        wanted = max(self.default_draws, 2 * minimum_draws(tail, failure))
        if wanted > _MAX_DEFAULT_DRAWS:
            raise NotCertifiableError(
                f"Bounding tails of mass {tail:.2g} takes {wanted} draws per "
                "property value; raise delta, or pass n_draws= explicitly to "
                "draw that many.")
        return wanted

    def _counts_law(self, a: float, n: int, privacy: str
                    ) -> tuple[np.ndarray, np.ndarray]:
        """Group sizes k a dataset can hold, and their probabilities."""
        if privacy == "distributional":
            k = np.arange(n + 1)
            p = stats.binom.pmf(k, n, a)
            keep = p > 0
            return k[keep], p[keep]
        k = round(a * n)
        if abs(k - a * n) > grid_tolerance(n):
            raise NotCertifiableError(
                f"Dataset privacy draws datasets with exactly a*n records of the "
                f"secret's group; a = {a:g} on n = {n} records is not a whole "
                f"number of records. Choose pairs that are multiples of 1/{n}, "
                "or use privacy='distributional'.")
        return np.array([k]), np.ones(1)

    def n_subsets(self, a: float, n: int, privacy: str) -> int | float:
        """How many datasets the model's law of a is spread over.

        Raises NotCertifiableError if a dataset the law needs cannot be formed
        from the reference records.
        """
        ks, _ = self._counts_law(a, n, privacy)
        for k in ks:
            _check_group_sizes(self.inside.size, self.outside.size, int(k), n,
                               self.replace)
        if self.replace:
            # Sequences of i.i.d. records, not subsets: never enumerated.
            return math.inf
        orders = math.factorial(n) if self.ordered else 1
        return orders * sum(math.comb(self.inside.size, int(k))
                            * math.comb(self.outside.size, n - int(k))
                            for k in ks)

    def _evaluate(self, index: np.ndarray) -> np.ndarray:
        block = max(1, _EVAL_BLOCK // max(1, index.shape[1]))
        parts = [np.asarray(self.evaluate(index[i:i + block]), dtype=float)
                 for i in range(0, index.shape[0], block)]
        values = np.concatenate([p.reshape(p.shape[0], -1) for p in parts])
        if not np.all(np.isfinite(values)):
            raise NotCertifiableError(
                "The statistic is NaN or infinite on some datasets of the "
                "resampling model (e.g. a regression on a subset without "
                "variation); its law has no finite Wasserstein distance. Choose "
                "a statistic defined on every subset, or a larger n.")
        return values

    def exact_values(self, a: float, n: int, privacy: str
                     ) -> tuple[np.ndarray, np.ndarray] | None:
        """F on every dataset of the model given a, in a fixed order, or None.

        Returns ``(values, mass)``: ``values[i]`` is F on the i-th dataset and
        ``mass[i]`` its probability. The datasets are enumerated in the same
        order for every statistic of the same reference and secret, so the
        values of several statistics stack into their joint law.
        """
        if self.ordered or self.n_subsets(a, n, privacy) > self.max_exact:
            return None
        key = ("values", a, n, privacy)
        if key not in self._cache:
            values, weights = [], []
            # The records in the reference's order, whatever order this law
            # draws them in: the same enumeration for every statistic.
            inside, outside = np.sort(self.inside), np.sort(self.outside)
            for k, pk in zip(*self._counts_law(a, n, privacy), strict=True):
                k = int(k)
                rows = np.array([
                    (*inside[list(i)], *outside[list(o)])
                    for i, o in itertools.product(
                        itertools.combinations(range(inside.size), k),
                        itertools.combinations(range(outside.size), n - k))
                ], dtype=np.intp).reshape(-1, n)
                values.append(self._evaluate(rows))
                weights.append(np.full(rows.shape[0], pk / rows.shape[0]))
            self._cache[key] = (np.concatenate(values), np.concatenate(weights))
        return self._cache[key]

    def exact_law(self, a: float, n: int, privacy: str
                  ) -> tuple[np.ndarray, np.ndarray] | None:
        """Return the exact law of F given a (support, mass), or None if too large.

        With dataset privacy every dataset is equally likely and the masses are
        whole-number counts of datasets: an exact rational law, which the
        distance functions read exactly. With distributional privacy they are
        probabilities.
        """
        found = self.exact_values(a, n, privacy)
        if found is None:
            return None
        key = ("exact", a, n, privacy)
        if key not in self._cache:
            self._cache[key] = law_of(*found, privacy)
        return self._cache[key]

    def coupled_values(self, a: float, b: float, n: int, privacy: str, m: int,
                       *, bar=None) -> tuple[np.ndarray, np.ndarray]:
        """``m`` i.i.d. draws of (F given a, F given b) under one coupling.

        See :func:`coupled_values`, which evaluates several statistics of
        the same reference and secret on the same draws.

        Returns
        -------
        values_a, values_b : ndarray of shape (m, d)
        """
        return coupled_values([self], a, b, n, privacy, m, bar=bar)[0]

    def drawn_law(self, a: float, n: int, privacy: str, m: int, *,
                  bar=None, max_positions: int | None = None
                  ) -> np.ndarray:
        """``m`` i.i.d. draws of F given a, as an (m, d) array.

        The datasets are drawn and evaluated a chunk at a time
        (:func:`iter_subsets`: at most ``max_positions`` row positions at
        once, ``CHUNK_POSITIONS`` when None), the same datasets whatever the
        chunks. ``bar`` (a progress
        bar from :func:`skattr.utils._progress.progress_bar`, or None) is
        advanced by the datasets evaluated, or by m at once for a law drawn
        before.
        """
        key = ("drawn", a, n, privacy, m)
        if key in self._cache:
            if bar is not None:
                bar.update(m)
            return self._cache[key]
        # Seeded by the value and size, so a law never depends on the order
        # in which laws are asked for.
        rng = check_random_state(
            self.seed, stream=(n, m, round(a * 2**40), privacy == "dataset"))
        ks, pk = self._counts_law(a, n, privacy)
        counts = rng.choice(ks, size=m, p=pk) if ks.size > 1 else np.full(
            m, ks[0])
        tick = -(-m // _TICKS)
        values = []
        # The model's records come in a random order when F can read it.
        for _, rows in iter_subsets(self.inside, self.outside, counts, n, rng,
                                    replace=self.replace, shuffle=self.ordered,
                                    max_positions=max_positions):
            for at in range(0, rows.shape[0], tick):
                values.append(self._evaluate(rows[at:at + tick]))
                if bar is not None:
                    bar.update(values[-1].shape[0])
        self._cache[key] = np.concatenate(values)
        return self._cache[key]


def coupled_values(laws: list, a: float, b: float, n: int, privacy: str,
                   m: int, *, bar=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """``m`` i.i.d. draws of (F given a, F given b) for each of several laws.

    Each draw is a pair of datasets of the model, one given a and one given
    b, that share all but their difference in group records
    (:func:`coupled_subsets`; with distributional privacy the two binomial
    group sizes are coupled through one uniform). The datasets depend on the
    seed, the sizes and the pair only, never on the statistic: the laws of
    one reference and secret under one seed see the same pairs of datasets,
    drawn once for all the statistics not yet evaluated (each law keeps its
    values), so their values stack into draws of the joint coupling. The
    records' order comes from a stream of its own, drawn only when a
    statistic reads it.

    Parameters
    ----------
    laws : list of ResampledLaws
        Fitted on the same reference and secret, with the same seed.
    a, b : float
        The pair of property values.
    n : int
        Records per dataset.
    privacy : {"dataset", "distributional"}
    m : int
        Pairs of datasets.
    bar : progress bar or None, default=None
        Advanced by the pairs drawn (by m at once if they were drawn
        before); see :func:`skattr.utils._progress.progress_bar`.

    Returns
    -------
    list of (values_a, values_b), each of shape (m, d_law)
    """
    first = laws[0]
    # Each law orders its groups by its own statistic's values; coupled draws
    # take the records in the reference's order, the same for every law.
    inside, outside = np.sort(first.inside), np.sort(first.outside)
    for law in laws[1:]:
        if law.seed != first.seed or law.replace != first.replace or not (
                np.array_equal(np.sort(law.inside), inside)
                and np.array_equal(np.sort(law.outside), outside)):
            raise InvalidParameterError(
                "Coupled draws need laws of one reference, secret and seed.")
    key = ("coupled", a, b, n, privacy, m)
    missing = [law for law in laws if key not in law._cache]
    if missing:
        stream = (n, m, round(a * 2**40), round(b * 2**40), privacy == "dataset")
        rng = check_random_state(first.seed, stream=(*stream, 1))
        order_rng = check_random_state(first.seed, stream=(*stream, 2))
        if privacy == "distributional":
            # One uniform per pair, in (0, 1): ppf(0) would be -1.
            u = 1.0 - rng.random(m)
            k_a = np.clip(stats.binom.ppf(u, n, a), 0, n).astype(np.int64)
            k_b = np.clip(stats.binom.ppf(u, n, b), 0, n).astype(np.int64)
        else:
            for value in (a, b):
                first._counts_law(value, n, privacy)   # on the grid
            k_a, k_b = np.full(m, round(a * n)), np.full(m, round(b * n))
        ordered = any(law.ordered for law in missing)
        block = max(1, _EVAL_BLOCK // max(1, n))
        parts = [([], []) for _ in missing]
        for start in range(0, m, block):
            rows = coupled_subsets(inside, outside,
                                   k_a[start:start + block],
                                   k_b[start:start + block], n, rng,
                                   order_rng, shuffle=ordered,
                                   replace=first.replace)
            for law, (into_a, into_b) in zip(missing, parts, strict=True):
                into_a.append(law._evaluate(rows[0]))
                into_b.append(law._evaluate(rows[1]))
            if bar is not None:
                bar.update(rows[0].shape[0])
        for law, (into_a, into_b) in zip(missing, parts, strict=True):
            law._cache[key] = (np.concatenate(into_a), np.concatenate(into_b))
    elif bar is not None:
        bar.update(m)
    return [law._cache[key] for law in laws]


@dataclass(frozen=True)
class Resample:
    """Theta for any statistic: datasets drawn from the reference records.

    Pass as ``theta=`` to :class:`~skattr.mechanisms.WassersteinMechanism` or
    :class:`~skattr.mechanisms.ApproximateWassersteinMechanism`. Given a property
    value a, a dataset is n records drawn uniformly without replacement from
    the reference data, exactly round(a n) of them from the secret's group
    (dataset privacy; a Binomial(n, a) number of them for distributional
    privacy). The certificate is exact for this model: its laws are enumerated
    when at most ``max_exact`` datasets are possible, computed by convolution
    for medians and quantiles, bounded from the groups' moments for means,
    sums, counts and proportions, and otherwise bounded from ``n_draws``
    i.i.d. draws with a failure probability counted in delta.

    Parameters
    ----------
    n_draws : int or None, default=None
        Datasets drawn per property value. None draws 50,000 (10,000 for a
        Python callable, which runs once per dataset), or twice the least
        number that certifies the tails at the mechanism's delta if more.
    failure_share : float in (0, 1), default=0.1
        The share of delta spent on the chance that the draws misjudge a tail;
        the rest is the mass the Approximate Wasserstein Mechanism disregards.
    max_exact : int, default=10_000
        Enumerate every dataset when there are at most this many.
    random_state : int or None, default=None
        Seed of the draws (Theta comes from public reference data, so a seed
        costs no privacy); None draws a fresh seed at fit. Choose it before
        looking at the certificate: trying seeds and keeping the least W would
        void the failure probability counted in delta.
    replace : bool, default=False
        Draw each group's records with replacement: i.i.d. from its reference
        records, so a dataset may be larger than the reference data (a census
        against a reference extract). Without replacement a dataset is a
        subset of the reference records.
    exact_quantiles : bool, default=True
        Compute the laws of a median or quantiles exactly, by convolution of
        the two groups' counts below each value (dataset privacy, or
        distributional privacy with replacement): no dataset is drawn and no
        failure probability is spent. False draws datasets as for any other
        statistic.
    moment_bounds : "auto" or bool, default="auto"
        Bound the law of a mean, sum, count or proportion from the two groups'
        moment generating functions, third moments and the coupling that swaps
        group records (:mod:`skattr.theta._moment_laws`): no dataset is drawn
        and no failure probability is spent, in milliseconds at any size.
        Draws bound it more tightly but their cost grows with n: "auto" draws
        when the draws hold at most 50 million records in all (then the least
        of the two bounds certifies) and uses the moment bounds alone beyond;
        True always uses them alone; False always draws.

    Notes
    -----
    Given k records of the group, the number of a dataset's records at most v
    is the sum of two independent counts, hypergeometric without replacement
    and binomial with, so the r-th smallest record is at most v with a
    probability computed by one convolution. NumPy's sample quantile that
    interpolates between two adjacent order statistics has its law from
    theirs jointly (exactly r + 1 records at most one value and none up to
    the next), or, beyond 200,000 pairs of values, is bracketed by their
    laws. The infinity-Wasserstein distance and the quantile
    coupling of the Wasserstein mechanisms are bounded from these brackets,
    with every rounding and truncation error counted
    (:mod:`skattr.theta._order_laws`).

    Drawn datasets are made and evaluated a chunk at a time
    (:func:`iter_subsets`, at most ``CHUNK_POSITIONS`` row positions at once),
    so a drawn law takes about 150 MB whatever n, ``n_draws`` or the
    reference's size; the chunks are the datasets one vectorised draw would
    give for the seed, so chunking changes no certificate. The drawing shows
    its progress through the mechanism's ``progress=`` parameter.

    Examples
    --------
    >>> import numpy as np, pandas as pd, skattr
    >>> from skattr.theta import Resample
    >>> rng = np.random.default_rng(0)
    >>> ref = pd.DataFrame({"rich": rng.random(2000) < 0.3,
    ...                     "age": rng.normal(40, 10, 2000)})
    >>> ref.loc[ref.rich, "age"] += 5
    >>> mech = skattr.mechanisms.ApproximateWassersteinMechanism(
    ...     query=skattr.Query.median("age"),
    ...     secret=skattr.Secret.proportion("rich", True, pairs=[(0.2, 0.4)]),
    ...     theta=Resample(random_state=0), epsilon=1.0, delta=0.01).fit(ref)
    >>> plan = mech.plan(n=100)
    >>> plan.noise, bool(0 < plan.sensitivity < 20)
    ('laplace', True)
    """

    n_draws: int | None = None
    failure_share: float = 0.1
    max_exact: int = 10_000
    random_state: int | None = None
    replace: bool = False
    exact_quantiles: bool = True
    moment_bounds: bool | str = "auto"

    def __post_init__(self):
        for name, low in (("n_draws", 2), ("max_exact", 0)):
            value = getattr(self, name)
            if value is None and name == "n_draws":
                continue
            if isinstance(value, bool) or not isinstance(
                    value, (int, np.integer)) or value < low:
                raise InvalidParameterError(
                    f"The '{name}' parameter of Resample must be an int >= {low}"
                    f"{' or None' if name == 'n_draws' else ''}. Got {value!r} "
                    "instead.")
        share = self.failure_share
        if isinstance(share, bool) or not isinstance(
                share, (float, int, np.floating)) or not 0 < share < 1:
            raise InvalidParameterError(
                "The 'failure_share' parameter of Resample must be a float in "
                f"(0, 1). Got {share!r} instead.")
        seed_of(self.random_state, owner="Resample")  # refuse a bad kind now
        if self.moment_bounds != "auto" and not isinstance(
                self.moment_bounds, (bool, np.bool_)):
            raise InvalidParameterError(
                "The 'moment_bounds' parameter of Resample must be 'auto' or a "
                f"bool. Got {self.moment_bounds!r} instead.")
        for name in ("replace", "exact_quantiles"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise InvalidParameterError(
                    f"The '{name}' parameter of Resample must be a bool. Got "
                    f"{getattr(self, name)!r} instead.")

    def fit(self, frame, query, columns, secret) -> ResampledLaws:
        """Return the resampling Theta of ``secret`` on the reference ``frame``."""
        if secret.property != "proportion":
            raise InvalidParameterError(
                f"The secret {secret.label} protects a mean; the resampling Theta "
                "draws datasets with an exact share of a group, so it needs "
                "Secret.proportion.")
        inside = secret_indicator(frame, secret) == 1
        if min(inside.sum(), (~inside).sum()) < 1:
            raise NotCertifiableError(
                f"The reference data has no record on one side of the secret "
                f"{secret.label}; datasets with either property cannot be drawn.")
        positions = np.arange(len(frame))
        how = "with" if self.replace else "without"
        evaluate = row_evaluator(query, frame, columns)
        # Only a callable can depend on the order of the records.
        ordered = getattr(query, "statistic", "") == "function"
        groups = positions[inside], positions[~inside]
        if not ordered:
            # Each group's records in a canonical order (by the values the
            # statistic reads; equal rows are interchangeable), so that the
            # drawn datasets, and the certificate, depend neither on the order
            # of the reference's rows nor on its other columns (a Dask
            # reference is collected with the used columns only).
            rows = np.asarray(evaluate.rows, dtype=float).reshape(len(frame), -1)
            groups = tuple(g[np.lexsort(rows[g].T[::-1])] for g in groups)
        return ResampledLaws(
            evaluate=evaluate,
            ordered=ordered,
            replace=bool(self.replace),
            order=self._order_laws(frame, query, columns, inside),
            moments=self._moment_laws(frame, query, columns, inside),
            inside=groups[0], outside=groups[1],
            n_draws=self.n_draws,
            # A Python callable runs once per dataset; vectorised statistics
            # afford more draws, which bring the bounds closer to the truth.
            default_draws=(10_000 if getattr(query, "statistic", "") == "function"
                           else 50_000),
            failure_share=float(self.failure_share),
            max_exact=int(self.max_exact),
            seed=seed_of(self.random_state, owner="Resample"),
            description=(f"resampling Theta: datasets of n records drawn {how} "
                         f"replacement from {len(frame)} reference records "
                         f"({int(inside.sum())} in the secret's group)"),
        )

    def _moment_laws(self, frame, query, columns, inside) -> MomentLaws | None:
        """Return moment bounds on the law of a linear statistic, else None."""
        if not self.moment_bounds or not getattr(query, "is_linear", False):
            return None
        h = record_contributions(frame, query, columns)
        return MomentLaws(inside=h[inside], outside=h[~inside], weight=query.weight,
                          replace=bool(self.replace),
                          always=self.moment_bounds != "auto")

    def _order_laws(self, frame, query, columns, inside) -> OrderLaws | None:
        """Return the exact laws of a median or quantiles, else None."""
        statistic = getattr(query, "statistic", None)
        if not self.exact_quantiles or statistic not in ("median", "quantile"):
            return None
        block = query.prepare(frame, columns, what="the reference data")
        levels = (0.5,) if statistic == "median" else tuple(query.q)
        # One law per released value, in the statistic's order: each column's
        # levels side by side.
        picks = [(j, q) for j in range(block.shape[1]) for q in levels]
        return OrderLaws(
            inside=tuple(np.sort(block[inside, j]) for j, _ in picks),
            outside=tuple(np.sort(block[~inside, j]) for j, _ in picks),
            levels=tuple(q for _, q in picks), replace=bool(self.replace),
            statistic=statistic)
