"""Noise certified through a coupling of the two laws of F.

For any two laws P_a, P_b of the statistic and any coupling pi of them,
the noisy releases P_a * N and P_b * N are mixtures, under pi, of the pairs
N(x, sigma^2) and N(y, sigma^2); the hockey-stick divergence is jointly
convex, so

    delta(P_a * N, P_b * N; epsilon) <= E_pi[ gaussian_delta(|x - y| / sigma) ].

The right side needs only the law of the coupled distance D = |x - y|, and
since gaussian_delta is increasing in the distance, any law that is
stochastically larger than D's certifies too. The laws hand these functions
such a distance law (:class:`skattr.laws._distances.CoupledDistances`,
from ``StatisticLaw.coupled_distances``), which also gives the coupling's
(W, delta)-closeness.
"""

from __future__ import annotations

import math

import numpy as np

from skattr.calibration._gaussian import _gaussian_delta_unchecked, analytic_mu
from skattr.exceptions import InvalidParameterError, NotCertifiableError

__all__ = ["coupled_epsilon", "coupled_gaussian_delta",
           "coupled_required_noise_variance", "pairs_coupled_delta",
           "pairs_coupled_epsilon", "pairs_coupled_variance"]

_BISECTION_STEPS = 60
# Relative slack added to a computed delta before it is compared with the one
# asked for: the sum of at most a few thousand terms, each within 1e-12
# relative of the exact profile (``_gaussian.py`` bounds one evaluation).
_ROUNDING = 1e-9


def _check_distances(distances, probs) -> tuple[np.ndarray, np.ndarray]:
    d = np.asarray(distances, dtype=float).ravel()
    p = np.asarray(probs, dtype=float).ravel()
    if (d.shape != p.shape or d.size == 0 or not np.all(np.isfinite(d))
            or not np.all(np.isfinite(p)) or np.any(d < 0) or np.any(p < 0)):
        raise InvalidParameterError(
            "A coupled distance law needs finite non-negative distances and "
            "probabilities of the same length; got "
            f"{d.size} distances and {p.size} probabilities.")
    if p.sum() > 1 + 1e-9:
        raise InvalidParameterError(
            f"A coupled distance law's probabilities sum to {p.sum():.6g} > 1.")
    return d, p


def coupled_gaussian_delta(distances, probs, sigma: float,
                           epsilon: float) -> float:
    """Return E[gaussian_delta(D / sigma, epsilon)], a certified delta.

    Parameters
    ----------
    distances, probs : array-like
        The law of the coupled distance D (or of a variable stochastically
        larger than it): its values and their probabilities. Mass missing
        from ``probs`` (they sum to less than 1) is counted as distance
        infinity, that is, delta 1.
    sigma : float
        The standard deviation of the Gaussian noise (0: none).
    epsilon : float
        The epsilon at which delta is measured.

    Examples
    --------
    One record in twenty differs by one, with probability 0.3 each:

    >>> from scipy import stats
    >>> from skattr.calibration._coupled import coupled_gaussian_delta
    >>> d = range(21)
    >>> probs = stats.binom.pmf(d, 20, 0.3)
    >>> round(coupled_gaussian_delta(d, probs, 5.0, 1.0), 4)
    0.2128
    >>> round(coupled_gaussian_delta(d, probs, 25.0, 1.0), 6)
    0.000156
    """
    d, p = _check_distances(distances, probs)
    missing = max(0.0, 1.0 - p.sum())
    if sigma <= 0:
        return float(p[d > 0].sum() + missing)
    deltas = _gaussian_delta_unchecked(d / sigma, np.full(d.shape, epsilon))
    return float(deltas @ p + missing)


