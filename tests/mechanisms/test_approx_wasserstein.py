"""The Approximate Wasserstein Mechanism and the resampling Theta (Chen Sec. 3)."""

import itertools

import numpy as np
import pandas as pd
import pytest
from _couplings import coupled_mass_within

from skattr import Method, MethodStep, Query, Secret, Statistic
from skattr.exceptions import (
    InvalidParameterError,
    NotCertifiableError,
    PrivacyLeakWarning,
)
from skattr.mechanisms import ApproximateWassersteinMechanism, WassersteinMechanism
from skattr.theta import ProbabilityBox, Resample, count_pmf

# The approximate mechanism's laws at deltas of 1/n or more (small data, cheap
# draws): the guard's warning is tested in test_privacy_level.py.
pytestmark = pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")

FRAME = pd.DataFrame({"x1": [1, 0, 1, 1, 0, 1, 0, 0],
                      "x2": [1, 0, 0, 1, 1, 0, 1, 0]})


def _closeness_lp(x, p, y, q, delta):
    """Least W of Def 3.2 by linear programs over all couplings (independent)."""
    dist = np.abs(np.asarray(x, float)[:, None] - np.asarray(y, float)[None, :])
    return next(w for w in np.unique(dist)
                if coupled_mass_within(dist, p, q, w) >= 1 - delta - 1e-9)


@pytest.mark.parametrize("delta", [1e-6, 0.01, 0.1, 0.3])
@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
def test_count_laws_closeness_matches_linear_programs(delta):
    secret = Secret.proportion("x2", 1, pairs=[(0.0, 1.0), (0.25, 0.75)])
    thetas = [[0.1, 0.9], [0.3, 0.6]]
    # The LP at every delta, 0.3 included (asked for: above 0.1 is refused).
    plan = ApproximateWassersteinMechanism(
        query=Query.count("x1", 1), secret=secret, theta=thetas,
        delta=delta, allow_large_delta=True).fit(FRAME).plan(n=4)
    support = np.arange(5)
    expected = max(
        _closeness_lp(support, count_pmf(a, 4, p)[1], support,
                      count_pmf(b, 4, p)[1], delta)
        for p in thetas for a, b in [(0.0, 1.0), (0.25, 0.75)])
    assert plan.sensitivity == expected
    assert plan.delta == delta and plan.noise == "laplace"
    assert plan.noise_scale == pytest.approx(expected / plan.epsilon)
    exact = WassersteinMechanism(query=Query.count("x1", 1), secret=secret,
                                 theta=thetas).fit(FRAME).plan(n=4)
    assert plan.sensitivity <= exact.sensitivity
    if delta < 1e-4:
        assert plan.sensitivity == exact.sensitivity


def test_a_box_theta_is_certified_for_both_mechanisms():
    secret = Secret.proportion("x2", 1, window=1.0, support=(0.0, 1.0))
    box = ProbabilityBox(low=(0.4, 0.4), high=(0.6, 0.6))
    for cls in (WassersteinMechanism, ApproximateWassersteinMechanism):
        plan = cls(query=Query.count("x1", 1), secret=secret,
                   theta=box).fit(FRAME).plan(n=4)
        assert plan.sensitivity == 1.0                    # Zhang Example 2
        assert "0.4" in plan.theta
    wide = WassersteinMechanism(query=Query.count("x1", 1), secret=secret,
                                theta=ProbabilityBox((0.0, 0.0), (1.0, 1.0)))
    assert wide.fit(FRAME).plan(n=4).sensitivity == 4.0


def _small_reference():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"g": np.repeat([1, 0], 7),
                         "x": rng.integers(0, 20, 14).astype(float)})


def _enumerated_law(frame, a, n, statistic):
    inside = frame.x[frame.g == 1].to_numpy()
    outside = frame.x[frame.g == 0].to_numpy()
    k = round(a * n)
    values = [statistic(np.concatenate([inside[list(i)], outside[list(o)]]))
              for i in itertools.combinations(range(inside.size), k)
              for o in itertools.combinations(range(outside.size), n - k)]
    support, counts = np.unique(values, return_counts=True)
    return support, counts / counts.sum()


