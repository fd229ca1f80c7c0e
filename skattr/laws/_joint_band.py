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

- *count bound* (dataset privacy): a n records shared in the group, n - b n
  outside, m = (b - a) n moved. If D_(r) of one side lies in a cell [x_i,
  x_i+1] and the other side's D_(r) above x_i + d, then the shared records
  in (x_i+1, x_i + d], the rising side's moved records at most x_i + d, and
  the other side's moved records above x_i+1 number at most m - 1: four
  independent binomials. Summed over the cells of the first side's likely
  range (and its chance of leaving it), that bounds the chance of a move
  above d; the least d within each direction's budget (delta / 2 per order
  statistic) is W. The same argument counting from above (for -X) holds
  too; the smaller is taken.
- *interval bound* (distributional privacy): D_(s) under a is at most its
  law's upper eta-quantile and D_(r) under b at least its lower one, but
  with chance 2 eta, under any coupling; the largest gap between those two
  quantiles over the laws in the bands (:class:`~skattr.laws._order_band.
  GapSearch`, at the one bracket [eta, 1 - eta]), and the same with a and b
  swapped, bound |F(a) - F(b)| but with chance 4 eta (eta = delta / 4K).

A std's bound is one column's (:func:`~skattr.laws._std_band.std_band_closeness`,
its own twelve tails at delta / 12K) under the same coupling.
``docs/population.md`` proves both and measures what they cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from skattr._certificate import MethodStep
from skattr._persistence import persistable
from skattr._statistic import largest_std
from skattr.exceptions import DataValidationError, NotCertifiableError
from skattr.laws._band import BandsLaw, GroupBand
from skattr.laws._base import Bound, secret_pairs
from skattr.laws._order import order_bracket
from skattr.laws._order_band import GapSearch, order_phi
from skattr.laws._stacked_band import largest_move, sum_bound
from skattr.laws._std_band import std_band_closeness

__all__ = ["JointBandLaw", "binomials_at_most", "quantile_joint_bound"]

#: The kinds of value: an order statistic's quantile, a std, a sum (of a
#: column's values or a 0/1 indicator; its parameter "mean" weighs it 1 / n).
_KINDS = ("quantile", "std", "sum")
#: Cells the likely range of one side's order statistic is cut into (the
#: count bound's union).
_CELLS = 32
#: Share of a direction's budget spent on the order statistic leaving its
#: likely range (each end).
_RANGE_SHARE = 0.1
#: Above this many moved records, the count bound's tails are Chernoff's.
_EXACT_MOVED = 400
#: Steps of the bisection on the count bound's distance.
_STEPS = 12
#: Allowance for the float error of an FFT'd tail probability.
_FFT_SLACK = 1e-10


def _weight(parameter, n: int) -> float:
    """Return a sum's weight: 1 / n for a mean or proportion, else 1."""
    return 1.0 / n if parameter == "mean" else 1.0


def binomials_at_most(parts, t: int) -> float:
    """Return an upper bound on P(sum of independent Bin(count, p) <= t).

    One row of :func:`_many_at_most`: exact for t up to a few hundred,
    Chernoff's bound beyond.

    Examples
    --------
    >>> from skattr.laws._joint_band import binomials_at_most
    >>> round(binomials_at_most([(10, 0.5)], 4), 4)          # P(Bin(10, 1/2) <= 4)
    0.377
    >>> round(binomials_at_most([(1, 0.5), (1, 0.5)], 0), 4)  # both 0
    0.25
    """
    return float(_many_at_most([(int(c), np.array([float(p)]))
                                for c, p in parts], t)[0])


def _cdf_low(band, x, high: float) -> np.ndarray:
    """Lower bounds on G(x) = P(X <= x) (1 from the range's top)."""
    x = np.asarray(x, dtype=float)
    return np.where(x >= high, 1.0, band.cdf_bounds(x)[0])


