"""Noise laws: sampling, expected norm, accuracy and description."""

import math

import numpy as np
import pytest
from scipy import special, stats

from skattr.noise import GaussianNoise, LaplaceNoise, SumOfNoises


def _draws(law, m, seed=0):
    rng = np.random.default_rng(seed)
    return np.array([law.sample(rng) for _ in range(m)])


@pytest.mark.slow
def test_gaussian_samples_have_the_stated_covariance():
    cov = np.array([[4.0, 1.0], [1.0, 2.0]])
    draws = _draws(GaussianNoise(cov), 20_000)
    # Standard error of a sample covariance entry is about sqrt(2) s^2 / sqrt(m).
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.2)
    np.testing.assert_allclose(draws.mean(axis=0), 0.0, atol=0.06)


def test_laplace_samples_lie_in_the_basis_span_with_the_stated_scale():
    basis = np.array([[1.0], [1.0]]) / math.sqrt(2)
    law = LaplaceNoise(3.0, basis)
    draws = _draws(law, 20_000)
    # Every draw lies along the basis direction.
    np.testing.assert_allclose(draws[:, 0], draws[:, 1], rtol=1e-12)
    along = draws @ basis[:, 0]
    # E|Laplace(b)| = b; standard error b / sqrt(m).
    assert np.abs(along).mean() == pytest.approx(3.0, abs=0.1)
    np.testing.assert_allclose(law.covariance, 2 * 9.0 * basis @ basis.T)


@pytest.mark.slow
@pytest.mark.parametrize("cov", [np.eye(1) * 2.5, np.diag([1.0, 4.0, 0.5]),
                                 np.diag([1.0, 0.0, 0.0])])
def test_gaussian_expected_norm_matches_draws(cov):
    law = GaussianNoise(cov)
    norms = np.linalg.norm(_draws(law, 20_000, seed=1), axis=1)
    se = norms.std() / math.sqrt(norms.size)
    assert law.expected_norm() == pytest.approx(norms.mean(), abs=5 * se)


def test_isotropic_expected_norm_is_the_chi_mean():
    s, k = 2.0, 3
    expected = math.sqrt(2 * s) * special.gamma((k + 1) / 2) / special.gamma(k / 2)
    assert GaussianNoise(s * np.eye(k)).expected_norm() == pytest.approx(expected,
                                                                         rel=1e-12)


def test_gaussian_alpha_is_exact_for_isotropic_noise():
    law = GaussianNoise(3.0 * np.eye(2))
    alpha = law.alpha(0.05)
    assert stats.chi2.sf(alpha**2 / 3.0, 2) == pytest.approx(0.05, rel=1e-9)


def test_laplace_alpha_is_exact_in_one_direction():
    law = LaplaceNoise.on_each(2.0, 1)
    alpha = law.alpha(0.1)
    assert math.exp(-alpha / 2.0) == pytest.approx(0.1, rel=1e-9)


@pytest.mark.slow
def test_sum_of_noises_adds_covariances_and_bounds_alpha():
    g, lap = GaussianNoise(np.eye(2)), LaplaceNoise.on_each(0.5, 2)
    law = g + lap
    assert isinstance(law, SumOfNoises) and law.kind == "gaussian+laplace"
    np.testing.assert_allclose(law.covariance, np.eye(2) * 1.5)
    # The expected norm is the root-mean-square bound sqrt(tr Sigma).
    assert law.expected_norm() == pytest.approx(math.sqrt(3.0))
    norms = np.linalg.norm(_draws(law, 20_000, seed=2), axis=1)
    assert np.mean(norms > law.alpha(0.05)) <= 0.05
    assert law.alpha(0.05) == pytest.approx(g.alpha(0.025) + lap.alpha(0.025))
    assert "N(0, 1 I) + Laplace(0, 0.5) on each statistic" == law.describe()


def test_zero_noise_draws_nothing_and_says_why():
    for law in (GaussianNoise(np.zeros((2, 2))), LaplaceNoise.on_each(0.0, 2)):
        assert law.is_zero
        np.testing.assert_array_equal(law.sample(None), np.zeros(2))
        assert law.expected_norm() == 0.0 and law.alpha(0.05) == 0.0
        assert law.describe().startswith("none:")


