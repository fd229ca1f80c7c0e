"""W_inf on the line: the largest gap between two quantile functions, exactly."""

from __future__ import annotations

import numpy as np

from skattr.wasserstein._exact import (
    _UNIT,
    _breakpoint_bounds,
    _integers,
    _max_distance_up,
    _sorted_unique,
)


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
