"""The worst-case W_inf distance between count laws: over a finite Theta or a box.

The Wasserstein sensitivity of the count queries of :mod:`skattr.laws._counts`,
whose laws and secrets that module describes (Zhang et al., Sec. 6).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from itertools import accumulate, product

import numpy as np
from scipy import special

from skattr._persistence import persistable
from skattr.exceptions import InvalidParameterError
from skattr.laws._counts import (
    _as_probabilities,
    _as_shares,
    _check_count,
    _check_privacy,
    _count_log_pmfs,
    _record_counts,
)
from skattr.laws._lattice import _CHUNK, _least_shift, _log_tails

__all__ = ["BoxSensitivity", "count_sensitivity", "count_sensitivity_box"]

# Every corner of a box of at most this many dimensions is evaluated exactly.
_MAX_CORNER_DIMS = 10
# Cells are not split below this width: thetas are not known more precisely,
# and bounds that have not settled by then will not (see the Notes of
# count_sensitivity_box).
_MIN_WIDTH = 1e-12


def count_sensitivity(pairs: Iterable, n: int, thetas, *,
                      privacy: str = "dataset") -> float:
    """Wasserstein sensitivity W of a count query (Algorithm 4 of Zhang et al.).

    W = max over secret pairs (a, b) and theta of W_inf(mu_{a, theta},
    mu_{b, theta}), the scale (over epsilon) of the Laplace noise the
    Wasserstein Mechanism adds, with the laws from :func:`count_pmf`.

    Parameters
    ----------
    pairs : iterable of (a, b)
        The discriminative pairs of secrets Q, each secret as ``count_pmf``'s
        ``a``.
    n : int
        Number of records.
    thetas : array-like of shape (m, k)
        The distributions theta in Theta, each a vector ``p`` as in
        ``count_pmf``. A continuous Theta must be given as a grid.
    privacy : {"dataset", "distributional"}, default="dataset"
        Which attribute privacy the secrets belong to.

    Returns
    -------
    float
        The worst case W (a whole number: the laws live on the integers).

    See Also
    --------
    count_sensitivity_box : the supremum over a box of thetas, certified.

    Notes
    -----
    Pairs whose secret has zero probability under theta are not excluded (the
    ``P(s_i | theta) != 0`` condition of Algorithm 4): in this model every share
    a has positive probability once X2's law puts mass on each category. Over a
    continuous Theta the result is the maximum over the grid given, which is a
    lower bound on the supremum: use :func:`count_sensitivity_box` for a box.
    Each theta's value is computed on log tails (exact for masses of any size)
    and rounded up when two probabilities tie within rounding.

    Examples
    --------
    Example 2 of Zhang et al.: p1, p2 in [0.4, 0.6], four records, all pairs of
    counts of X2 = 1.

    >>> from itertools import combinations, product
    >>> from skattr.laws._count_sensitivity import count_sensitivity
    >>> shares = [0, 0.25, 0.5, 0.75, 1]
    >>> thetas = list(product([0.4, 0.5, 0.6], repeat=2))
    >>> count_sensitivity(combinations(shares, 2), 4, thetas)
    1.0
    """
    _check_privacy(privacy)
    thetas = np.atleast_2d(np.asarray(thetas, dtype=float))
    pairs = list(pairs)
    if not pairs or thetas.size == 0:
        raise InvalidParameterError(
            "count_sensitivity needs at least one pair of secrets and one theta; "
            f"got {len(pairs)} pairs and {thetas.shape[0]} thetas."
        )
    # Each theta is a one-point box: the log-space criterion keeps tails of
    # any size (a float CDF would merge masses below 1e-12 and could report
    # less than the true distance), and rounds toward more noise.
    return max(count_sensitivity_box(pairs, n, p, p, privacy=privacy).upper
               for p in thetas)


@persistable
@dataclass(frozen=True)
class BoxSensitivity:
    """Certified bounds on the Wasserstein sensitivity over a box of thetas.

    What :func:`count_sensitivity_box` returns.

    Attributes
    ----------
    upper : float
        An upper bound on the supremum over the box of the worst-case W_inf:
        the sensitivity a mechanism must use.
    lower : float
        The worst-case W_inf at ``worst_p``, so a value the supremum reaches.
    worst_p : tuple of float
        A theta in the box at which the worst-case W_inf is ``lower``.
    n_cells : int
        Number of sub-boxes whose bound was computed.
    """

    upper: float
    lower: float
    worst_p: tuple
    n_cells: int

    @property
    def exact(self) -> bool:
        """Whether the bounds meet, so that ``upper`` is the supremum itself."""
        return self.upper == self.lower


def _pair_shift(upper_tails: tuple, lower_tails: tuple, rows: np.ndarray,
                pairs: np.ndarray, *, certain: bool) -> np.ndarray:
    """Apply the W_inf criterion to pairs of secrets, each at one row of the tails.

    The tails (from :func:`_log_tails`) have shape (m, s, n + 1) (thetas,
    secrets, t); pair i is ``pairs[i]`` (two secret indices) at theta
    ``rows[i]``. It gets the larger of the least shifts of a against b and of b
    against a, with mu's tails from ``upper_tails`` and nu's from
    ``lower_tails``.
    """
    shifts = np.zeros(rows.size, dtype=np.intp)
    step = max(1, _CHUNK // (4 * upper_tails[0].shape[-1]))
    for start in range(0, rows.size, step):
        at, (a, b) = rows[start:start + step], pairs[start:start + step].T
        upper_a = tuple(tail[at, a] for tail in upper_tails)
        upper_b = tuple(tail[at, b] for tail in upper_tails)
        lower_a = tuple(tail[at, a] for tail in lower_tails)
        lower_b = tuple(tail[at, b] for tail in lower_tails)
        shifts[start:start + step] = np.maximum(
            _least_shift(upper_a, lower_b, certain=certain),
            _least_shift(upper_b, lower_a, certain=certain))
    return shifts


def _halve(lows: np.ndarray, highs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split cells in two along their widest side in log-odds, left halves first.

    Along p_c a log-probability of F moves by at most n abs(d logit(p_c)) (each
    record's log-odds of being counted moves by at most that), so near 0 or 1
    a short side can matter most. Sides narrower than ``_MIN_WIDTH`` are kept.
    """
    wide = highs - lows > _MIN_WIDTH
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = np.where(wide, special.logit(highs) - special.logit(lows), -1.0)
    rows, side = np.arange(lows.shape[0]), np.argmax(odds, axis=1)
    middle = (lows[rows, side] + highs[rows, side]) / 2
    left_highs, right_lows = highs.copy(), lows.copy()
    left_highs[rows, side] = middle
    right_lows[rows, side] = middle
    return np.vstack((lows, right_lows)), np.vstack((left_highs, highs))


