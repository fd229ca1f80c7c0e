"""Jensen's bound on E phi(sum_j Z_j) from the marginal laws of the Z_j alone.

Bound (c) of :mod:`skattr.calibration._joint_coupled`: phi(z) = g_eps(sqrt z),
the exact Gaussian profile (Balle and Wang) in the squared Mahalanobis
distance, is convex up to z_c = 2 (sqrt(1 + eps^2) - 1) and concave beyond.
psi, phi on [0, z_1] (z_1 <= z_c) continued by a line that lies above phi,
is convex and at least phi (:func:`majorants`), so for weights w_j >= 0
summing to 1

    E phi(sum_j Z_j) <= sum_j w_j E psi(Z_j / w_j),

whatever the dependence of the Z_j. :func:`jensen_least` searches the
weights (every w gives a bound; the least seen is kept).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from skattr.calibration._gaussian import _gaussian_delta_unchecked

__all__ = ["jensen_bound", "jensen_least", "majorants", "psi"]

#: Steps of the mirror descent on Jensen's weights.
_JENSEN_STEPS = 12

#: Where the convex majorants leave phi for a line, as shares of z_c.
_JUNCTIONS = (1.0, 0.6, 0.3, 0.0)


def _phi(z, epsilon: float) -> np.ndarray:
    z = np.asarray(z, dtype=float)
    return _gaussian_delta_unchecked(np.sqrt(z), np.full(z.shape, epsilon))


@functools.lru_cache(maxsize=64)
def majorants(epsilon: float) -> tuple[tuple[float, float, float], ...]:
    """Convex majorants of phi: (z_1, phi(z_1), slope), phi then a line from z_1.

    phi is convex on [0, z_c] and concave beyond, and phi' is largest at
    z_c. From z_1 <= z_c the line of slope m = sup_{z > z_1} (phi(z) -
    phi(z_1)) / (z - z_1) lies above phi, and m >= phi'(z_1), so phi on
    [0, z_1] continued by it is convex. The sup is the chord to the tangent
    point z_t >= z_c, where F(z) = phi'(z) (z - z_1) - (phi(z) - phi(z_1))
    changes sign (F decreases on the concave part); phi' decreases there, so
    phi' at a point below z_t is at least m: the slope is read at a point
    strictly below the bisection's lower end. Values and slopes are rounded
    up (1e-12, 1e-9).
    """
    zc = 2.0 * (math.sqrt(1.0 + epsilon * epsilon) - 1.0)
    found = []
    for share in _JUNCTIONS:
        z1 = share * zc
        phi1 = float(_phi(z1, epsilon))
        if share == 1.0:
            slope = float(_phi_slope(np.array(zc), epsilon)) * (1 + 1e-12)
        else:
            def gap(z, z1=z1, phi1=phi1):
                return (float(_phi_slope(np.array(z), epsilon)) * (z - z1)
                        - (float(_phi(z, epsilon)) - phi1))

            lo, hi = zc, 4.0 * zc + 4.0
            while gap(hi) >= 0 and hi < 1e12:
                lo, hi = hi, 2.0 * hi
            for _ in range(80):
                mid = 0.5 * (lo + hi)
                if gap(mid) >= 0:
                    lo = mid
                else:
                    hi = mid
            point = zc + 0.999 * (lo - zc)
            slope = float(_phi_slope(np.array(point), epsilon)) * (1 + 1e-9)
        found.append((z1, phi1 * (1 + 1e-12), slope))
    return tuple(found)


def psi(x: np.ndarray, epsilon: float, majorant=None
         ) -> tuple[np.ndarray, np.ndarray]:
    """Return psi(x) and psi'(x): phi on [0, z_1], a line above phi beyond.

    ``majorant`` one of :func:`majorants` (default: the tangent at z_c).
    """
    z1 = (majorant or majorants(epsilon)[0])[0]
    xb = np.where(x <= z1, x, z1)
    return _psi_on(x, (_phi(xb, epsilon), _phi_slope(xb, epsilon)),
                   majorant or majorants(epsilon)[0])


def _psi_on(x: np.ndarray, curve, majorant) -> tuple[np.ndarray, np.ndarray]:
    """:func:`psi` from phi and phi' already read at x (``curve``).

    Only their values at x <= z_1 are read, so one curve serves every
    majorant.
    """
    z1, top, slope = majorant
    below = x <= z1
    value = np.where(below, curve[0], top + slope * (x - z1))
    return value, np.where(below, curve[1], slope)


def _phi_slope(z: np.ndarray, epsilon: float) -> np.ndarray:
    """phi'(z) = varphi(mu / 2 - eps / mu) / (2 mu), mu = sqrt z (0 at z = 0)."""
    mu = np.sqrt(np.maximum(z, 0.0))
    safe = np.where(mu > 0, mu, 1.0)
    a = safe / 2.0 - epsilon / safe
    return np.where(mu > 0, np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
                    / (2.0 * safe), 0.0)


