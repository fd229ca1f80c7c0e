"""Exact infinity-Wasserstein distance and (W, delta)-closeness of discrete laws."""

from __future__ import annotations

import itertools
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

# Unit roundoff of float64: a correctly rounded operation errs by at most
# _UNIT * |result|, plus 2**-1075 when the result underflows.
_UNIT = 2.0**-53

# Absolute slack added to every rounding bound: it covers underflow (2**-1075
# per operation) with room to spare and is far below any mass that matters.
_TINY = 2.0**-1060

# Integer keys of positions z in [0, 1] of a cumulative mass: z's bit pattern
# for z <= 1/2, this minus the bit pattern of the tail 1 - z above. Both halves
# keep the relative precision of their small quantity, and the upper half's
# keys (> 0x4000...) sit above the lower half's (<= bits(0.5) = 0x3FE0...).
_UPPER_HALF_KEY = 0x7FE0000000000000

# Mass a linear program may fall short of its target before a transport is
# ruled out without looking further (ruling out is always safe: it can only
# raise the threshold). Otherwise an exact maximum flow decides.
_LP_MASS_TOLERANCE = 1e-6


class _Measure:
    """A discrete law: points (m, k) or (m,), and their positive masses.

    Masses are integers out of ``total`` when the law is an empirical one (no
    weights given), so every comparison of mass is exact. Otherwise they are the
    given float weights, and the law is ``mass / sum(mass)`` in exact arithmetic
    (floats are binary fractions): its sum is 1 only within rounding.
    """

    def __init__(self, points, mass, total=None):
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
    # Whole-number weights are multiplicities (counts): w / sum(w) is then an
    # exact rational law, which dividing in floats would round.
    counts = total >= 1 and bool(np.all(w == np.round(w)))
    if abs(total - 1.0) > _WEIGHT_SUM_TOLERANCE and not counts:
        raise InvalidParameterError(
            f"The '{name}' parameter must sum to 1 (within "
            f"{_WEIGHT_SUM_TOLERANCE:g}) or hold whole-number counts; got a sum "
            f"of {total!r} instead. Divide the weights by their sum if they are "
            "unnormalised."
        )
    # Not divided by the sum here: that would round every weight. The law is
    # w / sum(w) exactly, and each algorithm normalises without rounding.
    return w


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
    # A sample among weighted laws: equal masses 1 (not 1/m, which rounds).
    wa = np.ones(m) if a_weights is None else _as_weights(a_weights, m, "a_weights")
    wb = np.ones(n) if b_weights is None else _as_weights(b_weights, n, "b_weights")
    # Points of zero mass are not in the support and must not count.
    ka, kb = wa > 0, wb > 0
    return _Measure(pa[ka], wa[ka]), _Measure(pb[kb], wb[kb])


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


# ------------------------------------------------------------- exact arithmetic


def _mantissas(w):
    """int64 mantissas (< 2**53) and exponents with ``w == mant * 2**exp``."""
    frac, exp = np.frexp(w)
    return np.ldexp(frac, 53).astype(np.int64), exp.astype(np.int64) - 53


def _integers(w):
    """Python ints proportional to the floats ``w``, exactly (a common 2**-e).

    An object array, so sums and products run in numpy's loops, exactly.
    """
    mant, exp = _mantissas(w)
    exp -= exp.min()
    return np.left_shift(mant.astype(object), exp.astype(object))


def _common_masses(ma, mb):
    """Masses of both laws as Python ints over one common total, exactly."""
    if ma.exact:
        return ma.mass.tolist(), mb.mass.tolist(), ma.total
    a, b = _integers(ma.mass), _integers(mb.mass)
    sa, sb = a.sum(), b.sum()
    return (a * sb).tolist(), (b * sa).tolist(), sa * sb


def _round_up(q):
    """Round the Fraction ``q`` up to the least float >= q."""
    f = float(q)
    return math.nextafter(f, math.inf) if Fraction(f) < q else f


