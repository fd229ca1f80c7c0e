"""Exact laws of two counts and their noisy hockey-stick, by brute force.

Shares nothing with skattr (numpy and scipy.special only): Python loops over
the multinomial outcomes of each group's records, and the 2-D hockey-stick
divergence of two lattice laws plus independent Gaussian noise on each
coordinate by the midpoint rule on a fine grid.

A record's cell c in {0, 1, 2, 3} is counted by the first count when
c >= 2 and by the second when c is odd.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import signal, special


def group_law(size: int, q) -> np.ndarray:
    """Return the law of the two counts of ``size`` records of cell law q."""
    law = np.zeros((size + 1, size + 1))
    for c0 in range(size + 1):
        for c1 in range(size + 1 - c0):
            for c2 in range(size + 1 - c0 - c1):
                c3 = size - c0 - c1 - c2
                ways = math.factorial(size) / (
                    math.factorial(c0) * math.factorial(c1)
                    * math.factorial(c2) * math.factorial(c3))
                law[c2 + c3, c1 + c3] += (ways * q[0] ** c0 * q[1] ** c1
                                          * q[2] ** c2 * q[3] ** c3)
    return law


def count_law(inside: int, outside: int, q_in, q_out) -> np.ndarray:
    """Return the law of the two counts, ``inside`` and ``outside`` records."""
    return signal.convolve2d(group_law(inside, q_in), group_law(outside, q_out))


def hockey_stick(p_law, q_law, sds, epsilon: float, per_sd: int = 25) -> float:
    """Return int (p - e^eps q)_+ for the two laws plus N(0, diag(sds^2))."""
    n = p_law.shape[0] - 1
    grids, kernels = [], []
    for sd in sds:
        step = sd / per_sd
        y = np.arange(-9 * sd, n + 9 * sd, step) + step / 2
        grids.append(step)
        kernels.append(np.exp(-0.5 * ((y[:, None] - np.arange(n + 1)[None, :])
                                      / sd) ** 2) / (sd * math.sqrt(2 * math.pi)))
    p = kernels[0] @ p_law @ kernels[1].T
    q = kernels[0] @ q_law @ kernels[1].T
    return float(np.maximum(p - math.exp(epsilon) * q, 0).sum() * grids[0] * grids[1])


def pair_delta(n: int, k_a: int, k_b: int, q_in, q_out, sds, epsilon: float) -> float:
    """Return the exact delta of the pair (both directions), for these laws."""
    a = count_law(k_a, n - k_a, q_in, q_out)
    b = count_law(k_b, n - k_b, q_in, q_out)
    return max(hockey_stick(a, b, sds, epsilon), hockey_stick(b, a, sds, epsilon))


def box_laws(low, rng, draws: int):
    """Return laws q >= low: every corner low + (1 - sum low) e_c, and random ones."""
    low = np.asarray(low, dtype=float)
    rest = 1.0 - low.sum()
    found = [low + rest * np.eye(4)[c] for c in range(4)]
    found += [low + rest * rng.dirichlet(np.full(4, 0.5)) for _ in range(draws)]
    return found


def worst_delta(n, k_a, k_b, low_in, low_out, sds, epsilon, rng, draws=4) -> float:
    """Return the largest exact delta over corners and draws of both boxes."""
    return max(pair_delta(n, k_a, k_b, q_in, q_out, sds, epsilon)
               for q_in, q_out in itertools.product(
                   box_laws(low_in, rng, draws), box_laws(low_out, rng, draws)))


def normal_tail(x: float) -> float:
    """P(Z > x)."""
    return float(special.ndtr(-x))