def test_exact_resampling_laws_give_exact_certificates():
    frame = _small_reference()
    secret = Secret.proportion("g", 1, pairs=[(2 / 6, 4 / 6)])
    xa, pa = _enumerated_law(frame, 2 / 6, 6, np.median)
    xb, pb = _enumerated_law(frame, 4 / 6, 6, np.median)
    # W_inf by quantile functions on a fine grid of levels (independent).
    levels = np.linspace(1e-9, 1 - 1e-9, 200_001)
    qa = xa[np.minimum(np.searchsorted(np.cumsum(pa), levels), xa.size - 1)]
    qb = xb[np.minimum(np.searchsorted(np.cumsum(pb), levels), xb.size - 1)]
    exact = WassersteinMechanism(query=Statistic.median("x"), secret=secret,
                                 theta=Resample()).fit(frame).plan(n=6)
    assert exact.sensitivity == pytest.approx(np.abs(qa - qb).max())
    approx = ApproximateWassersteinMechanism(
        query=Statistic.median("x"), secret=secret, theta=Resample(),
        delta=0.05).fit(frame).plan(n=6)
    assert approx.sensitivity == pytest.approx(_closeness_lp(xa, pa, xb, pb, 0.05))
    assert approx.certified_by == Method.of("wasserstein", bound=MethodStep.of(
        "closeness.exact", laws=MethodStep.of("laws.resampling")))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_drawn_laws_never_undercut_the_exact_closeness(seed):
    # Forced to draw (max_exact=0) on a model small enough to enumerate: the
    # certified W covers the least W at the disregarded mass.
    frame = _small_reference()
    secret = Secret.proportion("g", 1, pairs=[(2 / 6, 4 / 6)])
    delta = 0.05
    theta = Resample(max_exact=0, random_state=seed)
    plan = ApproximateWassersteinMechanism(
        query=Statistic.median("x"), secret=secret, theta=theta,
        delta=delta).fit(frame).plan(n=6)
    xa, pa = _enumerated_law(frame, 2 / 6, 6, np.median)
    xb, pb = _enumerated_law(frame, 4 / 6, 6, np.median)
    disregarded = delta * (1 - theta.failure_share)
    assert plan.sensitivity >= _closeness_lp(xa, pa, xb, pb, disregarded)
    assert plan.sensitivity <= max(xa.max() - xb.min(), xb.max() - xa.min())
    assert plan.certified_by.uses("laws.order-statistics") and plan.delta == delta


def _income(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    rich = rng.random(n) < 0.3
    return pd.DataFrame({"rich": rich,
                         "age": np.round(rng.normal(38, 9, n) + 6 * rich),
                         "hours": np.round(rng.normal(38, 8, n) + 5 * rich)})


@pytest.mark.slow
def test_median_release_adds_the_planned_laplace_noise():
    ref = _income()
    private = _income(100, seed=1)
    secret = Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    mech = ApproximateWassersteinMechanism(
        query=Statistic.median("age"), secret=secret, delta=0.01,
        theta=Resample(random_state=0), random_state=0).fit(ref)
    plan = mech.plan(private)
    # The medians of the two laws differ by about 6 * 0.2 = 1.2 years; their
    # spread adds the rest: a few years, far below the range of ages.
    assert 1.0 < plan.sensitivity < 15
    draws = np.array([mech.release(private).values.iloc[0] for _ in range(4000)])
    truth = private.age.median()
    assert draws.mean() == pytest.approx(truth, abs=5 * plan.noise_scale * 1.5
                                         / np.sqrt(4000))
    assert draws.var() == pytest.approx(2 * plan.noise_scale**2, rel=0.1)


def test_vector_statistics_use_boxes_that_cover_the_exact_closeness():
    # Two statistics: boxes per law (Chen's remark after Thm 3.2), checked
    # against the exact least W in R^2 (L1) on a model small enough to list.
    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"g": np.repeat([1, 0], 5),
                          "x": rng.integers(0, 9, 10).astype(float),
                          "y": rng.integers(0, 9, 10).astype(float)})
    secret = Secret.proportion("g", 1, pairs=[(0.25, 0.75)])
    query = Statistic.median(["x", "y"])
    delta = 0.05
    drawn = ApproximateWassersteinMechanism(
        query=query, secret=secret, delta=delta,
        theta=Resample(max_exact=0, random_state=0)).fit(frame).plan(n=4)
    exact = ApproximateWassersteinMechanism(
        query=query, secret=secret, delta=delta * 0.9,
        theta=Resample()).fit(frame).plan(n=4)
    assert drawn.statistics == ("x", "y")
    # max_exact=0 enumerates no dataset: boxes with exact tails of the order
    # statistics' laws; the enumerated model gives the least closeness.
    assert drawn.certified_by.find("coupling.boxes").params["faces"] == "exact"
    assert drawn.certified_by.uses("laws.order-statistics")
    assert exact.certified_by.find("closeness.exact").params["laws"] == (
        MethodStep.of("laws.resampling"))
    assert drawn.sensitivity >= exact.sensitivity > 0