def _distance_up(x, y):
    """|x - y| rounded up to a float: exact whenever representable.

    TwoSum gives the exact rounding error of x - y; the float is bumped one ulp
    when the true distance lies above it.
    """
    s = x - y
    z = s - x
    err = (x - (s - z)) + (-y - z)
    d = np.abs(s)
    above = np.where(s > 0, err > 0, err < 0)
    return np.where(above, np.nextafter(d, np.inf), d)


def _max_distance_up(x, y):
    """Return max |x_i - y_i| rounded up to a float.

    Rounding to nearest is monotone, so a pair whose rounded distance is below
    the largest one is truly at most that; only the pairs at it need TwoSum.
    """
    d = np.abs(x - y)
    top = d == d.max()
    return float(np.max(_distance_up(x[top], y[top])))


# --------------------------------------------------------------------------- 1-D


def _cumulative(w):
    """Cumulative sums of positive floats, within (u + 3 m^2 u^2) of each exactly.

    ``cumsum`` is sequential (checked), so step k rounds p[k-1] + w[k] to p[k]
    with an error e[k] that TwoSum recovers exactly, |e[k]| <= u p[k]; the
    exact prefix sum is then p[k] + e[1] + ... + e[k]. Summing the e's in floats
    errs by at most m u * sum |e| <= m^2 u^2 P (Higham, recursive summation),
    and adding the correction rounds once more (u P): hence the bound.
    """
    p = np.cumsum(w)
    if not np.array_equal(p[1:], p[:-1] + w[1:]):  # pragma: no cover - numpy
        p = np.fromiter(itertools.accumulate(w.tolist()), float, w.shape[0])
    s, a = p[1:], p[:-1]
    z = s - a
    err = (a - (s - z)) + (w[1:] - z)
    p[1:] += np.cumsum(err)
    return p


def _position_keys(value, tail):
    """Integer keys, increasing in the position z, of z (or of 1 - z if ``tail``).

    The key stores min(z, 1 - z), computed as min(v, 1 - v), where 1 - v is
    exact for v in [1/2, 2] (Sterbenz) and above 1/2 otherwise, so never picked.
    Values outside [0, 1] are clipped, which keeps a lower (upper) bound of z a
    lower (upper) bound.
    """
    small = np.maximum(np.minimum(value, 1.0 - value), 0.0) + 0.0  # no -0.0
    upper_half = np.where(tail, value < 0.5, value > 0.5)
    bits = small.view(np.int64)
    return np.where(upper_half, _UPPER_HALF_KEY - bits, bits)


def _breakpoint_bounds(w, rel):
    """Integer keys bounding each breakpoint C_i = (w_1 + ... + w_i) / sum(w).

    Below 1/2 the bound comes from prefix sums, above from suffix sums, so each
    keeps relative accuracy at its own end (a tail of 1e-300 is seen). With
    P, S within rho of exact (``_cumulative``), a quotient is within 3.2 rho
    relative plus 2**-1075, below the half-width ``rel * v + _TINY`` used here
    even after the rounding of the endpoints (rel = 8 rho).
    """
    p = _cumulative(w)
    total = p[-1]
    c = p / total
    low = c <= 0.5
    v = np.append(_cumulative(w[::-1])[-2::-1], 0.0)
    v /= total
    np.copyto(v, c, where=low)
    width = rel * v + _TINY
    below, above = v - width, v + width
    # Keys within each point's own half; the few whose interval reaches 1/2
    # are redone by the general rule.
    floor = (np.maximum(below, 0.0) + 0.0).view(np.int64)
    ceil = above.view(np.int64)
    lower = np.where(low, floor, _UPPER_HALF_KEY - ceil)
    upper = np.where(low, ceil, _UPPER_HALF_KEY - floor)
    cross = np.flatnonzero(above >= 0.5)
    if cross.shape[0]:
        tail = ~low[cross]
        lower[cross] = _position_keys(np.where(tail, above[cross], below[cross]),
                                      tail)
        upper[cross] = _position_keys(np.where(tail, below[cross], above[cross]),
                                      tail)
    return lower, upper