def coupled_required_noise_variance(distances, probs, epsilon: float,
                                    delta: float) -> float:
    """Least variance of Gaussian noise whose coupled delta is at most ``delta``.

    Bisection on sigma (the coupled delta is decreasing in it) from a start
    that certifies the largest distance alone; the value returned is a
    checked, certified one (rounded up, with a relative slack for the sum's
    rounding).
    """
    d, p = _check_distances(distances, probs)
    if not 0 < delta < 1:
        raise NotCertifiableError(
            "Gaussian noise through a coupling certifies a delta in (0, 1); "
            f"got delta={delta!r}.")
    if max(0.0, 1.0 - p.sum()) >= delta:
        raise NotCertifiableError(
            "The coupled distance is unbounded with probability at least "
            f"delta={delta:g}: no noise certifies it.")

    def certified(sigma: float) -> bool:
        return coupled_gaussian_delta(d, p, sigma, epsilon) * (1 + _ROUNDING) \
            <= delta

    if certified(0.0):
        return 0.0
    # Start where the distance's upper delta/2-quantile alone would be
    # certified at delta/2: usually just above the answer.
    order = np.argsort(d)
    tail = np.cumsum(p[order][::-1])[::-1] + max(0.0, 1.0 - p.sum())
    beyond = np.flatnonzero(tail <= delta / 2)
    start = float(d[order][beyond[0] - 1] if beyond.size and beyond[0] > 0
                  else d.max())
    hi = max(start, 1e-300) / analytic_mu(epsilon, delta / 2)
    for _ in range(200):
        if certified(hi):
            break
        hi *= 2.0
    else:  # pragma: no cover - the largest distance alone certifies hi
        raise NotCertifiableError("No Gaussian noise certifies this coupling.")
    lo = hi / 2.0
    while lo > 1e-300 and certified(lo):
        hi, lo = lo, lo / 2.0
    return _least_certified(certified, lo, hi, 1e-6) ** 2


def coupled_epsilon(distances, probs, variance: float, delta: float) -> float:
    """Least epsilon (rounded up) whose coupled delta is at most ``delta``.

    ``inf`` when no epsilon is certified (no noise and the statistics may
    differ with probability above delta). A ledger's joint epsilon of
    several noisy copies of one count, whose sufficient statistic is F plus
    Gaussian noise of ``variance``.
    """
    d, p = _check_distances(distances, probs)
    sigma = math.sqrt(max(variance, 0.0))

    def certified(epsilon: float) -> bool:
        return coupled_gaussian_delta(d, p, sigma, epsilon) * (1 + _ROUNDING) \
            <= delta

    if certified(0.0):
        return 0.0
    if sigma == 0.0 or not certified(1e6):
        return math.inf
    lo, hi = 0.0, 1.0
    while not certified(hi):
        lo, hi = hi, 2.0 * hi
    return _least_certified(certified, lo, hi, 1e-9)


def _least_certified(certified, lo: float, hi: float, rtol: float) -> float:
    """Bisect [lo, hi] (lo fails, hi certifies); return a certified value."""
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if certified(mid):
            hi = mid
        else:
            lo = mid
        if hi - lo <= rtol * hi:
            break
    return hi


# Over the pairs of a secret: each pair has one or more distance laws, each
# valid (alternative couplings); a pair is as private as its best, and the
# release as its worst pair.

def pairs_coupled_variance(per_pair, epsilon: float, delta: float) -> float:
    """Least Gaussian variance certifying every pair by its best coupling."""
    return max((min(coupled_required_noise_variance(law.distances, law.probs,
                                                    epsilon, delta)
                    for law in laws) for laws in per_pair), default=0.0)


def pairs_coupled_delta(per_pair, sigma: float, epsilon: float) -> float:
    """Certified delta at ``epsilon`` of every pair plus N(0, sigma^2)."""
    return max((min(coupled_gaussian_delta(law.distances, law.probs, sigma,
                                           epsilon) for law in laws)
                for laws in per_pair), default=0.0)


def pairs_coupled_epsilon(per_pair, variance: float, delta: float) -> float:
    """Certified epsilon at ``delta`` of every pair plus N(0, variance)."""
    return max((min(coupled_epsilon(law.distances, law.probs, variance, delta)
                    for law in laws) for laws in per_pair), default=0.0)
