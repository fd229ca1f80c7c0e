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
from skattr.laws._band import BandsLaw, GroupBand, inner_moves
from skattr.laws._base import Bound, secret_pairs, widest_pairs
from skattr.laws._distances import LADDER, CoupledDistances, ladder_distances
from skattr.laws._order import order_bracket
from skattr.laws._order_band import GapSearch, order_phi, widest_gap
from skattr.laws._stacked_band import largest_move, sum_bound
from skattr.laws._std_band import std_band_closeness

__all__ = ["JointBandLaw", "binomials_at_most", "count_bounds",
           "quantile_joint_bound", "quantile_joint_bounds"]

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


def _linear_closeness(out, inside, low, high, secret, n, pairs, privacy,
                      share, stat) -> float:
    return sum_bound(out, inside, low, high, secret, n, privacy, share / 2,
                     _weight(stat, n), moves=_pair_moves(pairs, n, privacy))


def _monotone_closeness(out, inside, low, high, secret, n, pairs, privacy,
                        share, stat) -> float:
    return sum_bound(out, inside, low, high, secret, n, privacy, share / 2,
                     _weight(stat, n), positive=True,
                     moves=_pair_moves(pairs, n, privacy))


def _summed_largest(low, high, n, moved, stat) -> float:
    return _weight(stat, n) * moved * (high - low)


@dataclass(frozen=True)
class _Coordinate:
    """What a kind of coordinate needs: rows, a (W, delta) bound, a largest move.

    ``closeness`` is None for a quantile: a column's quantiles are bounded
    together (:func:`quantile_joint_bounds`).
    """

    check_rows: Callable
    closeness: Callable | None
    largest: Callable


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
    "linear": _Coordinate(_summed_rows, _linear_closeness, _summed_largest),
    "monotone": _Coordinate(_summed_rows, _monotone_closeness,
                            _summed_largest),
}
_KINDS = tuple(_COORDINATES)


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


