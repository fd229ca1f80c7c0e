"""Several medians, quantiles or stds at once, over the reference's confidence bands.

A :class:`~skattr._statistic.Statistic` with several values (quantiles at
several levels, or of several columns; the medians or stds of several
columns) moves jointly, and the laws of each value alone say nothing about
their joint law. Couple the two datasets of a pair a < b as several sums'
law does (:mod:`skattr.laws._stacked_band`): keep the records whose group is
the same under both (the shared ones) and draw each moved record's two rows
independently, one from each group's law. Statistic j gets a bound W_j on
|F_j(a) - F_j(b)| that fails with chance at most delta / K, so all K hold but
with chance delta (a union bound), and Laplace noise of scale K W_j /
epsilon on statistic j keeps the privacy loss sum_j |D_j| / b_j at most
epsilon there (Chen and Ohrimenko, Def 3.2 and Thm 3.2), each statistic in
its own units.

A quantile lies between two order statistics D_(r) <= D_(s) (from 0; NumPy's
interpolation), so it moves by at most the larger of their moves; D_(r) <= x
exactly when at least r + 1 records are at most x. The groups' distribution
functions G, which both secrets share, lie in the bands, and every chance
below is monotone in each G(x) and each mass G(y) - G(x), which the bands
(and their spacings' floors) bound.

- *count bound* (dataset privacy; :mod:`skattr.laws._count_bound`): with
  one side's D_(r) in a cell of its likely range and the other's more than
  d above, four independent binomials of records fall short; summed over
  the cells, the least d within each direction's budget (delta / 2 per
  order statistic) is W.
- *interval bound* (distributional privacy): D_(s) under a is at most its
  law's upper eta-quantile and D_(r) under b at least its lower one, but
  with chance 2 eta, under any coupling; the largest gap between those two
  quantiles over the laws in the bands (:class:`~skattr.laws._order_band.
  GapSearch`, at the one bracket [eta, 1 - eta]), and the same with a and b
  swapped, bound |F(a) - F(b)| but with chance 4 eta (eta = delta / 4K).

A sum's, mean's, count's or proportion's bound ("linear") is
:func:`~skattr.laws._stacked_band.sum_bound`'s under the same coupling: it
moves by D_j = w_j sum_moved (X_in,j - X_out,j), w_j its kind's
``record_weight`` (1 / n for a mean, 1 for a sum). A statistic nondecreasing
in each record, one record's move by d moving it by at most w_j d whatever
the others (a trimmed mean: w_j = 1 / (n - 2g),
:meth:`~skattr._kinds.TrimmedMean.record_weight`), is a "monotone"
coordinate: raising the records that rise one at a time and then lowering
the others, F_j(b) - F_j(a) <= w_j sum_moved (X_b - X_a)+ and F_j(a) -
F_j(b) <= w_j sum_moved (X_a - X_b)+, each a sum of independent positive
parts under the coupling, bounded as the signed sums are (``positive``: the
envelopes bound (X - Y)+, nondecreasing in X - Y; Chernoff's bound with
E e^(lam D+) <= 1 + E e^(lam D)) at the same delta / 2K a side. Its bound
is the linear one's form with the positive parts in place of the signed
differences; it is never below the signed one, and is not the single
trimmed mean's (:class:`~skattr.laws._band.BandLaw` couples a moved
record's two values by one uniform, a coupling of one column that a joint
law of several columns cannot take).

A std's bound is one column's (:func:`~skattr.laws._std_band.std_band_closeness`,
its own twelve tails at delta / 12K) under the same coupling.
``docs/population.md`` proves both and measures what they cost.

A window's widest pair with pairs inside takes the interval bound under
either privacy (it holds under any coupling; :func:`~skattr.laws.
_order_band.widest_gap` bounds every pair inside at once), where the count
bound would be computed for each of its pairs; a column's many levels share
their count bounds' bisections (:func:`count_bounds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from skattr._certificate import MethodStep
from skattr._kinds import largest_std, query_kind
from skattr._persistence import persistable
from skattr.exceptions import DataValidationError, NotCertifiableError
from skattr.laws._band import BandsLaw, inner_moves
from skattr.laws._base import Bound, secret_pairs, widest_pairs
from skattr.laws._count_bound import (
    binomials_at_most,
    count_bound,
    count_bounds,
    count_tails,
)
from skattr.laws._distances import (
    LADDER,
    CoupledDistances,
    ladder_distances,
    survival_law,
)
from skattr.laws._order import order_bracket
from skattr.laws._order_band import GapSearch, order_phi, widest_gap
from skattr.laws._stacked_band import largest_move, sum_bound, sum_move_law
from skattr.laws._std_band import std_band_closeness

__all__ = ["JointBandLaw", "binomials_at_most", "count_bound", "count_bounds",
           "one_column_orders", "quantile_joint_bound", "quantile_joint_bounds"]



def _weight(stat, n: int) -> float:
    """Return a summed coordinate's weight: its kind's, of one record's move."""
    weight = query_kind(stat).record_weight(stat, n)
    if weight is None or not 0 < weight < math.inf:
        raise NotCertifiableError(
            f"The {stat.statistic} gives no weight of a record's move on "
            f"{n} rows; it has no bound over the confidence bands.")
    return weight


