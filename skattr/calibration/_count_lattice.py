"""Gaussian noise on a vector of counts whose law is a lattice law: delta, scale.

The count law's side (the floor trick: a known lattice law T_R of the shared
records, the moved records' known rows K_out and K_in and their unknown part
u) is :mod:`skattr.laws._count_cells`'s; this computes

    delta <= E_{R, a} max_u H_eps((T_R + K_out) * N || (T_R + K_in) * N + u)

for N ~ N(0, Sigma), and the least scale of a noise shape that certifies a
delta.

Each term, bounded outward. p(y) = sum_k t_k phi(y - k) is the first
law's density plus noise and q(y) = sum_k t'_k phi(y - u - k) the second's
shifted. Cut space into cubes Q of side h = 1 / r (r whole, so every
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
reaches every (cube, point) pair) and each FFT value is widened by 1e-10 of
its kernel's largest value; the cubes of least mass, 1e-8 of p's in all,
are left out and 1e-8 added. The errors are second order in h: the bound
sits within a few percent of delta's exact value at r = 6 cubes a sd.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft as sp_fft
from scipy import special
from scipy.signal import convolve

from skattr.calibration._gaussian import analytic_mu
from skattr.exceptions import NotCertifiableError
from skattr.laws._count_cells import (
    LEVEL_PROBS,
    record_powers,
    shared_levels,
)

__all__ = ["cells_gaussian_delta", "cells_gaussian_scale", "lattice_hockey_pairs",
           "lattice_hockey_sticks", "shaped_covariance"]

#: Cubes per sd of the noise's narrowest direction.
CUBES_PER_SD = 6
#: The window around every lattice point, in sds of each coordinate.
_WINDOW = 8.0
#: FFT error, relative to a kernel's largest value (generous: its rounding is
#: about 1e-16 log(size) times the kernel's L2 norm, some 1e-14 here).
_FFT = 1e-10
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


class _Grid:
    """The cubes, kernels and their spectra for lattice laws of one shape.

    Every law spread on it has ``shape`` (zeros padded); shifts reach up to
    ``reach`` a coordinate.
    """

    def __init__(self, shape, cov, reach: int, refine: int | None = None):
        cov = np.atleast_2d(np.asarray(cov, dtype=float))
        dims = len(shape)
        sd = np.sqrt(np.diag(cov))
        narrowest = math.sqrt(float(np.linalg.eigvalsh(cov)[0]))
        r = refine or max(1, math.ceil(CUBES_PER_SD / narrowest))
        self.shape, self.dims, self.r, self.h = tuple(shape), dims, r, 1.0 / r
        lengths = np.array(shape)
        lo = np.floor(-_WINDOW * sd * r).astype(int)
        hi = np.ceil(((lengths - 1) + _WINDOW * sd) * r).astype(int)
        grid_lo, grid_hi = lo - reach * r, hi + reach * r
        offsets = [np.arange(grid_lo[j] - r * (lengths[j] - 1), grid_hi[j] + 1)
                   for j in range(dims)]
        # Full convolution index n is cube i = n + offsets[j][0]; keep the grid.
        self.keep = tuple(slice(grid_lo[j] - offsets[j][0],
                                grid_hi[j] - offsets[j][0] + 1) for j in range(dims))
        phi, grad, rests = _kernels(offsets, cov, self.h)
        kernels = [phi, *grad, *rests]
        self.slacks = [_FFT * float(np.abs(k).max()) for k in kernels]
        self.upsampled = tuple((lengths - 1) * r + 1)
        self.full = tuple(u + len(o) - 1 for u, o in zip(self.upsampled, offsets,
                                                           strict=True))
        self.fshape = tuple(sp_fft.next_fast_len(n, real=True) for n in self.full)
        self.spectra = [sp_fft.rfftn(k, self.fshape) for k in kernels]
        grid_shape = tuple(int(x) for x in grid_hi - grid_lo + 1)
        self.strides = np.array([int(np.prod(grid_shape[j + 1:]))
                                 for j in range(dims)])
        self.core = np.ravel_multi_index(
            np.indices(tuple(hi - lo + 1)).reshape(dims, -1) + (reach * r),
            grid_shape)

    def spread(self, law):
        """Return the kernels convolved with the lattice law (flat arrays)."""
        padded = np.zeros(self.upsampled)
        where = tuple(slice(0, (n - 1) * self.r + 1, self.r) for n in law.shape)
        padded[where] = law
        spectrum = sp_fft.rfftn(padded, self.fshape)
        crop = tuple(slice(0, n) for n in self.full)
        return [sp_fft.irfftn(spectrum * k, self.fshape)[crop][self.keep].ravel()
                for k in self.spectra]

    def hockey(self, first, second, low, high, epsilon: float):
        """Return (forward, backward) over the shift box [low, high] (spread laws)."""
        low = np.broadcast_to(np.asarray(low, dtype=int), (self.dims,))
        high = np.broadcast_to(np.asarray(high, dtype=int), (self.dims,))
        boxes = list(np.ndindex(*(high - low + 1)))
        shifts = [int((np.array(b) + low) @ self.strides) * self.r for b in boxes]
        forward = _one_way(first, second, self.slacks, shifts, self.core, self.h,
                           self.dims, epsilon)
        backward = _one_way(second, first, self.slacks, [-x for x in shifts],
                            self.core, self.h, self.dims, epsilon)
        out_shape = tuple(high - low + 1)
        return forward.reshape(out_shape), backward.reshape(out_shape)


def lattice_hockey_pairs(t_p, t_q, low, high, cov, epsilon: float,
                         refine: int | None = None):
    """Return bounds on both hockey-sticks of T_p * N and T_q * N + u, u in a box.

    Parameters
    ----------
    t_p, t_q : ndarray of J dimensions
        The lattice laws of T_p and T_q (entry at x: P(T = x)), nonnegative.
    low, high : int or array-like of J ints
        The box of integer shifts u, ``low <= u <= high`` per coordinate.
    cov : ndarray of shape (J, J)
        The noise's covariance (positive definite).
    epsilon : float
        The epsilon of the hockey-stick divergence.
    refine : int, optional
        Cubes per unit of the lattice (default: ``CUBES_PER_SD`` a sd of the
        narrowest direction).

    Returns
    -------
    forward, backward : ndarray of shape (high - low + 1)
        At u - low: upper bounds on H_eps(T_p * N || T_q * N + u) and on
        H_eps(T_q * N + u || T_p * N).
    """
    t_p, t_q = np.asarray(t_p, dtype=float), np.asarray(t_q, dtype=float)
    shape = tuple(max(x, y) for x, y in zip(t_p.shape, t_q.shape, strict=True))
    reach = int(max(np.abs(low).max(), np.abs(high).max()))
    grid = _Grid(shape, cov, reach, refine)
    return grid.hockey(grid.spread(t_p), grid.spread(t_q), low, high, epsilon)


def _one_way(first, second, slacks, shifts, core, h, dims, epsilon):
    """Bound int (p - e^eps q(. - u))_+ for p from ``first``, q from ``second``.

    ``first`` and ``second`` are the flat arrays of the spread kernels (phi,
    its J partial derivatives, then the remainders point_p, mean_p, point_q,
    mean_q); ``shifts`` are the flat offsets r u . strides; ``core`` the
    cubes covering every lattice point's window.
    """
    e = math.exp(epsilon)
    volume = h ** dims
    p, q = first[0], second[0]
    p_slack = slacks[0]
    g_first, g_second = first[1:1 + dims], second[1:1 + dims]
    g_slack = (h / 2) * sum(slacks[1:1 + dims]) * (1 + e)
    s1, s2, s3, s4 = slacks[1 + dims:]
    point_p, mean_p = first[1 + dims], first[2 + dims]
    point_q, mean_q = np.maximum(second[3 + dims], 0), np.maximum(second[4 + dims], 0)
    # Keep the cubes that can matter: on a cube, int f_+ <= int p <=
    # volume (p(c) + mean remainder); the least of them, up to _DROPPED in
    # all, are dropped and _DROPPED is added to every bound.
    upper = volume * (np.maximum(p[core], 0) + p_slack
                      + np.maximum(mean_p[core], 0) + s2)
    order = np.argsort(upper)
    cut = np.searchsorted(np.cumsum(upper[order]), _DROPPED, side="right")
    flat = np.sort(core[order[cut:]])
    point_p = np.maximum(point_p[flat], 0) + s1 + e * s3
    mean_p = np.maximum(mean_p[flat], 0) + s2 + e * s4
    p_core = p[flat] + p_slack * (1 + e)
    g_core = [g[flat] for g in g_first]
    outside = 2 * dims * special.ndtr(-_WINDOW) + _DROPPED
    out = np.empty(len(shifts))
    for index, shift in enumerate(shifts):
        moved = flat - shift
        a = p_core - e * q[moved]
        halves = [(h / 2) * np.abs(gc - e * g[moved])
                  for gc, g in zip(g_core, g_second, strict=True)]
        raised = a + point_p + e * point_q[moved]
        # Where f <= raised + |g.(y - c)| <= raised + sum(halves) + g_slack
        # <= 0 on the whole cube, the cube adds nothing.
        live = raised + sum(halves) + g_slack > 0
        halves = [c[live] for c in halves]
        pointwise = _mean_positive(raised[live], halves, g_slack)
        averaged = (_mean_positive(a[live], halves, g_slack) + mean_p[live]
                    + e * mean_q[moved[live]])
        out[index] = min(1.0, volume * float(np.minimum(pointwise, averaged).sum())
                         + outside)
    return out


def lattice_hockey_sticks(t, cov, reach: int, epsilon: float,
                          refine: int | None = None) -> np.ndarray:
    """Return bounds on H_eps(T * N || T * N + s) for every s in [-reach, reach]^J.

    :func:`lattice_hockey_pairs` of T against itself; the entry at
    s + reach bounds the divergence from above.
    """
    forward, _ = lattice_hockey_pairs(t, t, -reach, reach, cov, epsilon, refine)
    return forward


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


def cells_gaussian_delta(pairs, cov, epsilon: float, probs=LEVEL_PROBS,
                         spare: float = 1e-6) -> float:
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
    spare : float
        Terms of least weight, up to this much in all, are counted as
        delta 1 rather than computed.

    Notes
    -----
    Per pair and direction, the sum over (R, a) of their weight times
    max_u H_eps((T_R + K_out) * N || (T_R + K_in) * N + u) (the module
    docstring of :mod:`skattr.laws._count_cells`), each term bounded by
    :func:`lattice_hockey_pairs`.
    """
    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    worst = 0.0
    for pair in pairs:
        levels_in, w_in, rest_in = shared_levels(pair.shared_in, pair.lam_in, probs)
        levels_out, w_out, rest_out = shared_levels(pair.shared_out, pair.lam_out,
                                                    probs)
        powers_in = record_powers(pair.law_in, levels_in)
        powers_out = record_powers(pair.law_out, levels_out)
        terms = [(weight * w_k, key, term)
                 for key, w_k in _level_pairs(levels_in, w_in, levels_out, w_out,
                                              full=isinstance(probs, str))
                 for term in pair.moved_terms() for weight in (term[0],)]
        terms.sort(key=lambda x: -x[0])
        tail = np.cumsum([w for w, _, _ in terms][::-1])[::-1]
        both = np.full(2, rest_in + rest_out)
        size = max(levels_in) + max(levels_out) + pair.moved + 1
        grid = _Grid((size,) * pair.dims, cov, pair.moved)
        shared, spread = {}, {}
        for (weight, key, term), left in zip(terms, tail, strict=True):
            if left <= spare:
                both += left
                break
            if key not in shared:
                shared[key] = np.maximum(convolve(
                    powers_in[key[0]], powers_out[key[1]], method="direct"), 0.0)
            _, a_in, a_out, known_in, known_out = term
            for side, count, known in (("out", a_out, known_out),
                                       ("in", a_in, known_in)):
                if (key, side, count) not in spread:
                    spread[key, side, count] = grid.spread(np.maximum(convolve(
                        shared[key], known, method="direct"), 0.0))
            forward, backward = grid.hockey(
                spread[key, "out", a_out], spread[key, "in", a_in], -a_out, a_in,
                epsilon)
            both += weight * np.array([forward.max(), backward.max()])
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
                         rtol: float = 5e-3, probs=LEVEL_PROBS,
                         spare: float = 1e-6) -> float:
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
                                    probs, spare) <= delta

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
