"""The fitted resampling Theta: the laws of F over datasets of reference records.

:class:`ResampledLaws` is what :meth:`skattr.theta.Resample.fit` returns for
one secret: the law of a statistic given each property value, enumerated
over every dataset when they are few (:meth:`ResampledLaws.exact_law`),
drawn i.i.d. a chunk at a time otherwise (:meth:`ResampledLaws.drawn_law`),
with the exact laws of medians and quantiles (:mod:`skattr.laws._order`) and
the moment bounds of linear statistics (:mod:`skattr.laws._moment_bounds`)
beside them; :func:`coupled_values` draws several statistics on the same
coupled pairs of datasets (the ledger's joint law).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import stats

from skattr._persistence import persistable
from skattr._random import check_random_state
from skattr._secret import DISTRIBUTIONAL, grid_tolerance
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._draws import (
    _check_group_sizes,
    coupled_subsets,
    iter_subsets,
    law_of,
    minimum_draws,
)
from skattr.laws._moment_bounds import MomentLaws
from skattr.laws._order import OrderLaws
from skattr.utils._work import TimeGuard

__all__ = ["ResampledLaws", "RowEvaluator", "coupled_values"]

# Row positions gathered at once when a statistic is evaluated on many subsets.
_EVAL_BLOCK = 1 << 21

# Progress bars advance at least this many times over one drawn law.
_TICKS = 100

# Time a drawn row position takes at the least (drawing and reading it): an
# optimistic rate, so that only draws certain to overrun are refused unseen.
_SECONDS_PER_POSITION = 3e-9

# Most draws a default ``n_draws`` asks for (a tiny delta needs more: say so).
_MAX_DEFAULT_DRAWS = 2_000_000


@persistable
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



@persistable
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
    #: Refuse drawing when it would take longer (None: never).
    max_seconds: float | None = None

    def guard(self, m: int, n: int) -> TimeGuard:
        """Return the time guard of drawing m datasets of n records.

        Refuses at once when the row positions alone would overrun at
        ``_SECONDS_PER_POSITION`` (an optimistic rate), or when a Python
        function, timed twice on one dataset of n records (the faster time
        counts), would overrun on m; and otherwise as soon as the first
        datasets drawn and evaluated project an overrun. The timed dataset
        is not drawn: no random number is used, and nothing it returns is
        kept.
        """
        guard = TimeGuard(
            m, self.max_seconds,
            what=f"drawing and evaluating {m:,} datasets of {n:,} records",
            cheaper=("draw fewer datasets (theta=Resample(n_draws=...): the "
                     "bound holds for any number, looser for fewer), release "
                     "a vectorised statistic (skattr.Statistic) rather than a "
                     "Python function, or raise the limit "
                     "(Resample(max_seconds=...), None for no limit)"))
        guard.expect(m * n * _SECONDS_PER_POSITION,
                     f"{m * n:,} row positions at a few nanoseconds each")
        if self.ordered and self.max_seconds is not None:
            pool = np.concatenate([self.inside, self.outside])
            index = np.resize(pool, n)[None, :]
            times = []
            for _ in range(2):
                start = time.perf_counter()
                try:
                    self.evaluate(index)
                except Exception:       # the draws themselves will say why
                    return guard
                times.append(time.perf_counter() - start)
            guard.expect(m * min(times),
                         f"the function took {min(times):.2g} s on one "
                         "dataset")
        return guard

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
            # The pairs reach here on the grid (Secret.grid_pairs): fail
            # closed on a value that did not come through it.
            raise NotCertifiableError(
                f"Dataset privacy draws datasets with exactly a*n records of the "
                f"secret's group; a = {a:g} on n = {n} records is not a whole "
                f"number of records. Read the pairs on the grid of multiples of "
                f"1/{n} first (Secret.grid_pairs), or {DISTRIBUTIONAL}.")
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
        guard = self.guard(m, n)
        # The model's records come in a random order when F can read it.
        for _, rows in iter_subsets(self.inside, self.outside, counts, n, rng,
                                    replace=self.replace, shuffle=self.ordered,
                                    max_positions=max_positions):
            guard.advance(rows.shape[0], "draw")
            for part in _ramp(rows.shape[0], tick, first=not values):
                values.append(self._evaluate(rows[part]))
                guard.advance(values[-1].shape[0])
                if bar is not None:
                    bar.update(values[-1].shape[0])
        self._cache[key] = np.concatenate(values)
        return self._cache[key]


def _ramp(total: int, step: int, *, first: bool):
    """Slices of ``range(total)`` of ``step`` rows; 1, 2, 4, ... at first."""
    at, size = 0, 1 if first else step
    while at < total:
        yield slice(at, min(total, at + size))
        at += size
        size = min(step, 2 * size)


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
        guard = first.guard(2 * m, n)
        for start in range(0, m, block):
            rows = coupled_subsets(inside, outside,
                                   k_a[start:start + block],
                                   k_b[start:start + block], n, rng,
                                   order_rng, shuffle=ordered,
                                   replace=first.replace)
            guard.advance(2 * rows[0].shape[0], "draw")
            # Evaluated a few datasets at a time at first, so that the guard
            # sees a slow function before it has run for long.
            for part in _ramp(rows[0].shape[0], rows[0].shape[0],
                              first=start == 0):
                for law, (into_a, into_b) in zip(missing, parts, strict=True):
                    into_a.append(law._evaluate(rows[0][part]))
                    into_b.append(law._evaluate(rows[1][part]))
                guard.advance(2 * (part.stop - part.start))
            if bar is not None:
                bar.update(rows[0].shape[0])
        for law, (into_a, into_b) in zip(missing, parts, strict=True):
            law._cache[key] = (np.concatenate(into_a), np.concatenate(into_b))
    elif bar is not None:
        bar.update(m)
    return [law._cache[key] for law in laws]