def _weighted_quantile_distance(xa, wa, xb, wb):
    """sup_t |F_a^-1(t) - F_b^-1(t)| for float weights, exactly.

    Each breakpoint gets a certified interval (``_breakpoint_bounds``). Sorted
    by lower end, a running maximum of the upper ends splits them into
    components whose exact order is known: every breakpoint of a component lies
    below every breakpoint of the next. Within a component, breakpoints of one
    law keep their index order; only components holding both laws (near-ties,
    typically exact ties) are ordered by exact rational arithmetic.
    """
    m, n = wa.shape[0], wb.shape[0]
    rho = _UNIT + 3.0 * (max(m, n) * _UNIT) ** 2
    la, ua = _breakpoint_bounds(wa, 8.0 * rho)
    lb, ub = _breakpoint_bounds(wb, 8.0 * rho)
    lower = np.concatenate((la, lb))
    order = np.argsort(lower, kind="stable")
    reach = np.maximum.accumulate(np.concatenate((ua, ub))[order])
    start = np.empty(m + n, dtype=bool)
    start[0] = True
    np.greater(lower[order[1:]], reach[:-1], out=start[1:])
    tied = np.zeros(m + n, dtype=bool)  # equal to the previous one, exactly
    in_shared = ~start
    in_shared[:-1] |= ~start[1:]
    shared = np.flatnonzero(in_shared)  # positions in components of >= 2
    if shared.shape[0]:
        order[shared] = _order_components(order[shared],
                                          np.cumsum(start)[shared], tied, wa, wb)
    # Each run of exact ties closes one quantile interval; on it F_a^-1 is the
    # first breakpoint of a at or after the run, i.e. the number of a's before.
    in_a = order < m
    before_a = np.cumsum(in_a) - in_a
    first = ~tied[order]
    ia = before_a[first]
    ib = np.flatnonzero(first) - ia
    return _max_distance_up(xa[ia], xb[ib])


def _order_components(ids, component, tied, wa, wb):
    """Breakpoint ids (a's 0..m-1, then b's) of shared components, in exact order.

    A law's own breakpoints go by index, and the last ones of both laws are
    exactly 1, a tie. Only components with breakpoints of both laws below 1
    compare across laws: C_i < D_j iff P_i S_b < Q_j S_a for the exact prefix
    sums P, Q and totals S_a, S_b (integers in units of a power of two).
    Exact ties are marked in ``tied``.
    """
    m, n = wa.shape[0], wb.shape[0]
    piece = np.cumsum(np.r_[0, np.diff(component) != 0])
    is_last = (ids == m - 1) | (ids == m + n - 1)
    with_a = np.bincount(piece, ids < m - 1) > 0
    with_b = np.bincount(piece, (ids >= m) & ~is_last) > 0
    ids = ids[np.lexsort((ids, is_last, piece))]
    tied[m + n - 1] = True  # both 1, and the b comes second by id
    both = np.flatnonzero(with_a & with_b)
    if not both.shape[0]:
        return ids
    pa, pb = np.cumsum(_integers(wa)), np.cumsum(_integers(wb))
    # Cross-multiplied, the positions C_i = P_i / S_a share one scale.
    where = np.flatnonzero(np.isin(piece, both))
    members = ids[where]
    in_a = members < m
    position = np.empty(members.shape[0], dtype=object)
    position[in_a] = pa[members[in_a]] * pb[-1]
    position[~in_a] = pb[members[~in_a] - m] * pa[-1]
    size = np.bincount(piece)[both]
    # Two breakpoints, an a then a b by id: one exact comparison each.
    first = np.searchsorted(piece[where], both[size == 2])
    i, j = first, first + 1
    swap = position[i] > position[j]
    tied[members[j[position[i] == position[j]]]] = True
    members[i[swap]], members[j[swap]] = members[j[swap]], members[i[swap]]
    for start, count in zip(np.searchsorted(piece[where], both[size > 2]).tolist(),
                            size[size > 2].tolist(), strict=True):
        keyed = sorted(zip(position[start:start + count].tolist(),
                           members[start:start + count].tolist(), strict=True))
        for (value, k), (previous, _) in zip(keyed[1:], keyed[:-1], strict=True):
            tied[k] = value == previous
        members[start:start + count] = [k for _, k in keyed]
    ids[where] = members
    return ids


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
            return _max_distance_up(xa, xb)
        # Point i of a closes the interval ending at (i + 1) p, so the first
        # breakpoint of a at or after r is point ceil(r / p) - 1.
        p, q = int(ma.mass[0]), int(mb.mass[0])
        right = _sorted_unique(np.concatenate((
            np.arange(1, xa.shape[0] + 1, dtype=np.int64) * p,
            np.arange(1, xb.shape[0] + 1, dtype=np.int64) * q)))
        ia = (right + (p - 1)) // p - 1
        ib = (right + (q - 1)) // q - 1
        return _max_distance_up(xa[ia], xb[ib])
    # Tied points have the same value, so their order does not matter.
    oa, ob = np.argsort(ma.points), np.argsort(mb.points)
    return _weighted_quantile_distance(ma.points[oa], ma.mass[oa],
                                       mb.points[ob], mb.mass[ob])


