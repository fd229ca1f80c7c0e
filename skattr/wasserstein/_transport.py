"""Least threshold within which a mass can move: a sweep on the line, flows in R^k."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow
from scipy.spatial.distance import cdist

from skattr.wasserstein._exact import (
    _UNIT,
    _common_masses,
    _distance_up,
    _Measure,
    _round_up,
    _sorted_unique,
)

# Mass a linear program may fall short of its target before a transport is
# ruled out without looking further (ruling out is always safe: it can only
# raise the threshold). Otherwise an exact maximum flow decides.
_LP_MASS_TOLERANCE = 1e-6


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
