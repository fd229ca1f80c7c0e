"""The count bound: how far an order statistic moves under the independent coupling.

Dataset privacy, one column, two secrets a < b: a n records shared in the
group, n - b n outside, m = (b - a) n moved, each moved record's two values
drawn independently (one from each group's law), the groups' distribution
functions G in the reference's bands (and their spacings' floors). D_(r) <=
x exactly when at least r + 1 records are at most x. If D_(r) of one side
lies in a cell [x_i, x_i+1] and the other side's D_(r) above x_i + d, then
the shared records in (x_i+1, x_i + d], the rising side's moved records at
most x_i + d, and the other side's moved records above x_i+1 number at most
m - 1: four independent binomials, each chance monotone in the G(x) and
masses G(y) - G(x) that the bands bound. Summed over the cells of the first
side's likely range (and its chance of leaving it), that bounds the chance
of a move above d (:func:`count_chances`, at every d of a grid); the least
d within each direction's budget (delta / 2 per order statistic) is W
(:func:`count_bounds`). The same argument counting from above (for -X)
holds too; the smaller is taken. One coordinate of
:class:`~skattr.laws._joint_band.JointBandLaw` (its quantiles under dataset
privacy).
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict

import numpy as np

from skattr.laws._band import GroupBand

__all__ = ["binomials_at_most", "count_bound", "count_bounds", "count_tails"]

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
#: The chances each end of the other side's likely range is given in a
#: quantile's tail law (:func:`count_tails`: each gives a valid tail, the
#: least is taken), fixed before any data is read.
_TAIL_SHARES = (1e-3, 1e-5, 1e-7)
#: The tails of the last few calls of :func:`count_tails`, by the content of
#: their arguments: the same bands read by two laws (a release's and a
#: ledger's joint one) are computed once.
_TAILS: OrderedDict = OrderedDict()
_TAILS_SIZE = 32
_TAILS_LOCK = threading.Lock()


def binomials_at_most(parts, t: int) -> float:
    """Return an upper bound on P(sum of independent Bin(count, p) <= t).

    One row of :func:`_many_at_most`: exact for t up to a few hundred,
    Chernoff's bound beyond.

    Examples
    --------
    >>> from skattr.laws._count_bound import binomials_at_most
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


#: Trials up to which :func:`binomial_pmf` is written out in log-gammas.
_LOG_GAMMA_COUNT = 4000


def binomial_pmf(values: np.ndarray, count: int, p: np.ndarray) -> np.ndarray:
    """Return Binomial(count, p).pmf(values), a row per p: (len(p), len(values)).

    Written out in log-gamma terms up to ``_LOG_GAMMA_COUNT`` trials
    (scipy's ``binom.pmf`` checks its arguments on every call, most of a
    quantile's tail law's time), the logs of p and 1 - p taken once per
    row; each value is then within 1.2e-11 of scipy's, relative (measured:
    6.4e-12 at 3,000 trials, 1.1e-11 at 4,000; the error grows with the
    log-gammas' size), so a tail summed from them is within 1.2e-11 of it,
    an eighth of ``_FFT_SLACK``, which is added to every tail read. Above,
    scipy's.

    >>> import numpy as np
    >>> from scipy import stats
    >>> p = np.array([0.0, 0.3, 1.0])
    >>> got = binomial_pmf(np.arange(6), 4, p)
    >>> bool(np.allclose(got, stats.binom.pmf(np.arange(6)[None, :], 4,
    ...                                         p[:, None]), atol=1e-15))
    True
    """
    from scipy import special, stats

    if count > _LOG_GAMMA_COUNT:
        return stats.binom.pmf(np.asarray(values)[None, :], count,
                               np.asarray(p, dtype=float)[:, None])
    k = np.asarray(values, dtype=float)[None, :]
    p = np.asarray(p, dtype=float)[:, None]
    inside = (k >= 0) & (k <= count)
    kk = np.where(inside, k, 0.0)
    # The logs once per row, not per value (xlogy's 0 log 0 = 0 kept:
    # a zero count times a log of 0 is 0).
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p, log_q = np.log(p), np.log1p(-p)
        log = (special.gammaln(count + 1.0) - special.gammaln(kk + 1.0)
               - special.gammaln(count - kk + 1.0)
               + np.where(kk > 0, kk * log_p, 0.0)
               + np.where(count - kk > 0, (count - kk) * log_q, 0.0))
    with np.errstate(over="ignore"):
        return np.where(inside, np.exp(log), 0.0)