def _cdf_high(band, x, low: float) -> np.ndarray:
    """Upper bounds on G(x) (0 below the range's bottom)."""
    x = np.asarray(x, dtype=float)
    return np.where(x < low, 0.0, band.cdf_bounds(x)[1])


def _below_high(band, x, low: float) -> np.ndarray:
    """Upper bounds on G(x-) = P(X < x): the step bound just below x."""
    x = np.asarray(x, dtype=float)
    m = band.values.size
    count = np.searchsorted(band.values, x, side="left")
    bound = np.where(count >= m, 1.0, band.above[np.clip(count, 0, m - 1)])
    return np.where(x <= low, 0.0, bound)


def _mass_low(band, x, y, low: float, high: float) -> np.ndarray:
    """Lower bounds on G(y) - G(x), x < y: the bands', or the spacings'."""
    held = (np.searchsorted(band.values, y, side="right")
            - np.searchsorted(band.values, x, side="right"))
    floor = np.where(held > 1, band.mass_floor(held), 0.0)
    return np.maximum.reduce([np.zeros(np.shape(held)),
                              _cdf_low(band, y, high) - _cdf_high(band, x, low),
                              floor])


def _reflected(band) -> GroupBand:
    """Return the band of -X: ranks read from the top (V'_(i) = 1 - V_(m+1-i))."""
    return GroupBand(values=-band.values[::-1], below=1.0 - band.above[::-1],
                     above=1.0 - band.below[::-1], radius=band.radius,
                     lags=band.lags, floors=band.floors)


def _bisect(values: np.ndarray, ok, first: bool) -> float:
    """Return the least (``first``) or largest value at which ``ok`` holds.

    ``ok`` is monotone along ``values`` and holds at the last value
    (``first``) or at the first.
    """
    last = values.size - 1
    at = (lambda i: i) if first else (lambda i: last - i)
    lo, hi = 0, last
    if ok(at(lo)):
        return float(values[at(lo)])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(at(mid)) else (mid, hi)
    return float(values[at(hi)])


def _likely_range(out, inside, grid, low, high, size_in, size_out, r, eta):
    """Return [L, U]: the r-th order statistic leaves it with chance <= 2 eta.

    The dataset holds ``size_in`` records of the group and ``size_out``
    others; D_(r) > x when at most r are at most x, D_(r) < x when more
    than r are below x.
    """
    def upper_ok(i):
        x = grid[i]
        return x >= high or binomials_at_most(
            [(size_in, float(_cdf_low(inside, x, high))),
             (size_out, float(_cdf_low(out, x, high)))], r) <= eta

    def lower_ok(i):
        x = grid[i]
        # More than r below x: at most size - r - 1 at least x.
        return x <= low or binomials_at_most(
            [(size_in, 1 - float(_below_high(inside, x, low))),
             (size_out, 1 - float(_below_high(out, x, low)))],
            size_in + size_out - r - 1) <= eta

    return _bisect(grid, lower_ok, first=False), _bisect(grid, upper_ok,
                                                          first=True)


