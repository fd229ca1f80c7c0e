"""Gaussian noise certified against the exact law of a statistic.

Where the law of F given each secret is known exactly (a count, or the sum of
an integer column: a pmf on a lattice), the release F + N(0, s) is certified
by the privacy profile of the two pmfs plus the noise, computed numerically and
rounded to the certified side (:mod:`skattr.calibration._exact_profile`); no Gaussian
approximation of F enters. Adding independent noise is post-processing, so each
pair's delta is non-increasing in s and a bisection on the standard deviation
returns the certified side.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict

import numpy as np

from skattr.calibration._gaussian import analytic_mu
from skattr.exceptions import NotCertifiableError

__all__ = ["exact_leakage", "exact_pairs_delta", "exact_required_noise_variance"]

_BISECTION_STEPS = 40

# The Theta mechanisms of one release share their exact laws ("auto" plans
# every candidate), so the least variance is kept per (laws, epsilon, delta).
_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 64


def _key(pairs, epsilon: float, delta: float) -> str:
    digest = hashlib.sha256(np.array([epsilon, delta]).tobytes())
    for pair in pairs:
        for part in pair:
            array = np.ascontiguousarray(part, dtype=float)
            digest.update(array.shape[0].to_bytes(8, "little"))
            digest.update(array.tobytes())
    return digest.hexdigest()


def _pair_delta(pair, sigma: float, epsilon: float) -> float:
    from skattr.calibration._exact_profile import discrete_pair_delta

    xa, pa, xb, pb = pair
    delta = discrete_pair_delta(xa, pa, xb, pb, noise="gaussian", scale=sigma,
                                epsilon=epsilon)
    # Fail closed: a value that is not a number certifies nothing.
    return delta if math.isfinite(delta) else 1.0


def exact_pairs_delta(pairs, variance: float, epsilon: float) -> float:
    """Return the largest delta at ``epsilon`` of the pairs plus N(0, variance).

    Parameters
    ----------
    pairs : list of tuple
        ``(support_a, pmf_a, support_b, pmf_b)`` per pair: the exact laws of F.
    variance : float
        Variance of the Gaussian noise (0 for none).
    epsilon : float
        The epsilon at which delta is measured.
    """
    sigma = math.sqrt(variance)
    return max((_pair_delta(pair, sigma, epsilon) for pair in pairs), default=0.0)


def exact_required_noise_variance(pairs, epsilon: float, delta: float) -> float:
    """Least variance of Gaussian noise certifying every pair's exact laws.

    The search for each pair starts from a standard deviation that certifies
    by joint convexity of the hockey-stick divergence (every coupling of the
    two pmfs moves mass by at most the supports' span D, and a Gaussian shift
    by D is certified at D / analytic_mu), checks it numerically, and bisects
    below it; the result is always a checked, certified value.
    """
    if delta <= 0:
        raise NotCertifiableError(
            "Gaussian noise cannot certify delta = 0; give a delta in (0, 1).")
    key = _key(pairs, epsilon, delta)
    if key not in _CACHE:
        _CACHE[key] = _least_variance(pairs, epsilon, delta)
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return _CACHE[key]


def _gaussian_guess(pair, epsilon: float, delta: float) -> float:
    """Return the noise sd a Gaussian approximation of the pair would need."""
    xa, pa, xb, pb = pair
    mean_a, mean_b = float(xa @ pa), float(xb @ pb)
    var = min(float((xa - mean_a) ** 2 @ pa), float((xb - mean_b) ** 2 @ pb))
    need = (mean_a - mean_b) ** 2 / analytic_mu(epsilon, delta) ** 2 - var
    return math.sqrt(max(need, 0.0))


def _least_variance(pairs, epsilon: float, delta: float) -> float:
    # Pairs in decreasing order of what a Gaussian approximation needs: the
    # first bisection then usually finds the worst, and the others pass the
    # check at it with one evaluation each.
    guesses = [_gaussian_guess(pair, epsilon, delta) for pair in pairs]
    worst = 0.0
    for index in np.argsort(guesses)[::-1]:
        pair = pairs[index]
        if _pair_delta(pair, worst, epsilon) <= delta:
            continue
        xa, _, xb, _ = pair
        span = float(max(np.max(xa), np.max(xb)) - min(np.min(xa), np.min(xb)))
        # Start just above the worst so far (or the guess), doubling up to the
        # start the coupling bound certifies.
        ceiling = max(span, 1e-300) / analytic_mu(epsilon, delta)
        lo = worst  # fails: checked above
        hi = min(max(1.25 * worst, guesses[index], 1e-9 * ceiling), ceiling)
        for _ in range(200):
            if _pair_delta(pair, hi, epsilon) <= delta:
                break
            lo, hi = hi, 2.0 * hi
        else:  # pragma: no cover - the coupling bound certifies the start
            raise NotCertifiableError(
                "No Gaussian noise certifies the exact laws of this pair.")
        # hi always certifies (checked); lo never does.
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            if _pair_delta(pair, mid, epsilon) <= delta:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-4 * hi:  # the certified side; 0.01% of sd
                break
        worst = hi
    return worst**2


def exact_leakage(pairs, delta: float, variance: float = 0.0) -> float:
    """Epsilon, at ``delta``, of releasing F + N(0, variance), from its exact laws.

    ``variance = 0`` is the raw statistic. The pairs whose means lie furthest
    apart are inverted first; every other pair is settled by one profile
    evaluation at the largest epsilon found (a pair within delta there has
    its own epsilon below it), so one inversion usually serves them all.
    """
    from skattr.calibration._exact_profile import discrete_epsilon

    sigma = math.sqrt(variance)
    order = np.argsort([-abs(float(xa @ pa - xb @ pb))
                        for xa, pa, xb, pb in pairs])
    worst = 0.0
    for i in order:
        if math.isinf(worst):
            break
        if _pair_delta(pairs[i], sigma, worst) <= delta:
            continue
        found = discrete_epsilon(*pairs[i], noise="gaussian", scale=sigma,
                                 delta=delta)
        # NaN would vanish in max(): fail closed.
        worst = max(worst, math.inf if math.isnan(found) else found)
    return worst
