"""Exact laws and privacy profiles of several statistics of a tiny population.

A test oracle.

Imports nothing from skattr. Records have 2 or 3 columns on the values
0, 1, 2 and a joint law chosen by hand (comonotone, countermonotone, one
column the other plus a constant, independent). Under dataset attribute
privacy, secret a puts ``k_a`` of n records in the group and b puts
``k_b``; the statistics are sums over records of per-record values h_j(x)
(a column, or an indicator), times a weight w_j (1 / n for a mean).

- :func:`sum_law`: the exact law of the statistics' vector under a secret,
  by convolving the record laws (n <= 8, so the lattice is small);
- :func:`moved_difference_law`: the exact joint law of D = F(b) - F(a) under
  the coupling that keeps the shared records and draws a moved record's two
  rows independently (out under a, in under b);
- :func:`gaussian_hockey_stick` / :func:`laplace_hockey_stick`: the exact
  hockey-stick divergence of the two noisy releases, both directions, by
  quadrature on a 2-D or 3-D grid (separable noise, so the mixture's density
  is a product of matrices), the noise's tails outside the grid added;
- :func:`coupled_gaussian_expectation`: E g_eps(||D / s||) under the exact
  joint law of D, Balle and Wang's profile written out from scipy's normal.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import stats

VALUES = (0, 1, 2)


def record_law(kind: str, columns: int) -> dict[tuple, float]:
    """A joint law of one record's columns: {row: probability}.

    ``comonotone`` (every column equal, uniform), ``countermonotone``
    (second column 2 - first), ``shifted`` (second = first + 1, first 0 or
    1), ``independent`` (uniform on the grid); a third column, when asked,
    repeats the first (comonotone with it).
    """
    if kind == "comonotone":
        rows = {(v, v): 1 / 3 for v in VALUES}
    elif kind == "countermonotone":
        rows = {(v, 2 - v): 1 / 3 for v in VALUES}
    elif kind == "shifted":
        rows = {(v, v + 1): 1 / 2 for v in (0, 1)}
    elif kind == "independent":
        rows = {(u, v): 1 / 9 for u in VALUES for v in VALUES}
    elif kind == "zero":
        rows = {(0, 0): 1.0}
    elif kind == "two":
        rows = {(2, 2): 1.0}
    else:
        raise ValueError(kind)
    if columns == 3:
        rows = {(*r, r[0]): p for r, p in rows.items()}
    return rows


def _statistic_rows(law: dict, features) -> dict[tuple, float]:
    """The law of one record's per-statistic values h_j (integers)."""
    out: dict[tuple, float] = {}
    for row, p in law.items():
        key = tuple(int(h(row)) for h in features)
        out[key] = out.get(key, 0.0) + p
    return out


def _convolve(a: dict, b: dict) -> dict:
    out: dict[tuple, float] = {}
    for x, p in a.items():
        for y, q in b.items():
            key = tuple(u + v for u, v in zip(x, y, strict=True))
            out[key] = out.get(key, 0.0) + p * q
    return out


def _power(law: dict, times: int, width: int) -> dict:
    out = {(0,) * width: 1.0}
    for _ in range(times):
        out = _convolve(out, law)
    return out


def sum_law(inside: dict, outside: dict, n: int, k: int, features
            ) -> dict[tuple, float]:
    """Exact law of sum_i h(X_i): k records from ``inside``, n - k from ``outside``."""
    width = len(features)
    a = _power(_statistic_rows(inside, features), k, width)
    b = _power(_statistic_rows(outside, features), n - k, width)
    return _convolve(a, b)


def moved_difference_law(inside: dict, outside: dict, moved: int, features
                         ) -> dict[tuple, float]:
    """Exact joint law of sum over moved records of h(X_in) - h(X_out)."""
    hin = _statistic_rows(inside, features)
    hout = _statistic_rows(outside, features)
    one: dict[tuple, float] = {}
    for x, p in hin.items():
        for y, q in hout.items():
            key = tuple(u - v for u, v in zip(x, y, strict=True))
            one[key] = one.get(key, 0.0) + p * q
    return _power(one, moved, len(features))


