"""Theta by resampling: the Monte-Carlo estimate and the bootstrap set."""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws import AssumeGaussian
from skattr.mechanisms import AttributePrivateGaussian, ExpectedValueGaussian
from skattr.theta import Bootstrap, MonteCarlo

SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])


@pytest.fixture(scope="module")
def reference():
    rng = np.random.default_rng(0)
    g = (rng.random(4000) < 0.45).astype(int)
    return pd.DataFrame({"g": g, "x": rng.normal(2.0 * g, 1.0 + g),
                         "y": rng.exponential(1.0 + g)})


@pytest.mark.parametrize("sampling", ["with-replacement", "without-replacement"])
def test_monte_carlo_agrees_with_the_exact_moments(reference, sampling):
    q = skattr.Query.mean(["x", "y"])
    law = AssumeGaussian(sampling=sampling)
    exact = AttributePrivateGaussian(law=law, query=q, secret=SECRET).fit(
        reference)
    mc = AttributePrivateGaussian(law=law, query=q, secret=SECRET,
                                  theta=MonteCarlo(4000, random_state=1)).fit(
        reference)
    n = 50
    (ex,) = exact._laws(n)
    (est,) = mc._laws(n)
    # Means within 4 standard errors of the Monte-Carlo mean of 4,000 datasets.
    se = np.sqrt(np.diagonal(ex.cov_a[0]) / 4000 + np.diagonal(ex.cov_b[0]) / 4000)
    assert np.all(np.abs(est.mean_diff[0] - ex.mean_diff[0]) < 4 * se)
    # Covariances within 10% (the sampling error of a variance from 4,000 draws
    # of these skewed statistics is about 3-5%).
    np.testing.assert_allclose(np.diagonal(est.cov_a[0]), np.diagonal(ex.cov_a[0]),
                               rtol=0.1)
    assert "Monte-Carlo" in mc.plan(n=n).theta


def test_monte_carlo_is_reproducible_and_order_free(reference):
    q = skattr.Query.mean(["x"])
    a = AttributePrivateGaussian(law="gaussian", query=q, secret=SECRET,
                                 theta=MonteCarlo(200, random_state=3)).fit(reference)
    b = AttributePrivateGaussian(law="gaussian", query=q, secret=SECRET,
                                 theta=MonteCarlo(200, random_state=3)).fit(reference)
    model_a, model_b = a.law_.models[0][0], b.law_.models[0][0]
    ma, _ = model_a.sum_moments(np.array([0.4, 0.6]), 50)
    mb, _ = model_b.sum_moments(np.array([0.6, 0.4]), 50)
    np.testing.assert_array_equal(ma, mb[::-1])
    with pytest.raises(InvalidParameterError, match="whole number of records"):
        model_a.sum_moments(np.array([0.401]), 50)
    with pytest.raises(NotCertifiableError, match="pointwise"):
        model_a.moments_given_set(0.2, 0.4, 50)


@pytest.mark.slow
def test_bootstrap_takes_the_worst_case_over_replicates(reference):
    q = skattr.Query.mean(["x", "y"])
    single = ExpectedValueGaussian(law="gaussian", theta="moments",
                                   query=q, secret=SECRET).fit(reference)
    boot = ExpectedValueGaussian(law="gaussian", query=q, secret=SECRET,
                                 theta=Bootstrap(30, random_state=0)).fit(reference)
    assert len(boot.law_.models[0]) == 31
    p1, p2 = single.plan(n=50), boot.plan(n=50)
    assert p2.sensitivity >= p1.sensitivity
    assert p2.noise_covariance[0, 0] >= p1.noise_covariance[0, 0]
    # The worst case is the largest mean difference among the replicates' models.
    gaps = [np.linalg.norm(m.mean_in - m.mean_out) * 0.2 for m in boot.law_.models[0]]
    assert p2.sensitivity == pytest.approx(max(gaps), rel=1e-9)
    assert "bootstrap" in p2.theta


@pytest.mark.parametrize("spec", [lambda: MonteCarlo(1), lambda: MonteCarlo(10, "a"),
                                  lambda: Bootstrap(0), lambda: Bootstrap(5, 1.5)])
def test_bad_theta_estimators(spec):
    with pytest.raises(InvalidParameterError):
        spec()