@pytest.mark.slow
def test_regression_coefficients():
    ref = _income()
    secret = Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    ols = ApproximateWassersteinMechanism(
        query=Statistic.ols("hours", ["age"]), secret=secret, delta=0.01,
        theta=Resample(random_state=0)).fit(ref).plan(n=100)
    assert ols.statistics == ("ols:const", "ols:age")
    assert np.isfinite(ols.sensitivity) and ols.sensitivity > 0


def test_refusals_say_what_to_do():
    ref = _income()
    secret = Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    # A trimmed mean has no exact law here (a median has: see
    # tests/theta/test_order_laws.py); a std's W_inf is the largest std the
    # clipping range allows.
    with pytest.raises(NotCertifiableError, match="approx-wasserstein"):
        WassersteinMechanism(query=Statistic.trimmed_mean("age"),
                             secret=secret,
                             theta=Resample(random_state=0)).fit(ref).plan(n=100)
    # By default its bound is the reference's bands (the mean's, weighted
    # 1 / (n - 2g): its kind's band law); a function has no bound that holds
    # for the population: refused, naming the explicit choice of the
    # resampling model.
    trimmed = ApproximateWassersteinMechanism(
        query=Statistic.trimmed_mean("age"), secret=secret).fit(ref)
    assert trimmed.plan(n=100).assumes("reference.band")
    with pytest.raises(NotCertifiableError, match=r"theta=skattr\.theta\.Resample"):
        ApproximateWassersteinMechanism(
            query=Statistic.function(lambda d: d["age"].mean(), columns="age"),
            secret=secret).fit(ref)
    std = WassersteinMechanism(query=Statistic.std("age"), secret=secret).fit(
        ref).plan(n=100)
    span = float(ref["age"].max() - ref["age"].min())
    assert std.sensitivity == pytest.approx(0.5 * span * (100 / 99) ** 0.5)
    with pytest.raises(NotCertifiableError, match="at least"):
        ApproximateWassersteinMechanism(
            query=Statistic.median("age"), secret=secret, delta=1e-3,
            theta=Resample(n_draws=500, exact_quantiles=False)).fit(ref).plan(
                n=100)
    with pytest.raises(InvalidParameterError, match="delta"):
        ApproximateWassersteinMechanism(query=Statistic.median("age"),
                                        secret=secret, delta=0.0).fit(ref)
    with pytest.raises(InvalidParameterError, match="Resample"):
        ApproximateWassersteinMechanism(query=Statistic.median("age"),
                                        secret=secret, theta="moments").fit(ref)
    with pytest.raises(InvalidParameterError, match="Secret.proportion"):
        ApproximateWassersteinMechanism(
            query=Statistic.median("age"),
            secret=Secret.mean("hours", pairs=[(35, 40)])).fit(ref)


