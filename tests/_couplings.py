"""Independent references for transport tests: linear programs over couplings."""

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
