"""The isotropic noise calibrator against the Gaussian privacy profile."""

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from skattr import MethodStep
from skattr.calibration._pair_noise import (
    covariances_equal,
    max_covariance_gap,
    pairs_certified,
    pairs_delta,
    raw_leakage_epsilon,
    required_noise_variance,
)
from skattr.exceptions import NotCertifiableError
from skattr.laws._gaussian import PairLaws


def profile(gap, sigma, epsilon):
    """delta(epsilon) of N(0, sigma^2) against N(gap, sigma^2) (Balle & Wang Thm 8)."""
    if gap == 0:
        return 0.0
    a = gap / (2 * sigma)
    b = epsilon * sigma / gap
    return float(stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b))


def hockey_stick(gap, var_a, var_b, epsilon):
    """max over both orders of int (p - e^eps q)_+ for two 1-D Gaussians, by quad."""

    def one_way(mean_p, var_p, mean_q, var_q):
        sd_p, sd_q = math.sqrt(var_p), math.sqrt(var_q)

        def integrand(x):
            return max(stats.norm.pdf(x, mean_p, sd_p)
                       - math.exp(epsilon) * stats.norm.pdf(x, mean_q, sd_q), 0.0)

        lo = min(mean_p - 12 * sd_p, mean_q - 12 * sd_q)
        hi = max(mean_p + 12 * sd_p, mean_q + 12 * sd_q)
        grid = np.linspace(lo, hi, 41)
        return sum(integrate.quad(integrand, u, v, epsabs=1e-14, epsrel=1e-10)[0]
                   for u, v in zip(grid[:-1], grid[1:], strict=True))

    return max(one_way(gap, var_a, 0.0, var_b), one_way(0.0, var_b, gap, var_a))


def laws(gaps, var_a, var_b=None):
    """One-statistic laws: pair i has gap gaps[i], variances var_a[i] and var_b[i]."""
    gaps = np.atleast_1d(np.asarray(gaps, dtype=float))
    var_a = np.broadcast_to(np.asarray(var_a, dtype=float), gaps.shape)
    var_b = var_a if var_b is None else np.broadcast_to(
        np.asarray(var_b, dtype=float), gaps.shape)
    m = gaps.size
    return PairLaws(gaps[:, None], var_a.reshape(m, 1, 1).copy(),
                    var_b.reshape(m, 1, 1).copy(), np.arange(m), m)


EPSILON, DELTA = 0.5, 1e-5
CASES = [(1.0, 0.0), (1.0, 0.01), (0.3, 0.001), (2.0, 1.5), (1e-3, 1e-9)]


def _classic(gap, var, epsilon, delta):
    # Zhang et al. Alg. 1: sigma = c d / epsilon covers the data's own variance.
    c = math.sqrt(2 * math.log(1.25 / delta))
    return max((c * gap / epsilon) ** 2 - var, 0.0)


@pytest.mark.parametrize("gap, var", CASES)
def test_analytic_variance_is_the_least_that_certifies(gap, var):
    variances, method = required_noise_variance(laws(gap, var), EPSILON, DELTA,
                                                "analytic")
    s = float(variances[0])
    assert method == MethodStep.of("gaussian.calibration", calibration="analytic")
    assert profile(gap, math.sqrt(var + s), EPSILON) <= DELTA * (1 + 1e-9)
    assert s > 0
    assert profile(gap, math.sqrt(var + 0.99 * s), EPSILON) > DELTA


@pytest.mark.parametrize("gap, var", CASES)
def test_analytic_variance_solves_the_profile(gap, var):
    # The least sigma solves profile(gap, sigma) = delta; the returned variance
    # is sigma^2 less the data's own variance.
    sigma = optimize.brentq(lambda t: profile(gap, t, EPSILON) - DELTA,
                            gap * 1e-3, gap * 1e3, xtol=1e-15, rtol=1e-14)
    variances, _ = required_noise_variance(laws(gap, var), EPSILON, DELTA,
                                           "analytic")
    assert variances[0] == pytest.approx(sigma**2 - var, rel=1e-7)


def test_enough_inherent_variance_needs_no_noise():
    gap = 0.2
    sigma = optimize.brentq(lambda t: profile(gap, t, EPSILON) - DELTA, 1e-3, 10)
    variances, _ = required_noise_variance(laws(gap, 1.01 * sigma**2), EPSILON,
                                           DELTA, "analytic")
    assert variances[0] == 0.0
    # The classic constant needs more: sigma_classic > sigma_analytic here.
    classic, _ = required_noise_variance(laws(gap, 1.01 * sigma**2), EPSILON,
                                         DELTA, "classic")
    assert classic[0] == pytest.approx(_classic(gap, 1.01 * sigma**2, EPSILON,
                                                DELTA), rel=1e-9)
    assert classic[0] > 0


