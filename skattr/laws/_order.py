"""Exact laws of medians and quantiles under the resampling Theta, by convolution.

Given the secret's value, a dataset of the resampling model holds k records of
the secret's group and n - k of the rest. The number N(v) of its records at
most v is then the sum of two independent counts, one per group: hypergeometric
when the records are drawn without replacement, binomial when with. The r-th
smallest record (from 0) is at most v exactly when N(v) >= r + 1, so the law
of every order statistic follows from one convolution per reference value v,
with no dataset drawn. NumPy's sample quantile (linear interpolation) lies
between two adjacent order statistics, whose joint law gives its law exactly
(or, when that needs too many pairs of values, brackets it by theirs); the
median of an odd number of records is one order statistic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from skattr._kinds import OrderKind, kind_of, quantile_position, register_law
from skattr._persistence import persistable
from skattr.exceptions import NotCertifiableError

__all__ = ["OrderLaws", "coupling_gap", "order_bracket"]

# Standard deviations of each count kept either side of its mean (a normal
# tail beyond 8 is 6e-16); the mass beyond is bounded (log-concavity) and
# counted in the error, and the window doubles while that bound exceeds _TAIL.
_WIDTH = 8.0
_TAIL = 1e-13

# Most (values x window) cells computed at once: a few arrays of this many
# float64 stay well under 1 GB.
_CELLS = 1 << 22

_ULP = 2.0 ** -52

# Most pairs (v_s, v_t) of adjacent order statistics whose joint law is
# computed for an interpolated quantile, and most cells of their counts'
# windows (a few seconds); beyond, two order statistics bracket it. Large n
# against the reference makes the pair's values mostly equal, and the
# bracket nearly exact.
_PAIRS = 200_000
_PAIR_CELLS = 100_000_000

# How far below and above the levels of interest a table reaches, at least
# the error of its cdfs (it widens if that is larger).
_MARGIN = 1e-9

# W_inf reads the laws' extremes for the levels below this and above one
# minus it, and their tables in between.
_EDGE = 1e-8


def order_bracket(n: int, q: float) -> tuple[int, int]:
    """Order statistics (from 0) between which NumPy's q-quantile of n values lies.

    The same one twice when the quantile is that order statistic exactly
    (:func:`skattr._statistic.quantile_position`). ``numpy.median`` lies
    where the 0.5-quantile does: the middle value, or between the two middle
    ones (their mean).

    Examples
    --------
    >>> from skattr.laws._order import order_bracket
    >>> order_bracket(5, 0.5), order_bracket(6, 0.5), order_bracket(101, 0.25)
    ((2, 2), (2, 3), (25, 25))
    """
    below, above, t = quantile_position(n, q)
    return below, (below if t == 0 else above)


def _count_pmfs(total, success, draws: int, replace: bool):
    """Windows of the pmfs of one count per row, and a bound on their error.

    Row b is the number of "successes" among ``draws`` records drawn from
    ``total[b]`` records of which ``success[b]`` succeed: hypergeometric
    without replacement, binomial with. ``total`` may be a float array with
    ``success`` a probability array when ``replace`` (the binomial of a mixed
    law).

    Returns
    -------
    start : ndarray of int, shape (B,)
        The count at column 0 of ``pmf``.
    pmf : ndarray of shape (B, L)
        The pmf on the window, normalised; zero outside the support.
    error : ndarray of shape (B,)
        A bound on sum_i |pmf[b, i] - P(count = start[b] + i)| plus the mass
        outside the window.

    Notes
    -----
    The pmf is built from the centre of the window by the ratios
    P(i + 1) / P(i) (products of whole numbers, exact in float64 below 2^53,
    then one division and one logarithm), summed in logarithms and normalised
    on the window. The counts are log-concave, so the ratios decrease in i and
    the mass beyond each end of the window is at most a geometric series in
    the ratio there. Each logarithm is off by a few units in the last place
    and each partial sum by one unit of its size: a weight t steps from the
    centre is off by a factor exp(t 2^-50 (1 + |log weight|)) at most, and
    the bound sums these errors over the window, twice over for the
    normalisation.
    """
    total = np.asarray(total, dtype=float)
    success = np.asarray(success, dtype=float)
    p = np.divide(success, total, out=np.zeros_like(success), where=total > 0)
    if replace:
        # Binomial(draws, p): a certain success or failure has one value.
        lowest = np.where(p >= 1, float(draws), 0.0)
        highest = np.where(p <= 0, 0.0, float(draws))
        mean, var = draws * p, draws * p * (1 - p)
    else:
        lowest = np.maximum(0.0, draws - (total - success))
        highest = np.minimum(float(draws), success)
        mean = draws * p
        var = mean * (1 - p) * np.divide(total - draws, total - 1,
                                         out=np.zeros_like(total),
                                         where=total > 1)
    # No count is possible when fewer records remain than are drawn
    # (:func:`_thinned` weights such rows by zero): read as one point.
    highest = np.maximum(highest, lowest)
    centre = np.clip(np.round(mean), lowest, highest)
    half = int(math.ceil(_WIDTH * math.sqrt(max(float(var.max(initial=0.0)), 0.0))))
    half += 16
    while True:
        start, pmf, error, beyond = _window(total, success, p, draws, replace,
                                            lowest, highest, centre, half)
        # Wide enough, or as wide as the supports.
        if (beyond.max(initial=0.0) <= _TAIL
                or 2 * half + 1 > float((highest - lowest).max(initial=0)) + 1):
            return start, pmf, error
        half *= 2


def _log_ratio(j, total, success, p, draws: int, replace: bool):
    """Return log P(j + 1) / P(j) for the count, where both are in the support."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if replace:
            ratio = ((draws - j) / (j + 1)) * (p / (1 - p))
        else:
            ratio = ((success - j) * (draws - j)) / (
                (j + 1) * (total - success - draws + j + 1))
        return np.log(ratio)


