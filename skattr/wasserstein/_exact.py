"""Discrete laws with exact masses (ints or binary fractions), certified rounding."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from skattr.exceptions import DataValidationError, InvalidParameterError

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
