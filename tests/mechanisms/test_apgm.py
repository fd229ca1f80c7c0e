"""The Attribute-Private Gaussian Mechanism against independent computations."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from sklearn.base import clone

import skattr
from skattr import Assumption, Method
from skattr.calibration._gaussian import gaussian_delta
from skattr.exceptions import (
    ClassicCalibrationWarning,
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.laws import AssumeGaussian
from skattr.mechanisms import AttributePrivateGaussian, MaxDivergenceGap
from skattr.theta import ExpertTheta, GroupMoments, JointGaussian

SECRET = skattr.Secret.proportion("sex", "F", pairs=[(0.4, 0.6)])


def _expert(mean_in, mean_out, var_in, var_out, columns=("y",)):
    return ExpertTheta([GroupMoments(mean_in=mean_in, mean_out=mean_out,
                                     cov_in=var_in, cov_out=var_out,
                                     columns=columns)])


def _frame(n=50, seed=0, k=1):
    rng = np.random.default_rng(seed)
    data = {"sex": np.where(rng.random(n) < 0.5, "F", "M")}
    for j in range(k):
        data["y" if k == 1 else f"y{j}"] = rng.normal(size=n)
    return pd.DataFrame(data)


def test_classic_scalar_matches_algorithm_1_formula():
    # Equal group variances: F | a ~ N(mu_a, var / n), Delta = |a - b| |m_in - m_out|.
    n, var, eps, delta = 50, 4.0, 0.5, 1e-3
    mech = AttributePrivateGaussian(
        law="gaussian",
        query=skattr.Query.mean(["y"]), secret=SECRET, epsilon=eps, delta=delta,
        calibration="classic", theta=_expert([10.0], [13.0], var, var),
    ).fit(_frame())
    plan = mech.plan(n=n)
    c = math.sqrt(2 * math.log(1.25 / delta))
    sens = 0.2 * 3.0
    expected = (c * sens / eps) ** 2 - var / n
    assert plan.sensitivity == pytest.approx(sens, rel=1e-12)
    assert plan.inherent_variance[0] == pytest.approx(var / n, rel=1e-12)
    assert plan.noise_covariance[0, 0] == pytest.approx(expected, rel=1e-10)
    # Theorem 2: alpha = sigma Phi^-1(1 - beta / 2).
    alpha, beta = plan.accuracy
    assert alpha == pytest.approx(math.sqrt(expected) * stats.norm.ppf(1 - beta / 2))
    assert plan.alpha(0.01) == pytest.approx(
        math.sqrt(expected) * stats.norm.ppf(1 - 0.005))
    assert plan.expected_error == pytest.approx(math.sqrt(2 * expected / math.pi))


def test_analytic_calibration_is_exact_and_needs_less_noise():
    n, var, eps, delta = 50, 4.0, 0.5, 1e-5
    kwargs = dict(query=skattr.Query.mean(["y"]), secret=SECRET, epsilon=eps,
                  delta=delta, theta=_expert([10.0], [13.0], var, var))
    analytic = AttributePrivateGaussian(law="gaussian",
                                        **kwargs).fit(_frame()).plan(n=n)
    classic = AttributePrivateGaussian(law="gaussian",
                                       calibration="classic", **kwargs).fit(
        _frame()).plan(n=n)
    total_sd = math.sqrt(analytic.noise_covariance[0, 0] + var / n)
    # The release's two laws are exactly (eps, delta)-indistinguishable.
    assert gaussian_delta(0.6 / total_sd, eps) == pytest.approx(delta, rel=1e-7)
    assert analytic.noise_covariance[0, 0] < classic.noise_covariance[0, 0]


def test_noiseless_when_inherent_variance_covers_sensitivity():
    frame = _frame(200, seed=3)
    mech = AttributePrivateGaussian(
        law="gaussian", query=skattr.Query.mean(["y"]), secret=SECRET, epsilon=1.0,
        theta=_expert([0.0], [0.01], 1.0, 1.0), random_state=0).fit(frame)
    rel = mech.release(frame)
    assert rel.noiseless
    assert rel.values["y"] == frame["y"].mean()
    assert "no noise" in rel.summary() or "none" in rel.summary()
    # ... and the raw statistic's leakage is indeed below epsilon.
    assert mech.leakage(frame) <= 1.0


@pytest.mark.slow
def test_leakage_matches_independent_closed_form():
    n, var, delta = 40, 2.0, 1e-3
    mech = AttributePrivateGaussian(
        law="gaussian", query=skattr.Query.mean(["y"]), secret=SECRET, delta=delta,
        theta=_expert([1.0], [2.0], var, var)).fit(_frame())
    mu = 0.2 * 1.0 / math.sqrt(var / n)

    # Independent: find eps with delta(eps) = delta by integrating the hockey stick.
    def hockey(eps):
        def f(x):
            return max(stats.norm.pdf(x) - math.exp(eps) * stats.norm.pdf(x, mu), 0.0)

        return integrate.quad(f, -40, 40, points=[0.0, mu / 2, mu], limit=200,
                              epsabs=1e-14, epsrel=1e-12)[0]

    from scipy.optimize import brentq
    eps = brentq(lambda e: hockey(e) - delta, 0.0, 20.0, xtol=1e-12)
    assert mech.leakage(n=n) == pytest.approx(eps, rel=1e-5)
    # A mechanism at exactly that epsilon needs no noise; slightly below, it does.
    assert mech.set_params(epsilon=eps * 1.0001).plan(n=n).noiseless
    assert not mech.set_params(epsilon=eps * 0.99).plan(n=n).noiseless


def test_vector_noise_is_least_isotropic_certified_variance():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + 0.5 * np.eye(3)
    theta = ExpertTheta([GroupMoments(mean_in=[1.0, 2.0, 0.5], mean_out=[0.0, 0.0, 0.0],
                                      cov_in=cov, cov_out=cov,
                                      columns=("y0", "y1", "y2"))])
    eps, delta, n = 0.8, 1e-4, 30
    mech = AttributePrivateGaussian(law="gaussian",
                                    query=skattr.Query.mean(["y0", "y1", "y2"]),
                                    secret=SECRET, epsilon=eps, delta=delta,
                                    calibration="classic", theta=theta).fit(
        _frame(k=3))
    plan = mech.plan(n=n)
    s = plan.noise_covariance[0, 0]
    diff = 0.2 * np.array([1.0, 2.0, 0.5])
    c = math.sqrt(2 * math.log(1.25 / delta))

    def mahalanobis(var):
        return math.sqrt(diff @ np.linalg.solve(cov / n + var * np.eye(3), diff))

    assert mahalanobis(s) == pytest.approx(eps / c, rel=1e-9)
    assert mahalanobis(s * 0.999) > eps / c
    # Never more noise than the l2 sensitivity with the smallest eigenvalue.
    bound = (c * np.linalg.norm(diff) / eps) ** 2 - np.linalg.eigvalsh(cov / n)[0]
    assert s <= bound + 1e-12
    assert plan.sensitivity == pytest.approx(np.linalg.norm(diff))
    assert plan.expected_error == pytest.approx(
        math.sqrt(2 * s) * math.gamma(2) / math.gamma(1.5))
    np.testing.assert_allclose(plan.noise_covariance, s * np.eye(3))


def test_unequal_variances_use_exact_profile():
    # Per-group variances differ, so Var(F | a) depends on a; the pair is
    # certified with the exact profile of the two Gaussians.
    n, eps, delta = 50, 1.0, 1e-3
    mech = AttributePrivateGaussian(
        law="gaussian",
        query=skattr.Query.mean(["y"]), secret=SECRET, epsilon=eps, delta=delta,
        theta=_expert([0.0], [3.0], 1.0, 9.0)).fit(_frame())
    plan = mech.plan(n=n)
    s = plan.noise_covariance[0, 0]
    va = (0.4 * 1.0 + 0.6 * 9.0) / n + s
    vb = (0.6 * 1.0 + 0.4 * 9.0) / n + s
    ma, mb = 0.6 * 3.0, 0.4 * 3.0

    def hockey(m1, v1, m2, v2):
        def f(x):
            return max(stats.norm.pdf(x, m1, math.sqrt(v1))
                       - math.exp(eps) * stats.norm.pdf(x, m2, math.sqrt(v2)), 0.0)

        lo = min(m1, m2) - 40 * math.sqrt(max(v1, v2))
        hi = max(m1, m2) + 40 * math.sqrt(max(v1, v2))
        return integrate.quad(f, lo, hi, points=[m1, m2], limit=400,
                              epsabs=1e-14, epsrel=1e-12)[0]

    achieved = max(hockey(ma, va, mb, vb), hockey(mb, vb, ma, va))
    assert achieved <= delta * (1 + 1e-6)
    assert achieved == pytest.approx(delta, rel=1e-4)
    assert plan.certified_by == Method.of("profile.unequal-variances")


def test_non_gaussian_variant_reports_relaxed_certificate():
    mech = AttributePrivateGaussian(
        law="gaussian",
        query=skattr.Query.mean(["y"]), secret=SECRET, epsilon=1.0, delta=1e-4,
        relaxation=MaxDivergenceGap(lam=0.1, eta=1e-5),
        theta=_expert([0.0], [1.0], 1.0, 1.0)).fit(_frame())
    plan = mech.plan(n=50)
    assert plan.epsilon == pytest.approx(1.2)
    # Chen & Ohrimenko Thm 4.6's delta; Zhang et al. Thm 3's e^lambda delta + eta
    # misses the (e^(epsilon + lambda)) eta term and does not hold
    # (tests/test_soundness.py).
    assert plan.delta == pytest.approx(
        (1 + math.exp(1.1)) * 1e-5 + math.exp(0.1) * 1e-4)
    assert plan.assumed[-1] == Assumption.of(
        "relaxation.max-divergence", lambda_eta=0.1, eta=1e-5)
    assert (plan.assumed[-1].option
            == "relaxation=MaxDivergenceGap(lam=0.1, eta=1e-05)")
    base = AttributePrivateGaussian(
        law="gaussian",
        query=skattr.Query.mean(["y"]), secret=SECRET, epsilon=1.0, delta=1e-4,
        theta=_expert([0.0], [1.0], 1.0, 1.0)).fit(_frame()).plan(n=50)
    assert plan.noise_covariance[0, 0] == base.noise_covariance[0, 0]


def test_several_secrets_take_the_worst_case():
    frame = _frame(400, seed=2)
    frame["smoker"] = np.where(np.random.default_rng(5).random(400) < 0.3, 1, 0)
    frame["y"] = frame["y"] + 2.0 * frame["smoker"]
    s1 = SECRET
    s2 = skattr.Secret.proportion("smoker", 1, pairs=[(0.2, 0.4)])
    kw = dict(query=skattr.Query.mean(["y"]), epsilon=0.5, random_state=0)
    p1 = AttributePrivateGaussian(law="gaussian",
                                  secret=s1, **kw).fit(frame).plan(n=100)
    p2 = AttributePrivateGaussian(law="gaussian",
                                  secret=s2, **kw).fit(frame).plan(n=100)
    both = AttributePrivateGaussian(law="gaussian",
                                    secret=[s1, s2], **kw).fit(frame).plan(n=100)
    assert both.noise_covariance[0, 0] == pytest.approx(
        max(p1.noise_covariance[0, 0], p2.noise_covariance[0, 0]))
    assert both.sensitivity == pytest.approx(max(p1.sensitivity, p2.sensitivity))
    assert len(both.secrets) == 2


def test_joint_gaussian_model_of_section_4_2():
    # Sec. 4.2: mean mu_j + V_ij / V_ii (a - mu_i), variance (V_jj - V_ij^2/V_ii)/n.
    rng = np.random.default_rng(0)
    cov = np.array([[1.0, 0.6], [0.6, 2.0]])
    ref = pd.DataFrame(rng.multivariate_normal([0.0, 5.0], cov, size=20000),
                       columns=["x", "y"])
    secret = skattr.Secret.mean("x", pairs=[(-0.5, 0.5)])
    mech = AttributePrivateGaussian(law="gaussian",
                                    query=skattr.Query.mean(["y"]), secret=secret,
                                    theta="gaussian", calibration="classic",
                                    epsilon=0.5, delta=1e-3).fit(ref)
    v = np.cov(ref.to_numpy().T)
    plan = mech.plan(n=25)
    assert plan.sensitivity == pytest.approx(v[0, 1] / v[0, 0] * 1.0, rel=1e-10)
    assert plan.inherent_variance[0] == pytest.approx(
        (v[1, 1] - v[0, 1] ** 2 / v[0, 0]) / 25, rel=1e-10)
    c = math.sqrt(2 * math.log(1250))
    assert plan.noise_covariance[0, 0] == pytest.approx(
        (c * plan.sensitivity / 0.5) ** 2 - plan.inherent_variance[0], rel=1e-9)
    assert isinstance(mech.law_.models[0][0], JointGaussian)


def test_seeded_noise_is_reproducible_and_default_is_secure(monkeypatch):
    frame = _frame(100)
    kw = dict(query=skattr.Query.mean(["y"]), secret=SECRET, epsilon=0.1,
              theta=_expert([0.0], [2.0], 1.0, 1.0))
    a = AttributePrivateGaussian(law="gaussian",
                                 random_state=7, **kw).fit(frame).release(frame)
    b = AttributePrivateGaussian(law="gaussian",
                                 random_state=7, **kw).fit(frame).release(frame)
    assert a.values.equals(b.values)
    sd = float(a.noise_std[0])
    # skattr's one random_state rule: an int seeds one numpy Generator per fit.
    draws = np.random.default_rng(7).standard_normal(2)
    assert a.values["y"] == pytest.approx(frame["y"].mean() + sd * draws[0])
    # The next release of the same fitted mechanism draws fresh noise (the seed
    # fixes the sequence, not one draw): repeated noise would let anyone
    # difference two releases exactly.
    mech = AttributePrivateGaussian(law="gaussian", random_state=7, **kw).fit(frame)
    first, second = mech.release(frame), mech.release(frame)
    assert first.values["y"] == a.values["y"]
    assert second.values["y"] == pytest.approx(frame["y"].mean() + sd * draws[1])

    calls = []
    from skattr import _random

    real = _random.os.urandom
    monkeypatch.setattr(_random.os, "urandom",
                        lambda size: calls.append(1) or real(size))
    secure = AttributePrivateGaussian(law="gaussian", **kw).fit(frame)
    first, second = secure.release(frame), secure.release(frame)
    assert len(calls) == 2
    assert first.values["y"] != second.values["y"]


def test_release_never_mutates_and_never_stores_truth():
    frame = _frame(80)
    before = frame.copy(deep=True)
    mech = AttributePrivateGaussian(law=AssumeGaussian(sampling="with-replacement"),
                                    query=skattr.Query.mean(["y"]), secret=SECRET,
                                    random_state=0).fit(frame)
    rel = mech.release(frame)
    pd.testing.assert_frame_equal(frame, before)
    # What a release holds: its plan's fields and its own.
    fields = {*rel.__dataclass_fields__, *rel.plan.__dataclass_fields__}
    assert fields >= {"values", "epsilon", "delta"}
    assert not any("true" in f for f in fields)
    with pytest.raises(AttributeError):
        rel.epsilon = 5.0
    with pytest.raises(ValueError):
        rel.noise_covariance[0, 0] = 0.0
    assert "<table class=\"simpletable\">" in rel._repr_html_()
    assert "Release" in rel.summary() and "apgm" in rel.summary()


def test_classic_warns_at_epsilon_one_or_more():
    kw = dict(query=skattr.Query.mean(["y"]), secret=SECRET, calibration="classic",
              theta=_expert([0.0], [2.0], 1.0, 1.0))
    mech = AttributePrivateGaussian(law="gaussian", epsilon=1.0, **kw).fit(_frame())
    with pytest.warns(ClassicCalibrationWarning, match="epsilon < 1"):
        mech.plan(n=50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AttributePrivateGaussian(law="gaussian",
                                 epsilon=0.5, **kw).fit(_frame()).plan(n=50)


@pytest.mark.parametrize("param, value, match", [
    ("epsilon", 0.0, "'epsilon' parameter"),
    ("epsilon", -1.0, "'epsilon' parameter"),
    ("epsilon", float("inf"), "'epsilon' parameter"),
    ("epsilon", float("nan"), "'epsilon' parameter"),
    ("epsilon", "1", "'epsilon' parameter"),
    ("delta", -0.1, "'delta' parameter"),
    ("delta", 1.0, "'delta' parameter"),
    ("calibration", "gauss", "'calibration' parameter"),
    ("theta", "kde", "'theta' parameter"),
    ("law", "bootstrap", "'law' parameter"),
    ("relaxation", (0.1, 1e-5), "'relaxation' parameter"),
    ("random_state", "seed", "'random_state' parameter"),
    ("query", "mean", "'query' parameter"),
])
def test_every_constraint_rejects_invalid_values(param, value, match):
    mech = AttributePrivateGaussian(secret=SECRET, **{"law": "gaussian", param: value})
    with pytest.raises(InvalidParameterError, match=match):
        mech.fit(_frame())


def test_delta_zero_cannot_be_certified_with_gaussian_noise():
    # Gaussian noise certifies no (epsilon, 0): the constraint says so at fit.
    mech = AttributePrivateGaussian(law="gaussian",
                                    query=skattr.Query.mean(["y"]), secret=SECRET,
                                    delta=0.0)
    with pytest.raises(InvalidParameterError, match="'delta' parameter of "
                       "AttributePrivateGaussian must be .*range \\(0, 1\\)"):
        mech.fit(_frame())


def test_bad_data_gets_clear_errors():
    frame = _frame(60)
    mech = AttributePrivateGaussian(law="gaussian",
                                    query=skattr.Query.mean(["y"]), secret=SECRET)
    with pytest.raises(DataValidationError, match=r"not found"):
        AttributePrivateGaussian(law="gaussian", query=skattr.Query.mean(["nope"]),
                                 secret=SECRET).fit(frame)
    bad = frame.copy()
    bad.loc[3, "y"] = np.nan
    with pytest.raises(DataValidationError, match=r"NaN or infinite.*'y'"):
        mech.fit(bad)
    bad.loc[3, "y"] = np.inf
    with pytest.raises(DataValidationError, match="NaN or infinite"):
        mech.fit(frame).release(bad)
    with pytest.raises(DataValidationError, match="0 rows|0 sample"):
        mech.fit(frame).release(frame.iloc[:0])
    with pytest.raises(DataValidationError, match="not numeric"):
        AttributePrivateGaussian(law="gaussian", query=skattr.Query.mean(["sex"]),
                                 secret=SECRET).fit(frame)
    lonely = frame.assign(sex=["F"] + ["M"] * 59)
    with pytest.raises(NotCertifiableError, match="at least 10 in each group"):
        mech.fit(lonely)
    with pytest.raises(DataValidationError, match="at least two"):
        clone(mech).set_params(theta="moments").fit(lonely)
    with pytest.raises(InvalidParameterError, match="'secret' parameter of "
                       "AttributePrivateGaussian must be a skattr.Secret .*Got "
                       "None instead"):
        AttributePrivateGaussian(law="gaussian",
                                 query=skattr.Query.mean(["y"])).fit(frame)
    constant = frame.assign(x=1.0)
    with pytest.raises(DataValidationError, match="constant|zero variance"):
        AttributePrivateGaussian(law="gaussian", query=skattr.Query.mean(["y"]),
                                 secret=skattr.Secret.mean("x", pairs=[(0.0, 1.0)]),
                                 theta="gaussian").fit(constant)
    with pytest.raises(InvalidParameterError, match="theta='gaussian'"):
        AttributePrivateGaussian(law="gaussian", query=skattr.Query.mean(["y"]),
                                 secret=skattr.Secret.mean("y", pairs=[(0.0, 1.0)]),
                                 ).fit(frame.assign(z=frame.y))


def test_sampling_without_replacement_needs_enough_reference_records():
    frame = _frame(40, seed=9)
    mech = AttributePrivateGaussian(law="gaussian",
                                    query=skattr.Query.mean(["y"]), secret=SECRET)
    with pytest.raises(NotCertifiableError, match="without replacement"):
        mech.fit(frame).plan(n=200)
    mech.set_params(law=AssumeGaussian(sampling="with-replacement")).fit(
        frame).plan(n=200)


@pytest.mark.slow
def test_release_law_matches_the_model_on_simulated_datasets():
    # Draw many private datasets with exactly a*n "F" records from a population,
    # release each, and compare the releases' mean and variance with the plan.
    rng = np.random.default_rng(11)
    pop = pd.DataFrame({"sex": np.repeat(["F", "M"], [3000, 3000])})
    pop["y"] = np.where(pop.sex == "F", 1.0, 0.0) + rng.normal(0, 1.0, 6000)
    n = 40
    mech = AttributePrivateGaussian(law=AssumeGaussian(sampling="without-replacement"),
                                    query=skattr.Query.mean(["y"]), secret=SECRET,
                                    epsilon=1.0,
                                    random_state=rng).fit(pop)
    plan = mech.plan(n=n)
    f_idx = np.flatnonzero(pop.sex == "F")
    m_idx = np.flatnonzero(pop.sex == "M")
    y = pop["y"].to_numpy()
    for a in (0.4, 0.6):
        k = int(a * n)
        releases = []
        for _ in range(2000):
            rows = np.concatenate([rng.choice(f_idx, k, replace=False),
                                   rng.choice(m_idx, n - k, replace=False)])
            releases.append(mech.release(pop.iloc[rows]).values["y"])
        releases = np.array(releases)
        expected_mean = a * y[f_idx].mean() + (1 - a) * y[m_idx].mean()
        expected_var = (a * y[f_idx].var() * (3000 - k) / 2999
                        + (1 - a) * y[m_idx].var() * (3000 - n + k) / 2999) / n
        total = expected_var + plan.noise_covariance[0, 0]
        assert releases.mean() == pytest.approx(expected_mean,
                                                abs=4 * math.sqrt(total / 2000))
        assert releases.var() == pytest.approx(total, rel=0.1)


@pytest.mark.filterwarnings(
    "ignore:epsilon=50 lets:skattr.exceptions.PrivacyLeakWarning")
def test_release_sums_columns_of_any_numeric_dtype():
    frame = _frame(300, seed=4, k=3).assign(
        y0=lambda d: (d.y0 * 100).round().astype("int64"),
        y1=lambda d: d.y1.astype("float32"),
        y2=lambda d: d.y2.astype(object))
    mech = AttributePrivateGaussian(law="gaussian",
                                    query=skattr.Query.sum(["y0", "y1", "y2"]),
                                    secret=SECRET, epsilon=50.0,
                                    theta=ExpertTheta([GroupMoments(
                                        mean_in=[0, 0, 0], mean_out=[0, 0, 0],
                                        cov_in=1.0, cov_out=1.0,
                                        columns=("y0", "y1", "y2"))]),
                                    random_state=0).fit(frame)
    rel = mech.release(frame)
    assert rel.noiseless
    expected = frame[["y0", "y1", "y2"]].astype(float).sum()
    np.testing.assert_allclose(rel.values.to_numpy(), expected.to_numpy(), rtol=1e-6)
    bad = frame.astype({"y0": "Int64"})
    bad.loc[5, "y0"] = pd.NA
    with pytest.raises(DataValidationError, match=r"NaN or infinite.*'y0'"):
        mech.release(bad)
    text = frame.assign(y2="a")
    with pytest.raises(DataValidationError, match="'y2' of the private data is not"):
        mech.release(text)


def test_numeric_secret_column_is_checked_at_release():
    frame = _frame(100).assign(sex=lambda d: (d.sex == "F").astype(float))
    secret = skattr.Secret.proportion("sex", 1.0, pairs=[(0.4, 0.6)])
    mech = AttributePrivateGaussian(
        law=AssumeGaussian(sampling="with-replacement"),
        query=skattr.Query.mean(["y"]), secret=secret).fit(frame)
    bad = frame.copy()
    bad.loc[2, "sex"] = np.inf
    with pytest.raises(DataValidationError, match="'sex' of the private data"):
        mech.release(bad)
    assert np.isfinite(mech.release(frame).values["y"])


def test_expected_norm_of_anisotropic_noise():
    from skattr._release import expected_gaussian_norm

    cov = np.diag([1.0, 4.0, 0.25])
    draws = np.random.default_rng(0).multivariate_normal(np.zeros(3), cov, 400_000)
    mc = np.linalg.norm(draws, axis=1)
    assert expected_gaussian_norm(cov) == pytest.approx(
        mc.mean(), abs=4 * mc.std() / math.sqrt(mc.size))
    assert expected_gaussian_norm(np.eye(2) * 9.0) == pytest.approx(
        3.0 * math.sqrt(math.pi / 2))
    assert expected_gaussian_norm(np.zeros((2, 2))) == 0.0
    # Scale-free: large or tiny anisotropic variances (a regression: the
    # quadrature once returned -0.05 for variances near 2.6e4).
    for scale in (1e-8, 2.6e4, 1e6, 1e12):
        assert expected_gaussian_norm(cov * scale) == pytest.approx(
            expected_gaussian_norm(cov) * math.sqrt(scale), rel=1e-7)
    rank_one = np.diag([1e6, 0.0, 0.0])
    assert expected_gaussian_norm(rank_one) == pytest.approx(
        1000 * math.sqrt(2 / math.pi), rel=1e-7)