def _many_at_most(parts, t) -> np.ndarray:
    """``binomials_at_most`` for many rows at once: parts ((count, p array), ...).

    ``t`` is one threshold, or one per row.
    """
    from scipy import stats

    rows = np.broadcast(*[p for _, p in parts]).shape[0]
    if np.ndim(t) == 0:
        return _rows_at_most(parts, int(t), rows)
    t = np.asarray(t, dtype=np.int64)
    out = np.empty(rows)
    total = sum(c for c, _ in parts)
    # Rows of one threshold at once; the exact ones up to the largest.
    exact = (t >= 0) & (t < total) & (t <= _EXACT_MOVED)
    for value in np.unique(t[~exact]).tolist():
        at = (t == value) & ~exact
        out[at] = _rows_at_most([(c, np.broadcast_to(p, (rows,))[at])
                                 for c, p in parts], value, int(at.sum()))
    if exact.any():
        top = int(t[exact].max())
        picked = [(c, np.broadcast_to(p, (rows,))[exact]) for c, p in parts]
        count = int(exact.sum())
        values = np.arange(top + 1)
        size = 1 << int(math.ceil(math.log2(len(parts) * (top + 1))))
        spectrum = np.ones((count, size // 2 + 1), dtype=complex)
        for c, p in picked:
            if c == 0:
                continue
            pmf = stats.binom.pmf(values[None, :], c,
                                  np.clip(p, 0.0, 1.0)[:, None])
            spectrum *= np.fft.rfft(pmf, size, axis=1)
        law = np.clip(np.fft.irfft(spectrum, size, axis=1)[:, :top + 1], 0.0,
                      None)
        # Each row's mass up to its own threshold (the law is exact below
        # top + 1, so below each row's t + 1).
        below = np.where(values[None, :] <= t[exact][:, None], law, 0.0)
        out[exact] = np.minimum(1.0, below.sum(axis=1) + _FFT_SLACK)
    return out


def _rows_at_most(parts, t: int, rows: int) -> np.ndarray:
    """:func:`_many_at_most` at one threshold ``t`` for every row."""
    from scipy import stats

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


def _bisect_many(values, ok_many, first: bool) -> list[float]:
    """Return, per array of ``values``, where ok first (or last) holds.

    The least value (``first``) or the largest at which ok holds; ok is
    monotone along each array and holds at its last value (``first``) or
    its first. ``ok_many`` takes [(item, index), ...] and returns whether
    each holds; every bisection asks it once a step, in step, so many share
    one evaluation.
    """
    last = [v.size - 1 for v in values]

    def at(q, i):
        return i if first else last[q] - i

    lo, hi = [0] * len(values), list(last)
    found = [None] * len(values)
    held = ok_many([(q, at(q, 0)) for q in range(len(values))])
    for q, ok in enumerate(held):
        if ok:
            found[q] = float(values[q][at(q, 0)])
    active = [q for q in range(len(values)) if found[q] is None]
    while active:
        for q in active:
            if hi[q] - lo[q] <= 1:
                found[q] = float(values[q][at(q, hi[q])])
        active = [q for q in active if found[q] is None]
        if not active:
            break
        mids = [(lo[q] + hi[q]) // 2 for q in active]
        held = ok_many([(q, at(q, m)) for q, m in zip(active, mids,
                                                      strict=True)])
        for q, m, ok in zip(active, mids, held, strict=True):
            if ok:
                hi[q] = m
            else:
                lo[q] = m
    return found


def _count_directions(questions, n: int, a: float, b: float) -> list[float]:
    """Return, per question, d: one side's D_(r) rarely exceeds the other's by more.

    Each question is (rise, fall, out, inside, low, high, r, budget): the
    chance is at most ``budget``. ``rise`` is the band whose records the
    moved ones become on the rising side (the group's for b over a),
    ``fall`` the other. The other side's D_(r) leaves its likely range [L,
    U] with chance at most 2 eta (eta a tenth of the budget: D_(r) > x when
    at most r records are at most x, D_(r) < x when more than r are below
    x). With it in a cell [x_i, x_i+1] of that range and the rising one
    above x_i + d, the shared records in (x_i+1, x_i + d], the rising
    side's moved records at most x_i + d and the other side's above x_i+1
    number at most m - 1 (m moved): four independent binomials, their
    chances bounded below by the bands (and the spacings' floors); summed
    over the cells, the least d of a grid within the budget. The
    bisections of all the questions step together, each step one batch of
    binomial tails: a quantile's many levels cost about what one does.
    """
    shared_in, shared_out = int(round(a * n)), n - int(round(b * n))
    moved = n - shared_in - shared_out
    setups = []
    for rise, fall, out, inside, low, high, r, budget in questions:
        other = ((shared_in, shared_out + moved) if rise is inside
                 else (shared_in + moved, shared_out))
        grid = np.unique(np.clip(np.concatenate(
            [[low], out.values, inside.values, [high]]), low, high))
        setups.append((rise, fall, out, inside, low, high, r, budget, other,
                       grid, budget * _RANGE_SHARE))

    def tails_ok(items, upper: bool) -> list[bool]:
        held = np.ones(len(items), dtype=bool)
        # Items of one orientation (bands and range) and sizes at once.
        groups = {}
        for k, (q, _) in enumerate(items):
            _, _, out, inside, low, high, _, _, other, _, _ = setups[q]
            groups.setdefault((id(out), id(inside), other), []).append(k)
        for ks in groups.values():
            qs = [items[k][0] for k in ks]
            _, _, out, inside, low, high, _, _, other, _, _ = setups[qs[0]]
            x = np.array([setups[q][9][items[k][1]]
                          for q, k in zip(qs, ks, strict=True)])
            r = np.array([setups[q][6] for q in qs])
            eta = np.array([setups[q][10] for q in qs])
            if upper:
                p_in, p_out = _cdf_low(inside, x, high), _cdf_low(out, x, high)
                t, sure = r, x >= high
            else:
                # More than r below x: at most size - r - 1 at least x.
                p_in = 1 - _below_high(inside, x, low)
                p_out = 1 - _below_high(out, x, low)
                t, sure = other[0] + other[1] - r - 1, x <= low
            chance = _many_at_most([(other[0], p_in), (other[1], p_out)], t)
            held[ks] = sure | (chance <= eta)
        return held.tolist()

    grids = [setup[9] for setup in setups]
    starts = _bisect_many(grids, lambda items: tails_ok(items, False),
                          first=False)
    stops = _bisect_many(grids, lambda items: tails_ok(items, True),
                         first=True)
    cells = []
    for setup, start, stop in zip(setups, starts, stops, strict=True):
        rise, fall, out, inside, low, high, r, budget, _, _, eta = setup
        # A range of one point (the order statistic on a tie, nearly
        # surely) is one cell of no width: the argument holds for every
        # d >= 0 there.
        cuts = (np.array([start, start]) if stop <= start
                else np.linspace(start, stop, _CELLS + 1))
        x_next = cuts[1:]
        # The other side's moved records above x_i+1 do not depend on d.
        cells.append((cuts, x_next, 1 - _cdf_high(fall, x_next, low),
                      budget - 2 * eta,
                      np.linspace(cuts[1] - cuts[0], high - low,
                                  1 << _STEPS)))

    def chances(items) -> np.ndarray:
        # Rows of one orientation's items at once, in the items' order.
        groups = {}
        for k, (q, _) in enumerate(items):
            groups.setdefault((id(setups[q][0]), id(setups[q][2])), []).append(k)
        sizes = [cells[q][1].size for q, _ in items]
        starts = np.cumsum([0] + sizes[:-1])
        parts = [np.empty(sum(sizes)) for _ in range(4)]
        for ks in groups.values():
            rise, _, out, inside, low, high = setups[items[ks[0]][0]][:6]
            rows = np.concatenate([np.arange(starts[k], starts[k] + sizes[k])
                                   for k in ks])
            x_next = np.concatenate([cells[items[k][0]][1] for k in ks])
            y = np.concatenate([cells[items[k][0]][0][:-1] + items[k][1]
                                for k in ks])
            parts[0][rows] = _mass_low(inside, x_next, y, low, high)
            parts[1][rows] = _mass_low(out, x_next, y, low, high)
            parts[2][rows] = _cdf_low(rise, y, high)
            parts[3][rows] = np.concatenate([cells[items[k][0]][2]
                                             for k in ks])
        each = _many_at_most(
            list(zip((shared_in, shared_out, moved, moved), parts,
                     strict=True)), moved - 1)
        return np.add.reduceat(each, starts)

    found = [None] * len(setups)
    widest = chances([(q, cells[q][4][-1]) for q in range(len(setups))])
    for q, chance in enumerate(widest):
        if chance > cells[q][3]:
            found[q] = setups[q][5] - setups[q][4]
    rest = [q for q in range(len(setups)) if found[q] is None]
    if rest:
        distances = [cells[q][4] for q in rest]
        held = _bisect_many(
            distances, lambda items: (chances(
                [(rest[k], distances[k][i]) for k, i in items])
                <= np.array([cells[rest[k]][3] for k, _ in items])).tolist(),
            first=True)
        for q, d in zip(rest, held, strict=True):
            found[q] = d
    return found


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
    return count_bounds(out, inside, low, high, n, a, b, [ranks], delta)[0]


def count_bounds(out, inside, low: float, high: float, n: int, a: float,
                 b: float, ranks_list, delta: float) -> list[float]:
    """:func:`count_bound` for each of ``ranks_list``, sharing the work.

    Every direction of every order statistic is one question of
    :func:`_count_directions` (each asked once, however many quantiles read
    it): many levels cost about what one does.
    """
    f_out, f_in = _reflected(out), _reflected(inside)
    questions, plans = {}, []
    for ranks in ranks_list:
        orders = sorted(set(ranks))
        budget = delta / (2 * len(orders))
        plan = []
        for r in orders:
            for rising in (True, False):
                below = (inside if rising else out, out if rising else inside,
                         out, inside, low, high, r, budget)
                # -X: the side whose order statistic rises falls.
                above = (f_out if rising else f_in, f_in if rising else f_out,
                         f_out, f_in, -high, -low, n - 1 - r, budget)
                keys = []
                for question in (below, above):
                    key = (id(question[0]), id(question[2]), *question[4:])
                    questions.setdefault(key, question)
                    keys.append(key)
                plan.append(keys)
        plans.append(plan)
    keys = list(questions)
    found = dict(zip(keys, _count_directions([questions[k] for k in keys], n,
                                             a, b), strict=True))
    return [max((min(found[below], found[above]) for below, above in plan),
                default=0.0) for plan in plans]


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
                          cache: dict | None = None) -> list[float]:
    """:func:`quantile_joint_bound` for each of ``ranks_list``, sharing work.

    A column's many levels: the count bounds of a pair in one batch
    (:func:`count_bounds`), the searches of the interval bound on one grid.
    """
    cache = {} if cache is None else cache
    interval = np.array([delta / 4, 1 - delta / 4])
    worst = np.zeros(len(ranks_list))
    for a, b, inner in widest_pairs_of(pairs):
        if privacy == "dataset" and not inner:
            apart = count_bounds(out, inside, low, high, n, a, b, ranks_list,
                                 delta)
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
                share: float, searches: dict) -> np.ndarray:
        """Return each value's W at chance ``share``, worst over ``pairs``.

        ``per_column`` the secret's bands; ``searches`` keeps each column's
        interval bound's search (keyed by column) for its other calls.
        """
        found = np.zeros(len(self.outputs))
        # A column's quantiles at once (its levels share the work).
        quantiles = {}
        for j, (c, kind, _) in enumerate(self.outputs):
            if _COORDINATES[kind].closeness is None:
                quantiles.setdefault(c, []).append(j)
        for c, js in quantiles.items():
            out, inside = per_column[c]
            found[js] = quantile_joint_bounds(
                out, inside, float(self.low[c]), float(self.high[c]), n,
                pairs, [order_bracket(n, float(self.outputs[j][2]))
                        for j in js], privacy, share, searches.setdefault(c, {}))
        for j, (c, kind, parameter) in enumerate(self.outputs):
            closeness = _COORDINATES[kind].closeness
            if closeness is not None:
                out, inside = per_column[c]
                found[j] = closeness(out, inside, float(self.low[c]),
                                     float(self.high[c]), secret, n, pairs,
                                     privacy, share, parameter)
        return found

    def coupled_distances(self, n: int, privacy: str
                          ) -> tuple[tuple[CoupledDistances, ...], ...]:
        """Return, per secret and widest pair, a law dominating each |D_j|.

        One entry per widest pair of each secret's pairs (a pair and every
        pair inside it), in the order of the secrets and then of
        :func:`~skattr.laws._base.widest_pairs`; each entry K laws, the j-th
        dominating |D_j| = |F_j(x) - F_j(y)| under the one coupling of the
        module's docstring (the shared records kept, each moved record's two
        rows drawn independently) for every pair in the window and every
        joint law of a record whose marginals lie in the bands. The K laws
        of an entry are marginal: the dependence of the D_j is unknown.

        Notes
        -----
        Each coordinate's bound at chance eta (the one :meth:`per_statistic`
        reads at delta / K) holds for every pair of the window under this
        coupling: P(|D_j| > W_j(eta)) <= eta. Read at each eta of the fixed
        :data:`~skattr.laws._distances.LADDER`, the staircase of
        :func:`~skattr.laws._distances.ladder_distances` dominates |D_j|,
        the mass beyond the last rung at the value's largest move
        (:meth:`largest`, which every pair's move is at most). A quantile's
        interval bound, which holds under any coupling, holds under this
        one. Cached like :meth:`per_statistic`.
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
            for a, b, _ in widest_pairs_of(pairs):
                window = [(x, y) for x, y in pairs
                          if min(x, y) >= a and max(x, y) <= b]
                widths = np.array([
                    self._widths(per_column, secret, window, n, privacy, eta,
                                 searches) for eta in LADDER])
                entries.append(tuple(
                    ladder_distances(widths[:, j], LADDER, largest[j])
                    for j in range(len(self.outputs))))
        self._cache[key] = tuple(entries)
        return self._cache[key]

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
