"""Release records and their noise summaries against closed forms and simulation."""

import dataclasses
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats

from skattr import Assumption, Method
from skattr._release import (
    Plan,
    Release,
    expected_gaussian_norm,
    expected_laplace_norm,
    gaussian_accuracy,
)
from skattr.exceptions import InvalidParameterError
from skattr.noise import GaussianNoise, LaplaceNoise

# Spectra on which the chi-square-mixture quadrature of expected_gaussian_norm
# (as committed before the noise-law refactor) gave up with scipy's
# IntegrationWarning "Roundoff error is detected in the extrapolation table":
# one large and some very small noise variances. expected_laplace_norm never
# warned (d = 2 to 499, 1e3 to 1e6, scales 1e-300 to 1e300 were tried).
SPREAD_SPECTRA = [(1.0, 1e-6), (1.0, 7.92e-6), (1.0, 7.57e-3, 3.69e-6)]


def _isotropic_norm(s, k):
    # E chi_k = sqrt(2) Gamma((k+1)/2) / Gamma(k/2), in logs for large k.
    return math.sqrt(2 * s) * math.exp(math.lgamma((k + 1) / 2) - math.lgamma(k / 2))


def _two_dim_norm(a, b):
    """E ||Z|| for Z ~ N(0, diag(a, b)), a >= b, by polar coordinates.

    ||Z|| = R sqrt(a cos^2 t + b sin^2 t) with R ~ Rayleigh (E R = sqrt(pi / 2))
    independent of the uniform angle t, whose average is (2 / pi) sqrt(a) E(m)
    with E the complete elliptic integral of the second kind, m = 1 - b / a.
    """
    return math.sqrt(2 / math.pi) * math.sqrt(a) * special.ellipe(1 - b / a)


def _three_dim_norm(lam):
    """E ||Z|| for Z ~ N(0, diag(lam)) in 3-D: E chi_3 times a sphere average."""

    def integrand(phi, theta):
        u = (math.sin(phi) * math.cos(theta), math.sin(phi) * math.sin(theta),
             math.cos(phi))
        return math.sqrt(sum(v * w * w for v, w in zip(lam, u, strict=True))) \
            * math.sin(phi)

    # The integrand is even in each coordinate: one octant, times 8.
    octant, _ = integrate.dblquad(integrand, 0, math.pi / 2, 0, math.pi / 2,
                                  epsabs=1e-13, epsrel=1e-12)
    return _isotropic_norm(1.0, 3) * 8 * octant / (4 * math.pi)


def _random_rotation(k, rng):
    q, r = np.linalg.qr(rng.normal(size=(k, k)))
    return q * np.sign(np.diagonal(r))


def _plan(cls=Plan, *, gaussian=None, laplace=None, extra_laplace=None, **fields):
    """A Plan (or Release) with the given noise; the other fields are filler.

    ``gaussian`` is a covariance, ``laplace`` a (scale, basis) pair and
    ``extra_laplace`` the scale of Chen & Ohrimenko's extra per-statistic noise.
    """
    base = dict(mechanism="apgm", statistics=("height", "weight"), n=100,
                epsilon=1.0, delta=1e-5, calibration="analytic",
                secrets=("gender == 'female': 0.4 vs 0.6",),
                theta="moments of the reference data", sensitivity=0.5,
                inherent_variance=(0.1, 0.2),
                certified_by=Method.of("stated", text="test plan"),
                assumed=(Assumption.of("stated", text="records are independent"),
                         Assumption.of("stated", text="Theta holds the truth")))
    base.update(fields)
    if laplace is not None:
        scale, basis = laplace
        basis = np.asarray(basis, dtype=float)
        cov = 2 * scale**2 * basis @ basis.T
    else:
        cov = np.asarray(gaussian, dtype=float)
    k = cov.shape[0]

    law = (LaplaceNoise(*laplace) if laplace is not None
           else GaussianNoise(cov))
    if extra_laplace:
        law = law + LaplaceNoise.on_each(extra_laplace, k)
    return cls(**base, noise_law=law)


# -- expected_gaussian_norm ------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3, 7, 50, 300])
@pytest.mark.parametrize("s", [1e-12, 0.3, 1.0, 1e12])
def test_isotropic_gaussian_norm_is_the_chi_mean(k, s):
    assert expected_gaussian_norm(s * np.eye(k)) == pytest.approx(
        _isotropic_norm(s, k), rel=1e-12)