def _many_at_most(parts, t: int) -> np.ndarray:
    """``binomials_at_most`` for many rows at once: parts ((count, p array), ...)."""
    from scipy import stats

    rows = np.broadcast(*[p for _, p in parts]).shape[0]
    if t < 0:
        return np.zeros(rows)
    if t >= sum(c for c, _ in parts):
        return np.ones(rows)
    if t > _EXACT_MOVED:
        # Chernoff's bound at each lam of a grid (every lam gives one).
        lam = np.geomspace(1e-5, 50.0, 600)[None, :]
        log = lam * t
        for c, p in parts:
            p = np.clip(np.broadcast_to(p, (rows,)), 0.0, 1.0)[:, None]
            log = log + c * np.log((1.0 - p) + p * np.exp(-lam))
        return np.minimum(1.0, np.exp(np.minimum(log.min(axis=1), 0.0)))
    values = np.arange(t + 1)
    size = 1 << int(math.ceil(math.log2(len(parts) * (t + 1))))
    spectrum = np.ones((rows, size // 2 + 1), dtype=complex)
    for c, p in parts:
        if c == 0:
            continue
        pmf = stats.binom.pmf(values[None, :], c,
                              np.clip(np.broadcast_to(p, (rows,)), 0.0,
                                      1.0)[:, None])
        spectrum *= np.fft.rfft(pmf, size, axis=1)
    # The product of the pmfs truncated at t, exact below t + 1 (the
    # transform is long enough for the full convolution of the truncations).
    law = np.fft.irfft(spectrum, size, axis=1)[:, :t + 1]
    return np.minimum(1.0, np.clip(law, 0.0, None).sum(axis=1) + _FFT_SLACK)


def _count_direction(rise, fall, out, inside, low, high, n, a, b, r,
                     budget) -> float:
    """Return d: one side's D_(r) exceeds the other's by more than d rarely.

    The chance is at most ``budget``.

    ``rise`` is the band whose records the moved ones become on the rising
    side (the group's for b over a), ``fall`` the other. With D_(r) of the
    other side in a cell [x_i, x_i+1] of its likely range and the rising
    one above x_i + d, the shared records in (x_i+1, x_i + d], the rising
    side's moved records at most x_i + d and the other side's above x_i+1
    number at most m - 1 (m moved): four independent binomials, their
    chances bounded below by the bands (and the spacings' floors).
    """
    shared_in, shared_out = int(round(a * n)), n - int(round(b * n))
    moved = n - shared_in - shared_out
    # The other side's records: the rising side's moved ones are ``fall``'s.
    if rise is inside:
        other_in, other_out = shared_in, shared_out + moved
    else:
        other_in, other_out = shared_in + moved, shared_out
    grid = np.unique(np.clip(np.concatenate(
        [[low], out.values, inside.values, [high]]), low, high))
    eta = budget * _RANGE_SHARE
    start, stop = _likely_range(out, inside, grid, low, high, other_in,
                                other_out, r, eta)
    # A range of one point (the order statistic on a tie, nearly surely) is
    # one cell of no width: the argument holds for every d >= 0 there.
    cuts = (np.array([start, start]) if stop <= start
            else np.linspace(start, stop, _CELLS + 1))
    x_next, width = cuts[1:], cuts[1] - cuts[0]
    left = budget - 2 * eta
    # The other side's moved records above x_i+1 do not depend on d.
    above = 1 - _cdf_high(fall, x_next, low)

    def chance(d: float) -> float:
        y = cuts[:-1] + d
        parts = [(shared_in, _mass_low(inside, x_next, y, low, high)),
                 (shared_out, _mass_low(out, x_next, y, low, high)),
                 (moved, _cdf_low(rise, y, high)), (moved, above)]
        return float(_many_at_most(parts, moved - 1).sum())

    distances = np.linspace(width, high - low, 1 << _STEPS)
    if chance(distances[-1]) > left:
        return high - low
    return _bisect(distances, lambda i: chance(distances[i]) <= left,
                   first=True)


def count_bound(out, inside, low: float, high: float, n: int, a: float,
                b: float, ranks: tuple[int, int], delta: float) -> float:
    """Return W: |F(a) - F(b)| > W with chance <= delta (dataset privacy).

    Under the swap coupling with each moved record's two values
    independent; the quantile between the order statistics ``ranks``
    moves by at most the larger of theirs, each direction of each at
    delta / 4 (delta / 2 for one order statistic). Each direction's
    bound counts the records from below, and again from above (the same
    argument for -X, whose (n - 1 - r)-th order statistic it is): both
    hold, the smaller is taken.
    """
    orders = sorted(set(ranks))
    budget = delta / (2 * len(orders))
    flipped = (_reflected(out), _reflected(inside))
    worst = 0.0
    for r in orders:
        for rising in (True, False):
            below = _count_direction(
                inside if rising else out, out if rising else inside, out,
                inside, low, high, n, a, b, r, budget)
            # -X: the side whose order statistic rises falls.
            f_out, f_in = flipped
            above = _count_direction(
                f_out if rising else f_in, f_in if rising else f_out, f_out,
                f_in, -high, -low, n, a, b, n - 1 - r, budget)
            worst = max(worst, min(below, above))
    return worst


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
    below, above = ranks
    if privacy != "dataset":
        cache = {} if cache is None else cache
        if "search" not in cache:
            cache["search"] = GapSearch(out, inside, low, high)
        search = cache["search"]
        phi = order_phi(n, privacy, search.grid)
        interval = np.array([delta / 4, 1 - delta / 4])
    worst = 0.0
    for a, b in pairs:
        a, b = (float(a), float(b)) if a <= b else (float(b), float(a))
        if a == b:
            continue
        if privacy == "dataset":
            apart = count_bound(out, inside, low, high, n, a, b, ranks, delta)
        else:
            # Each side's upper bound against the other's lower one.
            apart = max(search.gap(phi(a, above), phi(b, below), interval),
                        search.gap(phi(b, above), phi(a, below), interval))
        worst = max(worst, apart, 0.0)
    return float(worst)


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
        Per released value, ``(column index, kind, parameter)``: kind
        "quantile" (the parameter its level), "std" (its ddof) or "sum" (of
        the column's values, or of a 0/1 indicator as a column; the
        parameter "mean" weighs it 1 / n, "sum" 1). A ledger's different
        statistics are one such law.
    """

    kind: ClassVar[str] = "bands"

    outputs: tuple = ()

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

    def _check_rows(self, n: int) -> None:
        for _, kind, ddof in self.outputs:
            if kind == "std" and n <= ddof:
                raise DataValidationError(
                    f"The data has {n} row(s); the std with ddof={ddof} "
                    f"needs at least {ddof + 1}. Pass more rows.")

    def per_statistic(self, n: int, privacy: str, delta: float) -> np.ndarray:
        """Return W_j per value: all |D_j| <= W_j but with chance delta.

        Each at delta / K, worst case over the secrets and their pairs.
        """
        self._check_rows(n)
        key = ("closeness", int(n), privacy, float(delta))
        if key in self._cache:
            return self._cache[key]
        k = len(self.outputs)
        share = delta / k
        worst = np.zeros(k)
        searches = {}
        for i, (secret, per_column) in enumerate(zip(self.secrets, self.bands,
                                                        strict=True)):
            pairs = secret_pairs(secret, n, privacy,
                                 alternative="use privacy='distributional'")
            for j, (c, kind, parameter) in enumerate(self.outputs):
                out, inside = per_column[c]
                lo, hi = float(self.low[c]), float(self.high[c])
                if kind == "std":
                    w = std_band_closeness(out, inside, lo, hi, n, pairs,
                                           privacy, share, int(parameter))
                elif kind == "sum":
                    w = sum_bound(out, inside, lo, hi, secret, n, privacy,
                                  share / 2, _weight(parameter, n))
                else:
                    w = quantile_joint_bound(
                        out, inside, lo, hi, n, pairs,
                        order_bracket(n, float(parameter)), privacy, share,
                        searches.setdefault((i, c), {}))
                worst[j] = max(worst[j], w)
        if not np.all(np.isfinite(worst)):
            raise NotCertifiableError(
                "A statistic's bound over the confidence bands is not finite; "
                "declare a clipping range with bounds=.")
        self._cache[key] = worst
        return worst

    def largest(self, n: int, privacy: str) -> np.ndarray:
        """Return each value's largest move.

        A quantile's range, a std's largest, a sum's every moved record
        crossing its range.
        """
        self._check_rows(n)
        moved = largest_move(self.secrets, n, privacy)

        def one(c, kind, parameter):
            span = float(self.high[c]) - float(self.low[c])
            if kind == "std":
                return largest_std(float(self.low[c]), float(self.high[c]), n,
                                   int(parameter))
            if kind == "sum":
                return _weight(parameter, n) * moved * span
            return span

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
