"""The joint Gaussian Theta refuses reference data whose Cov(h | z) depends on z."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.api import OLS, add_constant
from statsmodels.stats.diagnostic import het_breuschpagan

import skattr
from skattr.exceptions import NotCertifiableError
from skattr.mechanisms import AttributePrivateGaussian, ExpectedValueLaplace
from skattr.theta import JointGaussian
from skattr.theta._fit import (
    JOINT_GAUSSIAN_ALPHA,
    JOINT_GAUSSIAN_MIN_RECORDS,
    _covariance_dependence,
    fit_joint_gaussian,
)

PROPORTION = skattr.Secret.proportion("g", 1, pairs=[(0.6, 0.8)])


def _two_groups(rng, n, share, cov_in, cov_out, mean_in=1.0):
    """Records with g ~ Bernoulli(share) and h ~ N(mean, cov) in each group."""
    cov_in, cov_out = np.atleast_2d(cov_in), np.atleast_2d(cov_out)
    k = cov_in.shape[0]
    g = (rng.random(n) < share).astype(int)
    inside = rng.multivariate_normal(np.full(k, mean_in), cov_in, size=n)
    outside = rng.multivariate_normal(np.zeros(k), cov_out, size=n)
    h = np.where(g[:, None] == 1, inside, outside)
    columns = ["x"] if k == 1 else [f"x{i}" for i in range(k)]
    return pd.DataFrame({"g": g, **dict(zip(columns, h.T, strict=True))}), columns


def _review_reference():
    # The review's case: in-group N(1, 1), out-group N(0, 25), share 0.1.
    frame, _ = _two_groups(np.random.default_rng(0), 2000, 0.1, 1.0, 25.0)
    return frame


@pytest.mark.parametrize("mechanism, extra", [
    (AttributePrivateGaussian, {"delta": 1e-3}),
    (ExpectedValueLaplace, {}),
])
def test_unequal_group_variances_are_refused(mechanism, extra):
    mech = mechanism(query=skattr.Query.mean(["x"]), secret=PROPORTION,
                     theta="gaussian", law="gaussian", epsilon=1, **extra)
    with pytest.raises(NotCertifiableError,
                       match=r"variance of 'x' is 1\.\d+ in the secret's group "
                             r"and 2\d\.\d+ outside it.*theta='moments'"):
        mech.fit(_review_reference())


def test_per_group_moments_still_fit_the_review_case():
    # The alternative the message names works on the same data.
    mech = AttributePrivateGaussian(query=skattr.Query.mean(["x"]), secret=PROPORTION,
                                    theta="moments", law="gaussian", epsilon=1,
                                    delta=1e-3).fit(_review_reference())
    assert mech.plan(n=50).noise_covariance[0, 0] > 0


def test_joint_gaussian_with_numeric_secret_passes():
    rng = np.random.default_rng(1)
    z = rng.normal(size=2000)
    ref = pd.DataFrame({"z": z, "y": 2 * z + rng.normal(size=2000)})
    mech = AttributePrivateGaussian(query=skattr.Query.mean(["y"]),
                                    secret=skattr.Secret.mean("z", pairs=[(-0.5, 0.5)]),
                                    theta="gaussian", law="gaussian", epsilon=1,
                                    delta=1e-3).fit(ref)
    assert isinstance(mech.law_.models[0][0], JointGaussian)
    assert mech.law_.models[0][0].slope[0] == pytest.approx(2.0, abs=0.05)


def test_numeric_secret_with_growing_variance_is_refused():
    rng = np.random.default_rng(2)
    z = rng.normal(size=2000)
    ref = pd.DataFrame({"z": z, "y": 2 * z + np.abs(z) * rng.normal(size=2000)})
    mech = AttributePrivateGaussian(query=skattr.Query.mean(["y"]),
                                    secret=skattr.Secret.mean("z", pairs=[(-0.5, 0.5)]),
                                    theta="gaussian", law="gaussian", epsilon=1,
                                    delta=1e-3)
    with pytest.raises(NotCertifiableError) as info:
        mech.fit(ref)
    message = str(info.value)
    assert "variance of 'y' changes with z" in message
    assert "approx-wasserstein" in message and "ExpertTheta" in message
    assert "theta='moments'" not in message


def test_equal_group_covariances_pass():
    cov = [[1.0, 0.5], [0.5, 2.0]]
    frame, columns = _two_groups(np.random.default_rng(3), 2000, 0.3, cov, cov)
    mech = AttributePrivateGaussian(query=skattr.Query.mean(columns), secret=PROPORTION,
                                    theta="gaussian", law="gaussian", epsilon=1,
                                    delta=1e-3).fit(frame)
    # For a binary z with equal group covariances, the conditional covariance
    # of the joint Gaussian is the pooled within-group covariance.
    g = frame.g.to_numpy() == 1
    h = frame[columns].to_numpy()
    within = (np.cov(h[g].T, ddof=0) * g.sum()
              + np.cov(h[~g].T, ddof=0) * (~g).sum()) / (g.size - 1)
    np.testing.assert_allclose(mech.law_.models[0][0].conditional_cov, within,
                               rtol=1e-10)


def test_false_refusal_rate_is_at_most_alpha():
    # Under the null each draw is refused with probability <= alpha = 0.01
    # (Bonferroni over the three products is conservative), so more than five
    # refusals in 100 draws has probability P(Binomial(100, 0.01) >= 6) < 1e-3.
    assert JOINT_GAUSSIAN_ALPHA == 0.01
    cov = [[1.0, 0.5], [0.5, 2.0]]
    rng = np.random.default_rng(4)
    refused = 0
    for _ in range(100):
        frame, columns = _two_groups(rng, 500, 0.3, cov, cov)
        try:
            fit_joint_gaussian(frame.g.to_numpy(float), frame[columns].to_numpy(),
                               columns=columns, secret_label="g")
        except NotCertifiableError:
            refused += 1
    assert refused <= 5


def test_only_the_cross_covariance_differs():
    frame, columns = _two_groups(np.random.default_rng(5), 2000, 0.3,
                                 [[1.0, 0.8], [0.8, 1.0]], [[1.0, -0.8], [-0.8, 1.0]])
    mech = AttributePrivateGaussian(query=skattr.Query.mean(columns), secret=PROPORTION,
                                    theta="gaussian", law="gaussian", epsilon=1,
                                    delta=1e-3)
    with pytest.raises(NotCertifiableError) as info:
        mech.fit(frame)
    message = str(info.value)
    assert "the covariance of 'x0' and 'x1' is 0.8" in message
    assert "outside it" in message and "over 3 product(s)" in message
    assert "the variance of" not in message


def test_lm_statistic_matches_statsmodels():
    rng = np.random.default_rng(6)
    z = rng.normal(size=300)
    h = np.column_stack([z + (1 + 0.5 * z) * rng.normal(size=300),
                         rng.normal(size=300), -z + rng.normal(size=300)])
    h[:, 1] += 0.6 * h[:, 0] * z
    lm, residuals = _covariance_dependence(z, h)
    exog = add_constant(z)
    for i in range(3):
        resid = OLS(h[:, i], exog).fit().resid
        np.testing.assert_allclose(residuals[:, i], resid, atol=1e-10)
        expected, p_value, _, _ = het_breuschpagan(resid, exog, robust=True)
        assert lm[i, i] == pytest.approx(expected, rel=1e-9)
        assert stats.chi2.sf(lm[i, i], 1) == pytest.approx(p_value, rel=1e-6)
        for j in range(i + 1, 3):
            product = residuals[:, i] * residuals[:, j]
            r2 = OLS(product, exog).fit().rsquared
            assert lm[i, j] == pytest.approx(z.size * r2, rel=1e-9)
            assert lm[j, i] == pytest.approx(lm[i, j], rel=1e-12)
    assert lm.max() > 10  # the data are heteroscedastic: the statistics are not 0


def test_too_few_records_on_one_side_are_refused():
    rng = np.random.default_rng(7)
    z = np.r_[np.ones(JOINT_GAUSSIAN_MIN_RECORDS - 1), np.zeros(500)]
    h = rng.normal(size=(z.size, 1))
    with pytest.raises(NotCertifiableError,
                       match=r"9 record\(s\) matching the secret g; with "
                             r"fewer than 10 .*theta='moments'"):
        fit_joint_gaussian(z, h, columns=["x"], secret_label="g")
    z[JOINT_GAUSSIAN_MIN_RECORDS - 1] = 1.0
    fit_joint_gaussian(z, h, columns=["x"], secret_label="g")


def test_statistic_determined_by_the_secret_is_not_refused():
    # Releasing the secret's own column leaves residuals of rounding noise,
    # which must not be read as evidence of a changing covariance.
    rng = np.random.default_rng(8)
    z = rng.normal(size=1000) * 1e3 + 1e6
    h = np.column_stack([z, 3 * z + 1, rng.normal(size=1000)])
    model = fit_joint_gaussian(z, h, columns=["z", "w", "y"], secret_label="z")
    np.testing.assert_allclose(model.conditional_cov[:2, :2], 0, atol=1e-6)
