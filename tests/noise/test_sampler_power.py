"""Goodness of fit of the noise samplers, with the power to see a wrong scale.

Each test draws 20,000 values from a noise law, seeded and from the
operating system's entropy (the secure default), and runs a
Kolmogorov-Smirnov test: the intended law must be accepted (p > 1e-6) and the
same law scaled by 0.7 or by 1.3 rejected (p < 1e-12). At this size a scale
off by 30% moves the empirical CDF by about 0.06, a KS statistic near 8, so
the rejections are certain and the acceptance fails by chance once in a
million runs.
"""

import numpy as np
import pytest
from scipy import stats

from skattr.noise import GaussianNoise, LaplaceNoise

pytestmark = pytest.mark.slow

SOURCES = {"seeded": lambda: np.random.default_rng(7), "os-entropy": lambda: None}
DRAWS = 20_000
ACCEPT, REJECT = 1e-6, 1e-12


def _check(values, law):
    """Accept ``law`` (a frozen scipy distribution's cdf), reject 0.7x and 1.3x."""
    assert stats.kstest(values, law.cdf).pvalue > ACCEPT
    for factor in (0.7, 1.3):
        wrong = law.dist(*law.args, **{**law.kwds,
                                       "scale": law.kwds["scale"] * factor})
        assert stats.kstest(values, wrong.cdf).pvalue < REJECT


@pytest.mark.parametrize("source", SOURCES)
def test_gaussian_sampler_has_the_intended_scale(source):
    sigma, k = 2.5, 100
    noise = GaussianNoise(sigma ** 2 * np.eye(k))
    rng = SOURCES[source]()
    values = np.concatenate([noise.sample(rng) for _ in range(DRAWS // k)])
    _check(values, stats.norm(loc=0.0, scale=sigma))


@pytest.mark.parametrize("source", SOURCES)
def test_laplace_sampler_has_the_intended_scale(source):
    # DRAWS values as DRAWS / k draws of k statistics, as the Gaussian's
    # above (one draw of DRAWS statistics built a DRAWS x DRAWS identity
    # basis: 3.2 GB and ~25 s of CPU for the same test).
    b, k = 1.7, 100
    noise = LaplaceNoise.on_each(b, k)
    rng = SOURCES[source]()
    values = np.concatenate([noise.sample(rng) for _ in range(DRAWS // k)])
    assert values.size == DRAWS
    _check(values, stats.laplace(loc=0.0, scale=b))


@pytest.mark.parametrize("source", SOURCES)
def test_correlated_gaussian_whitens_to_standard_normals(source):
    """N(0, Sigma) with correlations: Sigma^(-1/2) x is N(0, I) and nothing else."""
    cov = np.array([[4.0, 1.2, -0.6], [1.2, 2.0, 0.3], [-0.6, 0.3, 1.0]])
    noise = GaussianNoise(cov)
    rng = SOURCES[source]()
    draws = np.array([noise.sample(rng) for _ in range(DRAWS // 3)])
    lam, vecs = np.linalg.eigh(cov)
    white = (draws @ vecs / np.sqrt(lam)).ravel()
    _check(white, stats.norm(loc=0.0, scale=1.0))


@pytest.mark.parametrize("source", SOURCES)
def test_directional_laplace_carries_laplace_draws_on_its_directions(source):
    basis = np.linalg.qr(np.array([[1.0, 0.2], [0.5, -1.0], [0.3, 0.4]]))[0]
    b = 0.8
    noise = LaplaceNoise(b, basis)
    rng = SOURCES[source]()
    draws = np.array([noise.sample(rng) for _ in range(DRAWS // 2)])
    # Nothing off the directions; on them, i.i.d. Laplace(0, b).
    off = draws - draws @ basis @ basis.T
    assert np.abs(off).max() < 1e-12
    _check((draws @ basis).ravel(), stats.laplace(loc=0.0, scale=b))