def test_isotropic_gaussian_norm_one_statistic_is_sqrt_two_over_pi():
    assert expected_gaussian_norm(np.array([[4.0]])) == pytest.approx(
        2 * math.sqrt(2 / math.pi), rel=1e-14)


def test_zero_covariance_has_zero_norm():
    assert expected_gaussian_norm(np.zeros((3, 3))) == 0.0


def _scaled(cases):
    """(case..., scale) for scales 1e-12, 1 and 1e12.

    The tiny scale once failed: np.allclose's default atol=1e-8 took every
    spectrum below about 1e-8 for isotropic, underestimating E||Z|| by 35%
    for diag(1, 0.25) at scale 1e-12.
    """
    return [(*case, scale) for case in cases for scale in (1e-12, 1.0, 1e12)]


@pytest.mark.parametrize("a, b, scale",
                         _scaled([(1.0, 0.5), (1.0, 0.01), (1.0, 1e-6), (3.0, 2.9)])
                         + [(1.0, 0.0, 1e-12), (1.0, 0.0, 1.0), (1.0, 0.0, 1e12)])
def test_two_dim_gaussian_norm_matches_elliptic_integral(a, b, scale):
    rotation = _random_rotation(2, np.random.default_rng(0))
    cov = scale * rotation @ np.diag([a, b]) @ rotation.T
    assert expected_gaussian_norm(cov) == pytest.approx(
        math.sqrt(scale) * _two_dim_norm(a, b), rel=1e-8)


@pytest.mark.parametrize("lam, scale", _scaled(
    [((1.0, 0.5, 0.25),), ((1.0, 1e-3, 1e-5),), ((2.0, 2.0, 0.1),)]))
def test_three_dim_gaussian_norm_matches_sphere_average(lam, scale):
    assert expected_gaussian_norm(scale * np.diag(lam)) == pytest.approx(
        math.sqrt(scale) * _three_dim_norm(lam), rel=1e-8)


def test_correlated_gaussian_norm_matches_monte_carlo():
    rng = np.random.default_rng(1)
    factor = rng.normal(size=(5, 5)) * np.array([3.0, 1.0, 0.5, 0.1, 0.01])
    cov = factor @ factor.T
    norms = np.linalg.norm(rng.multivariate_normal(np.zeros(5), cov,
                                                   size=400_000), axis=1)
    se = norms.std() / math.sqrt(norms.size)
    assert abs(expected_gaussian_norm(cov) - norms.mean()) < 5 * se


@pytest.mark.parametrize("lam", SPREAD_SPECTRA)
def test_no_integration_warning(lam):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = expected_gaussian_norm(np.diag(lam))
        laplace = [expected_laplace_norm(1.0, d) for d in (2, 3, 10, 1000)]
    exact = _two_dim_norm(*lam) if len(lam) == 2 else _three_dim_norm(lam)
    assert value == pytest.approx(exact, rel=1e-9)
    assert all(np.isfinite(laplace))


# -- expected_laplace_norm -------------------------------------------------------


@pytest.mark.parametrize("scale", [1e-12, 0.7, 1e12])
def test_laplace_norm_one_direction_is_the_scale(scale):
    assert expected_laplace_norm(scale, 1) == scale


def test_laplace_norm_without_noise_is_zero():
    assert expected_laplace_norm(0.0, 3) == 0.0
    assert expected_laplace_norm(2.0, 0) == 0.0


@pytest.mark.parametrize("scale", [1e-12, 1.0, 1e12])
def test_laplace_norm_two_dims_closed_form(scale):
    # E sqrt(A^2 + B^2) for A, B ~ Exp(1): in polar coordinates it is
    # int_0^(pi/2) 2 / (cos t + sin t)^3 dt = 1 + asinh(1) / sqrt(2).
    assert expected_laplace_norm(scale, 2) == pytest.approx(
        scale * (1 + math.asinh(1) / math.sqrt(2)), rel=1e-9)


def test_laplace_norm_three_dims_orthant_integral():
    # E ||y|| = 3! int over the positive octant of the sphere of (sum u)^-4.
    def integrand(phi, theta):
        total = (math.sin(phi) * (math.cos(theta) + math.sin(theta))
                 + math.cos(phi))
        return total**-4 * math.sin(phi)

    octant, _ = integrate.dblquad(integrand, 0, math.pi / 2, 0, math.pi / 2,
                                  epsabs=1e-13, epsrel=1e-12)
    assert expected_laplace_norm(2.5, 3) == pytest.approx(2.5 * 6 * octant,
                                                          rel=1e-9)


