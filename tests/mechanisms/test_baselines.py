"""Differential-privacy baselines: sensitivities, noise laws, bounds, Chen's Table 2."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

import skattr
from skattr import Assumption, Query
from skattr.exceptions import (
    ClassicCalibrationWarning,
    DataValidationError,
    InvalidParameterError,
)
from skattr.mechanisms import DPGaussian, DPLaplace, GroupDPGaussian, GroupDPLaplace
from skattr.mechanisms._baselines import record_sensitivities

N = 40
BOUNDS = {"a": (0.0, 10.0), "b": (-5.0, 15.0), "c": (100.0, 160.0)}
SPANS = np.array([10.0, 20.0, 60.0])


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "a": rng.uniform(0, 10, N),
        "b": rng.uniform(-5, 15, N),
        "c": rng.uniform(100, 160, N),
        "flag": rng.integers(0, 2, N),
        "sex": rng.choice(["F", "M"], N),
    })


def classic_sigma(l2, epsilon, delta):
    return l2 * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def balle_wang_delta(mu, epsilon):
    """delta(mu; epsilon) of the Gaussian mechanism, Balle & Wang Thm 8."""
    return (stats.norm.cdf(-epsilon / mu + mu / 2)
            - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))


@pytest.mark.parametrize("statistic, weight", [("mean", 1 / N), ("sum", 1.0)])
def test_laplace_scale_by_hand(frame, statistic, weight):
    query = Query(statistic, ["a", "b", "c"])
    plan = DPLaplace(query=query, bounds=BOUNDS, epsilon=0.5).fit(frame).plan(frame)
    l1 = SPANS.sum() * weight                 # 90 / n or 90
    b = l1 / 0.5
    assert plan.sensitivity == pytest.approx(l1, rel=1e-12)
    assert plan.noise == "laplace"
    assert plan.noise_scale == pytest.approx(b, rel=1e-12)
    np.testing.assert_array_equal(plan.noise_basis, np.eye(3))
    np.testing.assert_allclose(plan.noise_covariance, 2 * b * b * np.eye(3))
    assert (plan.epsilon, plan.delta) == (0.5, 0.0)


@pytest.mark.parametrize("statistic, weight", [("mean", 1 / N), ("sum", 1.0)])
def test_gaussian_sigma_by_hand(frame, statistic, weight):
    query = Query(statistic, ["a", "b", "c"])
    plan = DPGaussian(query=query, bounds=[(0, 10), (-5, 15), (100, 160)],
                      epsilon=0.5, delta=1e-5, calibration="classic"
                      ).fit(frame).plan(frame)
    l2 = math.sqrt(10**2 + 20**2 + 60**2) * weight
    sigma = classic_sigma(l2, 0.5, 1e-5)
    assert plan.sensitivity == pytest.approx(l2, rel=1e-12)
    np.testing.assert_allclose(plan.noise_covariance, sigma**2 * np.eye(3),
                               rtol=1e-12)
    # E||Z|| for N(0, sigma^2 I_3) = sigma sqrt(8 / pi).
    assert plan.expected_error == pytest.approx(sigma * math.sqrt(8 / math.pi),
                                                rel=1e-12)


@pytest.mark.parametrize("statistic, weight", [("count", 1.0),
                                               ("proportion", 1 / N)])
def test_counts_need_no_bounds(frame, statistic, weight):
    query = Query(statistic, ["sex"], "F") + Query(statistic, ["flag"], None)
    lap = DPLaplace(query=query, epsilon=2.0).fit(frame).plan(frame)
    gau = DPGaussian(query=query, epsilon=0.5, calibration="classic"
                     ).fit(frame).plan(frame)
    assert lap.sensitivity == pytest.approx(2 * weight, rel=1e-12)   # l1 of 2
    assert lap.noise_scale == pytest.approx(2 * weight / 2.0, rel=1e-12)
    assert gau.sensitivity == pytest.approx(math.sqrt(2) * weight, rel=1e-12)
    assert gau.noise_std[0] == pytest.approx(
        classic_sigma(math.sqrt(2) * weight, 0.5, 1e-3), rel=1e-12)
    # The expected error of two i.i.d. Laplace(b): b E||y|| by Monte Carlo.
    y = np.random.default_rng(1).laplace(0, lap.noise_scale, (200_000, 2))
    assert lap.expected_error == pytest.approx(np.linalg.norm(y, axis=1).mean(),
                                               rel=0.01)


def test_group_is_k_times_record(frame):
    query = Query.mean(["a", "b", "c"])
    for record_cls, group_cls in [(DPLaplace, GroupDPLaplace),
                                  (DPGaussian, GroupDPGaussian)]:
        one = record_cls(query=query, bounds=BOUNDS).fit(frame).plan(frame)
        seven = group_cls(query=query, bounds=BOUNDS, group_size=7
                          ).fit(frame).plan(frame)
        every = group_cls(query=query, bounds=BOUNDS).fit(frame).plan(frame)
        capped = group_cls(query=query, bounds=BOUNDS, group_size=10 * N
                           ).fit(frame).plan(frame)
        assert seven.sensitivity == pytest.approx(7 * one.sensitivity, rel=1e-12)
        assert every.sensitivity == pytest.approx(N * one.sensitivity, rel=1e-12)
        assert capped.sensitivity == every.sensitivity
        np.testing.assert_allclose(seven.noise_std, 7 * one.noise_std, rtol=1e-12)
        assert seven.expected_error == pytest.approx(7 * one.expected_error,
                                                     rel=1e-9)
        assert "k = 7" in seven.guarantee
        assert seven.assumed[0] == Assumption.of("dp.group-neighbours", k=7, n=N)
        assert every.assumed[0] == Assumption.of("dp.group-neighbours", k=N, n=N)


def test_analytic_beats_classic_below_one_and_matches_balle_wang(frame):
    query = Query.mean(["a", "b"])
    for epsilon in (0.1, 0.5, 0.9):
        sd = {cal: float(DPGaussian(query=query, bounds=BOUNDS, epsilon=epsilon,
                                    calibration=cal).fit(frame).plan(frame)
                         .noise_std[0])
              for cal in ("analytic", "classic")}
        assert sd["analytic"] < sd["classic"]
        # The analytic noise is the least certified: the Balle & Wang profile at
        # mu = l2 / sigma equals delta.
        l2 = math.hypot(10, 20) / N
        assert balle_wang_delta(l2 / sd["analytic"], epsilon) == pytest.approx(
            1e-3, rel=1e-6)


@pytest.mark.parametrize("epsilon", [1.0, 5.0])
def test_classic_warns_from_epsilon_one(frame, epsilon):
    mech = GroupDPGaussian(query=Query.mean(["a"]), bounds=BOUNDS, epsilon=epsilon,
                           calibration="classic").fit(frame)
    with pytest.warns(ClassicCalibrationWarning, match="epsilon < 1"):
        mech.plan(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPGaussian(query=Query.mean(["a"]), bounds=BOUNDS, epsilon=0.99,
                   calibration="classic").fit(frame).plan(frame)


def _adult_like(n=100, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(17, 91, n),
        "education-num": rng.integers(1, 17, n),
        "marital-status": rng.choice(["Never-married", "Married-civ-spouse"], n),
        "sex": rng.choice(["Female", "Male"], n),
        "hours-per-week": rng.integers(1, 100, n),
    })


ADULT_BOUNDS = {"age": (17, 90), "education-num": (1, 16),
                "hours-per-week": (1, 99)}


@pytest.mark.parametrize("epsilon, paper", [(0.2, 7394.67), (1.0, 1539.93),
                                            (5.0, 293.17)])
def test_chen_table_2_group_dp_gaussian(epsilon, paper):
    # Chen & Ohrimenko Table 2, GroupDP (G): k = n = 100, delta = 1e-3, the
    # classic constant; the five statistics of Sec. 5.1 (three means, two counts).
    frame = _adult_like()
    query = (Query.mean(["age", "education-num"])
             + Query.count("marital-status", "Never-married")
             + Query.count("sex", "Female") + Query.mean("hours-per-week"))
    mech = GroupDPGaussian(query=query, bounds=ADULT_BOUNDS, epsilon=epsilon,
                           delta=1e-3, calibration="classic").fit(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicCalibrationWarning)
        plan = mech.plan(frame)
    # By hand: per record 73/100, 15/100, 1, 1, 98/100; k = 100.
    l2 = 100 * math.sqrt(0.73**2 + 0.15**2 + 1 + 1 + 0.98**2)
    sigma = classic_sigma(l2, epsilon, 1e-3)
    chi5_mean = math.sqrt(2) * math.exp(special.gammaln(3) - special.gammaln(2.5))
    assert plan.sensitivity == pytest.approx(l2, rel=1e-12)
    assert plan.expected_error == pytest.approx(sigma * chi5_mean, rel=1e-12)
    # The paper averages 50 empirical errors; the exact expectation is within 3%.
    assert plan.expected_error == pytest.approx(paper, rel=0.10)
    assert plan.statistics == ("age", "education-num",
                               "marital-status=Never-married", "sex=Female",
                               "hours-per-week")
    # The same vector from the helper, for two separately built queries.
    parts = np.concatenate([
        record_sensitivities(Query.mean(["age", "education-num"]), 100,
                             ADULT_BOUNDS),
        record_sensitivities(Query.count(["marital-status"], "Never-married"), 100),
        record_sensitivities(Query.count(["sex"], "Female"), 100),
        record_sensitivities(Query.mean(["hours-per-week"]), 100, ADULT_BOUNDS),
    ])
    np.testing.assert_allclose(parts, [0.73, 0.15, 1, 1, 0.98], rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("cls, kwargs", [(DPGaussian, {}),
                                         (GroupDPLaplace, {"group_size": 3})])
def test_release_noise_has_the_planned_law(frame, cls, kwargs):
    query = Query.mean(["a", "c"])
    mech = cls(query=query, bounds=BOUNDS, epsilon=0.7,
               random_state=np.random.default_rng(11), **kwargs).fit(frame)
    truth = query.evaluate(frame).to_numpy()
    # The noise itself: the values before clamping to the clipping ranges.
    noise = np.array([mech.release(frame).unclamped.to_numpy() - truth
                      for _ in range(1500)])
    plan = mech.plan(frame)
    var = np.diagonal(plan.noise_covariance)
    # Var of a sample variance: 2 s^2 / m (Gaussian), 20 b^4 / m = 5 s^2 / m
    # (Laplace, s = 2 b^2).
    kurtosis_term = 5.0 if plan.noise == "laplace" else 2.0
    se = var * math.sqrt(kurtosis_term / len(noise))
    assert np.all(np.abs(noise.var(axis=0) - var) < 5 * se)
    assert np.all(np.abs(noise.mean(axis=0)) < 5 * np.sqrt(var / len(noise)))
    norms = np.linalg.norm(noise, axis=1)
    assert abs(norms.mean() - plan.expected_error) < 5 * norms.std() / math.sqrt(
        len(norms))
    if plan.noise == "laplace":
        # Laplace, not Gaussian: E|y| = b.
        np.testing.assert_allclose(np.abs(noise).mean(axis=0),
                                   plan.noise_scale, rtol=0.05)


@pytest.mark.parametrize("cls", [DPGaussian, DPLaplace, GroupDPGaussian,
                                 GroupDPLaplace])
def test_release_adds_the_seeded_draw_at_the_planned_scale(frame, cls):
    query = Query.sum(["a", "b", "c"])
    mech = cls(query=query, bounds=BOUNDS, epsilon=0.3, random_state=8).fit(frame)
    rel = mech.release(frame)
    exact = query.evaluate(frame).to_numpy()
    # skattr's one random_state rule: an int seeds one numpy Generator per fit.
    rng = np.random.default_rng(8)
    if rel.noise == "laplace":
        expected = rel.noise_scale * rng.laplace(0.0, 1.0, 3)
    else:
        expected = rel.noise_std[0] * rng.standard_normal(3)
    # Each sum then clamped to n times its column's range (post-processing).
    n = len(frame)
    low = n * np.array([BOUNDS[c][0] for c in "abc"])
    high = n * np.array([BOUNDS[c][1] for c in "abc"])
    np.testing.assert_allclose(rel.values.to_numpy(),
                               np.clip(exact + expected, low, high), rtol=1e-9)
    assert rel.certified_by.steps[-1].kind == "post-processed.clamped"


def test_seed_reproduces_and_default_is_fresh(frame):
    query = Query.mean(["a"])
    seeded = [DPGaussian(query=query, bounds=BOUNDS, random_state=3).fit(frame)
              .release(frame).values.iloc[0] for _ in range(2)]
    assert seeded[0] == seeded[1]
    mech = DPGaussian(query=query, bounds=BOUNDS).fit(frame)
    assert mech.release(frame).values.iloc[0] != mech.release(frame).values.iloc[0]


@pytest.mark.parametrize("column, value", [("a", -0.5), ("b", 15.01), ("c", 1e9)])
def test_records_outside_the_bounds_are_clipped_to_them(frame, column, value):
    # The sensitivity computed from the bounds holds for the clipped records:
    # the release is that of the data clipped to its declared bounds, and
    # refusing would reveal that some record lies outside.
    query = Query.mean(["a", "b", "c"])
    bad = frame.copy()
    bad.loc[5, column] = value
    clipped = bad.copy()
    clipped[column] = clipped[column].clip(*BOUNDS[column])
    rel = DPLaplace(query=query, bounds=BOUNDS, random_state=0).fit(bad).release(bad)
    ref = DPLaplace(query=query, bounds=BOUNDS, random_state=0).fit(clipped)
    pd.testing.assert_series_equal(rel.values, ref.release(clipped).values)
    assert rel.clipping.as_dict() == BOUNDS
    assert rel.assumed[-1].kind == "dp.declared-bounds"
    assert {c: (lo, hi) for c, lo, hi in rel.assumed[-1].params["bounds"]
            } == BOUNDS
    assert bad.loc[5, column] == value      # the caller's frame is unchanged


def test_missing_values_are_reported_as_such(frame):
    mech = DPGaussian(query=Query.mean(["a"]), bounds=BOUNDS).fit(frame)
    bad = frame.copy()
    bad.loc[0, "a"] = np.nan
    with pytest.raises(DataValidationError, match="NaN"):
        mech.release(bad)


@pytest.mark.parametrize("bounds, query, match", [
    (None, Query.mean(["a"]), r"need declared bounds: pass bounds=\{column"),
    ({"a": (0, 1), "zzz": (0, 1)}, Query.mean(["a"]),
     r"names column\(s\) \['zzz'\] that are not in the data"),
    ({"a": (0, 1)}, Query.mean(["a", "b"]),
     r"no \(low, high\) for column\(s\) \['b'\]"),
    ({"a": (1, 1)}, Query.mean(["a"]), "needs low < high"),
    ({"a": (2, 1)}, Query.mean(["a"]), "needs low < high"),
    ({"a": (0, np.inf)}, Query.mean(["a"]), "is not finite"),
    ({"a": (0, np.nan)}, Query.mean(["a"]), "is not finite"),
    ({"a": (0, 1, 2)}, Query.mean(["a"]), "must be a pair"),
    ({"a": ("0", "1")}, Query.mean(["a"]), "must be a pair"),
    ([(0, 1)], Query.mean(["a", "b"]), r"holds 1 \(low, high\) pair\(s\)"),
    ((0, 1), Query.count(["sex"], "F"), "Counts and proportions take no bounds"),
    ([(0, 1)], Query.count(["sex"], "F") + Query.proportion(["flag"]),
     "Counts and proportions take no bounds"),
    ("0-1", Query.mean(["a"]), "'bounds' parameter of"),
])
def test_bad_bounds_raise(frame, bounds, query, match):
    for cls in (DPLaplace, GroupDPGaussian):
        with pytest.raises(InvalidParameterError, match=match):
            cls(query=query, bounds=bounds).fit(frame)


def test_bounds_forms_agree(frame):
    query = Query.sum(["a", "b"])
    forms = [{"b": (-5, 15), "a": (-5, 15)}, [(-5, 15), (-5, 15)], (-5, 15),
             np.array([-5, 15])]
    plans = [DPLaplace(query=query, bounds=b).fit(frame).plan(frame) for b in forms]
    assert {p.sensitivity for p in plans} == {40.0}


@pytest.mark.parametrize("params, match", [
    ({"epsilon": 0}, "'epsilon' parameter of DPGaussian"),
    ({"delta": 0.0}, "'delta' parameter of DPGaussian"),
    ({"calibration": "exact"}, "'calibration' parameter of DPGaussian"),
    ({"bounds": 3}, "'bounds' parameter of DPGaussian"),
    ({"secret": "sex"}, "'secret' parameter of DPGaussian must be a "
                        r"skattr.Secret .* Got 'sex' instead"),
])
def test_invalid_parameters(frame, params, match):
    with pytest.raises(InvalidParameterError, match=match):
        DPGaussian(**{"query": Query.mean(["a"]), "bounds": BOUNDS, **params}
                   ).fit(frame)


def test_group_size_is_validated(frame):
    with pytest.raises(InvalidParameterError, match="'group_size' parameter"):
        GroupDPLaplace(query=Query.mean(["a"]), bounds=BOUNDS, group_size=0
                       ).fit(frame)
    with pytest.raises(TypeError):
        DPLaplace(query=Query.mean(["a"]), bounds=BOUNDS, group_size=2)
    with pytest.raises(TypeError):
        DPLaplace(query=Query.mean(["a"]), bounds=BOUNDS, delta=1e-5)


def test_certificate_fields(frame):
    secret = skattr.Secret.proportion("sex", "F", pairs=[(0.4, 0.6)])
    data = frame[["a", "b", "flag", "sex"]]
    mech = GroupDPLaplace(secret=secret, bounds=(-1e3, 1e3), group_size=2,
                          random_state=0).fit(data)
    rel = mech.release(data)
    assert mech.columns_ == ("a", "b", "flag")     # the secret's column is left out
    assert rel.mechanism == "group-dp-laplace"
    assert rel.secrets == (secret.label,)
    assert rel.theta == "none: differential privacy needs no Theta"
    assert rel.inherent_variance == (0.0, 0.0, 0.0)
    assert rel.calibration == "laplace" and rel.delta == 0.0
    assert rel.assumed[1].kind == "dp.declared-bounds"
    summary = rel.summary()
    assert "(1, 0)-group differential privacy (groups of k = 2 records)" in summary
    assert "attribute privacy" not in summary
    plain = DPGaussian(query=Query.mean(["a"]), bounds=BOUNDS).fit(frame)
    assert plain.secrets_ == () and plain.plan(frame).secrets == ()
    assert plain.plan(frame).assumed[0] == Assumption.of("dp.neighbours", n=N)


def test_fit_learns_nothing_and_fit_transform_does_not_warn(frame):
    mech = DPGaussian(query=Query.mean(["a"]), bounds=BOUNDS, random_state=0)
    # pyproject turns PrivacyLeakWarning into an error: none is raised here.
    out = mech.fit_transform(frame)
    assert out.shape == (1, 1)
    other = DPGaussian(query=Query.mean(["a"]), bounds=BOUNDS, random_state=0).fit(
        frame.assign(a=0.0))
    assert other.transform(frame)[0, 0] == out[0, 0]


def test_accessor_needs_no_reference_for_the_baselines(frame):
    before = frame.copy(deep=True)
    rel = frame.attrpriv.mean(["a", "c"], mechanism="dp-gaussian", bounds=BOUNDS,
                              epsilon=0.5, random_state=4)
    est = DPGaussian(query=Query.mean(["a", "c"]), bounds=BOUNDS, epsilon=0.5,
                     random_state=4).fit(frame)
    pd.testing.assert_series_equal(rel.values, est.release(frame).values)
    pd.testing.assert_frame_equal(frame, before)
    plan = frame.attrpriv.plan(["flag"], statistic="count",
                               mechanism="group-dp-laplace")
    assert plan.sensitivity == N and plan.noise_scale == N
    # "self" costs nothing when no Theta is fitted: no PrivacyLeakWarning.
    frame.attrpriv.sum(["a"], mechanism="dp-laplace", bounds=BOUNDS,
                       reference="self")
    with pytest.raises(InvalidParameterError, match="fits Theta on reference data"):
        frame.attrpriv.mean(["a"], mechanism="apgm",
                            secret=skattr.Secret.proportion("sex", "F",
                                                            pairs=[(0.4, 0.6)]))


def test_auto_never_picks_a_baseline(frame):
    from skattr.mechanisms import MECHANISMS

    assert not {"dp-laplace", "dp-gaussian", "group-dp-laplace",
                "group-dp-gaussian"} & set(MECHANISMS.classes_for("auto"))
    assert MECHANISMS.classes_for("dp-gaussian") == {"dp-gaussian": DPGaussian}
