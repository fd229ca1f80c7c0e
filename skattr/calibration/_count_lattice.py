"""Gaussian noise on a vector of counts whose law is a lattice law: delta, scale.

The count law's side (the floor trick: a known lattice law T_R of the shared
records, the moved records' known difference K and its unknown part u) is
:mod:`skattr.laws._count_cells`'s; this computes

    delta <= E_{R, a} max_u E_K h_R(K + u),  h_R(s) = H_eps(T_R * N || T_R * N + s),

for N ~ N(0, Sigma), and the least scale of a noise shape that certifies a
delta.

h_R, bounded outward. p(y) = sum_k t_k phi(y - k) is T_R * N's density and
q(y) = p(y - s). Cut space into cubes Q of side h = 1 / r (r whole, so every
lattice point and every shift is a cube centre: each kernel below is one
fixed array, convolved once with the lattice law by FFT). On a cube of
centre c, f = p - e^eps q satisfies, by Taylor's theorem,

    f(c + e) = f(c) + grad f(c).e + e' Hess f(xi) e / 2,  xi in Q,

and the second-order terms are bounded through Hess phi(z) =
phi(z) (w w' - Sigma^-1), w = Sigma^-1 z (:func:`_kernels`): at every point
of the cube, giving f <= a + g.(y - c) on Q with a = f(c) plus that bound, or
on average over the cube, added to the first-order part's mean
((x + y)_+ <= x_+ + y for y >= 0); the least of the two is taken. The
first-order part's mean over the cube is E(a + sum_j U_j)_+ with U_j
uniform on [-h |g_j| / 2, h |g_j| / 2], computed exactly (a B-spline's
formula, :func:`_mean_positive`). Outside the cubes, which cover every lattice
point's +/- 8 sds in every coordinate, f_+ <= p has mass at most
2 J Phi(-8). Every array is exact in the kernels (no truncation: each kernel
reaches every (cube, point) pair) and each FFT value is widened by 1e-12 of
its kernel's largest value. The errors are second order in h: the bound
sits within a few percent of delta's exact value at r = 6 cubes a sd.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special
from scipy.signal import convolve, correlate, fftconvolve

from skattr.calibration._gaussian import analytic_mu
from skattr.exceptions import NotCertifiableError
from skattr.laws._count_cells import (
    LEVEL_PROBS,
    record_powers,
    shared_levels,
)

__all__ = ["cells_gaussian_delta", "cells_gaussian_scale", "lattice_hockey_sticks",
           "shaped_covariance"]

#: Cubes per sd of the noise's narrowest direction.
CUBES_PER_SD = 6
#: The window around every lattice point, in sds of each coordinate.
_WINDOW = 8.0
#: FFT error, relative to a kernel's largest value (generous: about 1e-15 seen).
_FFT = 1e-12
#: Mass of the cubes left out of each hockey-stick (added to it).
_DROPPED = 1e-8
_FACTORIALS = np.array([float(math.factorial(k)) for k in range(12)])
#: Relative rounding added to a delta before comparing it with the one asked.
_ROUNDING = 1e-9


def _kernels(offsets, cov, h):
    """Return phi, grad phi and the four remainder bounds on a grid of offsets.

    For a cube of side h and centre offset z0, e = y - c in the cube and xi
    between: the second-order term of p's Taylor expansion is at most
    phi(xi) (w(xi).e)^2 / 2 with w = Sigma^-1 z, of -q's at most
    phi(xi) e' Sigma^-1 e / 2; phi(xi) <= phi(z0) exp(|w0|_1 h / 2) and
    |w(xi).e| <= |w0|_1 h / 2 + ||Sigma^-1|| J h^2 / 4. Returned: those
    bounds at every point of the cube ("point") and on average over it
    ("mean": E(w0.e)^2 = |w0|^2 h^2 / 12, (x + y)^2 <= 1.1 x^2 + 11 y^2,
    E e' Sigma^-1 e = trace(Sigma^-1) h^2 / 12).
    """
    inverse = np.linalg.inv(cov)
    dims = cov.shape[0]
    norm = 1.0 / math.sqrt((2 * math.pi) ** dims * np.linalg.det(cov))
    z = np.stack(np.meshgrid(*offsets, indexing="ij"), axis=-1) * h
    w = z @ inverse
    phi = norm * np.exp(-0.5 * np.einsum("...i,...i->...", z, w))
    grad = [-phi * w[..., j] for j in range(dims)]
    top = 0.5 * phi * np.exp(np.abs(w).sum(-1) * h / 2)
    largest = np.linalg.norm(inverse, 2)
    reach = largest * dims * h * h / 4
    point_p = top * (np.abs(w).sum(-1) * h / 2 + reach) ** 2
    mean_p = top * (1.1 * (w ** 2).sum(-1) * h * h / 12 + 11 * reach ** 2)
    point_q = top * largest * dims * h * h / 4
    mean_q = top * np.trace(inverse) * h * h / 12
    return phi, grad, (point_p, mean_p, point_q, mean_q)


def lattice_hockey_sticks(t, cov, reach: int, epsilon: float,
                          refine: int | None = None) -> np.ndarray:
    """Return bounds on H_eps(T * N || T * N + s) for every s in [-reach, reach]^J.

    Parameters
    ----------
    t : ndarray of shape (L_1, ..., L_J)
        The lattice law of T (entry at x: P(T = x)), nonnegative.
    cov : ndarray of shape (J, J)
        The noise's covariance (positive definite).
    reach : int
        The largest shift per coordinate.
    epsilon : float
        The epsilon of the hockey-stick divergence.
    refine : int, optional
        Cubes per unit of the lattice (default: ``CUBES_PER_SD`` a sd of the
        narrowest direction).

    Returns
    -------
    ndarray of shape (2 reach + 1,)*J
        The entry at s + reach bounds the divergence from above.
    """
    t = np.asarray(t, dtype=float)
    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    dims = t.ndim
    sd = np.sqrt(np.diag(cov))
    narrowest = math.sqrt(float(np.linalg.eigvalsh(cov)[0]))
    r = refine or max(1, math.ceil(CUBES_PER_SD / narrowest))
    h = 1.0 / r
    lengths = np.array(t.shape)
    lo = np.floor(-_WINDOW * sd * r).astype(int)
    hi = np.ceil(((lengths - 1) + _WINDOW * sd) * r).astype(int)
    grid_lo, grid_hi = lo - reach * r, hi + reach * r
    offsets = [np.arange(grid_lo[j] - r * (lengths[j] - 1), grid_hi[j] + 1)
               for j in range(dims)]
    upsampled = np.zeros(tuple((lengths - 1) * r + 1))
    upsampled[tuple(slice(None, None, r) for _ in range(dims))] = t
    # Full convolution index n is cube i = n + offsets[j][0]; keep the grid.
    keep = tuple(slice(grid_lo[j] - offsets[j][0], grid_hi[j] - offsets[j][0] + 1)
                 for j in range(dims))
    phi, grad, rests = _kernels(offsets, cov, h)

    def spread(kernel):
        return fftconvolve(upsampled, kernel)[keep], _FFT * float(np.abs(kernel).max())

    grid_shape = tuple(int(x) for x in grid_hi - grid_lo + 1)
    e = math.exp(epsilon)
    core = tuple(slice(reach * r, reach * r + hi[j] - lo[j] + 1) for j in range(dims))
    p, p_slack = spread(phi)
    grads = [spread(g) for g in grad]
    (point_p, s1), (mean_p, s2), (point_q, s3), (mean_q, s4) = (
        spread(k) for k in rests)
    volume = h ** dims
    # Keep the cubes that can matter: on a cube, int f_+ <= int p <=
    # volume (p(c) + mean remainder); the least of them, up to _DROPPED in
    # all, are dropped and _DROPPED is added to every bound.
    flat = np.ravel_multi_index(np.indices([c.stop - c.start for c in core]).reshape(
        dims, -1) + np.array([c.start for c in core])[:, None], p.shape)
    upper = volume * (np.maximum(p.ravel()[flat], 0) + p_slack
                      + np.maximum(mean_p.ravel()[flat], 0) + s2)
    order = np.argsort(upper)
    cut = np.searchsorted(np.cumsum(upper[order]), _DROPPED, side="right")
    flat = np.sort(flat[order[cut:]])
    point_p = np.maximum(point_p.ravel()[flat], 0) + s1 + e * s3
    mean_p = np.maximum(mean_p.ravel()[flat], 0) + s2 + e * s4
    point_q = np.maximum(point_q, 0).ravel()
    mean_q = np.maximum(mean_q, 0).ravel()
    p = p.ravel()
    grads = [(g.ravel(), sl) for g, sl in grads]
    p_core = p[flat] + p_slack * (1 + e)
    g_core = [g[flat] for g, _ in grads]
    g_slack = (h / 2) * sum(sl for _, sl in grads) * (1 + e)
    strides = np.array([int(np.prod(grid_shape[j + 1:])) for j in range(dims)])
    outside = 2 * dims * special.ndtr(-_WINDOW) + _DROPPED
    out = np.empty((2 * reach + 1,) * dims)
    for s in np.ndindex(*out.shape):
        moved = flat - r * int((np.array(s) - reach) @ strides)
        a = p_core - e * p[moved]
        halves = [(h / 2) * np.abs(gc - e * g[moved])
                  for gc, (g, _) in zip(g_core, grads, strict=False)]
        pointwise = _mean_positive(a + point_p + e * point_q[moved], halves, g_slack)
        averaged = (_mean_positive(a, halves, g_slack) + mean_p
                    + e * mean_q[moved])
        out[s] = min(1.0, volume * float(np.minimum(pointwise, averaged).sum())
                     + outside)
    return out


def _mean_positive(a, halves, slack):
    """Return an upper bound on E(a + sum_j U_j)_+, U_j uniform on [-c_j, c_j].

    Exact where every c_j is at least 1e-3 of their sum: the B-spline
    formula sum over signs of +/- (a + sum s_j c_j)_+^(J+1) / ((J+1)! prod 2 c_j)
    (the (J+1)-th difference of x_+^(J+1) / (J+1)!). A smaller c_j is dropped
    and c_j / 2 >= E|U_j| added ((x + u)_+ <= x_+ + |u|), as is ``slack``
    and 1e-9 of the sum (rounding of the differences).
    """
    total = sum(halves) + slack
    small = [c < 1e-3 * total for c in halves]
    added = slack + 1e-9 * total + sum(np.where(sm, c / 2, 0.0)
                                       for c, sm in zip(halves, small, strict=False))
    kept = [np.where(sm, 0.0, c) for c, sm in zip(halves, small, strict=False)]
    width = sum(kept)
    inside = (np.abs(a) < width)
    out = np.where(a >= width, a, 0.0)
    if inside.any():
        ai = a[inside]
        ci = [c[inside] for c in kept]
        live = [c > 0 for c in ci]
        power = 1 + sum(lv.astype(int) for lv in live)
        acc = np.zeros_like(ai)
        for signs in np.ndindex(*(2,) * len(ci)):
            point = ai.copy()
            sign = np.ones_like(ai)
            for bit, c, lv in zip(signs, ci, live, strict=False):
                step = np.where(lv, c, 0.0) * (1 if bit else -1)
                point += step
                # A dimension of width 0 takes one sign only (weight 1).
                sign *= np.where(lv, 1.0 if bit else -1.0, 1.0 if bit else 0.0)
            acc += sign * np.maximum(point, 0.0) ** power
        denominator = _FACTORIALS[power] * np.prod(
            [np.where(lv, 2 * c, 1.0) for c, lv in zip(ci, live, strict=False)], axis=0)
        out[inside] = np.maximum(acc / denominator, 0.0)
    return out + added


def _moved_bound(h, moved_terms) -> float:
    """Return E_a max_u E_K h(K + u) (the moved records' part)."""
    total = 0.0
    for weight, _a_in, _a_out, law, _offset in moved_terms:
        total += weight * float(correlate(h, law, mode="valid", method="direct").max())
    return total


def _level_pairs(levels_in, w_in, levels_out, w_out, *, full: bool):
    """Return ((R_in, R_out), weight) covering every pair of levels.

    ``full``: every pair, at its own weight. Otherwise the pair of bins
    (i, j) is read at the levels of bin k = min(i, j) of each (never above
    its own, and h_R is nonincreasing in R), so one pair a k carries the
    weight P(min(i, j) = k).
    """
    if full:
        return [((a, b), wa * wb) for a, wa in zip(levels_in, w_in, strict=False)
                for b, wb in zip(levels_out, w_out, strict=False)]
    found = {}
    for i, wa in enumerate(w_in):
        for j, wb in enumerate(w_out):
            k = min(i, j)
            key = (levels_in[min(k, len(levels_in) - 1)],
                   levels_out[min(k, len(levels_out) - 1)])
            found[key] = found.get(key, 0.0) + wa * wb
    return list(found.items())


def cells_gaussian_delta(pairs, cov, epsilon: float,
                         probs=LEVEL_PROBS) -> float:
    """Return a certified delta of N(0, cov) on the counts, worst over the pairs.

    Parameters
    ----------
    pairs : sequence of CellPair
        The pairs (:func:`skattr.laws._count_cells.cell_pairs`).
    cov : array-like of shape (J, J)
        The noise's covariance, on the counts' scale.
    epsilon : float
        The epsilon at which delta is measured.
    probs : tuple or "all"
        The shared binomials' levels (:func:`~skattr.laws._count_cells.shared_levels`).
    """
    worst = 0.0
    for pair in pairs:
        levels_in, w_in, rest_in = shared_levels(pair.shared_in, pair.lam_in, probs)
        levels_out, w_out, rest_out = shared_levels(pair.shared_out, pair.lam_out,
                                                    probs)
        powers_in = record_powers(pair.law_in, levels_in)
        powers_out = record_powers(pair.law_out, levels_out)
        terms = list(pair.moved_terms())
        flip = (slice(None, None, -1),) * pair.dims
        both = np.full(2, rest_in + rest_out)
        for (level_in, level_out), weight in _level_pairs(
                levels_in, w_in, levels_out, w_out, full=isinstance(probs, str)):
            t = np.maximum(convolve(powers_in[level_in], powers_out[level_out],
                                    method="direct"), 0.0)
            h = lattice_hockey_sticks(t, cov, pair.moved, epsilon)
            both[0] += weight * _moved_bound(h, terms)
            both[1] += weight * _moved_bound(h[flip], terms)
        worst = max(worst, float(both.max()))
    return min(1.0, worst * (1 + _ROUNDING))


def shaped_covariance(direction, floor: float) -> np.ndarray:
    """Return rho^2 I + (1 - rho^2) v v^T, v the unit direction, rho the floor.

    Its largest sd (along v) is 1; across v, ``floor``.
    """
    v = np.asarray(direction, dtype=float)
    norm = float(np.linalg.norm(v))
    dims = v.size
    if not norm > 0 or not np.isfinite(norm):
        return np.eye(dims)
    v = v / norm
    return floor ** 2 * np.eye(dims) + (1 - floor ** 2) * np.outer(v, v)


def cells_gaussian_scale(pairs, shape, epsilon: float, delta: float, *,
                         rtol: float = 5e-3, probs=LEVEL_PROBS) -> float:
    """Return a scale sigma whose noise N(0, sigma^2 shape) certifies (eps, delta).

    Bisection on sigma, from the scale that certifies every moved record
    moving every count by one (a valid start for any law); the value
    returned is one at which :func:`cells_gaussian_delta` was computed and
    found at most ``delta``.
    """
    if not 0 < delta < 1:
        raise NotCertifiableError(
            f"The counts' exact law certifies a delta in (0, 1); got {delta!r}.")
    shape = np.atleast_2d(np.asarray(shape, dtype=float))
    if not pairs:
        return 0.0
    inverse = np.linalg.inv(shape)
    dims = shape.shape[0]
    corners = np.array(list(np.ndindex(*(2,) * dims)), dtype=float) * 2 - 1
    widest = max(p.moved for p in pairs) * math.sqrt(
        float(np.einsum("ki,ij,kj->k", corners, inverse, corners).max()))
    hi = widest / analytic_mu(epsilon, delta / 2)

    def certified(sigma):
        return cells_gaussian_delta(pairs, sigma ** 2 * shape, epsilon,
                                    probs) <= delta

    while not certified(hi):
        hi *= 2
        if hi > 1e6 * widest:
            raise NotCertifiableError(
                "No Gaussian noise certified these counts' exact law.")
    lo = hi / 2
    while certified(lo):
        hi, lo = lo, lo / 2
        if lo < 1e-6 * widest:
            return hi
    while hi - lo > rtol * hi:
        mid = math.sqrt(lo * hi)
        if certified(mid):
            hi = mid
        else:
            lo = mid
    return hi
