"""Datasets drawn from reference records: subsets, chunks, couplings, order bounds.

The drawing machinery of the resampling model (:class:`skattr.theta.Resample`):
uniform subsets of the reference records with an exact number from the
secret's group (:func:`draw_subsets`), the same datasets a chunk at a time in
bounded memory (:func:`iter_subsets`), pairs of datasets coupled to share all
but their difference in group records (:func:`coupled_subsets`), the law a
statistic takes over enumerated datasets (:func:`law_of`), and the order
statistics of draws that bound a law's quantiles and tails with a stated
failure probability (:func:`quantile_bounds`, :func:`tail_bounds`).
"""

from __future__ import annotations

import copy
import math

import numpy as np
from scipy import stats

from skattr._random import (
    KEYS_PER_BLOCK,
    by_rejection,
    draw_k_subsets,
)
from skattr.exceptions import NotCertifiableError

__all__ = ["CHUNK_POSITIONS", "coupled_subsets", "draw_subsets", "iter_subsets",
           "law_of", "minimum_draws", "quantile_bounds", "tail_bounds"]


# Row positions of drawn datasets held at once (32 MB of intp): datasets are
# drawn and evaluated a chunk at a time, so a drawn law's memory grows with
# neither the number of datasets, nor their size, nor the reference data (only
# the values kept grow, 8 bytes a statistic a dataset).
CHUNK_POSITIONS = 1 << 22


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
    >>> from skattr.laws._draws import draw_subsets
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
    for start in range(0, count, KEYS_PER_BLOCK):
        rng.random(min(KEYS_PER_BLOCK, count - start))


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
        self.keys_rows = max(1, min(KEYS_PER_BLOCK, max_positions) // pool)
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
    >>> from skattr.laws._draws import draw_subsets, iter_subsets
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
    >>> from skattr.laws._draws import coupled_subsets
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
    >>> from skattr.laws._draws import quantile_bounds
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
    >>> from skattr.laws._draws import tail_bounds
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