def _any_rows(n: int, parameter) -> None:
    return None


def _summed_rows(n: int, stat) -> None:
    rows = query_kind(stat).min_rows(stat)
    if n < rows:
        raise DataValidationError(
            f"The data has {n} row(s); the {stat.statistic} needs at least "
            f"{rows}. Pass more rows.")


def _std_rows(n: int, ddof) -> None:
    if n <= ddof:
        raise DataValidationError(
            f"The data has {n} row(s); the std with ddof={ddof} "
            f"needs at least {ddof + 1}. Pass more rows.")


def _std_closeness(out, inside, low, high, secret, n, pairs, privacy, share,
                   ddof) -> float:
    return std_band_closeness(out, inside, low, high, n, pairs, privacy, share,
                              int(ddof))


def _pair_moves(pairs, n: int, privacy: str) -> list[tuple[int, float]]:
    """Return the distinct (records moved, each one's chance) of ``pairs``."""
    ends = np.sort(np.asarray(list(pairs), dtype=float).reshape(-1, 2), axis=1)
    if ends.size == 0:
        return []
    return inner_moves(ends, float(ends.min()), float(ends.max()), n, privacy)


def one_column_orders(outputs) -> bool:
    """Whether ``outputs`` are medians and quantiles of one column alone.

    The laws whose moved records' values may be coupled by one uniform
    (:class:`JointBandLaw`'s ``one_uniform``).
    """
    outputs = tuple(outputs or ())
    return (len({c for c, _, _ in outputs}) == 1
            and all(kind == "order" for _, kind, _ in outputs))


def _window_moves(searches: dict, pairs, n: int, privacy: str) -> tuple:
    """Return :func:`_pair_moves` of ``pairs``, kept for the same list of pairs."""
    kept = searches.get("window")
    if kept is None or kept[0] is not pairs:
        # The list itself is kept (not its id, which a new list could take).
        kept = searches["window"] = (pairs, tuple(_pair_moves(pairs, n,
                                                              privacy)))
    return kept[1]


def _linear_closeness(out, inside, low, high, secret, n, pairs, privacy,
                      share, stat) -> float:
    return sum_bound(out, inside, low, high, secret, n, privacy, share / 2,
                     _weight(stat, n), moves=_pair_moves(pairs, n, privacy))


def _monotone_closeness(out, inside, low, high, secret, n, pairs, privacy,
                        share, stat) -> float:
    return sum_bound(out, inside, low, high, secret, n, privacy, share / 2,
                     _weight(stat, n), positive=True,
                     moves=_pair_moves(pairs, n, privacy))


def _linear_tails(out, inside, low, high, n, pairs, privacy, stat,
                  largest) -> CoupledDistances | None:
    return sum_move_law(out, inside, low, high, _pair_moves(pairs, n, privacy),
                        _weight(stat, n), largest)


def _monotone_tails(out, inside, low, high, n, pairs, privacy, stat,
                    largest) -> CoupledDistances | None:
    return sum_move_law(out, inside, low, high, _pair_moves(pairs, n, privacy),
                        _weight(stat, n), largest, positive=True)


def _summed_largest(low, high, n, moved, stat) -> float:
    return _weight(stat, n) * moved * (high - low)


@dataclass(frozen=True)
class _Coordinate:
    """What a kind of coordinate needs: rows, a (W, delta) bound, a largest move.

    ``closeness`` is None for a quantile: a column's quantiles are bounded
    together (:func:`quantile_joint_bounds`). ``tails``, where not None,
    gives the law of the move of a window's pairs directly (None where it
    cannot: then its bounds are read on a ladder of chances).
    """

    check_rows: Callable
    closeness: Callable | None
    largest: Callable
    tails: Callable | None = None