def _box_corners(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Distinct corners of the box, or its two extreme ones in high dimension."""
    if low.size > _MAX_CORNER_DIMS:
        return np.unique(np.stack((low, high)), axis=0)
    return np.unique(np.array(list(product(*zip(low, high, strict=True)))), axis=0)


def _exact_shift(shares_a, shares_b, n: int, p, privacy: str) -> int:
    """W_inf between the count laws of two secrets at p, in rational arithmetic.

    The slow, exact referee for pairs that floating point cannot decide. The
    float inputs are exact binary fractions, so the result is the exact
    distance for the values given.
    """
    probs = [Fraction(float(x)) for x in p]

    def binomial(size, q):
        return [math.comb(size, k) * q**k * (1 - q) ** (size - k)
                for k in range(size + 1)]

    def cdf(shares):
        if privacy == "distributional":
            q = sum(Fraction(float(x)) * pc for x, pc in zip(shares, probs,
                                                            strict=True))
            pmf = binomial(n, q)
        else:
            pmf = [Fraction(1)]
            for size, q in zip(_record_counts(np.asarray([shares]), n)[0], probs,
                               strict=True):
                part = binomial(int(size), q)
                pmf = [sum(pmf[j] * part[t - j]
                           for j in range(max(0, t - len(part) + 1),
                                          min(t, len(pmf) - 1) + 1))
                       for t in range(len(pmf) + len(part) - 1)]
        return list(accumulate(pmf))

    def least(mu, nu):
        # Least w with F_mu(t) >= F_nu(t - w) for every t (F_nu = 0 below 0).
        return next(w for w in range(n + 1)
                    if all(mu[t] >= nu[t - w] for t in range(w, n + 1)))

    mu, nu = cdf(shares_a), cdf(shares_b)
    return max(least(mu, nu), least(nu, mu))


def count_sensitivity_box(pairs: Iterable, n: int, low, high, *,
                          privacy: str = "dataset",
                          max_cells: int = 20_000) -> BoxSensitivity:
    """Certified Wasserstein sensitivity of a count query over a box of thetas.

    Zhang et al. [1]_, Sec. 6, Examples 2 and 3, with a continuous Theta: the
    supremum over every p in the box ``low <= p <= high`` of the worst case, over
    the pairs of secrets, of W_inf(mu_{a, p}, mu_{b, p}), the scale of the
    Wasserstein Mechanism's noise (Algorithm 4). Unlike a grid given to
    :func:`count_sensitivity`, the result accounts for the points between grid
    nodes: ``upper`` is never below the supremum.

    Parameters
    ----------
    pairs : iterable of (a, b)
        The discriminative pairs of secrets Q, each secret as ``count_pmf``'s
        ``a``.
    n : int
        Number of records.
    low, high : array-like of shape (k,)
        Corners of the box Theta: ``p[c] = P(counted | X2 = c)`` ranges over
        ``[low[c], high[c]]``. Equal entries fix a coordinate; ``low == high``
        is a single theta.
    privacy : {"dataset", "distributional"}, default="dataset"
        Which attribute privacy the secrets belong to.
    max_cells : int, default=20_000
        Most sub-boxes to bound. When the budget runs out, ``upper`` is the
        largest bound of the sub-boxes left, still an upper bound.

    Returns
    -------
    BoxSensitivity
        ``upper`` (what a mechanism uses), ``lower``, the theta ``worst_p``
        reaching it, ``n_cells`` and ``exact`` (the bounds meet).

    See Also
    --------
    count_sensitivity : the maximum over a finite Theta.

    Notes
    -----
    *Monotonicity.* Given a secret, F is a sum of independent Bernoulli
    variables whose success probabilities are nondecreasing in each p_c:
    record j has p[X2^j] (dataset privacy, X2 fixed by the secret) or phi . p
    with phi >= 0 (distributional privacy). Coupling each record with one
    uniform variable U_j (counted iff U_j < its probability) shows F grows
    pointwise with p, so F(t; p) = P(F <= t | p) is nonincreasing in each p_c,
    and over a cell [l, u], F(t; u) <= F(t; p) <= F(t; l).

    *Criterion.* For laws on the integers with CDFs F_mu, F_nu and quantiles
    Q(v) = min{x : F(x) >= v}, W_inf = sup_v abs(Q_mu(v) - Q_nu(v)) (the monotone
    coupling is optimal). For an integer w >= 0, Q_mu(v) >= Q_nu(v) + w + 1
    for some v iff F_mu(x + w) < v <= F_nu(x) for some x and v, so

        W_inf > w  iff  F_mu(t) < F_nu(t - w) or F_nu(t) < F_mu(t - w), some t.

    (Not "W_inf >= w": two point masses one apart have W_inf = 1, yet
    F_mu(t) < F_nu(t - 1) holds at no t.) W_inf is an integer, hence the least
    w for which neither inequality holds.

    *Cell bound.* If W_inf > w at some p of [l, u], then for some t,
    F_mu(t; u) <= F_mu(t; p) < F_nu(t - w; p) <= F_nu(t - w; l) (or the same
    with mu and nu swapped), and likewise, reversed, for the upper tails
    P(F > t). The least w for which this fails at every t bounds W_inf over
    the cell.

    *Rounding.* Both tails, P(F <= t) and P(F > t), are compared through
    their logarithms, each a sum of probabilities computed from log-gamma
    terms, so each keeps its relative accuracy however small it is. (An
    absolute tolerance such as 1e-12 makes all tails below it look tied,
    while W_inf sees mass of any size: in one box with n = 100 it left the
    bound at 35 against a supremum of 25.) Over a cell, an inequality counts
    unless a tail rules it out by more than a relative 1e-12 (1 + n log(n + 2)
    + abs(log probability)), far above the rounding error of these sums, so
    rounding can only raise the bound. At a single theta it counts only if a
    tail proves it by that margin, so values there are never above the
    truth; closer tails are ties (equal laws are at distance 0), and a box
    reduced to a point returns that value. :func:`count_sensitivity` compares
    CDFs to an absolute 1e-12 and can fall below W_inf when laws differ only
    in smaller tails (n = 8, p = (1e-9, 1e-3), secrets 0 and 1: 3, where the
    exact value is 6).

    *Search.* ``lower`` is the largest W_inf at an evaluated theta: the box's
    corners (all of them for k <= 10; the paper's worst cases lie at
    corners), then the centre of every cell. Each cell keeps the pairs whose
    bound exceeds ``lower``; a pair cannot do worse in a sub-cell, whose
    bound is also capped by its parent's. The cells with the largest bound
    are split in two along their widest side in log-odds: the log of a tail
    moves by at most n abs(d logit(p_c)) along p_c, so near 0 or 1 a short side
    can matter most. When no bound exceeds ``lower`` the supremum is
    ``lower`` (W_inf is an integer) and the result is exact; otherwise
    ``upper`` is the largest bound left when ``max_cells`` is spent or only
    cells narrower than 1e-12 hold it.

    *When it is not exact.* W_inf is lower semicontinuous in p (``W_inf > w``
    is a strict inequality between continuous functions), so it exceeds any
    value below its supremum on an open set, which cell centres find. Bounds
    stay high where the corners of small cells never become alike: on a face
    of the box where some p_c is 0 or 1, a tail of a law vanishes identically
    but not just inside, so a cell touching the face compares a zero tail
    with a positive one however thin it is; the same holds at a theta where
    every law is one point mass (p = 0 or 1 with distributional privacy).
    ``upper`` then stays above the supremum (at most n) and the search
    spends ``max_cells``.

    References
    ----------
    .. [1] W. Zhang, O. Ohrimenko and R. Cummings. "Attribute Privacy:
       Framework and Mechanisms." ACM FAccT 2022; long version, Section 6,
       Examples 2 and 3.

    Examples
    --------
    Example 2 of Zhang et al.: p1, p2 anywhere in [0.4, 0.6], four records, all
    pairs of counts of X2 = 1.

    >>> from itertools import combinations
    >>> from skattr.laws._count_sensitivity import count_sensitivity_box
    >>> shares = [0, 0.25, 0.5, 0.75, 1]
    >>> result = count_sensitivity_box(combinations(shares, 2), 4, (0.4, 0.4),
    ...                                (0.6, 0.6))
    >>> result.upper, result.exact
    (1.0, True)
    """
    caller = "count_sensitivity_box"
    _check_privacy(privacy, caller)
    _check_count(n, "n", caller, 0)
    _check_count(max_cells, "max_cells", caller, 1)
    low = _as_probabilities(low, "low", caller)
    high = _as_probabilities(high, "high", caller)
    if low.shape != high.shape or not np.all(low <= high):
        raise InvalidParameterError(
            f"The 'low' and 'high' parameters of {caller} must be corners of a "
            f"box: the same length and low <= high in every entry. Got "
            f"low={low.tolist()} and high={high.tolist()} instead."
        )
    secrets, index = {}, []
    for pair in pairs:
        pair = list(pair) if isinstance(pair, Iterable) else [pair]
        if len(pair) != 2:
            raise InvalidParameterError(
                f"The 'pairs' parameter of {caller} must hold pairs (a, b) of "
                f"secrets. Got {pair!r} instead."
            )
        ends = []
        for a in pair:
            shares = _as_shares(a, low.size)
            if privacy == "dataset":
                _record_counts(shares, n)
            ends.append(secrets.setdefault(tuple(shares.tolist()), len(secrets)))
        index.append(ends)
    if not index:
        raise InvalidParameterError(
            f"{caller} needs at least one pair of secrets; got none.")
    # A secret against itself is at distance 0 at every theta.
    index = np.array([ends for ends in index if ends[0] != ends[1]],
                     dtype=np.intp).reshape(-1, 2)
    secrets = np.array(list(secrets))

    def tails(points):
        return _log_tails(_count_log_pmfs(secrets, n, points, privacy))

    # The paper's worst cases lie at corners.
    points = np.vstack((_box_corners(low, high), (low + high) / 2))
    at_points = tails(points)
    values = _pair_shift(at_points, at_points,
                         np.repeat(np.arange(len(points)), len(index)),
                         np.tile(index, (len(points), 1)), certain=True)
    values = values.reshape(len(points), -1).max(axis=1, initial=0)
    lower, worst_p = values.max(), points[values.argmax()]
    if n == 0 or not np.any(low < high):
        # One theta. Where rounding leaves a pair's value undecided (two
        # probabilities tie, e.g. equal laws), exact rational arithmetic
        # decides it, so the value is exact.
        rows = np.zeros(len(index), dtype=np.intp)
        sure = _pair_shift(at_points, at_points, rows, index, certain=True)
        bound = _pair_shift(at_points, at_points, rows, index, certain=False)
        for i in np.flatnonzero(bound > sure):
            sure[i] = _exact_shift(secrets[index[i, 0]], secrets[index[i, 1]],
                                   n, low, privacy)
        value = float(sure.max(initial=0))
        return BoxSensitivity(upper=value, lower=value,
                              worst_p=tuple(low.tolist()), n_cells=1)
    # The search keeps (cell, pair) items whose bound may exceed lower: a pair
    # cannot do worse in a sub-cell than in its cell.
    lows, highs = low[None], high[None]
    owner = np.zeros(len(index), dtype=np.intp)
    bounds = _pair_shift(tails(highs), tails(lows), owner, index, certain=False)
    n_cells = 1
    while True:
        keep = bounds > lower
        owner, index, bounds = owner[keep], index[keep], bounds[keep]
        budget = (max_cells - n_cells) // 2
        if not bounds.size or not budget:
            break
        cells, owner = np.unique(owner, return_inverse=True)
        lows, highs = lows[cells], highs[cells]
        cell_bounds = np.zeros(cells.size, dtype=np.intp)
        np.maximum.at(cell_bounds, owner, bounds)
        # Split the cells whose bound is the largest, which is ``upper`` if
        # the search stopped now; when only cells too narrow to split hold
        # it, it is final.
        wide = highs - lows > _MIN_WIDTH
        split = np.flatnonzero(wide.any(axis=1)
                               & (cell_bounds == cell_bounds.max()))[:budget]
        h = split.size
        if not h:
            break
        # Children come first (left halves, then right ones), then the rest.
        slot = np.full(cells.size, -1)
        slot[split] = np.arange(h)
        rest = np.flatnonzero(slot < 0)
        slot[rest] = 2 * h + np.arange(rest.size)
        child_lows, child_highs = _halve(lows[split], highs[split])
        lows = np.vstack((child_lows, lows[rest]))
        highs = np.vstack((child_highs, highs[rest]))
        moved = slot[owner] < h
        child = np.concatenate((slot[owner[moved]], slot[owner[moved]] + h))
        child_pairs = np.tile(index[moved], (2, 1))
        child_bounds = np.minimum(
            _pair_shift(tails(child_highs), tails(child_lows), child,
                        child_pairs, certain=False),
            np.tile(bounds[moved], 2))
        centres = (child_lows + child_highs) / 2
        at_centres = tails(centres)
        values = _pair_shift(at_centres, at_centres, child, child_pairs,
                             certain=True)
        if values.max() > lower:
            lower, worst_p = values.max(), centres[child[values.argmax()]]
        n_cells += 2 * h
        owner = np.concatenate((child, slot[owner[~moved]]))
        index = np.concatenate((child_pairs, index[~moved]))
        bounds = np.concatenate((child_bounds, bounds[~moved]))
    upper = max(lower, bounds.max(initial=0))
    return BoxSensitivity(upper=float(upper), lower=float(lower),
                          worst_p=tuple(worst_p.tolist()), n_cells=n_cells)