@pytest.mark.parametrize("gap, var", CASES + [(0.01, 5.0)])
def test_classic_variance_is_zhang_algorithm_1(gap, var):
    variances, method = required_noise_variance(laws(gap, var), EPSILON, DELTA,
                                                "classic")
    assert method == MethodStep.of("gaussian.calibration", calibration="classic")
    expected = _classic(gap, var, EPSILON, DELTA)
    if expected == 0:
        assert variances[0] == 0.0
    else:
        assert variances[0] == pytest.approx(expected, rel=1e-9)


def test_worst_pair_decides():
    gaps, var = [0.5, 2.0, 1.0], [0.1, 0.3, 0.0]
    pair_laws = laws(gaps, var)
    variances, _ = required_noise_variance(pair_laws, EPSILON, DELTA, "analytic")
    one_by_one = [required_noise_variance(laws(g, v), EPSILON, DELTA,
                                          "analytic")[0][0]
                  for g, v in zip(gaps, var, strict=True)]
    np.testing.assert_allclose(variances, one_by_one, rtol=1e-12)
    worst = int(np.argmax(variances))
    assert worst == 1
    s = float(variances.max())
    certified = pairs_certified(pair_laws, s * np.eye(1), EPSILON, DELTA, "analytic")
    assert certified.all()
    short = pairs_certified(pair_laws, 0.99 * s * np.eye(1), EPSILON, DELTA,
                            "analytic")
    assert not short[worst]
    assert short[[0, 2]].all()
    assert pairs_delta(pair_laws, s * np.eye(1), EPSILON) == pytest.approx(
        max(profile(g, math.sqrt(v + s), EPSILON)
            for g, v in zip(gaps, var, strict=True)), rel=1e-9)


def test_delta_zero_cannot_be_certified():
    with pytest.raises(NotCertifiableError, match="cannot certify delta = 0"):
        required_noise_variance(laws(1.0, 0.0), EPSILON, 0.0, "analytic")


# -- pairs_certified and pairs_delta ---------------------------------------------


@pytest.mark.parametrize("s", [0.01, 1.0, 40.0])
@pytest.mark.parametrize("gap, var", CASES)
def test_pairs_certified_is_the_profile_test(gap, var, s):
    truth = profile(gap, math.sqrt(var + s), EPSILON) <= DELTA
    certified = pairs_certified(laws(gap, var), s * np.eye(1), EPSILON, DELTA,
                                "analytic")
    assert certified.tolist() == [truth]


@pytest.mark.parametrize("s", [0.0, 0.01, 1.0, 40.0])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("gap, var", [(1.0, 0.01), (0.3, 0.5), (2.0, 1.5)])
def test_pairs_delta_is_the_profile(gap, var, s, epsilon):
    assert pairs_delta(laws(gap, var), s * np.eye(1), epsilon) == pytest.approx(
        profile(gap, math.sqrt(var + s), epsilon), rel=1e-9, abs=1e-15)


def test_pairs_delta_of_identical_laws_is_zero():
    assert pairs_delta(laws(0.0, 1.0), np.zeros((1, 1)), 0.5) == 0.0


def test_pairs_delta_of_a_noiseless_point_mass_is_one():
    # No variance at all and a mean gap: the release reveals the secret.
    assert pairs_delta(laws(1.0, 0.0), np.zeros((1, 1)), 0.5) == 1.0


def test_pairs_delta_two_statistics_is_the_mahalanobis_profile():
    # Equal covariances in 2-D: the shift's Mahalanobis distance decides.
    cov = np.array([[1.0, 0.3], [0.3, 0.5]])
    diff = np.array([0.4, -0.2])
    pair_laws = PairLaws(diff[None], cov[None], cov[None], np.zeros(1, int), 1)
    s = 0.25
    dist = math.sqrt(diff @ np.linalg.solve(cov + s * np.eye(2), diff))
    assert pairs_delta(pair_laws, s * np.eye(2), 0.7) == pytest.approx(
        profile(dist, 1.0, 0.7), rel=1e-9)
    variances, _ = required_noise_variance(pair_laws, 0.7, 1e-4, "analytic")
    s_min = float(variances[0])
    assert profile(math.sqrt(diff @ np.linalg.solve(cov + s_min * np.eye(2), diff)),
                   1.0, 0.7) <= 1e-4 * (1 + 1e-9)
    assert profile(math.sqrt(diff @ np.linalg.solve(cov + 0.99 * s_min * np.eye(2),
                                                    diff)), 1.0, 0.7) > 1e-4


# -- unequal variances -------------------------------------------------------------