#: The kinds of coordinate (the name a statistic kind's
#: ``band_coordinates`` gives, not a statistic's): an order statistic at a
#: level ("order"), a standard deviation with a ddof ("spread"), a weighted
#: sum of a column's values or a 0/1 indicator ("linear": it moves by its
#: kind's record weight times the moved records' signed differences), and a
#: statistic nondecreasing in each record that one record's move d moves by
#: at most its kind's record weight times d ("monotone": a trimmed mean; its
#: move is at most the weight times the positive parts' sum, each side).
#: The last two's parameter is the statistic, whose kind gives the weight.
_COORDINATES = {
    "order": _Coordinate(_any_rows, None,
                         lambda low, high, n, moved, level: high - low),
    "spread": _Coordinate(_std_rows, _std_closeness,
                          lambda low, high, n, moved, ddof: largest_std(
                              low, high, n, int(ddof))),
    "linear": _Coordinate(_summed_rows, _linear_closeness, _summed_largest,
                          _linear_tails),
    "monotone": _Coordinate(_summed_rows, _monotone_closeness,
                            _summed_largest, _monotone_tails),
}
_KINDS = tuple(_COORDINATES)
#: Distances a quantile's tail law is read at: evenly over its clipping
#: range, then again where its tails fall from 1 to their floor.
_ORDER_COARSE, _ORDER_FINE = 16, 48


def quantile_joint_bound(out, inside, low: float, high: float, n: int,
                         pairs, ranks: tuple[int, int], privacy: str,
                         delta: float, cache: dict | None = None) -> float:
    """Return W: under the swap coupling |F(a) - F(b)| > W with chance <= delta.

    F is the quantile between the order statistics ``ranks`` (from 0) of n
    records, for every pair of ``pairs`` and every law in the bands
    ``out`` and ``inside`` (shared by both secrets): the count bound under
    dataset privacy, the interval bound under distributional privacy (its
    search kept in ``cache`` for the column's other values).

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.laws._band import GroupBand
    >>> from skattr.laws._joint_band import quantile_joint_bound
    >>> rng = np.random.default_rng(0)
    >>> out = GroupBand.of(rng.normal(0, 1, 2000), 1e-3, spacings=True)
    >>> inside = GroupBand.of(rng.normal(0.5, 1, 2000), 1e-3, spacings=True)
    >>> w = quantile_joint_bound(out, inside, -5, 5, 1001, [(0.4, 0.6)],
    ...                          (500, 500), "dataset", 1e-3)
    >>> bool(0.1 < w < 1.0)
    True
    """
    return quantile_joint_bounds(out, inside, low, high, n, pairs, [ranks],
                                 privacy, delta, cache)[0]


def quantile_joint_bounds(out, inside, low: float, high: float, n: int,
                          pairs, ranks_list, privacy: str, delta: float,
                          cache: dict | None = None, *,
                          one_uniform: bool = False) -> list[float]:
    """:func:`quantile_joint_bound` for each of ``ranks_list``, sharing work.

    A column's many levels: the count bounds of a pair in one batch
    (:func:`count_bounds`; ``one_uniform``, each moved record's two values
    coupled by one uniform), the searches of the interval bound on one grid
    (under any coupling).
    """
    cache = {} if cache is None else cache
    interval = np.array([delta / 4, 1 - delta / 4])
    worst = np.zeros(len(ranks_list))
    for a, b, inner in widest_pairs_of(pairs):
        if privacy == "dataset" and not inner:
            apart = count_bounds(out, inside, low, high, n, a, b, ranks_list,
                                 delta, one_uniform=one_uniform)
        else:
            # Each side's upper bound against the other's lower one; a
            # widest pair with pairs inside bounds them all (widest_gap:
            # the interval bound holds under any coupling, so under dataset
            # privacy too, where the count bound would take every pair).
            if "search" not in cache:
                cache["search"] = GapSearch(out, inside, low, high)
                cache["phi"] = order_phi(n, privacy, cache["search"].grid)
            apart = [widest_gap(cache["search"], cache["phi"], a, b, inner,
                                ranks, interval) for ranks in ranks_list]
        worst = np.maximum(worst, np.maximum(apart, 0.0))
    return worst.tolist()


