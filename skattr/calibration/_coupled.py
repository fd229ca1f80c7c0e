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
(W, delta)-closeness and its almost-sure bound.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from skattr.calibration._gaussian import (
    _bracket_up,
    _gaussian_delta_unchecked,
    analytic_mu,
)
from skattr.exceptions import NotCertifiableError
from skattr.laws._distances import CoupledDistances, least_certified

__all__ = ["coupled_epsilon", "coupled_gaussian_delta",
           "coupled_required_noise_variance", "pairs_coupled_delta",
           "pairs_coupled_epsilon", "pairs_coupled_variance"]

_BISECTION_STEPS = 60
# Relative slack added to a computed delta before it is compared with the one
# asked for: the sum of at most a few thousand terms, each within 1e-12
# relative of the exact profile (``_gaussian.py`` bounds one evaluation).
_ROUNDING = 1e-9


def coupled_gaussian_delta(law: CoupledDistances, sigma: float,
                           epsilon: float) -> float:
    """Return E[gaussian_delta(D / sigma, epsilon)], a certified delta.

    Parameters
    ----------
    law : CoupledDistances
        The law of the coupled distance D (or of a variable stochastically
        larger than it). Mass missing from its probabilities is counted as
        distance infinity, that is, delta 1.
    sigma : float
        The standard deviation of the Gaussian noise (0: none).
    epsilon : float
        The epsilon at which delta is measured.

    Examples
    --------
    One record in twenty differs by one, with probability 0.3 each:

    >>> from skattr.calibration._coupled import coupled_gaussian_delta
    >>> from skattr.laws._distances import CoupledDistances, least_certified
    >>> law = CoupledDistances.binomial(20, 0.3, 1.0)
    >>> round(coupled_gaussian_delta(law, 5.0, 1.0), 4)
    0.2128
    >>> round(coupled_gaussian_delta(law, 25.0, 1.0), 6)
    0.000156
    """
    d, p = law.distances, law.probs
    if sigma <= 0:
        return float(p[d > 0].sum() + law.missing)
    deltas = _gaussian_delta_unchecked(d / sigma, np.full(d.shape, epsilon))
    return float(deltas @ p + law.missing)


def _certifies(law, sigma: float, epsilon: float, delta: float) -> float:
    """Return >= 0 when N(0, sigma^2) certifies (epsilon, delta) (rounding in)."""
    return delta - coupled_gaussian_delta(law, sigma, epsilon) * (1 + _ROUNDING)


def coupled_required_noise_variance(law: CoupledDistances, epsilon: float,
                                    delta: float) -> float:
    """Least variance of Gaussian noise whose coupled delta is at most ``delta``.

    Bisection on sigma (the coupled delta is decreasing in it), bracketed
    from where the distance's upper delta/2-quantile alone is certified at
    delta/2; the value returned is a checked, certified one.
    """
    if not 0 < delta < 1:
        raise NotCertifiableError(
            "Gaussian noise through a coupling certifies a delta in (0, 1); "
            f"got delta={delta!r}.")
    if law.missing >= delta:
        raise NotCertifiableError(
            "The coupled distance is unbounded with probability at least "
            f"delta={delta:g}: no noise certifies it.")

    def certified(sigma: float) -> bool:
        return _certifies(law, sigma, epsilon, delta) >= 0

    if certified(0.0):
        return 0.0
    try:
        start = law.closeness(delta / 2)
    except NotCertifiableError:
        start = float(law.distances.max())
    hi = _bracket_up(lambda s: _certifies(law, s, epsilon, delta),
                     max(start, 1e-300) / analytic_mu(epsilon, delta / 2))
    if hi is None:  # pragma: no cover - the largest distance alone certifies
        raise NotCertifiableError("No Gaussian noise certifies this coupling.")
    lo = hi / 2.0
    while lo > 1e-300 and certified(lo):
        hi, lo = lo, lo / 2.0
    sigma = _least_certified(certified, lo, hi, 1e-6)
    if not sigma < math.sqrt(sys.float_info.max):
        raise NotCertifiableError(
            f"Gaussian noise of sd {sigma:.3g} certifies this release: its "
            "variance is beyond floating point. Clip the column to a "
            "plausible range with bounds={column: (low, high)}.")
    return sigma ** 2


def coupled_epsilon(law: CoupledDistances, variance: float,
                    delta: float) -> float:
    """Least epsilon (rounded up) whose coupled delta is at most ``delta``.

    ``inf`` when no epsilon is certified (no noise and the statistics may
    differ with probability above delta). A ledger's joint epsilon of
    several noisy copies of one count, whose sufficient statistic is F plus
    Gaussian noise of ``variance``.
    """
    sigma = math.sqrt(max(variance, 0.0))

    def certified(epsilon: float) -> bool:
        return _certifies(law, sigma, epsilon, delta) >= 0

    if certified(0.0):
        return 0.0
    if sigma == 0.0:
        return math.inf
    hi = _bracket_up(lambda e: _certifies(law, sigma, e, delta), 1.0)
    if hi is None:
        return math.inf
    return _least_certified(certified, 0.0, hi, 1e-9)


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
    return max((least_certified(laws, lambda law: coupled_required_noise_variance(
        law, epsilon, delta)) for laws in per_pair), default=0.0)


def pairs_coupled_delta(per_pair, sigma: float, epsilon: float) -> float:
    """Certified delta at ``epsilon`` of every pair plus N(0, sigma^2)."""
    return max((min(coupled_gaussian_delta(law, sigma, epsilon)
                    for law in laws) for laws in per_pair), default=0.0)


def pairs_coupled_epsilon(per_pair, variance: float, delta: float) -> float:
    """Certified epsilon at ``delta`` of every pair plus N(0, variance)."""
    return max((min(coupled_epsilon(law, variance, delta)
                    for law in laws) for laws in per_pair), default=0.0)