def _window(total, success, p, draws, replace, lowest, highest, centre, half):
    """Return the pmf on [centre - half, centre + half] of each row."""
    rows = centre.size
    offsets = np.arange(-half, half + 1, dtype=float)
    j = centre[:, None] + offsets[None, :-1]          # steps j -> j + 1
    inside = (j >= lowest[:, None]) & (j + 1 <= highest[:, None])
    col = lambda a: a[:, None] if np.ndim(a) else a   # noqa: E731
    steps = np.where(inside, _log_ratio(j, col(total), col(success), col(p),
                                        draws, replace), 0.0)
    log_w = np.empty((rows, 2 * half + 1))
    log_w[:, half] = 0.0
    log_w[:, half + 1:] = np.cumsum(steps[:, half:], axis=1)
    log_w[:, :half] = -np.cumsum(steps[:, :half][:, ::-1], axis=1)[:, ::-1]
    counts = centre[:, None] + offsets[None, :]
    support = (counts >= lowest[:, None]) & (counts <= highest[:, None])
    log_w = np.where(support, log_w, -np.inf)
    top = log_w.max(axis=1, keepdims=True)
    w = np.exp(log_w - top)
    z = w.sum(axis=1)
    # Mass beyond each end, by the ratio there (log-concavity).
    tails = np.zeros(rows)
    for end, beyond, sign in ((2 * half, highest, 1), (0, lowest, -1)):
        count = centre + offsets[end]
        more = (count < beyond) if sign > 0 else (count > beyond)
        if not more.any():
            continue
        step = count if sign > 0 else count - 1
        ratio = np.exp(sign * _log_ratio(step, total, success, p, draws, replace))
        with np.errstate(divide="ignore", invalid="ignore"):
            series = np.where(ratio < 1, ratio / (1 - ratio), np.inf)
        with np.errstate(invalid="ignore"):
            bound = np.where(np.isinf(series), np.inf, w[:, end] * series)
        tails += np.where(more, bound, 0.0)
    pmf = w / z[:, None]
    # A weight |t| steps from the centre carries |t| rounded logarithms and
    # partial sums, each off by 2^-50 (1 + its size) at most.
    drift = (np.abs(offsets)[None, :] * 2.0 ** -50
             * (1 + np.abs(np.where(support, log_w, 0.0)) + top))
    rounding = (pmf * np.expm1(drift)).sum(axis=1) + (2 * half + 1) * _ULP
    beyond = np.minimum(1.0, tails / z)
    start = (centre - half).astype(np.int64)
    return start, pmf, 2 * np.minimum(1.0, rounding) + beyond, beyond