def widest_pairs_of(pairs):
    """Yield (low, high, inner) per widest pair of ``pairs`` (no equal pairs)."""
    widest = widest_pairs([(a, b) for a, b in pairs if a != b])
    yield from zip(widest.low.tolist(), widest.high.tolist(),
                   widest.inner.tolist(), strict=True)


@persistable
@dataclass(frozen=True, eq=False)
class JointBandLaw(BandsLaw):
    """Several medians, quantiles or stds of columns at once, over the bands.

    Attributes
    ----------
    bands : tuple
        Per secret, per column, ``(out, inside)``: the
        :class:`~skattr.laws._band.GroupBand` of the column's values outside
        the group and inside it.
    low, high : tuple of float
        Each column's clipping range.
    outputs : tuple
        Per released value, ``(column index, coordinate, parameter)``:
        coordinate "order" (the parameter its level), "spread" (a std; its
        ddof), "linear" or "monotone" (of the column's values, or of a 0/1
        indicator as a column; the parameter the statistic, whose kind's
        ``record_weight`` weighs each record's move). A ledger's different
        statistics are one such law.
    one_uniform : bool
        Every value a median or quantile of one column: each moved record's
        two values coupled by one uniform (the column's comonotone coupling,
        :func:`~skattr.laws._count_bound.count_tails`) rather than
        independently. False (the records' coupling) for a law a ledger
        composes under, and for any law reading another column or statistic.
    """

    kind: ClassVar[str] = "bands"

    outputs: tuple = ()
    one_uniform: bool = False

    def __post_init__(self):
        super().__post_init__()
        columns = len(self.low)
        if (len(self.high) != columns
                or any(len(per) != columns for per in self.bands)
                or any(not 0 <= c < columns or kind not in _KINDS
                       for c, kind, _ in self.outputs)
                or not self.outputs):
            raise ValueError("JointBandLaw needs one band and range per "
                             "column and outputs naming them.")
        if self.one_uniform and not one_column_orders(self.outputs):
            # Fail closed: the coupling of one column's values serves only
            # the order statistics of that column.
            raise ValueError("JointBandLaw(one_uniform=True) takes medians "
                             "and quantiles of one column only.")

    def _check_rows(self, n: int) -> None:
        for _, kind, parameter in self.outputs:
            _COORDINATES[kind].check_rows(n, parameter)

    def per_statistic(self, n: int, privacy: str, delta: float) -> np.ndarray:
        """Return W_j per value: all |D_j| <= W_j but with chance delta.

        Each at delta / K, worst case over the secrets and their pairs.
        """
        self._check_rows(n)
        key = ("closeness", int(n), privacy, float(delta))
        if key in self._cache:
            return self._cache[key]
        k = len(self.outputs)
        worst = np.zeros(k)
        for secret, per_column in zip(self.secrets, self.bands, strict=True):
            pairs = secret_pairs(secret, n, privacy,
                                 alternative="use privacy='distributional'")
            worst = np.maximum(worst, self._widths(per_column, secret, pairs,
                                                   n, privacy, delta / k, {}))
        if not np.all(np.isfinite(worst)):
            raise NotCertifiableError(
                "A statistic's bound over the confidence bands is not finite; "
                "declare a clipping range with bounds=.")
        self._cache[key] = worst
        return worst

    def _widths(self, per_column, secret, pairs, n: int, privacy: str,
                share: float, searches: dict, wanted=None) -> np.ndarray:
        """Return each value's W at chance ``share``, worst over ``pairs``.

        ``per_column`` the secret's bands; ``searches`` keeps each column's
        interval bound's search (keyed by column) for its other calls.
        ``wanted``: the values to bound (every one when None; the others 0).
        """
        found = np.zeros(len(self.outputs))
        wanted = range(len(self.outputs)) if wanted is None else wanted
        # A column's quantiles at once (its levels share the work).
        quantiles = {}
        for j in wanted:
            c, kind, _ = self.outputs[j]
            if _COORDINATES[kind].closeness is None:
                quantiles.setdefault(c, []).append(j)
        for c, js in quantiles.items():
            out, inside = per_column[c]
            found[js] = quantile_joint_bounds(
                out, inside, float(self.low[c]), float(self.high[c]), n,
                pairs, [order_bracket(n, float(self.outputs[j][2]))
                        for j in js], privacy, share, searches.setdefault(c, {}),
                one_uniform=self.one_uniform)
        # A sum's move depends on the pairs through their moves alone: the
        # many windows of a window secret (each its widest pair and the
        # pairs inside) share them, and are bounded once.
        memo = searches.setdefault("moves", {})
        for j in wanted:
            c, kind, parameter = self.outputs[j]
            closeness = _COORDINATES[kind].closeness
            if closeness is None:
                continue
            out, inside = per_column[c]

            def bound(closeness=closeness, out=out, inside=inside, c=c,
                      parameter=parameter):
                return closeness(out, inside, float(self.low[c]),
                                 float(self.high[c]), secret, n, pairs,
                                 privacy, share, parameter)

            if kind in ("linear", "monotone"):
                key = (j, _window_moves(searches, pairs, n, privacy), share)
                if key not in memo:
                    memo[key] = bound()
                found[j] = memo[key]
            else:
                found[j] = bound()
        return found

    def coupled_distances(self, n: int, privacy: str
                          ) -> tuple[tuple[CoupledDistances, ...], ...]:
        """Return, per secret and widest pair, a law dominating each |D_j|.

        One entry per widest pair of each secret's pairs (a pair and every
        pair inside it), in the order of the secrets and then of
        :func:`~skattr.laws._base.widest_pairs`, an entry equal to an earlier
        one left out (its certificate is the same); each entry K laws, the j-th
        dominating |D_j| = |F_j(x) - F_j(y)| under the one coupling of the
        module's docstring (the shared records kept, each moved record's two
        rows drawn independently; under ``one_uniform``, one column's two
        values from one uniform) for every pair in the window and every
        joint law of a record whose marginals lie in the bands. The K laws
        of an entry are marginal: the dependence of the D_j is unknown.

        Notes
        -----
        Every law below holds for every pair of the window under this
        coupling, and dominates |D_j|: P(L_j > t) >= P(|D_j| > t), t >= 0.

        - A sum, mean, count or monotone statistic (at most ``_TAIL_MOVES``
          moves in the window): each side's tail read directly, the least
          of the FFT's and Chernoff's (:func:`~skattr.laws._stacked_band.
          sum_move_law`).
        - A quantile under dataset privacy, on a pair with none inside: the
          count bound's chance at each distance, with each end of the other
          side's likely range given a chance fixed before any data is read
          (:func:`~skattr.laws._count_bound.count_tails`).
        - Any other (a std; a quantile on a window, or under distributional
          privacy, whose interval bound holds under any coupling; a window
          of many moves): the coordinate's own bound at chance eta (the one
          :meth:`per_statistic` reads at delta / K), P(|D_j| > W_j(eta)) <=
          eta, read at each eta of the fixed :data:`~skattr.laws._distances.
          LADDER`: the staircase of :func:`~skattr.laws._distances.
          ladder_distances`.

        The mass beyond the last point sits at the value's largest move
        (:meth:`largest`, which every pair's move is at most). Cached like
        :meth:`per_statistic`.
        """
        self._check_rows(n)
        key = ("coupled", int(n), privacy)
        if key in self._cache:
            return self._cache[key]
        largest = self.largest(n, privacy)
        entries = []
        for secret, per_column in zip(self.secrets, self.bands, strict=True):
            pairs = [(float(a), float(b)) for a, b in secret_pairs(
                secret, n, privacy, alternative="use privacy='distributional'")
                if a != b]
            searches = {}
            for a, b, inner in widest_pairs_of(pairs):
                window = [(x, y) for x, y in pairs
                          if min(x, y) >= a and max(x, y) <= b]
                laws = [self._tails(j, per_column, window, n, privacy,
                                    largest[j], searches)
                        for j in range(len(self.outputs))]
                if privacy == "dataset" and not inner:
                    self._order_tails(laws, per_column, n, a, b, largest)
                rest = [j for j, law in enumerate(laws) if law is None]
                if rest:
                    widths = np.array([
                        self._widths(per_column, secret, window, n, privacy,
                                     eta, searches, rest) for eta in LADDER])
                    for j in rest:
                        laws[j] = ladder_distances(widths[:, j], LADDER,
                                                   largest[j])
                entries.append(tuple(laws))
        # Windows whose laws are the same (a window secret's, away from the
        # support's ends) are one entry: the certificate is their worst.
        seen, kept = set(), []
        for laws in entries:
            content = tuple((law.distances.tobytes(), law.probs.tobytes(),
                             law.largest, law.records, law.gap, law.coupling)
                            for law in laws)
            if content not in seen:
                seen.add(content)
                kept.append(laws)
        self._cache[key] = tuple(kept)
        return self._cache[key]

    def _tails(self, j: int, per_column, pairs, n: int, privacy: str,
               largest: float, searches: dict) -> CoupledDistances | None:
        """Return value j's move law read directly, or None (no direct law).

        A sum's law depends on the pairs through their moves alone: kept in
        ``searches`` by them (a window secret's windows share them).
        """
        c, kind, parameter = self.outputs[j]
        tails = _COORDINATES[kind].tails
        if tails is None:
            return None
        key = ("tails", j, _window_moves(searches, pairs, n, privacy))
        memo = searches.setdefault("moves", {})
        if key not in memo:
            out, inside = per_column[c]
            memo[key] = tails(out, inside, float(self.low[c]),
                              float(self.high[c]), n, pairs, privacy,
                              parameter, largest)
        return memo[key]

    def _order_tails(self, laws: list, per_column, n: int, a: float, b: float,
                     largest) -> None:
        """Fill in the quantiles' laws of one pair from the count bound's tails.

        Dataset privacy, a pair with none inside (the count bound's case):
        each column's levels at once (:func:`count_tails`), read at
        ``_ORDER_COARSE`` distances over the clipping range and
        ``_ORDER_FINE`` between the last where every level's tail is 1 and
        the first where each is at its floor (within 0.1% of its least
        below the range's width).
        """
        columns = {}
        for j, (c, kind, _) in enumerate(self.outputs):
            if kind == "order":
                columns.setdefault(c, []).append(j)
        for c, js in columns.items():
            out, inside = per_column[c]
            lo, hi = float(self.low[c]), float(self.high[c])
            if not hi > lo:
                # A one-point range (a constant column): no level can move.
                for j in js:
                    laws[j] = CoupledDistances(np.zeros(1), np.ones(1),
                                               largest=0.0)
                continue
            ranks = [order_bracket(n, float(self.outputs[j][2])) for j in js]
            coarse = np.linspace(0.0, hi - lo, _ORDER_COARSE)
            tails = count_tails(out, inside, lo, hi, n, a, b, ranks, coarse,
                                one_uniform=self.one_uniform)
            start = np.flatnonzero(np.all(tails >= 1.0, axis=0))
            floor = np.flatnonzero(np.all(tails <= 1.001 * tails[:, [-2]],
                                          axis=0))
            distances = coarse
            if start.size and floor.size and floor[0] > start[-1]:
                fine = np.linspace(coarse[start[-1]], coarse[floor[0]],
                                   _ORDER_FINE)
                both = np.concatenate([coarse, fine])
                order = np.unique(both, return_index=True)[1]
                distances = both[order]
                tails = np.concatenate([tails, count_tails(
                    out, inside, lo, hi, n, a, b, ranks, fine,
                    one_uniform=self.one_uniform)], axis=1)[:, order]
            for j, tail in zip(js, tails, strict=True):
                laws[j] = survival_law(distances, tail, largest[j])

    def largest(self, n: int, privacy: str) -> np.ndarray:
        """Return each value's largest move.

        A quantile's range, a std's largest, a sum's every moved record
        crossing its range.
        """
        self._check_rows(n)
        moved = largest_move(self.secrets, n, privacy)

        def one(c, kind, parameter):
            return _COORDINATES[kind].largest(float(self.low[c]),
                                              float(self.high[c]), n, moved,
                                              parameter)

        return np.array([one(*output) for output in self.outputs])

    def w_infinity(self, n: int, privacy: str) -> Bound:
        """Per value, K times its largest move (the budget split evenly)."""
        k = len(self.outputs)
        largest = self.largest(n, privacy)
        if not np.all(np.isfinite(largest)):
            raise NotCertifiableError(
                "A statistic has no clipping range, so no almost-sure bound; "
                "declare bounds=.")
        return Bound(k * largest,
                     MethodStep.of("w-inf.joint-band", statistics=k),
                     self._assumptions(privacy))

    def closeness(self, n: int, privacy: str, delta: float, *,
                  progress=False, label: str = "") -> Bound:
        """Per value, K times W_j at delta / K (the budget split evenly)."""
        k = len(self.outputs)
        return Bound(k * self.per_statistic(n, privacy, delta),
                     MethodStep.of("closeness.joint-band", statistics=k),
                     self._assumptions(privacy))