@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
@pytest.mark.slow
def test_accessor_verbs_for_any_statistic():
    ref = _income()
    private = _income(100, seed=1)
    secret = Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    kw = {"secret": secret, "reference": ref, "delta": 0.01, "random_state": 0,
          "theta": Resample(random_state=0)}
    before = private.copy()
    median = private.attrpriv.median(["age"], **kw)
    assert median.mechanism == "approx-wasserstein"
    assert list(median.values.index) == ["age"]
    q = private.attrpriv.quantile(["age"], q=[0.25, 0.75], **kw)
    assert len(q.values) == 2
    std = private.attrpriv.std(["hours"], **kw)
    assert std.values.name == "std"
    by_name = private.attrpriv.plan(["age"], statistic="median", **kw)
    assert by_name.sensitivity == pytest.approx(median.sensitivity)
    spread = private.attrpriv.agg(lambda d: d["age"].max() - d["age"].min(),
                                  ["age"], **kw)
    assert spread.mechanism == "approx-wasserstein"
    assert private.attrpriv.agg("median", ["age"], **kw).sensitivity == \
        pytest.approx(median.sensitivity)
    pd.testing.assert_frame_equal(private, before)
    # A mechanism that releases linear statistics only names those that
    # release a median.
    with pytest.raises(InvalidParameterError, match="linear statistics"):
        private.attrpriv.median(["age"], mechanism="expm-gaussian", **kw)
    # apgm's Gaussian noise on a median rests on the bands alone: the
    # resampling Theta is refused, naming the laws it takes (the bare
    # estimator says why: tests/mechanisms/test_apgm_statistics.py).
    with pytest.raises(InvalidParameterError, match="'bands'"):
        private.attrpriv.median(["age"], mechanism="apgm", **kw)
    with pytest.raises(InvalidParameterError, match="linear statistics"):
        private.attrpriv.leakage(["age"], statistic="median", secret=secret,
                                 reference=ref)
    with pytest.raises(InvalidParameterError, match="Unknown statistic"):
        private.attrpriv.agg("kurtosis", ["age"], **kw)


def test_grid_search_over_epsilon():
    from sklearn.model_selection import GridSearchCV

    ref = _income()
    secret = Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    mech = ApproximateWassersteinMechanism(query=Statistic.median("age"),
                                           secret=secret, delta=0.01,
                                           theta=Resample(random_state=0))
    # One split: Theta from 5,900 reference rows, scored on a dataset of 100
    # (the score reads only its size, so it spends no privacy).
    split = [(np.arange(100, 6000), np.arange(100))]
    # delta = 0.01 at n = 100 is at least 1/n: each candidate's score says so.
    with pytest.warns(PrivacyLeakWarning, match="at least 1/n = 0.01"):
        search = GridSearchCV(mech, {"epsilon": [0.5, 1.0, 2.0]},
                              cv=split).fit(ref)
    assert search.best_params_ == {"epsilon": 2.0}


@pytest.mark.slow
@pytest.mark.parametrize("statistic", [Statistic.median("age"),
                                       Statistic.std("age")])
def test_adult_certificates_cover_the_quantile_gap(adult, statistic):
    # Chen's setting: n = 100, the share earning >50K is 0.45 or 0.55. The
    # certified W covers the largest gap between the two quantile functions
    # over the levels kept, estimated from independent draws (another seed),
    # and is not far above it.
    secret = Secret.proportion("income", ">50K", pairs=[(0.45, 0.55)])
    delta = 1e-3
    plan = ApproximateWassersteinMechanism(
        query=statistic, secret=secret, delta=delta,
        theta=Resample(random_state=0)).fit(adult).plan(n=100)
    laws = Resample(random_state=99).fit(
        adult, statistic, statistic.resolve_columns(adult), secret)
    kept = delta * 0.9 / 2
    levels = np.linspace(kept, 1 - kept, 20_001)
    a, b = (np.quantile(laws.drawn_law(p, 100, "dataset", 100_000)[:, 0], levels,
                        method="inverted_cdf") for p in (0.45, 0.55))
    gap = np.abs(a - b).max()
    assert gap <= plan.sensitivity <= 3 * gap