@dataclass(frozen=True)
class _Component:
    """One group's side of a dataset: sorted values and how many are drawn."""

    values: np.ndarray
    draws: int


def _mixture_cdf(parts, share: float, x) -> np.ndarray:
    """Return share F_in(x) + (1 - share) F_out(x), the groups' empirical cdfs."""
    inside, outside = (c.values for c in parts)
    return (share * np.searchsorted(inside, x, side="right") / inside.size
            + (1 - share) * np.searchsorted(outside, x, side="right")
            / outside.size)


def _cdf_rows(parts, mixed, x, r: int, replace: bool):
    """P(r-th smallest <= x_b) for each value x_b, and the error bound.

    ``parts`` are the two groups' components; ``mixed`` (distributional
    privacy with replacement) is (share, n): then every record comes from the
    mixture, and N(x) is one binomial.
    """
    if mixed is not None:
        share, n = mixed
        p = _mixture_cdf(parts, share, x)
        counts = [(np.ones_like(p), p, n), (np.ones_like(p), np.zeros_like(p), 0)]
        replace = True
    else:
        counts = [(np.full(x.size, float(c.values.size)),
                   np.searchsorted(c.values, x, side="right").astype(float),
                   c.draws) for c in parts]
    (total_a, success_a, draws_a), (total_b, success_b, draws_b) = counts
    start_a, pmf_a, error_a = _count_pmfs(total_a, success_a, draws_a, replace)
    start_b, pmf_b, error_b = _count_pmfs(total_b, success_b, draws_b, replace)
    # at_least[b, t] = P(B >= start_b + t); beyond the window, 1 or 0 (within
    # the error bound).
    at_least = np.concatenate(
        [np.cumsum(pmf_b[:, ::-1], axis=1)[:, ::-1],
         np.zeros((x.size, 1))], axis=1)
    i = start_a[:, None] + np.arange(pmf_a.shape[1])[None, :]
    need = np.clip(r + 1 - i - start_b[:, None], 0, pmf_b.shape[1])
    value = (pmf_a * np.take_along_axis(at_least, need, axis=1)).sum(axis=1)
    cells = pmf_a.shape[1] + pmf_b.shape[1]
    return value, error_a + error_b + 2 * cells * _ULP