def jensen_least(laws, epsilon: float) -> float:
    """Least over a few weights w of sum_j w_j E psi(Z_j / w_j).

    Every w on the simplex gives a bound: a few starts, then a fixed number
    of steps of mirror descent (the bound is convex in w, the perspective of
    a convex function), the least value seen kept.
    """
    if not epsilon > 0:
        return math.inf
    k = len(laws)
    values = np.concatenate([v for v, _ in laws])
    probs = np.concatenate([p for _, p in laws])
    group = np.repeat(np.arange(k), [v.size for v, _ in laws])

    curves = {}

    def value_and_gradient(w, majorant, start=None):
        x = values / w[group]
        # phi and phi' at x, read once for a start's every majorant.
        curve = curves.get(start)
        if curve is None:
            curve = (_phi(x, epsilon), _phi_slope(x, epsilon))
            if start is not None:
                curves[start] = curve
        at, slope = _psi_on(x, curve, majorant)
        total = float((w[group] * probs) @ at)
        grad = np.bincount(group, weights=probs * (at - x * slope),
                           minlength=k)
        return total, grad

    starts = [np.full(k, 1.0 / k)]
    scale = np.bincount(group, weights=probs * values, minlength=k)
    if scale.sum() > 0:
        for size in (scale, np.sqrt(scale)):
            w = np.maximum(size, 1e-9 * size.sum())
            starts.append(w / w.sum())
    # Every majorant and every w gives a bound: the best start of each
    # majorant, then descent on the best one's.
    best, w, grad, majorant = math.inf, None, None, None
    for candidate in majorants(epsilon):
        for index, start in enumerate(starts):
            value, g = value_and_gradient(start, candidate, index)
            if value < best:
                best, w, grad, majorant = value, start, g, candidate
    if w is None:
        # No majorant gave a finite bound (moves beyond floats' range): none.
        return math.inf
    step = 1.0
    for _ in range(_JENSEN_STEPS if k > 1 else 0):
        spread = float(np.ptp(grad)) or 1.0
        trial = w * np.exp(-step * (grad - grad.mean()) / spread)
        trial = np.maximum(trial / trial.sum(), 1e-15)
        trial /= trial.sum()
        value, g = value_and_gradient(trial, majorant)
        if value < best:
            best, w, grad = value, trial, g
            step *= 1.5
        else:
            step /= 4.0
    return best


def jensen_bound(values, probs, epsilon: float, weights=None) -> float:
    """Bound (c) on E phi(sum_j Z_j): sum_j w_j E psi(Z_j / w_j).

    ``weights`` None: the least over a few weights (each is valid).

    Examples
    --------
    Two Bernoulli(0.1) coordinates of value 0.04 (distance 0.2 at scale 1):
    with w = (1/2, 1/2), each term is E psi(2 Z_j), so the bound is
    0.1 phi(0.08), 0.1 g_1(0.283), the delta of one Bernoulli coordinate of
    distance sqrt(2) 0.2 alone (the sqrt(K) guarantee):

    >>> from skattr.calibration._jensen import jensen_bound
    >>> from skattr.calibration._gaussian import gaussian_delta
    >>> jb = jensen_bound([[0.04], [0.04]], [[0.1], [0.1]], 1.0, [0.5, 0.5])
    >>> bool(abs(jb - 0.1 * gaussian_delta(0.08 ** 0.5, 1.0)) < 1e-15)
    True
    """
    laws = [(np.asarray(v, float), np.asarray(p, float))
            for v, p in zip(values, probs, strict=True)]
    if weights is None:
        return jensen_least(laws, epsilon)
    w = np.asarray(weights, dtype=float)
    return min(float(sum(w[j] * (p @ psi(v / w[j], epsilon, majorant)[0])
                         for j, (v, p) in enumerate(laws)))
               for majorant in majorants(float(epsilon)))
