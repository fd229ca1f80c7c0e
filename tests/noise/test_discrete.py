"""Exact discrete Laplace noise (secure=True): the sampler, the grid, the bound."""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from skattr._random import OSEntropy, check_random_state
from skattr.exceptions import DataValidationError, NotCertifiableError
from skattr.noise import DiscreteLaplaceNoise, LaplaceNoise
from skattr.noise._discrete import (
    bernoulli_exp,
    discrete_laplace,
    secure_grid,
)


def _pmf(t: float, support: np.ndarray) -> np.ndarray:
    """P(Z = z) = tanh(1 / (2t)) exp(-|z| / t), the discrete Laplace law."""
    return math.tanh(1 / (2 * t)) * np.exp(-np.abs(support) / t)


def _chi_square_p(draws, t: float) -> float:
    """p-value of a chi-square test of the draws against the pmf at scale t."""
    draws = np.asarray(draws)
    edge = 12
    support = np.arange(-edge, edge + 1)
    expected = _pmf(t, support) * len(draws)
    tail = len(draws) - expected.sum()
    observed = np.array([(draws == z).sum() for z in support])
    observed_tail = len(draws) - observed.sum()
    return stats.chisquare(np.append(observed, observed_tail),
                           np.append(expected, tail)).pvalue


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1),
                                   Fraction(5, 2)])
def test_bernoulli_exp_has_probability_exp_minus_gamma(gamma):
    rng = check_random_state(7)
    n = 6000
    hits = sum(bernoulli_exp(gamma, rng) for _ in range(n))
    assert stats.binomtest(hits, n, math.exp(-gamma)).pvalue > 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("source", ["seeded", "os"])
def test_discrete_laplace_matches_its_pmf_with_power(source):
    rng = check_random_state(3) if source == "seeded" else OSEntropy()
    t = Fraction(5, 2)
    draws = [discrete_laplace(t, rng) for _ in range(20_000)]
    assert _chi_square_p(draws, 2.5) > 1e-3
    # The same draws against the law at 0.7 and 1.3 times the scale: rejected.
    assert _chi_square_p(draws, 0.7 * 2.5) < 1e-6
    assert _chi_square_p(draws, 1.3 * 2.5) < 1e-6


@pytest.mark.slow
def test_fine_grid_noise_is_laplace_of_the_scale_with_power():
    law = DiscreteLaplaceNoise(3.0, np.eye(1))
    rng = check_random_state(11)
    draws = np.array([law.sample(rng)[0] for _ in range(10_000)])
    assert stats.kstest(draws, stats.laplace(scale=3.0).cdf).pvalue > 1e-3
    assert stats.kstest(draws, stats.laplace(scale=2.1).cdf).pvalue < 1e-6
    assert stats.kstest(draws, stats.laplace(scale=3.9).cdf).pvalue < 1e-6


def test_grid_is_a_power_of_two_forty_bits_below_the_scale():
    for scale in (1.0, 3.0, 0.001, 12345.678):
        grid = secure_grid(scale)
        assert math.frexp(grid)[0] == 0.5
        assert 2.0**40 <= scale / grid < 2.0**41
    with pytest.raises(NotCertifiableError, match="secure=False"):
        secure_grid(0.0)


def test_release_lies_on_the_grid_whatever_the_value():
    law = DiscreteLaplaceNoise(2.0, np.eye(4))
    grid = Fraction(law.grid)
    values = np.array([0.1, -7.25e-9, 123456.789, -3e15])
    out = law.perturb(values, random_state=0)
    assert all((Fraction(v) / grid).denominator == 1 for v in out)


def test_low_order_bits_of_the_statistic_do_not_reach_the_release():
    # Mironov's attack reads the statistic from the low bits of a release; on
    # the grid, statistics in one cell give the same release for the same draws.
    law = DiscreteLaplaceNoise(1.0, np.eye(1))
    base = 0.3
    nearby = base + law.grid / 7
    assert nearby != base
    for seed in range(20):
        assert np.array_equal(law.perturb(np.array([base]), seed),
                              law.perturb(np.array([nearby]), seed))


def test_floating_point_noise_does_carry_the_low_order_bits():
    # The contrast: continuous noise in floating point gives different doubles
    # for the same draws, so the release depends on bits below the grid.
    law = LaplaceNoise.on_each(1.0, 1)
    base, nearby = 0.3, 0.3 + 2.0**-40 / 7
    differ = sum(law.perturb(np.array([base]), seed)[0]
                 != law.perturb(np.array([nearby]), seed)[0] for seed in range(20))
    assert differ > 0


@pytest.mark.slow
def test_per_statistic_factor_bound_holds_against_the_exact_laws():
    # eta = 1/t + 1/(6 t^2) bounds |log P'(z) / P''(z)|, P'' the continuous
    # Laplace(t) noise rounded to the grid: checked at a coarse t, where the
    # bound is tight enough to fail if wrong, with mpmath's exact integrals.
    mpmath.mp.dps = 40
    t = mpmath.mpf(4)
    eta = 1 / t + 1 / (6 * t * t)
    worst = mpmath.mpf(0)
    for r in [mpmath.mpf(x) / 8 for x in range(-4, 5)]:
        for z in range(-30, 31):
            lo, hi = z - r - mpmath.mpf(1) / 2, z - r + mpmath.mpf(1) / 2
            rounded = mpmath.quad(lambda u: mpmath.exp(-abs(u) / t) / (2 * t),
                                  [lo, 0, hi] if lo < 0 < hi else [lo, hi])
            discrete = mpmath.tanh(1 / (2 * t)) * mpmath.exp(-abs(z) / t)
            worst = max(worst, abs(mpmath.log(discrete / rounded)))
    assert worst <= eta
    # Not loose: the bound is within a factor of two of the worst ratio.
    assert worst > eta / 2


def test_certificate_is_widened_and_rounded_up():
    law = DiscreteLaplaceNoise(1.5, np.eye(3))
    epsilon, delta = law.certify(1.0, 1e-3)
    x = 3 * law.eta
    assert Fraction(epsilon) >= 1 + 2 * x
    assert Fraction(math.nextafter(epsilon, 0)) < 1 + 2 * x
    assert Fraction(delta) >= Fraction(1e-3) * (1 + x)
    assert law.certify(1.0, 0.0)[1] == 0.0
    assert 1.0 < epsilon < 1 + 1e-11


def test_only_noise_on_each_statistic_is_sampled_exactly():
    with pytest.raises(NotCertifiableError, match="expm-laplace"):
        DiscreteLaplaceNoise(1.0, np.array([[0.6], [0.8]]))


def test_non_finite_statistic_is_refused():
    law = DiscreteLaplaceNoise(1.0, np.eye(1))
    with pytest.raises(DataValidationError, match="bounds="):
        law.perturb(np.array([np.inf]), 0)


def test_seeded_draws_repeat_and_entropy_draws_do_not():
    law = DiscreteLaplaceNoise(1.0, np.eye(3))
    assert np.array_equal(law.sample(5), law.sample(5))
    assert not np.array_equal(law.sample(None), law.sample(None))


def test_a_batch_is_exact_draws_in_rows():
    law = DiscreteLaplaceNoise(2.0, np.eye(3))
    batch = law.sample(0, size=5)
    assert batch.shape == (5, 3)
    grid = Fraction(law.grid)
    assert all((Fraction(v) / grid).denominator == 1 for v in batch.ravel())
    assert np.array_equal(batch, law.sample(0, size=5))