def test_sums_of_an_integer_column_have_exact_laws():
    from skattr.theta import SumLaws, sum_pmf

    rng = np.random.default_rng(8)
    inside = rng.random(3000) < 0.4
    kids = np.where(inside, rng.choice([0, 1, 2, 3], 3000, p=[0.1, 0.3, 0.4, 0.2]),
                    rng.choice([0, 1, 2, 3], 3000, p=[0.4, 0.3, 0.2, 0.1]))
    ref = pd.DataFrame({"g": inside.astype(int), "kids": kids})
    secret = Secret.proportion("g", 1, pairs=[(0.3, 0.5)])
    mech = WassersteinMechanism(query=Query.sum("kids"), secret=secret,
                                theta="moments").fit(ref)
    laws = mech.law_.thetas[0]
    assert isinstance(laws, SumLaws) and laws.values == (0, 1, 2, 3)
    assert laws.probs[0, 1] == pytest.approx(
        np.bincount(kids[inside], minlength=4) / inside.sum())
    plan = mech.plan(n=20)
    xa, pa = sum_pmf(0.3, 20, laws.probs[0], laws.values)
    xb, pb = sum_pmf(0.5, 20, laws.probs[0], laws.values)
    # Independent: W_inf from the quantile functions on a fine grid of levels.
    levels = np.linspace(1e-12, 1 - 1e-12, 400_001)
    qa = xa[np.minimum(np.searchsorted(np.cumsum(pa), levels), xa.size - 1)]
    qb = xb[np.minimum(np.searchsorted(np.cumsum(pb), levels), xb.size - 1)]
    assert plan.sensitivity == np.abs(qa - qb).max()
    mean = WassersteinMechanism(query=Query.mean("kids"), secret=secret,
                                theta="moments").fit(ref).plan(n=20)
    assert mean.sensitivity == pytest.approx(plan.sensitivity / 20)
    with pytest.warns(PrivacyLeakWarning, match="at least 1/n = 0.05"):
        approx = ApproximateWassersteinMechanism(
            query=Query.sum("kids"), secret=secret, theta="moments",
            delta=0.05).fit(ref).plan(n=20)
    assert approx.sensitivity == _closeness_lp(xa, pa, xb, pb, 0.05)
    assert approx.sensitivity < plan.sensitivity
    with pytest.raises(InvalidParameterError, match="integer-valued"):
        WassersteinMechanism(query=Query.sum("x"), secret=secret,
                             theta="moments").fit(ref.assign(x=rng.random(3000)))


def test_large_exact_laws_in_several_dimensions():
    # 735 datasets with nearly as many distinct pairs of values: too many for an
    # exact linear program in R^2, so "wasserstein" refuses and
    # "approx-wasserstein" bounds the drawn laws instead.
    rng = np.random.default_rng(9)
    frame = pd.DataFrame({"g": np.repeat([1, 0], 7), "x": rng.normal(size=14),
                          "y": rng.normal(size=14)})
    secret = Secret.proportion("g", 1, pairs=[(2 / 6, 4 / 6)])
    query = Statistic.trimmed_mean(["x", "y"], 0.0)        # the two means
    laws = Resample().fit(frame, query, ("x", "y"), secret)
    assert laws.exact_law(2 / 6, 6, "dataset")[0].shape[0] > 300
    with pytest.raises(NotCertifiableError, match="approx-wasserstein"):
        WassersteinMechanism(query=query, secret=secret,
                             theta=Resample()).fit(frame).plan(n=6)
    plan = ApproximateWassersteinMechanism(
        query=query, secret=secret, delta=0.05,
        theta=Resample(random_state=0)).fit(frame).plan(n=6)
    assert plan.certified_by.uses("coupling.boxes")