@pytest.mark.parametrize("d", [2, 3, 6])
def test_laplace_norm_matches_monte_carlo(d):
    rng = np.random.default_rng(d)
    norms = np.linalg.norm(rng.laplace(scale=1.7, size=(400_000, d)), axis=1)
    se = norms.std() / math.sqrt(norms.size)
    assert abs(expected_laplace_norm(1.7, d) - norms.mean()) < 5 * se


def test_laplace_norm_many_dims_approaches_sqrt_two_d():
    # E ||y||^2 = 2 d b^2 and ||y|| concentrates: E||y|| = b sqrt(2d) (1 - O(1/d)).
    d = 10_000
    value = expected_laplace_norm(1.0, d)
    assert value < math.sqrt(2 * d)
    assert value == pytest.approx(math.sqrt(2 * d), rel=1e-3)


# -- gaussian_accuracy and Plan.alpha --------------------------------------------


@pytest.mark.parametrize("beta", [0.5, 0.05, 1e-6])
@pytest.mark.parametrize("variance", [1e-12, 2.0, 1e12])
def test_gaussian_accuracy_one_statistic_is_zhang_theorem_2(variance, beta):
    assert gaussian_accuracy(variance, 1, beta) == pytest.approx(
        math.sqrt(variance) * stats.norm.isf(beta / 2), rel=1e-10)


def test_gaussian_accuracy_without_noise_is_zero():
    assert gaussian_accuracy(0.0, 3, 0.05) == 0.0


@pytest.mark.parametrize("beta", [0.2, 0.05, 1e-4])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_alpha_isotropic_gaussian_is_exact(k, beta):
    s = 0.37
    alpha = _plan(gaussian=s * np.eye(k),
                  statistics=tuple(f"x{i}" for i in range(k))).alpha(beta)
    assert stats.chi2.sf(alpha**2 / s, k) == pytest.approx(beta, rel=1e-9)


def test_alpha_anisotropic_gaussian_is_an_upper_bound():
    rng = np.random.default_rng(2)
    cov = np.diag([1.0, 0.2, 0.0])
    plan = _plan(gaussian=cov, statistics=("a", "b", "c"))
    norms = np.linalg.norm(rng.normal(size=(200_000, 3)) * np.sqrt(np.diagonal(cov)),
                           axis=1)
    assert np.mean(norms > plan.alpha(0.05)) <= 0.05
    # The bound takes the largest variance on the noise's rank-2 support.
    assert plan.alpha(0.05) == pytest.approx(math.sqrt(stats.chi2.isf(0.05, 2)))


@pytest.mark.parametrize("beta", [0.3, 0.05, 1e-5])
def test_alpha_laplace_in_one_direction_is_exact(beta):
    direction = np.array([[0.6], [0.8]])
    alpha = _plan(laplace=(1.3, direction)).alpha(beta)
    # |y| for y ~ Laplace(0, b) is Exp(b): P(|y| > alpha) = exp(-alpha / b).
    assert 2 * stats.laplace.sf(alpha, scale=1.3) == pytest.approx(beta, rel=1e-9)
    assert alpha == pytest.approx(-1.3 * math.log(beta), rel=1e-12)


def test_alpha_laplace_on_each_statistic_is_an_upper_bound():
    rng = np.random.default_rng(3)
    plan = _plan(laplace=(0.8, np.eye(3)), statistics=("a", "b", "c"))
    norms = np.linalg.norm(rng.laplace(scale=0.8, size=(200_000, 3)), axis=1)
    assert np.mean(norms > plan.alpha(0.05)) <= 0.05


def test_alpha_with_extra_laplace_is_a_union_bound():
    rng = np.random.default_rng(4)
    s, b, k, beta = 0.5, 0.4, 2, 0.05
    plan = _plan(gaussian=s * np.eye(k), extra_laplace=b)
    draws = (rng.normal(scale=math.sqrt(s), size=(200_000, k))
             + rng.laplace(scale=b, size=(200_000, k)))
    alpha = plan.alpha(beta)
    assert np.mean(np.linalg.norm(draws, axis=1) > alpha) <= beta
    # Each part takes beta / 2: the Gaussian's exact alpha plus the Gamma bound.
    assert alpha == pytest.approx(
        math.sqrt(s * stats.chi2.isf(beta / 2, k))
        + b * stats.gamma.isf(beta / 2, k), rel=1e-10)
    assert plan.extra_laplace_scale == b
    np.testing.assert_allclose(plan.noise_covariance,
                               (s + 2 * b**2) * np.eye(k), rtol=1e-12)