def absolute_marginals(joint: dict, weights) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per coordinate, the exact law of |w_j D_j|: (values increasing, probs)."""
    out = []
    for j, w in enumerate(weights):
        law: dict[float, float] = {}
        for key, p in joint.items():
            v = abs(key[j]) * w
            law[v] = law.get(v, 0.0) + p
        values = np.array(sorted(law))
        out.append((values, np.array([law[v] for v in values])))
    return out


def _profile(mu: np.ndarray, epsilon: float) -> np.ndarray:
    """Balle and Wang's delta of N(0, 1) against N(mu, 1) at epsilon."""
    mu = np.asarray(mu, dtype=float)
    out = np.zeros_like(mu)
    pos = mu > 0
    m = mu[pos]
    out[pos] = (stats.norm.cdf(m / 2 - epsilon / m)
                - math.exp(epsilon) * stats.norm.cdf(-m / 2 - epsilon / m))
    return np.clip(out, 0.0, 1.0)


def coupled_gaussian_expectation(joint: dict, weights, scales,
                                 epsilon: float) -> float:
    """E g_eps(||w D / s||) under the exact joint law of the coupled D."""
    keys = np.array(list(joint), dtype=float)
    probs = np.array(list(joint.values()))
    mu = np.sqrt((((keys * np.asarray(weights)) / np.asarray(scales)) ** 2)
                 .sum(axis=1))
    return float(probs @ _profile(mu, epsilon))


def independent_gaussian_expectation(marginals, scales, epsilon: float) -> float:
    """E g_eps(||D / s||) as if the |D_j| were independent (a wrong bound)."""
    values = [v for v, _ in marginals]
    probs = [p for _, p in marginals]
    total = 0.0
    for idx in itertools.product(*[range(v.size) for v in values]):
        p = math.prod(probs[j][i] for j, i in enumerate(idx))
        mu = math.sqrt(sum((values[j][i] / scales[j]) ** 2
                           for j, i in enumerate(idx)))
        total += p * float(_profile(np.array([mu]), epsilon)[0])
    return total


def _axis_density(centres, grid, scale, noise):
    y = grid[None, :] - np.asarray(centres, float)[:, None]
    if noise == "gaussian":
        return stats.norm.pdf(y, scale=scale)
    return stats.laplace.pdf(y, scale=scale)


def _density(law: dict, weights, grids, scales, noise) -> np.ndarray:
    """Density on the product grid of F (law of the sums, times weights) + noise."""
    k = len(weights)
    axes = [sorted({key[j] for key in law}) for j in range(k)]
    index = [{v: i for i, v in enumerate(ax)} for ax in axes]
    tensor = np.zeros([len(ax) for ax in axes])
    for key, p in law.items():
        tensor[tuple(index[j][key[j]] for j in range(k))] += p
    mats = [_axis_density(np.array(axes[j]) * weights[j], grids[j], scales[j],
                          noise) for j in range(k)]
    if k == 2:
        return mats[0].T @ tensor @ mats[1]
    return np.einsum("abc,ai,bj,ck->ijk", tensor, *mats, optimize=True)


def _hockey_stick(law_a, law_b, weights, scales, epsilon, noise, points,
                  width):
    k = len(weights)
    grids, steps = [], []
    tails = 0.0
    for j in range(k):
        values = [key[j] * weights[j] for law in (law_a, law_b) for key in law]
        lo, hi = min(values) - width * scales[j], max(values) + width * scales[j]
        grid = np.linspace(lo, hi, points)
        grids.append(grid)
        steps.append(grid[1] - grid[0])
        # Mass of the noise beyond width scales on either side (added: the
        # integrand is at most the first density).
        tails += (2 * stats.norm.sf(width) if noise == "gaussian"
                  else math.exp(-width))
    fa = _density(law_a, weights, grids, scales, noise)
    fb = _density(law_b, weights, grids, scales, noise)
    cell = math.prod(steps)
    e = math.exp(epsilon)
    ab = float(np.maximum(fa - e * fb, 0.0).sum() * cell)
    ba = float(np.maximum(fb - e * fa, 0.0).sum() * cell)
    return max(ab, ba) + tails


def gaussian_hockey_stick(law_a, law_b, weights, scales, epsilon,
                          points=None) -> float:
    """Exact delta(epsilon) of F(a) + N(0, diag s^2) against F(b) + N, both ways."""
    points = points or (601 if len(weights) == 2 else 161)
    return _hockey_stick(law_a, law_b, weights, scales, epsilon, "gaussian",
                         points, 9.0)


def laplace_hockey_stick(law_a, law_b, weights, scales, epsilon,
                         points=None) -> float:
    """Exact delta(epsilon) with independent Laplace(b_j) noise, both ways."""
    points = points or (801 if len(weights) == 2 else 201)
    return _hockey_stick(law_a, law_b, weights, scales, epsilon, "laplace",
                         points, 30.0)