@pytest.mark.slow
def test_a_function_of_the_record_order_sees_random_orders():
    # Review finding: datasets used to list the group's records first, so a
    # function of the first record looked harmless. The model's records come in
    # a random order: the first record is in the group with probability a.
    rng = np.random.default_rng(0)
    g = rng.random(4000) < 0.5
    ref = pd.DataFrame({"g": g, "x": np.where(g, 10.0, 0.0) + rng.normal(size=4000)})
    first = Statistic.function(lambda d: d["x"].iloc[0], names=["first_x"],
                               columns=["x"])
    secret = Secret.proportion("g", True, pairs=[(0.3, 0.7)])
    plan = ApproximateWassersteinMechanism(
        query=first, secret=secret, delta=0.05,
        theta=Resample(random_state=0, n_draws=20_000)).fit(ref).plan(n=10)
    # Independent: the first record's law is a mixture of the two groups'.
    def law(a, m=200_000):
        inside = rng.random(m) < a
        return np.where(inside, rng.choice(ref.x[g], m), rng.choice(ref.x[~g], m))
    levels = np.linspace(0.025, 0.975, 400)
    gap = np.abs(np.quantile(law(0.3), levels) - np.quantile(law(0.7), levels)).max()
    assert plan.sensitivity >= gap > 8
    with pytest.raises(NotCertifiableError, match="random order"):
        WassersteinMechanism(query=first, secret=secret,
                             theta=Resample()).fit(ref.iloc[:12]).plan(n=10)


def test_review_robustness_findings():
    rng = np.random.default_rng(1)
    # A group too small for the datasets distributional privacy needs: a clear
    # refusal, not a crash.
    small = pd.DataFrame({"g": [1, 1, 0, 0, 0, 0, 0, 0], "x": rng.normal(size=8)})
    secret = Secret.proportion("g", 1, pairs=[(0.2, 0.6)])
    for cls in (WassersteinMechanism, ApproximateWassersteinMechanism):
        with pytest.raises(NotCertifiableError, match="holds 2"):
            cls(query=Statistic.median("x"), secret=secret,
                privacy="distributional",
                theta=Resample()).fit(small).plan(n=4)
        # The default's bands need 10 records a group.
        with pytest.raises(NotCertifiableError, match="has 2 record"):
            cls(query=Statistic.median("x"), secret=secret,
                privacy="distributional").fit(small).plan(n=4)
    # Exact laws too large for closeness on the line: W_inf of the exact laws
    # (fast), never a quadratic search.
    big = pd.DataFrame({"g": np.r_[np.ones(74), np.zeros(135)],
                        "x": rng.normal(size=209)})
    secret = Secret.proportion("g", 1, pairs=[(0.0, 0.5)])
    exact = WassersteinMechanism(query=Query.mean("x"), secret=secret,
                                 theta=Resample()).fit(big).plan(n=2)
    approx = ApproximateWassersteinMechanism(
        query=Query.mean("x"), secret=secret, delta=0.05,
        theta=Resample(random_state=0)).fit(big).plan(n=2)
    assert approx.sensitivity <= exact.sensitivity
    # "auto" with delta = 0 skips the approximate mechanism (delta must be > 0)
    # and reports why nothing certifies a function (a median would: its
    # exact laws bound W_inf; a std too: the largest std the clipping range
    # allows; a trimmed mean too: its bands bound W_inf).
    ref = _income()
    rich = Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    with pytest.raises(NotCertifiableError, match="approx-wasserstein"):
        ref.iloc[:100].attrpriv.agg(
            Statistic.function(lambda d: d["age"].mean(), columns="age"),
            secret=rich, reference=ref, delta=0.0)
    trimmed = ref.iloc[:100].attrpriv.agg(
        Statistic.trimmed_mean(["age"]), secret=rich, reference=ref,
        delta=0.0, random_state=0)
    assert trimmed.mechanism == "wasserstein" and trimmed.delta == 0.0
    std = ref.iloc[:100].attrpriv.std(["age"], secret=rich, reference=ref,
                                      delta=0.0, random_state=0)
    assert std.mechanism == "wasserstein" and std.delta == 0.0