def test_noiseless_plan_has_zero_alpha():
    plan = _plan(gaussian=np.zeros((2, 2)))
    assert plan.noiseless
    assert plan.alpha(0.05) == 0.0
    assert plan.accuracy == (0.0, 0.05)


def test_accuracy_is_alpha_at_five_percent():
    plan = _plan(gaussian=2.0 * np.eye(2))
    assert plan.accuracy == (plan.alpha(0.05), 0.05)


# -- Plan and Release as records ---------------------------------------------------


def _release(values=None, **fields):
    if values is None:
        values = pd.Series([65.2, 160.1], index=["height", "weight"])
    return _plan(Release, gaussian=np.diag([0.5, 2.0]), values=values, **fields)


def test_plan_and_release_are_frozen():
    plan = _plan(gaussian=np.eye(2))
    release = _release()
    for record in (plan, release):
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.epsilon = 10.0
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.mechanism = "none"
    with pytest.raises(dataclasses.FrozenInstanceError):
        release.values = pd.Series([0.0, 0.0], index=["height", "weight"])


def test_noise_arrays_are_read_only():
    cov = np.diag([1.0, 2.0])
    plan = _plan(gaussian=cov)
    with pytest.raises(ValueError, match="read-only"):
        plan.noise_covariance[0, 0] = 0.0
    # The caller's array is neither frozen nor shared.
    cov[0, 0] = 7.0
    assert plan.noise_covariance[0, 0] == 1.0

    basis = np.array([[0.6], [0.8]])
    laplace = _plan(laplace=(1.0, basis))
    with pytest.raises(ValueError, match="read-only"):
        laplace.noise_basis[0, 0] = 1.0
    basis[0, 0] = 1.0
    assert laplace.noise_basis[0, 0] == 0.6


def test_noise_std_is_the_covariance_diagonal():
    plan = _plan(gaussian=np.array([[4.0, 1.0], [1.0, 9.0]]))
    np.testing.assert_allclose(plan.noise_std, [2.0, 3.0])


def test_release_values_are_copied():
    values = pd.Series([65.2, 160.1], index=["height", "weight"])
    release = _release(values)
    values.iloc[0] = -1.0
    values["bmi"] = 25.0
    pd.testing.assert_series_equal(
        release.values, pd.Series([65.2, 160.1], index=["height", "weight"]),
        check_flags=False)


def test_release_refuses_duplicate_labels():
    values = pd.Series([1.0, 2.0], index=["height", "height"])
    with pytest.raises(pd.errors.DuplicateLabelError):
        _release(values)


def test_plan_summary_has_the_guarantee_theta_and_assumptions():
    plan = _plan(gaussian=np.eye(2), epsilon=0.5, delta=1e-6)
    summary = plan.summary()
    lines = str(summary).splitlines()
    # Issue 28: the report opens with the guarantee in plain words, then the
    # tables, the technical certificate under its own heading.
    assert lines[0].startswith("Hidden: gender == 'female': 0.4 vs 0.6. ")
    plain = " ".join(lines[:lines.index("")])
    assert plain == summary.plain == plan.in_plain_words()
    assert ("a release by this plan changes their odds by at most a factor "
            "e^0.5 = 1.65 (epsilon = 0.5), except with probability 1e-06 "
            "(delta)") in plain
    assert "It covers a release by this plan alone" in plain
    assert lines[lines.index("") + 1].strip() == "Release plan (no noise drawn)"
    assert any(line.strip() == "Certificate" for line in lines)
    rows = dict(summary.certificate)
    assert rows["guarantee"] == "(0.5, 1e-06)-attribute privacy"
    assert rows["Theta"] == "moments of the reference data"
    assert rows["hidden"] == "gender == 'female': 0.4 vs 0.6"
    assert rows["records n"] == "100"
    assumed = [v for k, v in summary.certificate if k == "assumes"]
    assert assumed == ["records are independent", "Theta holds the truth"]
    alpha = plan.alpha(0.05)
    assert rows["accuracy"] == (f"||error|| <= {alpha:.6g} with probability 0.95")
    # Pufferfish guarantees do not compose; the summary says so.
    assert "do not add up" in rows["covers"]
    # One row per statistic: the noise and its 95% half-width (unit
    # Gaussian noise: 1.96).
    assert summary.table.index.tolist() == ["height", "weight"]
    assert summary.table["noise sd"].tolist() == ["1", "1"]
    assert float(summary.table.iloc[0, 1]) == pytest.approx(1.959964, abs=1e-5)
    # Every line of the text is printed as is: long values wrap.
    assert max(len(line) for line in lines) <= 100
    assert any(line.startswith("height ") for line in lines)