def _many_at_most(parts, t) -> np.ndarray:
    """``binomials_at_most`` for many rows at once: parts ((count, p array), ...).

    ``t`` is one threshold, or one per row.
    """
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
        law = _truncated_law(picked, top, int(exact.sum()))
        # Each row's mass up to its own threshold (the law is exact below
        # top + 1, so below each row's t + 1).
        below = np.where(np.arange(top + 1)[None, :] <= t[exact][:, None],
                         law, 0.0)
        out[exact] = np.minimum(1.0, below.sum(axis=1) + _FFT_SLACK)
    return out


def _rows_at_most(parts, t: int, rows: int) -> np.ndarray:
    """:func:`_many_at_most` at one threshold ``t`` for every row."""
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
    law = _truncated_law(parts, t, rows)
    return np.minimum(1.0, law.sum(axis=1) + _FFT_SLACK)


def _truncated_law(parts, top: int, rows: int) -> np.ndarray:
    """Return the law of the binomials of ``parts`` summed, row by row, on 0..top.

    The pmfs truncated at ``top`` and convolved by one FFT long enough for
    their full convolution, so the law is exact below top + 1 (up to the
    FFT's rounding, clipped at 0); shape (rows, top + 1).
    """
    from scipy import fft

    values = np.arange(top + 1)
    # Long enough for the full convolution (no wrap onto 0..top), of a
    # length pocketfft splits well (2, 3 and 5 as factors).
    size = fft.next_fast_len(len(parts) * top + 1, real=True)
    spectrum = np.ones((rows, size // 2 + 1), dtype=complex)
    for c, p in parts:
        if c == 0:
            continue
        pmf = binomial_pmf(values, c, np.clip(np.broadcast_to(p, (rows,)),
                                              0.0, 1.0))
        spectrum *= np.fft.rfft(pmf, size, axis=1)
    return np.clip(np.fft.irfft(spectrum, size, axis=1)[:, :top + 1], 0.0,
                   None)


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


def _count_directions(questions, n: int, a: float, b: float,
                      one_uniform: bool = False) -> list[float]:
    """Return, per question, d: one side's D_(r) rarely exceeds the other's by more.

    The least d of a grid whose chance (:func:`_count_chances`, with eta a
    tenth of the budget) is within the budget.
    """
    setups, cells, chances = _prepared(questions, n, a, b, one_uniform)
    limits = [setup[7] - 2 * setup[10] for setup in setups]
    grids = [np.linspace(cell[0][1] - cell[0][0], setup[5] - setup[4],
                         1 << _STEPS) for setup, cell in zip(setups, cells,
                                                            strict=True)]
    found = [None] * len(setups)
    widest = chances([(q, grids[q][-1]) for q in range(len(setups))])
    for q, chance in enumerate(widest):
        if chance > limits[q]:
            found[q] = setups[q][5] - setups[q][4]
    rest = [q for q in range(len(setups)) if found[q] is None]
    if rest:
        distances = [grids[q] for q in rest]
        held = _bisect_many(
            distances, lambda items: (chances(
                [(rest[k], distances[k][i]) for k, i in items])
                <= np.array([limits[rest[k]] for k, _ in items])).tolist(),
            first=True)
        for q, d in zip(rest, held, strict=True):
            found[q] = d
    return found


def _count_chances(questions, n: int, a: float, b: float,
                   distances: np.ndarray, one_uniform: bool = False
                   ) -> np.ndarray:
    """Return, per question and distance d, a bound on P(move above d).

    Each question is :func:`_prepared`'s, its budget ten times the chance
    ``eta`` it gives each end of the other side's likely range: the bound
    is 2 eta plus the cells' binomial chances, where d is at least a
    cell's width (below, 1: the argument needs x_i + d >= x_i+1), and 0
    from the range's width on (no order statistic moves further).
    """
    setups, cells, chances = _prepared(questions, n, a, b, one_uniform)
    found = np.ones((len(setups), distances.size))
    items = []
    for q, (setup, cell) in enumerate(zip(setups, cells, strict=True)):
        span = setup[5] - setup[4]
        width = cell[0][1] - cell[0][0]
        found[q, distances >= span] = 0.0
        items += [(q, i) for i in np.flatnonzero(
            (distances >= width) & (distances < span)).tolist()]
    # Batches of items small enough for the binomials' arrays (a row per
    # cell, a column per moved record).
    moved = int(round(b * n)) - int(round(a * n))
    per = max(1, int(4e6 // ((_CELLS + 1) * max(moved, 1))))
    for start in range(0, len(items), per):
        batch = items[start:start + per]
        chance = chances([(q, float(distances[i])) for q, i in batch])
        for (q, i), c in zip(batch, chance.tolist(), strict=True):
            found[q, i] = min(1.0, c + 2 * setups[q][10])
    return found


def _prepared(questions, n: int, a: float, b: float, one_uniform: bool = False):
    """Return (setups, cells, chances): what the count bound's chances read.

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
    chances bounded below by the bands (and the spacings' floors), summed
    over the cells by ``chances`` for items (question, d). The likely
    ranges' bisections of all the questions step together, each step one
    batch of binomial tails: a quantile's many levels cost about what one
    does.

    ``one_uniform``: each moved record's two values are instead coupled by
    one uniform U (G_rise^-1(U) on the rising side, G_fall^-1(U) on the
    other: the column's comonotone coupling). Then the rising side's moved
    records at most y number #{U <= G_rise(y)} and the other's above x_i+1
    m - #{U <= G_fall(x_i+1)}: together m - #{G_rise(y) < U <= G_fall(x_i+1)},
    at least one binomial Bin(m, min(1, G_rise(y) + 1 - G_fall(x_i+1))) in
    place of the two (the two's mean when the probability is below 1, less
    spread: usually, not always, the thinner tail), its chance nonincreasing
    in that probability, which the same band bounds bound below.
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
        cells.append((cuts, x_next, 1 - _cdf_high(fall, x_next, low)))

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
        if one_uniform:
            each = _many_at_most(
                [(shared_in, parts[0]), (shared_out, parts[1]),
                 (moved, np.minimum(1.0, parts[2] + parts[3]))], moved - 1)
        else:
            each = _many_at_most(
                list(zip((shared_in, shared_out, moved, moved), parts,
                         strict=True)), moved - 1)
        return np.add.reduceat(each, starts)

    return setups, cells, chances


def count_bound(out, inside, low: float, high: float, n: int, a: float,
                b: float, ranks: tuple[int, int], delta: float, *,
                one_uniform: bool = False) -> float:
    """Return W: |F(a) - F(b)| > W with chance <= delta (dataset privacy).

    Under the swap coupling with each moved record's two values
    independent; the quantile between the order statistics ``ranks``
    moves by at most the larger of theirs, each direction of each at
    delta / 4 (delta / 2 for one order statistic). Each direction's
    bound counts the records from below, and again from above (the same
    argument for -X, whose (n - 1 - r)-th order statistic it is): both
    hold, the smaller is taken. ``one_uniform``: each moved record's two
    values coupled by one uniform instead (:func:`_prepared`), a coupling of
    this one column.
    """
    return count_bounds(out, inside, low, high, n, a, b, [ranks], delta,
                        one_uniform=one_uniform)[0]


def count_bounds(out, inside, low: float, high: float, n: int, a: float,
                 b: float, ranks_list, delta: float, *,
                 one_uniform: bool = False) -> list[float]:
    """:func:`count_bound` for each of ``ranks_list``, sharing the work.

    Every direction of every order statistic is one question of
    :func:`_count_directions` (each asked once, however many quantiles read
    it): many levels cost about what one does.
    """
    bands = (out, inside, _reflected(out), _reflected(inside))
    questions, plans = {}, []
    for ranks in ranks_list:
        orders = sorted(set(ranks))
        budget = delta / (2 * len(orders))
        plan = []
        for r in orders:
            for rising in (True, False):
                keys = []
                for question in _questions(bands, low, high, n, r, rising,
                                           budget):
                    key = (id(question[0]), id(question[2]), *question[4:])
                    questions.setdefault(key, question)
                    keys.append(key)
                plan.append(keys)
        plans.append(plan)
    keys = list(questions)
    found = dict(zip(keys, _count_directions([questions[k] for k in keys], n,
                                             a, b, one_uniform), strict=True))
    return [max((min(found[below], found[above]) for below, above in plan),
                default=0.0) for plan in plans]


def _questions(bands, low: float, high: float, n: int, r: int,
               rising: bool, budget: float) -> tuple:
    """Return one direction's two questions: counting from below and from above.

    Both bound the chance that the order statistic ``r`` of the side whose
    records rise (``rising``: b's over a's) exceeds the other's by d.
    ``bands``: (out, inside) and their reflections (:func:`_reflected`).
    """
    out, inside, f_out, f_in = bands
    below = (inside if rising else out, out if rising else inside,
             out, inside, low, high, r, budget)
    # -X: the side whose order statistic rises falls.
    above = (f_out if rising else f_in, f_in if rising else f_out,
             f_out, f_in, -high, -low, n - 1 - r, budget)
    return below, above


def count_tails(out, inside, low: float, high: float, n: int, a: float,
                b: float, ranks_list, distances, *,
                one_uniform: bool = False) -> np.ndarray:
    """Return, per quantile and distance d, a bound on P(|F(a) - F(b)| > d).

    Dataset privacy, the independent coupling of :func:`count_bound`. The
    quantile between the order statistics ``ranks`` moves by at most the
    larger of their moves, so P(|D| > d) is at most the sum over its order
    statistics and both directions of each direction's chance. Each
    direction's chance is bounded counting from below and from above, with
    each end of the other side's likely range given each chance of
    ``_TAIL_SHARES`` (:func:`_count_chances`): all hold, the least is
    taken.

    Parameters
    ----------
    out, inside : GroupBand
        The column's bands outside the group and inside it.
    low, high : float
        The clipping range.
    n : int
        Records released.
    a, b : float
        The pair's shares, a < b.
    ranks_list : list of (int, int)
        Each quantile's order statistics (from 0).
    distances : array-like
        The distances d, increasing.
    one_uniform : bool, default=False
        Each moved record's two values coupled by one uniform (the column's
        comonotone coupling, :func:`_prepared`) instead of independently:
        a coupling of this one column, for a release reading no other.

    Returns
    -------
    ndarray of shape (len(ranks_list), len(distances))
        Each at most 1.
    """
    distances = np.asarray(distances, dtype=float)
    # Everything the tails are computed from: the arguments and the module's
    # constants (read now: a test may set one).
    key = (_digest(out), _digest(inside), float(low), float(high), int(n),
           float(a), float(b), tuple(tuple(int(r) for r in ranks)
                                     for ranks in ranks_list),
           distances.shape, distances.tobytes(), bool(one_uniform),
           (_CELLS, _RANGE_SHARE, _EXACT_MOVED, _STEPS, _FFT_SLACK,
            _TAIL_SHARES))
    with _TAILS_LOCK:
        kept = _TAILS.get(key)
        if kept is not None:
            _TAILS.move_to_end(key)
            return kept.copy()
    found = _count_tails(out, inside, low, high, n, a, b, ranks_list,
                         distances, one_uniform)
    with _TAILS_LOCK:
        _TAILS[key] = found.copy()
        while len(_TAILS) > _TAILS_SIZE:
            _TAILS.popitem(last=False)
    return found


def _digest(band: GroupBand) -> str:
    """Return a digest of every field of a band (its identity by content)."""
    h = hashlib.sha256()
    for field in dataclasses.fields(band):
        value = getattr(band, field.name)
        h.update(field.name.encode())
        if value is None:
            h.update(b"none")
        else:
            array = np.ascontiguousarray(value)
            h.update(f"{array.dtype.str}{array.shape}".encode())
            h.update(array.tobytes())
    return h.hexdigest()


def _count_tails(out, inside, low, high, n, a, b, ranks_list, distances,
                 one_uniform: bool) -> np.ndarray:
    """:func:`count_tails`, computed."""
    bands = (out, inside, _reflected(out), _reflected(inside))
    questions, plans = {}, []
    for ranks in ranks_list:
        plan = []
        for r in sorted(set(ranks)):
            for rising in (True, False):
                keys = []
                for share in _TAIL_SHARES:
                    for question in _questions(bands, low, high, n, r, rising,
                                               share / _RANGE_SHARE):
                        key = (id(question[0]), id(question[2]),
                               *question[4:])
                        questions.setdefault(key, question)
                        keys.append(key)
                plan.append(keys)
        plans.append(plan)
    keys = list(questions)
    table = dict(zip(keys, _count_chances([questions[k] for k in keys], n, a,
                                          b, distances, one_uniform),
                     strict=True))
    return np.array([np.minimum(1.0, np.sum(
        [np.min([table[k] for k in keys], axis=0) for keys in plan], axis=0))
        for plan in plans])
