"""Independent references for transport tests: LPs and exact rational brute forces."""

import itertools
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog


def coupled_mass_within(d, wa, wb, t):
    """Largest gamma-mass on pairs within t over *full* couplings gamma (LP)."""
    m, n = d.shape
    a_eq = np.zeros((m + n, m * n))
    for i in range(m):
        a_eq[i, i * n:(i + 1) * n] = 1
    for j in range(n):
        a_eq[m + j, j::n] = 1
    res = linprog(-(d <= t).ravel().astype(float), A_eq=a_eq,
                  b_eq=np.concatenate((wa, wb)), bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


# ------------------------------------------------- exact rational arithmetic


def exact_law(weights):
    """Masses of the law ``weights / sum(weights)`` as Fractions (floats are exact)."""
    w = [Fraction(x) for x in weights]
    total = sum(w)
    return [x / total for x in w]


def exact_l1(x, y):
    """Exact L1 distance between two float points, as a Fraction."""
    x, y = np.atleast_1d(x).tolist(), np.atleast_1d(y).tolist()
    return sum(abs(Fraction(u) - Fraction(v)) for u, v in zip(x, y, strict=True))


def exact_quantile_distance(xa, wa, xb, wb):
    """sup_t |F_a^-1(t) - F_b^-1(t)| in exact arithmetic, laws on the line.

    On each interval between consecutive distinct cumulative masses of either
    law, F^-1 is the first point whose cumulative mass reaches the interval's
    right end.
    """
    def cdf(x, w):
        order = np.argsort(x, kind="stable")
        mass = exact_law(w)
        return [float(x[i]) for i in order], list(itertools.accumulate(
            mass[i] for i in order))

    (xa, ca), (xb, cb) = cdf(np.asarray(xa), wa), cdf(np.asarray(xb), wb)
    best = Fraction(0)
    for right in sorted(set(ca) | set(cb)):
        i = next(k for k, c in enumerate(ca) if c >= right)
        j = next(k for k, c in enumerate(cb) if c >= right)
        best = max(best, abs(Fraction(xa[i]) - Fraction(xb[j])))
    return best


def exact_max_flow(ma, mb, allowed):
    """Most mass movable from masses ``ma`` to ``mb`` along ``allowed`` pairs.

    Edmonds-Karp on Fractions: source -> a_i (ma_i), a_i -> b_j (unbounded if
    allowed), b_j -> sink (mb_j). Exact, for tiny supports.
    """
    m, n = len(ma), len(mb)
    source, sink = m + n, m + n + 1
    cap = {}
    for i in range(m):
        cap[source, i] = ma[i]
        for j in range(n):
            if allowed[i][j]:
                cap[i, m + j] = sum(ma) + 1
    for j in range(n):
        cap[m + j, sink] = mb[j]
    flow = Fraction(0)
    while True:
        parent = {source: None}
        queue = [source]
        while queue and sink not in parent:
            u = queue.pop(0)
            for (p, v), c in cap.items():
                if p == u and c > 0 and v not in parent:
                    parent[v] = u
                    queue.append(v)
        if sink not in parent:
            return flow
        path, v = [], sink
        while parent[v] is not None:
            path.append((parent[v], v))
            v = parent[v]
        push = min(cap[e] for e in path)
        for u, v in path:
            cap[u, v] -= push
            cap[v, u] = cap.get((v, u), 0) + push
        flow += push


def exact_closeness(a, b, wa, wb, delta):
    """Least exact pairwise L1 distance t whose movable mass within t >= 1 - delta."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ma, mb = exact_law(wa), exact_law(wb)
    d = [[exact_l1(x, y) for y in b] for x in a]
    keep = 1 - Fraction(delta)
    for t in sorted({v for row in d for v in row}):
        allowed = [[v <= t for v in row] for row in d]
        if exact_max_flow(ma, mb, allowed) >= keep:
            return t
    raise AssertionError("the largest distance is always feasible")