@register_law("order", OrderKind)
@persistable
@dataclass(frozen=True)
class OrderLaws:
    """Exact laws of medians and quantiles of one reference and secret.

    Built by :meth:`skattr.theta.Resample.fit` for a median or quantile
    statistic; the Wasserstein mechanisms read :meth:`table` through
    :func:`coupling_gap`.

    Parameters
    ----------
    inside, outside : tuple of ndarray
        For each released value, the sorted values of its column in, and out
        of, the secret's group.
    levels : tuple of float
        For each released value, its quantile level (0.5 for a median).
    replace : bool
        Whether the model draws records with replacement.
    statistic : {"median", "quantile"}, default="quantile"
        How two middle values combine: ``numpy.median`` takes their mean,
        ``numpy.quantile`` interpolates.
    """

    inside: tuple
    outside: tuple
    levels: tuple
    replace: bool
    statistic: str = "quantile"
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def supports(self, privacy: str) -> bool:
        """Whether the laws are exact for ``privacy``.

        Dataset privacy fixes k = a n; distributional privacy with replacement
        makes every record an independent draw from the mixture a F_in +
        (1 - a) F_out. Distributional privacy without replacement mixes over
        every k and is left to drawn datasets.
        """
        return privacy == "dataset" or self.replace

    def table(self, j: int, a: float, n: int, privacy: str, low: float,
              high: float) -> _Table:
        """Bounds on the quantile function of value ``j`` given ``a`` on [low, high]."""
        key = (j, a, n, privacy, low, high)
        if key not in self._cache:
            self._cache[key] = self._table(j, a, n, privacy, low, high)
        return self._cache[key]

    def gap(self, j: int, a: float, b: float, n: int, privacy: str,
            low: float = 0.0, high: float = 1.0) -> float:
        """Bound sup |Q_a(u) - Q_b(u)| over u in [low, high] for value ``j``.

        Q_a is the quantile function of value ``j`` given the property value
        a. With ``low = 0`` and ``high = 1`` this bounds the
        infinity-Wasserstein distance: the levels beyond _EDGE from either end
        are bounded by the laws' least and greatest possible values.
        """
        inner = (max(low, _EDGE), min(high, 1 - _EDGE))
        ta, tb = (self.table(j, v, n, privacy, *inner) for v in (a, b))
        gap = coupling_gap(ta, tb, *inner)
        if low < inner[0]:
            u = inner[0]
            gap = max(gap, float(ta.upper(u) - tb.least),
                      float(tb.upper(u) - ta.least))
        if high > inner[1]:
            u = inner[1]
            gap = max(gap, float(ta.most - tb.lower(u)),
                      float(tb.most - ta.lower(u)))
        return gap

    def tail_bounds(self, j: int, a: float, n: int, privacy: str, tail: float
                    ) -> tuple[float, float]:
        """(L, U) with P(value j < L) <= tail and P(value j > U) <= tail, given a.

        L is at most Q(tail) and U at least Q(1 - tail); P(F < Q(u)) <= u and
        P(F > Q(1 - u)) <= u.
        """
        table = self.table(j, a, n, privacy, tail, 1 - tail)
        return float(table.lower(tail)), float(table.upper(1 - tail))

    def _parts(self, j, a, n, privacy):
        inside, outside = self.inside[j], self.outside[j]
        if privacy == "dataset":
            k = round(a * n)
            return ((_Component(inside, k), _Component(outside, n - k)), None)
        return ((_Component(inside, 0), _Component(outside, 0)), (a, n))

    def _extremes(self, j, a, n, privacy, r_low, r_high):
        """Return the least r_low-th and greatest r_high-th smallest values."""
        inside, outside = self.inside[j], self.outside[j]
        if privacy == "dataset":
            ks = [round(a * n)]
        else:
            ks = [k for k in (0, n) if (k == 0 and a < 1) or (k == n and a > 0)]
        least, most = np.inf, -np.inf
        for k in ks:
            if self.replace:
                # Every record may be the group's least (or greatest) value.
                least = min(least, _kth_of_two(inside[0], k, outside[0], n, r_low))
                most = max(most, _kth_of_two(inside[-1], k, outside[-1], n, r_high))
                continue
            low = np.concatenate([inside[:k], outside[:n - k]])
            high = np.concatenate([inside[inside.size - k:],
                                   outside[outside.size - (n - k):]])
            least = min(least, float(np.partition(low, r_low)[r_low]))
            most = max(most, float(np.partition(high, r_high)[r_high]))
        return least, most

    def _table(self, j, a, n, privacy, low, high) -> _Table:
        r_low, r_high = order_bracket(n, self.levels[j])
        parts, mixed = self._parts(j, a, n, privacy)
        support = np.unique(np.concatenate([self.inside[j], self.outside[j]]))

        def cdf(r, index):
            values, errors = [], []
            step = max(1, _CELLS // (2 * _span(parts, mixed) + 2))
            for s in range(0, index.size, step):
                v, e = _cdf_rows(parts, mixed, support[index[s:s + step]], r,
                                 self.replace)
                values.append(v)
                errors.append(e)
            return np.concatenate(values), np.concatenate(errors)

        def first_at_least(r, target):
            # The least index s with cdf(s) >= target (support.size if none),
            # by bisection; the cdf need not be exactly monotone for the
            # bounds built on it to hold (see _Table).
            lo, hi = -1, support.size
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if cdf(r, np.array([mid]))[0][0] >= target:
                    hi = mid
                else:
                    lo = mid
            return hi

        margin = _MARGIN
        while True:
            # The window runs from below the level low - eta to above
            # high + eta: there the bounds read the table.
            begin = max(0, first_at_least(r_low, low - margin) - 1)
            end = min(support.size - 1, first_at_least(r_high, high + margin))
            index = np.arange(begin, end + 1)
            f_low, e_low = cdf(r_low, index)
            f_high, e_high = ((f_low, e_low) if r_high == r_low
                              else cdf(r_high, index))
            eta = _finite(max(e_low.max(), e_high.max()), "cdf")
            if eta <= margin or margin >= 1:
                break
            margin = min(1.0, 2 * eta)
        least, most = self._extremes(j, a, n, privacy, r_low, r_high)
        if r_high != r_low:
            exact = self._interpolated(j, n, parts, mixed, support, cdf, r_low,
                                       begin, end, least, most, margin)
            if exact is not None:
                return exact
        return _Table(values=support[index], f_low=np.maximum.accumulate(f_low),
                      f_high=np.maximum.accumulate(f_high), eta=eta,
                      least=least, most=most, first=begin == 0)

    def _interpolated(self, j, n, parts, mixed, support, cdf, r, begin, end,
                      least, most, margin) -> _Table | None:
        """Return the exact law of a quantile between two order statistics.

        With G(s, t) = P(exactly r + 1 records at most v_s and none in
        (v_s, v_t]) = P(X_r <= v_s, X_{r+1} > v_t), the pair (X_r, X_{r+1})
        takes the values (v_s, v_t) with mass
        [G(s, t-1) - G(s-1, t-1)] - [G(s, t) - G(s-1, t)] for t > s, and
        P(X_r = v_s) - [G(s, s) - G(s-1, s)] for t = s. The pairs are kept
        for t - s <= D, D doubling until the mass left beyond is negligible
        (or the pairs too many: then None, and the two order statistics
        bracket the quantile instead). The mass of X_r below the window,
        P(X_r < v_begin), is placed below it: it can reach above v_begin only
        if X_{r+1} > v_begin, with probability G(begin - 1, begin) at most,
        counted in the error; the window reaches down until that is small.
        """
        gamma = quantile_position(n, self.levels[j])[2]
        width = 2 * _span(parts, mixed) + 2

        def affordable(rows, depth):
            pairs = rows * (depth + 2)
            return pairs <= _PAIRS and pairs * width <= _PAIR_CELLS

        reach = 1
        while begin > 0:
            if not affordable(end - begin + 2, 4):
                return None
            straddle, doubt = _none_between(parts, mixed, support,
                                            np.array([begin - 1]),
                                            np.array([[begin]]), r,
                                            self.replace)
            # Small, or no larger than the error of computing it.
            if float(straddle[0, 0]) <= max(margin / 100, float(doubt[0, 0])):
                break
            begin, reach = max(0, begin - reach), 2 * reach
        rows = np.arange(begin - 1, end + 1)              # s, from begin - 1
        f_r, e_r = cdf(r, np.maximum(rows, 0))
        f_r[rows < 0], e_r[rows < 0] = 0.0, 0.0
        size = support.size
        depth, done = 4, 0
        g = e_g = np.empty((rows.size, 0))
        while True:
            if not affordable(rows.size, depth):
                return None
            # G(s, s + d) for d = 0 .. depth + 1 (row s - 1 reaches s + depth),
            # the columns not yet computed.
            t = rows[:, None] + np.arange(done, depth + 2)[None, :]
            more, e_more = _none_between(parts, mixed, support,
                                         np.maximum(rows, 0), t, r, self.replace)
            # G(-1, t) = 0 (no record at most v_{-1}); no v_t beyond the
            # support: none above v_s would put all n records at most v_s.
            more[rows < 0] = 0.0
            e_more[rows < 0] = 0.0
            more[t >= size] = 0.0
            g, e_g = np.hstack([g, more]), np.hstack([e_g, e_more])
            done = depth + 2
            # beyond[i, d] = P(X_r = v_s, X_{r+1} > v_{s+d}), s = begin + i.
            beyond = g[1:, :-1] - g[:-1, 1:]
            mass_left = float(np.maximum(beyond[:, -1], 0).sum())
            doubt = float(e_g[1:, -2].sum() + e_g[:-1, -1].sum())
            left = mass_left + doubt
            # Stop when the mass beyond is negligible, or no larger than
            # the error of computing it.
            if mass_left <= max(_TAIL, doubt) or depth >= size:
                break
            depth *= 2
        offsets = np.arange(depth + 1)
        # Masses of (X_r, X_{r+1}) = (v_s, v_{s+d}), s in the window.
        point = f_r[1:] - f_r[:-1]
        mass = np.empty_like(beyond)
        mass[:, 0] = point - beyond[:, 0]
        mass[:, 1:] = beyond[:, :-1] - beyond[:, 1:]
        s_values = support[rows[1:]]
        t_index = np.minimum(rows[1:, None] + offsets[None, :], size - 1)
        t_values = support[t_index]
        # numpy.median's mean of the two, or numpy.quantile's interpolation.
        values = kind_of(self.statistic).interpolate(s_values[:, None],
                                                      t_values, gamma)
        keep = (rows[1:, None] + offsets[None, :] < size) & (
            values <= support[end])
        # One entry per distinct value (ties are common in coarse data).
        values, where = np.unique(values[keep], return_inverse=True)
        mass = np.bincount(where.ravel(), weights=mass[keep], minlength=values.size)
        below = f_r[0]
        cumulative = np.maximum.accumulate(below + np.cumsum(mass))
        # For each s the values T(s, s + d) grow with d, so the masses at most
        # any t are a prefix in d, whose sum telescopes to P(X_r = v_s) -
        # P(X_r = v_s, X_{r+1} > v_{s+d}); summed over s, the first terms
        # telescope too. The error is two cdf errors, each row's largest G
        # errors, the mass left beyond D, the mass of X_r below the window
        # that may lie above it, and the rounding of the sums.
        cells = rows.size * (depth + 2)
        eta = _finite(2 * e_r.max() + 2 * e_g.max(axis=1).sum() + left
                      + (g[0, 1] if begin > 0 else 0.0) + 2 * cells * _ULP,
                      "interpolated quantile's cdf")
        if eta > margin or values.size == 0:
            return None
        return _Table(values=values, f_low=cumulative, f_high=cumulative,
                      eta=eta, least=least, most=most, first=begin == 0)


def _none_between(parts, mixed, support, s_index, t_index, r: int,
                  replace: bool):
    """G(s, t) = P(exactly r + 1 records at most v_s, none in (v_s, v_t]).

    Parameters
    ----------
    s_index : ndarray of int, shape (R,)
    t_index : ndarray of int, shape (R, C)
        Indices into ``support``, t >= s (those past the support are read as
        its last value; the caller zeroes them).

    Returns
    -------
    g, error : ndarray of shape (R, C)

    Notes
    -----
    Per group, P(H(v_s) = i, none in (v_s, v_t]) is a count's pmf times the
    chance that the group's draws avoid (v_s, v_t] (:func:`_thinned`); the
    two groups' terms are convolved at the total r + 1. With distributional
    privacy and replacement every record is a draw from the mixture: one
    binomial pmf at r + 1 times the chance the other n - r - 1 records lie
    above v_t.
    """
    shape = t_index.shape
    xs = np.repeat(support[s_index], shape[1])
    xt = support[np.minimum(t_index, support.size - 1)].ravel()
    step = max(1, _CELLS // (2 * _span(parts, mixed) + 2))
    g, error = np.empty(xs.size), np.empty(xs.size)
    for start in range(0, xs.size, step):
        part = slice(start, start + step)
        g[part], error[part] = _none_between_rows(parts, mixed, xs[part],
                                                  xt[part], r, replace)
    return g.reshape(shape), error.reshape(shape)


def _finite(error, what: str) -> float:
    """Return a table's error bound; refuse (fail closed) one that is not finite.

    A NaN compares false with every margin, so it would pass for a small
    error and collapse the bounds it widens.
    """
    error = float(error)
    if not math.isfinite(error):
        raise NotCertifiableError(
            f"The exact law of this order statistic could not be bounded (its "
            f"{what} error is {error}); nothing is released. Report this with "
            "the data's sizes, or use theta=Resample(exact_quantiles=False).")
    return error


def _thinned(values, draws, xs, xt, replace):
    """One group's P(H(x_s) = i and none in (x_s, x_t]), over a window of i.

    Without replacement this is C(c_s, i) C(N - c_t, k - i) / C(N, k): the
    pmf of a hypergeometric count of the c_s successes among k draws from
    the N - e records outside (x_s, x_t], times kappa(e) = C(N - e, k) /
    C(N, k), the chance that k draws avoid e given records. With replacement
    it is the pmf of Binomial(k, c_s / (N - e)) times (1 - e / N)^k. The pmf
    comes from :func:`_count_pmfs` (with its error bound); kappa from a
    running sum of logarithms, off by e 2^-51 (1 + |log kappa|) at most.
    """
    total = float(values.size)
    below = np.searchsorted(values, xs, side="right").astype(float)
    between = np.searchsorted(values, xt, side="right") - below
    start, pmf, error = _count_pmfs(total - between, below, draws, replace)
    with np.errstate(divide="ignore"):
        if replace:
            # No draws avoid anything with certainty (kappa = 1), also when
            # every record lies in the window (0 * log 0 would be NaN).
            log_kappa = (draws * np.log1p(-between / total) if draws
                         else np.zeros(between.shape))
        else:
            log_kappa = _avoid(values.size, draws)[between.astype(np.int64)]
    kappa = np.exp(log_kappa)
    drift = between * 2.0 ** -51 * (1 + np.abs(np.where(np.isfinite(log_kappa),
                                                        log_kappa, 0.0)))
    return start, pmf * kappa[:, None], error * kappa + kappa * np.expm1(drift)


_AVOID: dict = {}


def _avoid(total: int, draws: int) -> np.ndarray:
    """Return log C(N - e, k) / C(N, k) for e = 0 .. N (-inf when k > N - e)."""
    key = (total, draws)
    if key not in _AVOID:
        j = np.arange(total, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            steps = np.where(total - j >= draws + 1,
                             np.log1p(-draws / (total - j)), -np.inf)
        _AVOID.clear()       # one group and size at a time is what is reused
        _AVOID[key] = np.concatenate([[0.0], np.cumsum(steps)])
    return _AVOID[key]


def _none_between_rows(parts, mixed, xs, xt, r, replace):
    """Return G for each pair (x_s, x_t) and its error (see _none_between)."""
    if mixed is not None:
        share, n = mixed
        p_s, p_t = _mixture_cdf(parts, share, xs), _mixture_cdf(parts, share, xt)
        start, pmf, error = _count_pmfs(np.ones(xs.size), p_s, n, True)
        at = r + 1 - start
        inside_window = (at >= 0) & (at < pmf.shape[1])
        value = np.where(inside_window, np.take_along_axis(
            pmf, np.clip(at, 0, pmf.shape[1] - 1)[:, None], axis=1)[:, 0], 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(p_s < 1, (1 - p_t) / (1 - p_s), 1.0)
            log_keep = ((n - r - 1) * np.log(ratio) if n - r - 1 > 0
                        else np.zeros_like(ratio))
        keep = np.exp(np.minimum(log_keep, 0))
        rounding = 2.0 ** -50 * (1 + np.abs(np.where(np.isfinite(log_keep),
                                                     log_keep, 0.0)))
        value = value * keep
        return value, error + value * np.expm1(rounding) + 2 * _ULP
    (start_a, w_a, err_a), (start_b, w_b, err_b) = (
        _thinned(c.values, c.draws, xs, xt, replace) for c in parts)
    i = start_a[:, None] + np.arange(w_a.shape[1])[None, :]
    at = r + 1 - i - start_b[:, None]
    inside_window = (at >= 0) & (at < w_b.shape[1])
    other = np.where(inside_window, np.take_along_axis(
        w_b, np.clip(at, 0, w_b.shape[1] - 1), axis=1), 0.0)
    value = (w_a * other).sum(axis=1)
    cells = w_a.shape[1] + w_b.shape[1]
    return value, err_a + err_b + 2 * cells * _ULP


def _kth_of_two(x: float, copies: int, y: float, n: int, r: int) -> float:
    """Return the r-th smallest (from 0) of ``copies`` x's and ``n - copies`` y's."""
    if x <= y:
        return float(x if r < copies else y)
    return float(y if r < n - copies else x)


def _span(parts, mixed) -> int:
    """Bound the window width of the counts' pmfs, for chunking."""
    if mixed is not None:
        _, n = mixed
        return int(_WIDTH * math.sqrt(n / 4)) + 17
    return sum(int(_WIDTH * math.sqrt(c.draws / 4)) + 17 for c in parts)


@dataclass(frozen=True)
class _Table:
    """Running maxima of computed cdfs that bound a quantile function.

    ``f_low`` is the cdf of a law stochastically below the statistic's and
    ``f_high`` of one above it: the two order statistics that bracket a
    quantile, or the statistic's own law twice when it is known exactly.
    With |computed - true| <= eta at every value, the true quantile Q(u) is
    at least the first value where ``f_low`` reaches u - eta (below it, that
    true cdf is under u), and at most the first value where ``f_high``
    reaches u + eta (there, that true cdf is at least u). A running maximum
    finds the same first values.
    """

    values: np.ndarray
    f_low: np.ndarray
    f_high: np.ndarray
    eta: float
    least: float
    most: float
    first: bool

    def lower(self, u: np.ndarray) -> np.ndarray:
        """Return a lower bound on Q(u), for u in the table's range."""
        at = np.searchsorted(self.f_low, np.asarray(u) - self.eta, side="left")
        found = self.values[np.minimum(at, self.values.size - 1)]
        # At the window's first value, nothing is known of the values below
        # it unless it is the least of all.
        known = (at > 0) | self.first
        return np.maximum(self.least, np.where(known, found, self.least))

    def upper(self, u: np.ndarray) -> np.ndarray:
        """Return an upper bound on Q(u), for u in the table's range."""
        u = np.asarray(u)
        at = np.searchsorted(self.f_high, u + self.eta, side="left")
        found = self.values[np.minimum(at, self.values.size - 1)]
        return np.minimum(self.most, np.where(at < self.values.size, found,
                                              self.most))

    def breaks(self) -> np.ndarray:
        """Return the levels u at which :meth:`lower` or :meth:`upper` may jump."""
        return np.concatenate([self.f_low + self.eta, self.f_high - self.eta])


def coupling_gap(table_a: _Table, table_b: _Table, low: float,
                 high: float) -> float:
    """Bound sup |Q_a(u) - Q_b(u)| over u in [low, high], from two tables.

    The bounds are step functions of u, constant between their jumps: they
    are compared at every jump in [low, high] and midway between neighbours,
    so the supremum of the bracketed gap is found exactly.
    """
    u = np.concatenate([[low, high], table_a.breaks(), table_b.breaks()])
    u = np.unique(np.clip(u, low, high))
    u = np.concatenate([u, (u[:-1] + u[1:]) / 2])
    gap = np.maximum(table_a.upper(u) - table_b.lower(u),
                     table_b.upper(u) - table_a.lower(u))
    return float(gap.max())
