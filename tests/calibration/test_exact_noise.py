"""Least Gaussian noise for exact discrete laws, against independent quadrature."""

import numpy as np
import pytest
from _oracle import discrete_release_delta
from scipy import integrate, stats

from skattr.calibration._exact_noise import (
    exact_leakage,
    exact_pairs_delta,
    exact_required_noise_variance,
)
from skattr.exceptions import NotCertifiableError


def _binomial_pair(n, pa, pb):
    x = np.arange(n + 1, dtype=float)
    return (x, stats.binom.pmf(x, n, pa), x, stats.binom.pmf(x, n, pb))


PAIRS = [_binomial_pair(20, 0.4, 0.6), _binomial_pair(20, 0.3, 0.5)]


@pytest.mark.slow
@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-3), (0.5, 1e-2), (3.0, 1e-4)])
def test_the_least_variance_certifies_and_less_does_not(epsilon, delta):
    v = exact_required_noise_variance(PAIRS, epsilon, delta)
    assert v > 0
    # Certified by the library's profile and by independent quadrature.
    assert exact_pairs_delta(PAIRS, v, epsilon) <= delta
    exact = max(discrete_release_delta((xa, pa), (xb, pb), "gaussian",
                                       float(np.sqrt(v)), epsilon)
                for xa, pa, xb, pb in PAIRS)
    assert exact <= delta * (1 + 1e-6)
    # Least: 0.9x the variance no longer certifies (quadrature says so too).
    less = max(discrete_release_delta((xa, pa), (xb, pb), "gaussian",
                                      float(np.sqrt(0.9 * v)), epsilon)
               for xa, pa, xb, pb in PAIRS)
    assert less > delta


def _adaptive_delta(pair, sd, epsilon):
    """Hockey-stick divergence by adaptive quadrature, both orders."""
    xa, pa, xb, pb = pair

    def density(y, x, p):
        return float(np.sum(p * stats.norm.pdf(y - x, scale=sd)))

    def excess(y, first, second):
        return max(density(y, *first) - np.exp(epsilon) * density(y, *second), 0.0)

    out = 0.0
    for first, second in (((xa, pa), (xb, pb)), ((xb, pb), (xa, pa))):
        value, _ = integrate.quad(
            excess, xa.min() - 40 * sd, xa.max() + 40 * sd, args=(first, second),
            limit=500, epsabs=1e-14, epsrel=1e-13,
            points=np.linspace(xa.min() - 5, xa.max() + 5, 121))
        out = max(out, value)
    return out


@pytest.mark.slow
def test_the_profile_matches_adaptive_quadrature():
    # The trapezoid oracle errs by ~1e-9 at the kink of (p - e^eps q)_+;
    # adaptive quadrature with breakpoints is accurate to ~1e-14.
    v, epsilon = 4.0, 1.0
    exact = max(_adaptive_delta(pair, 2.0, epsilon) for pair in PAIRS)
    certified = exact_pairs_delta(PAIRS, v, epsilon)
    # Rounded to the certified side, and close.
    assert exact - 1e-13 <= certified <= exact + 1e-9


def test_the_worst_pair_decides():
    epsilon, delta = 1.0, 1e-3
    each = [exact_required_noise_variance([p], epsilon, delta) for p in PAIRS]
    assert exact_required_noise_variance(PAIRS, epsilon, delta) == pytest.approx(
        max(each), rel=1e-6)


def test_leakage_is_the_epsilon_of_the_raw_laws():
    delta = 1e-3
    eps = exact_leakage(PAIRS, delta)
    raw = max(discrete_release_delta((xa, pa), (xb, pb), "gaussian", 0.0, eps)
              for xa, pa, xb, pb in PAIRS)
    assert raw <= delta * (1 + 1e-9)
    below = max(discrete_release_delta((xa, pa), (xb, pb), "gaussian", 0.0,
                                       0.95 * eps) for xa, pa, xb, pb in PAIRS)
    assert below > delta


def test_delta_zero_is_refused():
    with pytest.raises(NotCertifiableError, match="cannot certify delta = 0"):
        exact_required_noise_variance(PAIRS, 1.0, 0.0)


def test_exact_leakage_with_noise_is_the_max_of_every_pairs_epsilon():
    # The screening (one inversion, the other pairs checked at its epsilon)
    # must give the maximum of the per-pair inversions, with noise or none.
    from skattr.calibration._exact_noise import exact_leakage
    from skattr.calibration._exact_profile import discrete_epsilon
    from skattr.theta import count_pmf

    pairs = []
    for p in ([0.3, 0.5], [0.25, 0.55], [0.35, 0.45]):
        (xa, pa), (xb, pb) = (count_pmf(a, 40, p) for a in (0.4, 0.6))
        pairs.append((xa, pa, xb, pb))
    for variance in (0.0, 4.0):
        want = max(discrete_epsilon(*pair, noise="gaussian",
                                    scale=variance ** 0.5, delta=1e-3)
                   for pair in pairs)
        assert exact_leakage(pairs, 1e-3, variance) == pytest.approx(want,
                                                                     rel=1e-9)
