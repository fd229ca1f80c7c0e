"""Exact infinity-Wasserstein distance and (W, delta)-closeness of discrete laws."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow
from scipy.spatial.distance import cdist

from skattr.exceptions import DataValidationError, InvalidParameterError

__all__ = ["w_infinity", "wd_closeness", "approximate_wasserstein_bound"]

# How far given weights may sum from 1. Floating-point pmfs (scipy.stats, a
# normalised histogram) are off by ~1e-15; anything beyond this is a mistake.
_WEIGHT_SUM_TOLERANCE = 1e-9

# Cumulative masses of given (float) weights closer than this are one breakpoint:
# it keeps rounding in a cumulative sum (0.1 + 0.2 != 0.3) from creating a
# spurious quantile interval. Samples use integer masses and no tolerance.
_MASS_RESOLUTION = 1e-12

# Mass a linear program may fall short of its target and still count as feasible;
# HiGHS runs with feasibility tolerances two orders of magnitude tighter.
_LP_MASS_TOLERANCE = 1e-9


class _Measure:
    """A discrete law: points (m, k) or (m,), and their masses out of ``total``.

    Masses are integers when the law is an empirical one (no weights given), so
    every comparison of mass is exact; otherwise they are floats summing to 1.
    """

    def __init__(self, points, mass, total):
        self.points = points
        self.mass = mass
        self.total = total

    @property
    def exact(self):
        return np.issubdtype(self.mass.dtype, np.integer)


def _as_points(x, name):
    try:
        points = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(
            f"{name} must be a numeric array of points; got {type(x).__name__} "
            f"that cannot be converted to float ({exc})."
        ) from exc
    if points.ndim not in (1, 2):
        raise DataValidationError(
            f"{name} must be a 1-d array (points on the line) or a 2-d array of "
            f"shape (m, k) (m points in R^k); got an array with {points.ndim} "
            "dimensions."
        )
    if points.shape[0] == 0 or points.size == 0:
        raise DataValidationError(
            f"{name} is empty; a distribution needs at least one support point."
        )
    if not np.all(np.isfinite(points)):
        raise DataValidationError(
            f"{name} contains NaN or infinite values; drop or impute them first."
        )
    return points


def _as_weights(weights, m, name):
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"The '{name}' parameter must be a 1-d array of probabilities; it "
            f"cannot be converted to float ({exc})."
        ) from exc
    if w.ndim != 1 or w.shape[0] != m:
        raise InvalidParameterError(
            f"The '{name}' parameter must be a 1-d array with one weight per "
            f"point ({m}); got shape {w.shape} instead."
        )
    if not np.all(np.isfinite(w)):
        raise InvalidParameterError(
            f"The '{name}' parameter contains NaN or infinite values."
        )
    if np.any(w < 0):
        raise InvalidParameterError(
            f"The '{name}' parameter must be non-negative; got minimum "
            f"{w.min()!r} instead."
        )
    total = math.fsum(w)
    if abs(total - 1.0) > _WEIGHT_SUM_TOLERANCE:
        raise InvalidParameterError(
            f"The '{name}' parameter must sum to 1 (within "
            f"{_WEIGHT_SUM_TOLERANCE:g}); got a sum of {total!r} instead. Divide "
            "the weights by their sum if they are unnormalised."
        )
    return w / total


def _measures(a, b, a_weights, b_weights):
    """Validate both laws; masses are integers when both are samples."""
    pa, pb = _as_points(a, "a"), _as_points(b, "b")
    if pa.ndim != pb.ndim:
        raise DataValidationError(
            "a and b must both be 1-d (points on the line) or both 2-d (points in "
            f"R^k); got {pa.ndim}-d and {pb.ndim}-d arrays."
        )
    if pa.ndim == 2 and pa.shape[1] != pb.shape[1]:
        raise DataValidationError(
            f"a has points in R^{pa.shape[1]} but b has points in R^{pb.shape[1]};"
            " both must live in the same space."
        )
    m, n = pa.shape[0], pb.shape[0]
    if a_weights is None and b_weights is None:
        # A common denominator lcm(m, n): a point of a carries n/g of it.
        g = math.gcd(m, n)
        total = m * n // g
        return (_Measure(pa, np.full(m, n // g, dtype=np.int64), total),
                _Measure(pb, np.full(n, m // g, dtype=np.int64), total))
    wa = np.full(m, 1.0 / m) if a_weights is None else _as_weights(
        a_weights, m, "a_weights")
    wb = np.full(n, 1.0 / n) if b_weights is None else _as_weights(
        b_weights, n, "b_weights")
    # Points of zero mass are not in the support and must not count.
    ka, kb = wa > 0, wb > 0
    return _Measure(pa[ka], wa[ka], 1.0), _Measure(pb[kb], wb[kb], 1.0)


def _check_delta(delta):
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.number)):
        raise InvalidParameterError(
            "The 'delta' parameter of wd_closeness must be a float in [0, 1]; got "
            f"{delta!r} instead."
        )
    if not (0.0 <= float(delta) <= 1.0):
        raise InvalidParameterError(
            "The 'delta' parameter of wd_closeness must be a float in [0, 1]; got "
            f"{delta!r} instead."
        )
    return float(delta)


def _sorted_unique(values):
    """``np.unique`` of a 1-d array, through a stable sort.

    The stable sort finds pre-sorted runs (two merged CDFs are two runs), where
    ``np.unique`` can be two orders of magnitude slower.
    """
    values = np.sort(values, kind="stable")
    keep = np.empty(values.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


# --------------------------------------------------------------------------- 1-D


def _quantile_distance(ma, mb):
    """sup_t |F_a^-1(t) - F_b^-1(t)| over t in (0, 1], for laws on the line.

    Both generalised inverses F^-1(t) = inf{x : F(x) >= t} are left-continuous
    step functions, constant on (C_{i-1}, C_i] where C is a law's cumulative
    mass. Between consecutive breakpoints of the merged set both are constant,
    so the supremum is a maximum over those intervals.
    """
    if ma.exact:
        # Empirical laws: only the sorted values matter, and the cumulative
        # masses are integers, so ties between the two CDFs are exact.
        xa, xb = np.sort(ma.points), np.sort(mb.points)
        if xa.shape[0] == xb.shape[0]:
            return float(np.max(np.abs(xa - xb)))
        # Point i of a closes the interval ending at (i + 1) p, so the first
        # breakpoint of a at or after r is point ceil(r / p) - 1.
        p, q = int(ma.mass[0]), int(mb.mass[0])
        right = _sorted_unique(np.concatenate((
            np.arange(1, xa.shape[0] + 1, dtype=np.int64) * p,
            np.arange(1, xb.shape[0] + 1, dtype=np.int64) * q)))
        ia = (right + (p - 1)) // p - 1
        ib = (right + (q - 1)) // q - 1
        return float(np.max(np.abs(xa[ia] - xb[ib])))
    # Tied points have the same value, so their order does not matter.
    oa, ob = np.argsort(ma.points), np.argsort(mb.points)
    xa, xb = ma.points[oa], mb.points[ob]
    ca, cb = np.cumsum(ma.mass[oa]), np.cumsum(mb.mass[ob])
    ca /= ca[-1]
    cb /= cb[-1]
    # Cluster the merged breakpoints (with 0) at the mass resolution; each
    # cluster after the one holding 0 closes an interval of positive mass.
    merged = np.sort(np.concatenate(([0.0], ca, cb)), kind="stable")
    starts = np.flatnonzero(np.diff(merged) > _MASS_RESOLUTION) + 1
    lows = merged[starts]
    ia = np.minimum(np.searchsorted(ca, lows, side="left"), xa.shape[0] - 1)
    ib = np.minimum(np.searchsorted(cb, lows, side="left"), xb.shape[0] - 1)
    return float(np.max(np.abs(xa[ia] - xb[ib])))


def _line_transport(xs, ma, ys, mb, threshold):
    """Most mass movable between two sorted laws on the line by steps <= threshold.

    Point x's partners form a window of ys whose two ends only move right as x
    does, so serving each x, in order, from the leftmost partner that still has
    mass is optimal: a leftmost partner is reachable by fewer later points than
    any partner to its right.
    """
    remaining = ma.tolist()
    capacity = mb.tolist()
    xs_, ys_ = xs.tolist(), ys.tolist()
    n = len(ys_)
    moved = 0
    j = 0
    for x, rem in zip(xs_, remaining, strict=True):
        while j < n and (capacity[j] <= 0 or (ys_[j] < x and x - ys_[j] > threshold)):
            j += 1
        while rem > 0 and j < n and (ys_[j] <= x or ys_[j] - x <= threshold):
            if capacity[j] <= rem:
                rem -= capacity[j]
                moved += capacity[j]
                capacity[j] = 0
                j += 1
            else:
                capacity[j] -= rem
                moved += rem
                rem = 0
    return moved


# ---------------------------------------------------------------------- R^k flows


def _matching_size(within):
    """Size of a maximum matching in a bipartite graph given as a CSR matrix."""
    match = maximum_bipartite_matching(within, perm_type="column")
    return int(np.count_nonzero(match >= 0))


def _within_graphs(distances):
    """Return a function mapping t to the CSR graph of the pairs within t.

    Sorting each row once makes every graph a prefix of each row, which is
    cheaper than building a sparse matrix from a dense mask at each threshold.
    """
    m, n = distances.shape
    order = np.argsort(distances, axis=1, kind="stable")
    row_sorted = np.take_along_axis(distances, order, axis=1)
    order = order.astype(np.int32)

    def graph(t):
        keep = row_sorted <= t
        indptr = np.zeros(m + 1, dtype=np.int32)
        np.cumsum(keep.sum(axis=1), out=indptr[1:])
        indices = order[keep]
        within = csr_matrix((np.ones(indices.shape[0], dtype=bool), indices,
                             indptr), shape=(m, n))
        # Hopcroft-Karp visits neighbours in stored order; distance order makes
        # its augmenting searches markedly slower near the critical threshold.
        within.sort_indices()
        return within

    return graph


def _integer_flow(within, ma, mb):
    """Maximum flow from a's integer masses to b's along the ``within`` pairs."""
    m, n = within.shape
    rows, cols = np.nonzero(within)
    sink = m + n + 1
    cap_edge = int(min(ma.max(), mb.max()))
    src = np.concatenate((np.zeros(m, dtype=np.int64), rows + 1,
                          np.arange(m + 1, m + n + 1)))
    dst = np.concatenate((np.arange(1, m + 1), cols + m + 1,
                          np.full(n, sink, dtype=np.int64)))
    cap = np.concatenate((ma, np.full(rows.shape[0], cap_edge, dtype=np.int64), mb))
    graph = csr_matrix(coo_matrix((cap.astype(np.int32), (src, dst)),
                                  shape=(sink + 1, sink + 1)))
    return int(maximum_flow(graph, 0, sink).flow_value)


def _lp_transport(within, wa, wb):
    """Most probability mass movable along the ``within`` pairs (HiGHS LP)."""
    rows, cols = np.nonzero(within)
    if rows.shape[0] == 0:
        return 0.0
    m, n = within.shape
    e = rows.shape[0]
    edge = np.arange(e)
    a_ub = coo_matrix(
        (np.ones(2 * e), (np.concatenate((rows, m + cols)),
                          np.concatenate((edge, edge)))),
        shape=(m + n, e)).tocsr()
    res = linprog(-np.ones(e), A_ub=a_ub, b_ub=np.concatenate((wa, wb)),
                  bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10,
                           "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:  # pragma: no cover - a bounded feasible LP
        raise RuntimeError(f"linprog failed on a transport problem: {res.message}")
    return -float(res.fun)


def _least_threshold(candidates, feasible):
    """Smallest candidate (sorted ascending) for which ``feasible`` holds."""
    lo, hi = 0, candidates.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(candidates[mid]):
            hi = mid
        else:
            lo = mid + 1
    return float(candidates[lo])


def _least_threshold_moving(ma, mb, keep):
    """Least W such that mass ``keep`` (of 1) moves by steps of L1 length <= W.

    ``keep`` is a Fraction, so the target is exact for integer masses. The
    answer is one of the pairwise distances; a binary search finds it.
    """
    if ma.exact:
        need = math.ceil(keep * ma.total)
    else:
        need = float(keep) - _LP_MASS_TOLERANCE

    if ma.points.ndim == 1:
        xa_order, xb_order = np.argsort(ma.points), np.argsort(mb.points)
        xs, ys = ma.points[xa_order], mb.points[xb_order]
        wa, wb = ma.mass[xa_order], mb.mass[xb_order]
        candidates = _sorted_unique(np.abs(xs[:, None] - ys[None, :]).ravel())

        def feasible(t):
            return _line_transport(xs, wa, ys, wb, t) >= need

        return _least_threshold(candidates, feasible)

    distances = cdist(ma.points, mb.points, "cityblock")
    candidates = distances.ravel()
    if keep == 1:
        # Every point must send (or receive) all its mass somewhere, so W_inf
        # is at least the largest nearest-neighbour distance of either law.
        lower = max(distances.min(axis=1).max(), distances.min(axis=0).max())
        candidates = candidates[candidates >= lower]
    candidates = _sorted_unique(candidates)
    m, n = distances.shape
    if ma.exact and m == n:
        # Equal-size samples: every point carries one unit, a matching suffices.
        graph = _within_graphs(distances)

        def feasible(t):
            return _matching_size(graph(t)) >= need
    elif ma.exact:

        def feasible(t):
            return _integer_flow(distances <= t, ma.mass, mb.mass) >= need
    else:

        def feasible(t):
            return _lp_transport(distances <= t, ma.mass, mb.mass) >= need

    return _least_threshold(candidates, feasible)


# ------------------------------------------------------------------------ public


def w_infinity(a, b, a_weights=None, b_weights=None) -> float:
    """Exact infinity-Wasserstein distance between two discrete distributions.

    ``W_inf(mu, nu) = inf over couplings gamma of max_{(x, y) in supp(gamma)}
    ||x - y||_1`` (Chen & Ohrimenko [1]_ Def 3.1; Zhang et al. [2]_ Def 9 on the
    line): the least distance that every unit of mass must be allowed to travel
    to turn ``mu`` into ``nu``.

    Parameters
    ----------
    a, b : array-like of shape (m,) or (m, k)
        Support points of the two distributions: on the line (1-d arrays) or in
        R^k with the L1 ground metric (2-d arrays with the same k).
    a_weights, b_weights : array-like of shape (m,), default=None
        Probabilities of the points; ``None`` means each point carries equal mass
        (``a`` is a sample). Weights must be non-negative and sum to 1 within
        1e-9; points of weight zero are not in the support.

    Returns
    -------
    float
        The distance.

    Raises
    ------
    DataValidationError
        Empty arrays, NaN or infinite points, or ``a`` and ``b`` in different
        spaces.
    InvalidParameterError
        Weights of the wrong shape, negative, non-finite, or not summing to 1.

    See Also
    --------
    wd_closeness : the same with a mass ``delta`` allowed to be disregarded.

    Notes
    -----
    On the line, ``W_inf = sup_t |F_a^-1(t) - F_b^-1(t)|`` (the monotone coupling
    is optimal), computed by sorting and merging the breakpoints of both CDFs in
    O(m log m). For equal-size samples this is ``max |sort(a) - sort(b)|``.

    In R^k, the distance is the least pairwise distance t such that all the mass
    can be moved along pairs at distance <= t. The candidates for t are the
    pairwise distances (at least the largest nearest-neighbour distance), and a
    binary search tests each one by a maximum bipartite matching (equal-size
    samples: a bottleneck matching), an integer maximum flow (samples of
    different sizes, whose masses are integers over lcm(m, n)) or a linear
    program (given weights). Memory is O(m n).

    Samples are handled exactly. With given float weights the line is exact up
    to a cumulative-mass resolution of 1e-12 (which absorbs floating-point
    rounding of the CDFs), and R^k up to 1e-9 of mass in the linear program.

    References
    ----------
    .. [1] Chen, M. and Ohrimenko, O. "Protecting Global Properties of Datasets
       with Distribution Privacy Mechanisms." AISTATS 2023, Definition 3.1.
    .. [2] Zhang, W., Ohrimenko, O. and Cummings, R. "Attribute Privacy:
       Framework and Mechanisms." FAccT 2022, long version, Definition 9.

    Examples
    --------
    >>> from skattr.wasserstein import w_infinity
    >>> w_infinity([0.0, 1.0, 5.0], [2.0, 0.5, 1.5])
    3.0
    >>> w_infinity([0, 1], [0, 1], a_weights=[0.5, 0.5], b_weights=[0.25, 0.75])
    1.0
    >>> w_infinity([[0.0, 0.0], [1.0, 1.0]], [[1.0, 0.0], [1.0, 2.0]])
    1.0
    """
    ma, mb = _measures(a, b, a_weights, b_weights)
    if ma.points.ndim == 1:
        return _quantile_distance(ma, mb)
    return _least_threshold_moving(ma, mb, Fraction(1))


def wd_closeness(a, b, delta, a_weights=None, b_weights=None) -> float:
    """Least W such that two distributions are (W, delta)-close.

    Chen & Ohrimenko [1]_ Def 3.2: ``mu`` and ``nu`` are (W, delta)-close if some
    coupling ``gamma`` and a subset R of its support satisfy ``||x - y||_1 <= W``
    on R and ``gamma(R) >= 1 - delta``. This returns the least such W.

    Parameters
    ----------
    a, b : array-like of shape (m,) or (m, k)
        Support points, as in :func:`w_infinity`.
    delta : float in [0, 1]
        Probability mass whose movement may be disregarded.
    a_weights, b_weights : array-like of shape (m,), default=None
        Probabilities of the points, as in :func:`w_infinity`.

    Returns
    -------
    float
        The least W. ``wd_closeness(a, b, 0) == w_infinity(a, b)``, and it is 0
        when ``delta == 1``.

    Raises
    ------
    DataValidationError, InvalidParameterError
        As :func:`w_infinity`; also ``delta`` outside [0, 1].

    See Also
    --------
    w_infinity : the case ``delta = 0``.
    approximate_wasserstein_bound : an upper bound from means (Thm 3.3).

    Notes
    -----
    Any partial transport of mass ``1 - delta`` along pairs at distance <= W
    extends to a full coupling (couple the leftover masses arbitrarily) whose
    pairs within W carry at least ``1 - delta``. So the least W is the least
    pairwise distance t at which the maximum mass movable along pairs within t
    reaches ``1 - delta``, found by binary search over the pairwise distances.

    The mass movable is computed on the line by a greedy sweep (exact; the
    partners of a point form a window that slides right), and in R^k by a
    maximum matching, an integer maximum flow or a linear program, as in
    :func:`w_infinity`. The quantile coupling is *not* used on the line: it is
    optimal for delta = 0 but can waste the disregarded mass (mu = {0, 10},
    nu = {10, 20} with delta = 1/2 have W = 0, the quantile coupling gives 10).
    Memory is O(m n), time O(m n log(m n)).

    References
    ----------
    .. [1] Chen, M. and Ohrimenko, O. "Protecting Global Properties of Datasets
       with Distribution Privacy Mechanisms." AISTATS 2023, Definition 3.2.

    Examples
    --------
    The example of Chen & Ohrimenko (Figure 1):

    >>> from skattr.wasserstein import wd_closeness
    >>> x = [1, 2, 3, 100]
    >>> mu, nu = [0.6, 0.2, 0.0, 0.2], [0.4, 0.3, 0.2, 0.1]
    >>> wd_closeness(x, x, 0.0, mu, nu), wd_closeness(x, x, 0.1, mu, nu)
    (97.0, 1.0)
    """
    delta = _check_delta(delta)
    ma, mb = _measures(a, b, a_weights, b_weights)
    if delta >= 1.0:
        return 0.0
    return _least_threshold_moving(ma, mb, 1 - Fraction(delta))


def approximate_wasserstein_bound(delta_e, c) -> float:
    """W for which Chen & Ohrimenko's Theorem 3.3 certifies (W, delta)-closeness.

    Theorem 3.3 [1]_: if ``||F(Data) - E[F(Data)]||_1 <= c`` with probability at
    least ``1 - delta/2`` for each ``Data ~ theta`` in Theta, and
    ``Delta_E = sup over pairs (theta_i, theta_j) of ||E f_theta_i -
    E f_theta_j||_1``, then every pair ``f_theta_i, f_theta_j`` is
    ``(Delta_E + 2 c, delta)``-close; Laplace noise of scale
    ``(Delta_E + 2 c) / epsilon`` then gives (epsilon, delta)-distribution
    privacy (Thm 3.2).

    Parameters
    ----------
    delta_e : float >= 0
        ``Delta_E``, the largest L1 distance between the means of a pair.
    c : float >= 0
        The L1 concentration radius holding with probability ``1 - delta/2``
        under every theta (the caller is responsible for that probability).

    Returns
    -------
    float
        ``delta_e + 2 * c``.

    References
    ----------
    .. [1] Chen, M. and Ohrimenko, O. "Protecting Global Properties of Datasets
       with Distribution Privacy Mechanisms." AISTATS 2023, Theorem 3.3.

    Examples
    --------
    >>> from skattr.wasserstein import approximate_wasserstein_bound
    >>> approximate_wasserstein_bound(0.5, 0.25)
    1.0
    """
    for name, value in (("delta_e", delta_e), ("c", c)):
        if (isinstance(value, bool)
                or not isinstance(value, (int, float, np.number))
                or not math.isfinite(value) or value < 0):
            raise InvalidParameterError(
                f"The '{name}' parameter of approximate_wasserstein_bound must be "
                f"a finite float >= 0; got {value!r} instead."
            )
    return float(delta_e) + 2.0 * float(c)
