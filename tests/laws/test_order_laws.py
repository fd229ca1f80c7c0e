"""Exact laws of medians and quantiles under the resampling Theta."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from skattr import Query, Secret, Statistic
from skattr.exceptions import InvalidParameterError
from skattr.laws._draws import quantile_bounds
from skattr.laws._order import (
    OrderLaws,
    _cdf_rows,
    _Component,
    _count_pmfs,
    order_bracket,
)
from skattr.mechanisms import ApproximateWassersteinMechanism, WassersteinMechanism
from skattr.theta import Resample
from skattr.wasserstein import w_infinity


def _groups(seed=1, sizes=(7, 8)):
    rng = np.random.default_rng(seed)
    inside = np.sort(rng.integers(0, 6, sizes[0]).astype(float))
    outside = np.sort(rng.integers(2, 9, sizes[1]).astype(float))
    return inside, outside


def _enumerate(inside, outside, n, k, replace):
    """Every dataset of the model (sorted), each equally likely."""
    pick = ((lambda a, m: itertools.product(range(a.size), repeat=m)) if replace
            else (lambda a, m: itertools.combinations(range(a.size), m)))
    return np.array([np.sort(np.r_[inside[list(i)], outside[list(o)]])
                     for i in pick(inside, k) for o in pick(outside, n - k)])


def _exact_quantile(values, mass, u):
    """Q(u) = inf {x : P(F <= x) >= u} of a discrete law."""
    order = np.argsort(values)
    cdf = np.cumsum(mass[order]) / mass.sum()
    return values[order][np.searchsorted(cdf, u - 1e-12, side="left")]


@pytest.mark.parametrize("n", [1, 2, 5, 6, 100, 101, 3000])
@pytest.mark.parametrize("q", [0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
def test_order_bracket_holds_numpy_quantile(n, q):
    values = np.sort(np.random.default_rng(n).normal(size=n))
    low, high = order_bracket(n, q)
    got = np.quantile(values, q)
    assert values[low] <= got <= values[high]
    if low == high:
        assert got == values[low]
    if q == 0.5:
        assert values[low] <= np.median(values) <= values[high]


def test_count_pmfs_match_scipy():
    from scipy import stats

    total, success = np.array([700.0, 700.0, 50.0]), np.array([300.0, 10.0, 50.0])
    start, pmf, error = _count_pmfs(total, success, 40, False)
    for b in range(3):
        counts = start[b] + np.arange(pmf.shape[1])
        expect = stats.hypergeom.pmf(counts, total[b], success[b], 40)
        assert np.abs(pmf[b] - expect).sum() <= error[b]
        assert error[b] < 1e-12
    start, pmf, error = _count_pmfs(total, success, 40, True)
    for b in range(3):
        counts = start[b] + np.arange(pmf.shape[1])
        expect = stats.binom.pmf(counts, 40, success[b] / total[b])
        assert np.abs(pmf[b] - expect).sum() <= error[b] < 1e-12


@pytest.mark.parametrize("replace", [False, True])
def test_order_statistic_cdf_equals_enumeration(replace):
    inside, outside = _groups()
    n, k = 5, 2
    datasets = _enumerate(inside, outside, n, k, replace)
    x = np.unique(np.r_[inside, outside])
    parts = (_Component(inside, k), _Component(outside, n - k))
    for r in range(n):
        expect = (datasets[:, r][:, None] <= x[None, :]).mean(axis=0)
        got, error = _cdf_rows(parts, None, x, r, replace)
        assert np.abs(got - expect).max() <= max(error.max(), 1e-15)
        assert error.max() < 1e-11


def test_distributional_with_replacement_is_the_binomial_mixture():
    inside, outside = _groups()
    n, a = 5, 0.3
    x = np.unique(np.r_[inside, outside])
    for r in range(n):
        expect = sum(
            math.comb(n, k) * a**k * (1 - a) ** (n - k)
            * _cdf_rows((_Component(inside, k), _Component(outside, n - k)), None,
                        x, r, True)[0] for k in range(n + 1))
        got, error = _cdf_rows((_Component(inside, 0), _Component(outside, 0)),
                               (a, n), x, r, True)
        assert np.abs(got - expect).max() <= 1e-12
        assert error.max() < 1e-11


@pytest.mark.parametrize("n", [4, 5])
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("pairs", [200_000, 1])
def test_tables_bracket_the_enumerated_law(n, replace, pairs, monkeypatch):
    # pairs = 1: no room for the joint law of two order statistics, so an
    # interpolated median is bracketed by their laws (still valid bounds).
    monkeypatch.setattr("skattr.laws._order._PAIRS", pairs)
    inside, outside = _groups(seed=3, sizes=(6, 7))
    k = 2
    datasets = _enumerate(inside, outside, n, k, replace)
    laws = OrderLaws(inside=(inside,), outside=(outside,), levels=(0.5,),
                     replace=replace)
    statistic = np.median(datasets, axis=1)
    mass = np.ones(statistic.size)
    table = laws.table(0, k / n, n, "dataset", 0.01, 0.99)
    u = np.linspace(0.01, 0.99, 197)
    truth = _exact_quantile(statistic, mass, u)
    assert np.all(table.lower(u) <= truth + 1e-12)
    assert np.all(truth <= table.upper(u) + 1e-12)
    if n % 2:
        # One order statistic: the bounds are its quantile function (the
        # levels where the cdf jumps aside).
        jumps = np.cumsum(np.bincount(np.unique(statistic, return_inverse=True)[1]))
        away = np.min(np.abs(u[:, None] - jumps[None, :] / statistic.size), axis=1)
        exact = away > 1e-9
        assert np.array_equal(table.lower(u)[exact], truth[exact])
        assert np.array_equal(table.upper(u)[exact], truth[exact])


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("statistic, q", [("median", 0.5), ("quantile", 0.3),
                                          ("quantile", 0.5)])
def test_interpolated_quantile_law_equals_enumeration(replace, continuous,
                                                      statistic, q):
    # n = 4: the median, and the 0.3 and 0.5 quantiles, interpolate between
    # two order statistics; their joint law gives the statistic's law exactly.
    rng = np.random.default_rng(3)
    if continuous:
        inside, outside = np.sort(rng.normal(size=6)), np.sort(rng.normal(1, 1, 7))
    else:
        inside, outside = _groups(seed=3, sizes=(6, 7))
    n, k = 4, 2
    datasets = _enumerate(inside, outside, n, k, replace)
    truth = (np.median(datasets, axis=1) if statistic == "median"
             else np.quantile(datasets, q, axis=1))
    laws = OrderLaws(inside=(inside,), outside=(outside,), levels=(q,),
                     replace=replace, statistic=statistic)
    table = laws.table(0, k / n, n, "dataset", 0.001, 0.999)
    assert order_bracket(n, q)[0] != order_bracket(n, q)[1]
    # The table's values with mass are values the statistic takes, and its
    # cdf is exact at every one.
    mass = np.diff(np.r_[0.0, table.f_low])
    assert set(table.values[mass > 1e-9]) <= set(np.unique(truth))
    expect = (truth[:, None] <= table.values[None, :]).mean(axis=0)
    assert np.abs(expect - table.f_low).max() <= table.eta < 1e-9
    assert table.f_low is table.f_high


def test_interpolated_law_under_distributional_privacy():
    inside, outside = _groups(seed=5, sizes=(5, 6))
    n, a = 4, 0.3
    laws = OrderLaws(inside=(inside,), outside=(outside,), levels=(0.5,),
                     replace=True, statistic="median")
    table = laws.table(0, a, n, "distributional", 0.001, 0.999)
    expect = np.zeros(table.values.size)
    for k in range(n + 1):
        medians = np.median(_enumerate(inside, outside, n, k, True), axis=1)
        expect += (math.comb(n, k) * a**k * (1 - a) ** (n - k)
                   * (medians[:, None] <= table.values[None, :]).mean(axis=0))
    assert np.abs(expect - table.f_low).max() <= table.eta < 1e-9


@pytest.mark.parametrize("n", [4, 5])
def test_w_infinity_bound_against_enumeration(n):
    inside, outside = _groups(seed=4, sizes=(6, 7))
    laws = OrderLaws(inside=(inside,), outside=(outside,), levels=(0.5,),
                     replace=False)
    a, b = 1 / n, 3 / n
    la, lb = (np.median(_enumerate(inside, outside, n, round(v * n), False), axis=1)
              for v in (a, b))
    truth = w_infinity(la, lb, np.ones(la.size), np.ones(lb.size))
    bound = laws.gap(0, a, b, n, "dataset")
    assert bound >= truth - 1e-12
    # Exact laws (one order statistic, or the pair's joint law): the bound is
    # the distance itself.
    assert bound == pytest.approx(truth)


def _income(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    rich = rng.random(n) < 0.3
    age = np.round(rng.normal(40, 10, n) + 5 * rich, 1)
    return pd.DataFrame({"rich": rich, "age": age,
                         "hours": np.round(rng.normal(40, 8, n) - 3 * rich)})


@pytest.mark.slow
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("n, q", [(305, 0.5), (300, 0.5), (300, 0.1)])
def test_exact_law_matches_the_resampled_one(replace, n, q):
    ref = _income(1500, seed=2)
    query = Statistic.quantile("age", q=q)
    secret = Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    drawn = Resample(random_state=0, replace=replace).fit(
        ref, query, ["age"], secret)
    draws = drawn.drawn_law(0.4, n, "dataset", 100_000)
    levels = np.linspace(0.005, 0.995, 100)
    low, high = quantile_bounds(draws, levels, 1e-6)
    table = drawn.order.table(0, 0.4, n, "dataset", 0.005, 0.995)
    # The exact bracket and the draws' confidence band overlap at every level.
    assert np.all(table.lower(levels) <= high[:, 0])
    assert np.all(low[:, 0] <= table.upper(levels))
    # And the exact cdf of an odd sample's median is within the draws' own
    # Kolmogorov-Smirnov band (DKW, failure 1e-6).
    if order_bracket(n, q)[0] == order_bracket(n, q)[1]:
        x = table.values
        empirical = (draws[:, 0][:, None] <= x[None, :]).mean(axis=0)
        band = math.sqrt(math.log(2 / 1e-6) / (2 * draws.shape[0]))
        assert np.abs(empirical - table.f_low).max() <= band


@pytest.mark.slow
def test_mechanism_is_exact_and_no_looser_than_draws():
    # An odd n: the median is one order statistic (an even n is covered by
    # the joint law of the two middle ones, tested above).
    ref = _income()
    secret = Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    kw = dict(query=Statistic.median("age"), secret=secret, delta=1e-3)
    exact = ApproximateWassersteinMechanism(
        theta=Resample(random_state=0), **kw).fit(ref).plan(n=505)
    drawn = ApproximateWassersteinMechanism(
        theta=Resample(random_state=0, exact_quantiles=False), **kw).fit(
            ref).plan(n=505)
    assert exact.certified_by.uses("laws.order-statistics")
    assert not exact.certified_by.uses("closeness.drawn")
    assert drawn.certified_by.uses("closeness.drawn")
    assert 0 < exact.sensitivity <= drawn.sensitivity
    # The whole delta is disregarded mass: no failure probability is spent.
    assert exact.delta == 1e-3
    # delta = 0: W_inf bounded from the exact laws, and no smaller than the
    # (W, delta) of the approximate mechanism.
    pure = WassersteinMechanism(query=Statistic.median("age"), secret=secret,
                                theta=Resample()).fit(ref).plan(n=505)
    bound = pure.certified_by.find("w-inf")
    assert bound.params["laws"].kind == "upper-bound"
    assert bound.params["laws"].params["laws"].kind == "laws.order-statistics"
    assert pure.sensitivity >= exact.sensitivity


def test_several_quantiles_use_exact_boxes():
    ref = _income()
    secret = Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    kw = dict(query=Statistic.quantile(["age", "hours"], q=[0.25, 0.75]),
              secret=secret, delta=1e-3)
    exact = ApproximateWassersteinMechanism(
        theta=Resample(random_state=0), **kw).fit(ref).plan(n=500)
    coupling = exact.certified_by.find("closeness.order-statistics").params[
        "coupling"]
    assert coupling.kind == "coupling.boxes" and coupling.params["faces"] == "exact"
    assert exact.statistics == ("age:q0.25", "age:q0.75", "hours:q0.25",
                                "hours:q0.75")
    # The box's W is the sum of each value's worst face gap: every value's
    # own (one-value) certificate at the same per-face tail is at most it.
    each = [ApproximateWassersteinMechanism(
        query=Statistic.quantile(c, q=level), secret=secret, delta=1e-3 / 4,
        theta=Resample()).fit(ref).plan(n=500).sensitivity
        for c in ("age", "hours") for level in (0.25, 0.75)]
    assert max(each) <= exact.sensitivity
    # W_inf of several values is not bounded by their marginals: refused.
    with pytest.raises(Exception, match="approx-wasserstein"):
        WassersteinMechanism(query=kw["query"], secret=secret,
                             theta=Resample()).fit(ref).plan(n=500)


@pytest.mark.slow
@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
def test_with_replacement_a_dataset_may_outgrow_the_reference():
    ref = _income(2000)
    secret = Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    kw = dict(secret=secret, delta=1e-3)
    big = ApproximateWassersteinMechanism(
        query=Statistic.median("age"), theta=Resample(replace=True), **kw).fit(
            ref).plan(n=100_000)
    small = ApproximateWassersteinMechanism(
        query=Statistic.median("age"), theta=Resample(replace=True), **kw).fit(
            ref).plan(n=1_000)
    assert 0 < big.sensitivity < small.sensitivity
    assert big.certified_by.find("laws.order-statistics").params == {
        "counts": "binomial"}
    # Without replacement the datasets cannot be formed: a clear refusal.
    with pytest.raises(Exception, match="replace=True"):
        ApproximateWassersteinMechanism(
            query=Statistic.median("age"), theta=Resample(), **kw).fit(
                ref).plan(n=100_000)
    # Other statistics draw with replacement too.
    std = ApproximateWassersteinMechanism(
        query=Statistic.std("age"), secret=secret, delta=0.05,
        theta=Resample(replace=True, random_state=0, n_draws=2_000)).fit(
            ref).plan(n=5_000)
    assert np.isfinite(std.sensitivity)
    assert std.certified_by.uses("closeness.drawn")


@pytest.mark.slow
@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
def test_distributional_privacy():
    ref = _income()
    secret = Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
    kw = dict(query=Statistic.median("age"), secret=secret, delta=0.02,
              privacy="distributional")
    mixed = ApproximateWassersteinMechanism(
        theta=Resample(replace=True), **kw).fit(ref).plan(n=200)
    assert mixed.certified_by.uses("laws.order-statistics")
    # Without replacement the group size mixes over every k: drawn.
    drawn = ApproximateWassersteinMechanism(
        theta=Resample(random_state=0), **kw).fit(ref).plan(n=200)
    assert drawn.certified_by.uses("closeness.drawn")
    assert mixed.sensitivity > 0 and drawn.sensitivity > 0


def test_resample_flags_are_checked():
    for name in ("replace", "exact_quantiles"):
        with pytest.raises(InvalidParameterError, match=f"'{name}'.*bool"):
            Resample(**{name: "yes"})


def test_accessor_median_is_exact_under_the_resampling_model():
    # The default is the reference's confidence bands (issue 27); the
    # resampling model, named, has the exact order-statistic laws.
    ref = _income()
    private = _income(500, seed=1)
    release = private.attrpriv.median(
        ["age"], secret=Secret.proportion("rich", True, pairs=[(0.2, 0.4)]),
        reference=ref, mechanism="approx-wasserstein", delta=1e-3,
        theta=Resample(random_state=0), random_state=0)
    assert release.certified_by.uses("laws.order-statistics")
    assert Query.median("age").evaluate(private).iloc[0] == pytest.approx(
        release.values.iloc[0], abs=50 * release.sensitivity)


@pytest.mark.slow
def test_monotone_quantiles_are_free_post_processing():
    ref = _income()
    private = _income(300, seed=4)
    kw = dict(secret=Secret.proportion("rich", True, pairs=[(0.2, 0.4)]),
              reference=ref, mechanism="approx-wasserstein", delta=1e-3,
              epsilon=0.05, random_state=3)
    levels = [0.75, 0.25, 0.5]
    raw = private.attrpriv.quantile(["age", "hours"], q=levels, **kw)
    tidy = private.attrpriv.quantile(["age", "hours"], q=levels, monotone=True,
                                     **kw)
    assert list(tidy.values.index) == list(raw.values.index)
    for column in ("age", "hours"):
        got = tidy.values[[f"{column}:q{v:g}" for v in sorted(levels)]]
        assert got.is_monotonic_increasing
        assert sorted(got) == sorted(raw.values[[f"{column}:q{v:g}"
                                                 for v in levels]])
    # The noise is large at epsilon = 0.05: the raw release is out of order.
    assert not raw.values[["age:q0.25", "age:q0.5", "age:q0.75"]
                          ].is_monotonic_increasing or not raw.values[
        ["hours:q0.25", "hours:q0.5", "hours:q0.75"]].is_monotonic_increasing
    assert tidy.certified_by.steps[-1].kind == "post-processed.monotone"
    assert tidy.certified_by.steps[:-1] == raw.certified_by.steps
    assert (tidy.epsilon, tidy.delta, tidy.sensitivity) == (
        raw.epsilon, raw.delta, raw.sensitivity)
    with pytest.raises(InvalidParameterError, match="quantile levels"):
        raw.monotone_quantiles([0.5, 0.6, 0.7, 0.8])


def test_monotone_must_be_a_bool():
    ref = _income()
    with pytest.raises(InvalidParameterError, match="'monotone'.*bool"):
        ref.attrpriv.quantile(["age"], q=[0.25, 0.75], monotone="yes",
                              secret=Secret.proportion("rich", True,
                                                       pairs=[(0.2, 0.4)]),
                              reference=ref)


def test_a_ledger_releases_monotone_quantiles():
    ref = _income()
    private = _income(300, seed=4)
    ledger = private.attrpriv.ledger(
        secret=Secret.proportion("rich", True, pairs=[(0.2, 0.4)]),
        reference=ref, budget=(1.0, 0.01), theta=Resample(random_state=0),
        random_state=3)
    release = ledger.quantile(["age"], q=[0.75, 0.25], monotone=True,
                              epsilon=0.05, delta=1e-3)
    assert release.values["age:q0.25"] <= release.values["age:q0.75"]
    assert release.certified_by.uses("post-processed.monotone")
    assert ledger.spent[0] == pytest.approx(0.05)


def _median_law_of_counts(groups, n):
    """Exact law of the interpolated median of n draws with replacement.

    ``groups`` is a list of (draws, values, probabilities): each group's
    records are i.i.d. draws from its own discrete law. Enumerates every
    composition of each group's draws over its values (multinomial pmfs),
    adds the groups' counts, and reads the median of the pooled counts off
    their cumulative sums: no skattr code.
    """
    support = np.unique(np.concatenate([v for _, v, _ in groups]))
    laws = [((), 1.0)]
    for draws, values, probs in groups:
        comps = np.array([c for c in itertools.product(range(draws + 1),
                                                       repeat=len(values))
                          if sum(c) == draws])
        logp = (math.lgamma(draws + 1)
                - np.sum([[math.lgamma(x + 1) for x in row] for row in comps],
                         axis=1)
                + comps @ np.log(np.asarray(probs, float)))
        at = np.searchsorted(support, values)
        full = np.zeros((len(comps), support.size), dtype=int)
        full[:, at] = comps
        laws = [(np.asarray(c0) + c1 if len(c0) else c1, p0 * p1)
                for c0, p0 in laws
                for c1, p1 in zip(full, np.exp(logp), strict=True)]
    counts = np.array([c for c, _ in laws])
    probs = np.array([p for _, p in laws])
    cum = np.cumsum(counts, axis=1)
    lower = support[np.argmax(cum >= n // 2, axis=1)]        # X_(n/2)
    upper = support[np.argmax(cum >= n // 2 + 1, axis=1)]    # X_(n/2 + 1)
    medians = (lower + upper) / 2
    order = np.argsort(medians, kind="stable")
    return medians[order], np.cumsum(probs[order])


def _quantile(values, cdf, u):
    return values[np.searchsorted(cdf, u - 1e-12, side="left")]


def test_a_group_with_no_draws_inside_the_window_is_not_a_nan():
    # Regression (issue 27): with replacement and a pair at share 1, the other
    # group draws nothing; 0 * log(0) was NaN in the table's error, which
    # compared false with every margin, collapsed the quantile bounds and
    # under-certified W (0.5 where the exact laws need 1).
    rng = np.random.default_rng(0)
    in_group, out_group = rng.choice([0, 1, 2], 100), rng.choice([2, 3], 100)
    ref = pd.DataFrame({"g": [1] * 100 + [0] * 100,
                        "kids": np.concatenate([in_group, out_group])})
    secret = Secret.proportion("g", 1, pairs=[(0.8, 1.0)])
    with np.errstate(invalid="raise"):
        plan = ApproximateWassersteinMechanism(
            query=Statistic.median("kids"), secret=secret, delta=1e-3,
            theta=Resample(replace=True, random_state=0)).fit(ref).plan(n=100)

    def law(k):
        groups = []
        for draws, sample in ((k, in_group), (100 - k, out_group)):
            if draws:
                values, counts = np.unique(sample, return_counts=True)
                groups.append((draws, values.astype(float), counts / counts.sum()))
        return _median_law_of_counts(groups, 100)

    (xa, fa), (xb, fb) = law(80), law(100)
    levels = np.linspace(5e-4, 1 - 5e-4, 2001)
    gap = max(abs(_quantile(xa, fa, u) - _quantile(xb, fb, u)) for u in levels)
    assert gap == 1.0
    assert plan.sensitivity >= gap