@pytest.mark.slow
def test_unequal_variances_use_the_exact_two_gaussian_profile():
    gap, var_a, var_b = 1.0, 0.2, 0.05
    pair_laws = laws(gap, var_a, var_b)
    variances, method = required_noise_variance(pair_laws, EPSILON, 1e-3, "analytic")
    s = float(variances[0])
    assert method == MethodStep.of("profile.unequal-variances")
    assert hockey_stick(gap, var_a + s, var_b + s, EPSILON) <= 1e-3 * (1 + 1e-6)
    assert hockey_stick(gap, var_a + 0.99 * s, var_b + 0.99 * s, EPSILON) > 1e-3
    assert pairs_delta(pair_laws, s * np.eye(1), EPSILON) == pytest.approx(
        hockey_stick(gap, var_a + s, var_b + s, EPSILON), rel=1e-6)


# -- raw leakage -------------------------------------------------------------------


@pytest.mark.parametrize("delta", [1e-3, 1e-6])
@pytest.mark.parametrize("gap, var", [(1.0, 0.04), (0.5, 0.5), (0.1, 0.001)])
def test_raw_leakage_solves_the_profile_without_noise(gap, var, delta):
    epsilon = float(raw_leakage_epsilon(laws(gap, var), delta)[0])
    assert epsilon > 0
    assert profile(gap, math.sqrt(var), epsilon) == pytest.approx(delta, rel=1e-6)


def test_raw_leakage_is_zero_when_the_data_hides_the_pair():
    # At epsilon = 0 the profile is the total variation, 2 Phi(gap / 2 sigma) - 1.
    gap, var = 0.01, 1.0
    assert 2 * stats.norm.cdf(gap / 2) - 1 < 1e-2
    assert raw_leakage_epsilon(laws(gap, var), 1e-2)[0] == 0.0


def test_raw_leakage_per_pair():
    gaps, var = [1.0, 0.2], [0.04, 0.04]
    epsilons = raw_leakage_epsilon(laws(gaps, var), 1e-5)
    assert epsilons.shape == (2,)
    for g, eps in zip(gaps, epsilons, strict=True):
        assert profile(g, 0.2, eps) == pytest.approx(1e-5, rel=1e-6)
    assert epsilons[0] > epsilons[1]


def test_raw_leakage_unequal_variances():
    gap, var_a, var_b = 1.0, 0.3, 0.2
    epsilon = float(raw_leakage_epsilon(laws(gap, var_a, var_b), 1e-3)[0])
    assert hockey_stick(gap, var_a, var_b, epsilon) == pytest.approx(1e-3, rel=1e-5)


# -- covariance comparisons ------------------------------------------------------


def test_covariances_equal_up_to_rounding():
    assert covariances_equal(laws([1.0, 2.0], [0.5, 0.25]))
    assert covariances_equal(laws(1.0, 0.5, 0.5 * (1 + 1e-14)))
    assert not covariances_equal(laws(1.0, 0.5, 0.5 * (1 + 1e-9)))
    assert not covariances_equal(laws([1.0, 1.0], [0.5, 0.5], [0.5, 0.4]))


def test_max_covariance_gap_is_relative_to_the_largest_entry():
    cov_a = np.array([[[2.0, 0.5], [0.5, 1.0]], [[4.0, 0.0], [0.0, 1.0]]])
    cov_b = np.array([[[2.0, 0.1], [0.1, 1.0]], [[4.0, 0.0], [0.0, 3.0]]])
    pair_laws = PairLaws(np.ones((2, 2)), cov_a, cov_b, np.arange(2), 2)
    # Largest entry difference 2.0 (pair 1, entry (1, 1)), largest |C_a| 4.0.
    assert max_covariance_gap(pair_laws) == pytest.approx(0.5, rel=1e-15)
    assert not covariances_equal(pair_laws)


def test_max_covariance_gap_of_equal_laws_is_zero():
    assert max_covariance_gap(laws([1.0, 3.0], [0.2, 0.7])) == 0.0


@pytest.mark.parametrize("seed", range(6))
def test_renyi_epsilon_closed_form_is_the_least_certified_epsilon(seed):
    # Independent: bisect on the public Renyi delta bound. The closed form
    # must be certified (its bound <= delta) and within 1e-9 of the bisection.
    from skattr.calibration import renyi_gaussian_delta
    from skattr.calibration._pair_noise import _renyi_epsilon

    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 6))
    root_a, root_b = rng.normal(size=(2, k, k))
    cov_a = root_a @ root_a.T + 0.5 * np.eye(k)
    cov_b = root_b @ root_b.T + 0.5 * np.eye(k)
    diff = rng.normal(size=k)
    delta = 10.0 ** -rng.uniform(2, 6)
    eps = _renyi_epsilon(diff, cov_a, cov_b, delta)
    assert renyi_gaussian_delta(diff, cov_a, cov_b, eps) <= delta
    lo, hi = 0.0, 1.0
    while renyi_gaussian_delta(diff, cov_a, cov_b, hi) > delta:
        hi *= 2.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if renyi_gaussian_delta(diff, cov_a, cov_b, mid) <= delta:
            hi = mid
        else:
            lo = mid
    assert eps == pytest.approx(hi, rel=1e-9, abs=1e-12)