def test_dp_summary_says_the_guarantee_composes():
    plan = _plan(gaussian=np.eye(2), guarantee="differential privacy")
    text = str(plan.summary())
    assert "(1, 1e-05)-differential privacy" in text
    assert "sum of their epsilons" in text


def test_release_summary_leads_with_the_released_values():
    release = _release()
    summary = release.summary(alpha=0.1)
    lines = str(summary).splitlines()
    assert lines[lines.index("") + 1].strip() == "Release"
    assert "seeing this release changes their odds" in summary
    table = summary.table
    assert table.index.tolist() == ["height", "weight"]
    assert table["value"].tolist() == ["65.2", "160.1"]
    interval = release.conf_int(0.1)
    assert [float(v) for v in table["lower (90%)"]] == pytest.approx(
        interval["lower"].tolist(), rel=1e-5)
    assert [float(v) for v in table["upper (90%)"]] == pytest.approx(
        interval["upper"].tolist(), rel=1e-5)
    # The values are in the table, not repeated in the certificate.
    assert "released" not in dict(summary.certificate)
    assert "guarantee" in dict(summary.certificate)
    assert "height" in summary and "65.2" in summary


@pytest.mark.parametrize("alpha", [0, 1, "0.05", None])
def test_summary_checks_alpha(alpha):
    with pytest.raises(InvalidParameterError, match="alpha"):
        _release().summary(alpha=alpha)


def test_summary_formats():
    summary = _release().summary()
    assert summary.as_text() == str(summary)
    assert "\\begin{" in summary.as_latex()
    assert summary.as_html() == summary._repr_html_() == _release()._repr_html_()


def test_repr_html_escapes_labels():
    plan = _plan(gaussian=np.eye(1), statistics=("<b>bmi</b>",), theta="a & b",
                 assumed=(Assumption.of("stated", text="x < y"),),
                 secrets=("<i>gender</i>",))
    out = plan._repr_html_()
    assert out.startswith("<p>Hidden: &lt;i&gt;gender&lt;/i&gt;. ")
    assert out.rstrip().endswith("</table>")
    assert "<b>" not in out and "<i>" not in out
    assert "&lt;b&gt;bmi&lt;/b&gt;" in out
    assert "&lt;i&gt;gender&lt;/i&gt;" in out
    assert "a &amp; b" in out
    assert "x &lt; y" in out


def test_release_repr_html_escapes_value_labels():
    label = "<script>alert(1)</script>"
    release = _plan(Release, gaussian=np.eye(1), statistics=(label,),
                    values=pd.Series([1.5], index=[label]))
    out = release._repr_html_()
    assert "<script>" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out and "1.5" in out


def test_a_release_holds_its_plan_and_reads_as_before():
    # Issue 45: a release is not a plan; it holds one. A file saved when it
    # was a plan's subclass (skattr 0.3 at 54df40e) loads, and is written
    # back byte for byte: to_json's output is unchanged.
    from pathlib import Path

    from skattr import Plan, Release

    text = (Path(__file__).parent / "data" / "release_by_0.3.json").read_text()
    rel = Release.from_json(text)
    assert rel.to_json() == text
    assert isinstance(rel.plan, Plan) and not isinstance(rel, Plan)
    assert rel.epsilon == rel.plan.epsilon and rel.statistics == rel.plan.statistics
    np.testing.assert_array_equal(rel.noise_std, rel.plan.noise_std)
    assert rel.summary().as_text().splitlines()[0] == \
        rel.plan.summary().as_text().splitlines()[0]
    assert "Release" in str(rel.summary()) and "post-processed" in rel.method
    # Plan.from_json reads a release's file, as before.
    assert type(Plan.from_json(text)) is Release
    changed = dataclasses.replace(rel, epsilon=2.0)
    assert changed.epsilon == 2.0 and changed.plan.epsilon == 2.0
    assert changed.values.equals(rel.values) and rel.epsilon != 2.0
    with pytest.raises(InvalidParameterError, match="A Release's epsilon"):
        dataclasses.replace(rel, epsilon=-1.0)