def _line_transport(lo, hi, supply, capacity):
    """Most mass movable when point i may send to partners lo[i] <= j < hi[i].

    On the line both window ends only move right as the point does, so serving
    each point, in order, from the leftmost partner that still has mass is
    optimal: a leftmost partner is reachable by fewer later points than any
    partner to its right. Masses are Python ints, so the sum is exact.
    """
    capacity = list(capacity)
    moved = 0
    j = 0
    for start, stop, rem in zip(lo, hi, supply, strict=True):
        j = max(j, start)
        while rem and j < stop:
            c = capacity[j]
            if c <= rem:
                rem -= c
                moved += c
                capacity[j] = 0
                j += 1
            else:
                capacity[j] = c - rem
                moved += rem
                rem = 0
    return moved


def _line_threshold_moving(ma, mb, keep):
    """Least W such that mass ``keep`` moves by steps <= W, on the line; exact."""
    oa, ob = np.argsort(ma.points), np.argsort(mb.points)
    xs, ys = ma.points[oa], mb.points[ob]
    supply, capacity, total = _common_masses(_Measure(xs, ma.mass[oa], ma.total),
                                             _Measure(ys, mb.mass[ob], mb.total))
    need = -((-keep.numerator * total) // keep.denominator)  # ceil(keep * total)

    def feasible(t):
        lo, hi = _windows(xs, ys, t)
        return _line_transport(lo.tolist(), hi.tolist(), supply, capacity) >= need

    distances = _distance_up(xs[:, None], ys[None, :])
    return _least_threshold(_sorted_unique(distances.ravel()), feasible)


def _windows(xs, ys, t):
    """Partners within t of each sorted x: the window lo <= j < hi of sorted ys.

    Found in floats by ``searchsorted``, then each end is moved while the y it
    would cross is misplaced by the exact (rounded-up) distance; rounding of
    x -/+ t misplaces only ys within an ulp of the window's ends.
    """
    n = ys.shape[0]

    def move(ends, step, misplaced):
        while True:
            j = ends + min(step, 0)  # the y across the end, in direction step
            i = np.flatnonzero((j >= 0) & (j < n))
            wrong = i[misplaced(xs[i], ys[j[i]])]
            if not wrong.shape[0]:
                return
            ends[wrong] += step

    def within(x, y):
        return _distance_up(x, y) <= t

    def left_of_window(x, y):
        return (y < x) & ~within(x, y)

    def right_of_window(x, y):
        return (y > x) & ~within(x, y)

    lo = np.searchsorted(ys, xs - t, side="left")
    hi = np.searchsorted(ys, xs + t, side="right")
    move(lo, -1, within)
    move(lo, 1, left_of_window)
    move(hi, 1, within)
    move(hi, -1, right_of_window)
    return lo, hi


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


def _peeled_flow(rows, cols, supply, demand):
    """Build an exactly feasible flow on the edges (rows, cols), a forest in practice.

    Peeling from the leaves, each leaf passes along its only edge as much of
    its residual mass as its neighbour can still take. On an LP's basic support
    this is the LP's own flow, balanced exactly wherever the LP was right; any
    edge left on a cycle carries nothing. Returns the flow (a dict of Python
    ints) and the residual masses.
    """
    m = len(supply)
    residual = list(supply) + list(demand)
    adjacent = [set() for _ in residual]
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        adjacent[i].add(m + j)
        adjacent[m + j].add(i)
    flow = {}
    stack = [v for v, nb in enumerate(adjacent) if len(nb) == 1]
    while stack:
        v = stack.pop()
        if len(adjacent[v]) != 1:
            continue
        (u,) = adjacent[v]
        amount = min(residual[v], residual[u])
        residual[v] -= amount
        residual[u] -= amount
        if amount:
            flow[min(u, v), max(u, v) - m] = amount
        adjacent[v].clear()
        adjacent[u].discard(v)
        if len(adjacent[u]) == 1:
            stack.append(u)
    return flow, residual


def _augment(within, flow, residual, moved, need):
    """Raise an exactly feasible flow to ``need`` or to a maximum flow.

    Edmonds-Karp: a shortest path from an a with mass left to a b with room
    left, forward along pairs within the threshold or backward along edges
    carrying flow, augmented by its bottleneck, in exact integers.
    """
    m = within.shape[0]
    back = {}
    for i, j in flow:
        back.setdefault(j, set()).add(i)
    while moved < need:
        parent = {i: None for i in range(m) if residual[i] > 0}
        frontier, end = list(parent), None
        while frontier and end is None:
            reached = []
            for u in frontier:
                nexts = ((m + j for j in np.flatnonzero(within[u]).tolist())
                         if u < m else back.get(u - m, ()))
                for v in nexts:
                    if v not in parent:
                        parent[v] = u
                        reached.append(v)
                        if v >= m and residual[v] > 0:
                            end = v
                            break
                if end is not None:
                    break
            frontier = reached
        if end is None:
            return moved
        path = [end]
        while parent[path[-1]] is not None:
            path.append(parent[path[-1]])
        amount = min(residual[end], residual[path[-1]], need - moved)
        for v, u in zip(path[:-1], path[1:], strict=True):
            if u >= m:  # v an a reached backward: that edge's flow bounds it
                amount = min(amount, flow[v, u - m])
        for v, u in zip(path[:-1], path[1:], strict=True):
            i, j, sign = (u, v - m, 1) if u < m else (v, u - m, -1)
            flow[i, j] = flow.get((i, j), 0) + sign * amount
            if flow[i, j]:
                back.setdefault(j, set()).add(i)
            else:
                del flow[i, j]
                back[j].discard(i)
        residual[end] -= amount
        residual[path[-1]] -= amount
        moved += amount
    return moved


def _lp_transport(within, supply, demand, total, keep):
    """Whether mass ``keep`` of the exact laws moves along the ``within`` pairs.

    HiGHS (dual simplex, so a basic solution) solves the transport in floats;
    its support, peeled into an exactly feasible flow (``_peeled_flow``), warm
    starts an exact augmenting-path maximum flow (``_augment``), which decides.
    The LP only rules out, without the exact stage, a target it misses by far
    more than its tolerance.
    """
    rows, cols = np.nonzero(within)
    if rows.shape[0] == 0:
        return False
    m, n = within.shape
    e = rows.shape[0]
    edge = np.arange(e)
    a_ub = coo_matrix(
        (np.ones(2 * e), (np.concatenate((rows, m + cols)),
                          np.concatenate((edge, edge)))),
        shape=(m + n, e)).tocsr()
    b_ub = np.array([x / total for x in itertools.chain(supply, demand)])
    res = linprog(-np.ones(e), A_ub=a_ub, b_ub=b_ub, bounds=(0, None),
                  method="highs-ds",
                  options={"primal_feasibility_tolerance": 1e-10,
                           "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:  # pragma: no cover - a bounded feasible LP
        raise RuntimeError(f"linprog failed on a transport problem: {res.message}")
    if -res.fun < float(keep) - _LP_MASS_TOLERANCE:
        return False
    need = -((-keep.numerator * total) // keep.denominator)  # ceil(keep * total)
    used = res.x > 0
    flow, residual = _peeled_flow(rows[used], cols[used], supply, demand)
    return _augment(within, flow, residual, sum(flow.values()), need) >= need


def _least_threshold(candidates, feasible):
    """Smallest candidate (sorted ascending) for which ``feasible`` holds.

    The last candidate is taken as feasible without a test (every pair is within
    it). The others need not be monotone in ``feasible``: the search returns a
    candidate that passed its test, or the last one.
    """
    lo, hi = 0, candidates.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(candidates[mid]):
            hi = mid
        else:
            lo = mid + 1
    return float(candidates[lo])


def _certified_l1(pa, pb, distances, t):
    """Largest exact L1 distance, rounded up, over pairs computed within t.

    ``cdist`` sums k rounded terms, so it errs by at most (k + 1) u d (Higham);
    only pairs computed within 4 (k + 1) u of t can truly exceed it. Their exact
    distance comes from TwoSum when it is a float (integer grids), from
    Fractions otherwise.
    """
    k = pa.shape[1]
    near = (distances <= t) & (distances >= t * (1 - 4 * (k + 1) * _UNIT))
    i, j = np.nonzero(near)
    x, y = pa[i], pb[j]
    s = x - y
    z = s - x
    err = (x - (s - z)) + (-y - z)
    d = np.abs(s)
    acc = d[:, 0]
    exact = err[:, 0] == 0
    for c in range(1, k):
        total = acc + d[:, c]
        z = total - acc
        exact &= (err[:, c] == 0) & ((acc - (total - z)) + (d[:, c] - z) == 0)
        acc = total
    best = float(np.max(acc[exact], initial=t))
    for row, col in zip(i[~exact].tolist(), j[~exact].tolist(), strict=True):
        exact_l1 = sum(abs(Fraction(u) - Fraction(v))
                       for u, v in zip(pa[row].tolist(), pb[col].tolist(),
                                       strict=True))
        best = max(best, _round_up(exact_l1))
    return best


def _least_threshold_moving(ma, mb, keep):
    """Least W such that mass ``keep`` (of 1) moves by steps of L1 length <= W.

    ``keep`` is a Fraction and every path decides feasibility exactly (the LP
    only rules out targets it misses by far), so the least pairwise distance
    found is exact; ``_certified_l1`` then rounds it up if ``cdist`` rounded
    any pair used below its true distance. A binary search finds it.
    """
    if ma.points.ndim == 1:
        return _line_threshold_moving(ma, mb, keep)

    distances = cdist(ma.points, mb.points, "cityblock")
    candidates = distances.ravel()
    if keep == 1:
        # Every point must send (or receive) all its mass somewhere, so W_inf
        # is at least the largest nearest-neighbour distance of either law.
        lower = max(distances.min(axis=1).max(), distances.min(axis=0).max())
        candidates = candidates[candidates >= lower]
    candidates = _sorted_unique(candidates)
    m, n = distances.shape
    if ma.exact:
        need = math.ceil(keep * ma.total)
    if ma.exact and m == n:
        # Equal-size samples: every point carries one unit, a matching suffices.
        graph = _within_graphs(distances)

        def feasible(t):
            return _matching_size(graph(t)) >= need
    elif ma.exact:

        def feasible(t):
            return _integer_flow(distances <= t, ma.mass, mb.mass) >= need
    else:
        supply, demand, total = _common_masses(ma, mb)

        def feasible(t):
            return _lp_transport(distances <= t, supply, demand, total, keep)

    t = _least_threshold(candidates, feasible)
    return _certified_l1(ma.points, mb.points, distances, t)


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
        Probabilities of the points, or whole-number counts (multiplicities);
        ``None`` means each point carries equal mass (``a`` is a sample).
        Probabilities must be non-negative and sum to 1 within 1e-9; points of
        weight zero are not in the support. The law is
        ``weights / sum(weights)`` in exact arithmetic, the float weights being
        binary fractions (see Notes), so counts give an exact rational law.

    Returns
    -------
    float
        The distance for the laws given, exactly, rounded up to a float when it
        is not one.

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
    different sizes, whose masses are integers over lcm(m, n)) or, for given
    weights, an exact maximum flow warm-started by a linear program. Memory is
    O(m n).

    The result is exact for the laws given, never below (it sets noise
    scales). Samples have integer masses. Float weights are exact binary
    fractions: on the line, each cumulative mass is bounded within a few
    rounding errors, from prefix sums below 1/2 and suffix sums above (so a
    mass of 1e-300 in either tail counts), and only breakpoints of the two laws
    whose bounds overlap (near-ties, exact ties included) are ordered with
    exact integer sums. In R^k the linear program only warm-starts an exact
    augmenting-path flow. Distances are rounded up: the L1 distance of points
    is rechecked exactly for the pairs whose rounding could matter.

    Being exact for floats, ties of decimal intent are not ties:
    ``[0.1, 0.2, 0.7]`` and ``[0.3, 0.7]`` differ by 2e-17 of mass
    (0.1 + 0.2 > 0.3 in binary) and that mass must travel. Weights computed
    from a rational law (counts over a total) carry such roundings; tied
    cumulative masses stay tied only if their float sums are exact.

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

    The mass movable is computed on the line by a greedy sweep (the partners
    of a point form a window that slides right), and in R^k by a maximum
    matching, an integer maximum flow or an exact flow warm-started by a linear
    program, as in :func:`w_infinity`. Every mass is an exact integer (float
    weights are binary fractions, scaled to a common denominator), and it is
    compared with ``1 - delta`` exactly: the W returned certifies
    (W, delta)-closeness of the laws given, never of (W, delta + rounding).
    The quantile coupling is *not* used on the line: it is optimal for
    delta = 0 but can waste the disregarded mass (mu = {0, 10}, nu = {10, 20}
    with delta = 1/2 have W = 0, the quantile coupling gives 10). Memory is
    O(m n), time O(m n log(m n)).

    References
    ----------
    .. [1] Chen, M. and Ohrimenko, O. "Protecting Global Properties of Datasets
       with Distribution Privacy Mechanisms." AISTATS 2023, Definition 3.2.

    Examples
    --------
    The example of Chen & Ohrimenko (Figure 1): mass 0.9 moves by at most 1,
    the rest (0.1 at 100) by 97.

    >>> from skattr.wasserstein import wd_closeness
    >>> x = [1, 2, 3, 100]
    >>> mu, nu = [0.6, 0.2, 0.0, 0.2], [0.4, 0.3, 0.2, 0.1]
    >>> wd_closeness(x, x, 0.0, mu, nu), wd_closeness(x, x, 0.11, mu, nu)
    (97.0, 1.0)

    In binary floats these weights move 0.9 - 8e-18 within 1, just short of
    ``1 - 0.1``, so delta = 0.1 exactly is not enough for the laws given:

    >>> wd_closeness(x, x, 0.1, mu, nu)
    97.0
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