def test_laws_are_frozen_and_read_only():
    law = GaussianNoise(np.eye(2))
    with pytest.raises(AttributeError):
        law._covariance = np.zeros((2, 2))
    with pytest.raises(ValueError):
        law.covariance[0, 0] = 5.0


def test_a_sum_of_noises_of_different_dimensions_is_refused():
    with pytest.raises(ValueError, match="same dimension"):
        GaussianNoise(np.eye(2)) + LaplaceNoise.on_each(1.0, 3)


def test_unseeded_draws_differ():
    law = GaussianNoise(np.eye(3))
    assert not np.array_equal(law.sample(None), law.sample(None))


@pytest.mark.slow
def test_marginal_half_widths_are_exact_tails():
    from skattr.noise import marginal_half_widths
    from skattr.noise._laws import _tail

    # Gaussian, rank-deficient: z * sd per statistic, 0 where there is none.
    cov = np.array([[4.0, 4.0, 0.0], [4.0, 4.0, 0.0], [0.0, 0.0, 0.0]])
    got = marginal_half_widths(GaussianNoise(cov), 0.05)
    np.testing.assert_allclose(got, [2 * stats.norm.isf(0.025)] * 2 + [0.0])
    # Laplace on each statistic: b ln(1 / alpha).
    got = marginal_half_widths(LaplaceNoise.on_each(2.0, 2), 0.1)
    np.testing.assert_allclose(got, [2 * math.log(10)] * 2)
    # Two Laplace components (a directional noise): the partial fractions
    # P(|X| > t) = sum_j c_j exp(-t / w_j), c_j = prod w_j^2 / (w_j^2 - w_l^2).
    w = np.array([1.0, 2.0])
    for t in (0.5, 2.0, 6.0):
        exact = sum(w[j] ** 2 / (w[j] ** 2 - w[1 - j] ** 2) * math.exp(-t / w[j])
                    for j in range(2))
        assert _tail(t, 0.0, w) == pytest.approx(exact, abs=1e-12)
    basis = np.array([[1.0, 1.0], [1.0, -1.0]]) / math.sqrt(2)
    law = LaplaceNoise(1.5, basis)
    half = marginal_half_widths(law, 0.05)
    assert _tail(half[0], 0.0, np.abs(basis[0]) * 1.5) == pytest.approx(0.05,
                                                                         abs=1e-9)
    # A Gaussian plus a Laplace noise, against 2,000,000 draws (se 1.5e-4).
    mixed = GaussianNoise(np.eye(1) * 2.25) + LaplaceNoise.on_each(1.0, 1)
    (t,) = marginal_half_widths(mixed, 0.05)
    rng = np.random.default_rng(0)
    draws = rng.normal(0, 1.5, 2_000_000) + rng.laplace(0, 1.0, 2_000_000)
    assert abs(float(np.mean(np.abs(draws) > t)) - 0.05) < 6e-4
    # The laws' own samplers cover at 1 - alpha (4,000 draws: 4 se = 0.019).
    for s in (law, mixed):
        draws = np.array([s.sample(rng) for _ in range(4_000)])
        covered = np.abs(draws) <= marginal_half_widths(s, 0.1)
        assert np.all(np.abs(covered.mean(axis=0) - 0.9) < 0.019)


def test_release_conf_int():
    import pandas as pd

    import skattr
    from skattr.datasets import make_hospital
    from skattr.exceptions import InvalidParameterError

    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    rel = make_hospital(300, random_state=1).attrpriv.mean(
        ["weight", "height"], secret=secret,
        reference=make_hospital(3000, random_state=0), mechanism="apgm",
        law="gaussian", theta="moments", random_state=0)
    ci = rel.conf_int(0.05)
    assert list(ci.columns) == ["lower", "upper"]
    assert list(ci.index) == list(rel.values.index)
    sd = np.sqrt(np.diagonal(rel.noise_law.covariance))
    assert rel.noise_law.kind == "gaussian"
    np.testing.assert_allclose(ci["upper"] - rel.values,
                               stats.norm.isf(0.025) * sd)
    assert np.all(ci["lower"] < rel.values) and np.all(rel.values < ci["upper"])
    assert isinstance(ci, pd.DataFrame)
    for bad in (0.0, 1.0, "0.05", True):
        with pytest.raises(InvalidParameterError, match="'alpha'"):
            rel.conf_int(bad)
