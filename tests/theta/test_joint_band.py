"""Several medians, quantiles or stds at once: the default over the confidence bands.

The truth is simulated here with numpy alone: datasets drawn from the
population under one secret, the moved records redrawn from the other group
(the independent coupling the bounds are about; under distributional
privacy the two datasets drawn independently, which the interval bound also
covers), and each value's move counted. The binomial tails are checked
against plain convolutions of scipy's pmfs.
"""

import dataclasses

import _lognormal_population as population
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import skattr
from skattr.exceptions import DataValidationError, NotCertifiableError
from skattr.laws import _count_bound
from skattr.laws._joint_band import JointBandLaw, binomials_at_most

SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
LEVELS = [0.25, 0.5, 0.75]
N, DELTA = 105, 1e-3


def _ledger(rng, size, budget):
    reference = population.reference(rng, size)
    private = reference.sample(N, random_state=0)
    return skattr.Ledger(private, secret=SECRET, budget=(budget, DELTA),
                         reference=reference, bounds={"x": (0, 20)},
                         random_state=0)


def _coupled_moves(rng, draws, distributional=False, comonotone=False):
    """|F(a) - F(b)| per level, a = 0.4, b = 0.6, n = N.

    ``comonotone``: each moved record's two values from one uniform.
    """
    if distributional:
        # Each dataset i.i.d. from its mixture, the two independent.
        sides = []
        for share in (0.4, 0.6):
            inside = rng.random((draws, N)) < share
            sides.append(np.where(inside, population.draw(rng, 1, (draws, N)),
                                  population.draw(rng, 0, (draws, N))))
        a, b = sides
    else:
        a, b = population.coupled_pairs(rng, draws, comonotone=comonotone)
    return np.abs(np.quantile(a, LEVELS, axis=1)
                  - np.quantile(b, LEVELS, axis=1)).T


def _fit(reference, **params):
    return skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.quantile("x", q=LEVELS), secret=SECRET,
        bounds={"x": (0, 20)}, delta=DELTA, **params).fit(reference)


@pytest.mark.parametrize("parts, t", [
    ([(10, 0.5)], 4),
    ([(30, 0.2), (12, 0.7), (5, 0.01), (5, 0.99)], 9),
    ([(200, 0.05), (100, 0.5)], 40),
    ([(300, 0.3), (250, 0.6)], 150),
])
def test_binomial_tails_are_bounds_and_tight(parts, t):
    law = np.array([1.0])
    for c, p in parts:
        law = np.convolve(law, stats.binom.pmf(np.arange(c + 1), c, p))
    exact = law[:t + 1].sum()
    bound = binomials_at_most(parts, t)
    assert exact <= bound <= exact + 1e-9
    # Beyond a few hundred, Chernoff's bound: above the truth.
    many = [(c * 10, p) for c, p in parts]
    law = np.array([1.0])
    for c, p in many:
        law = np.convolve(law, stats.binom.pmf(np.arange(c + 1), c, p))
    t_many = int(np.searchsorted(np.cumsum(law), 1e-6))
    if t_many > 400:
        assert binomials_at_most(many, t_many) >= law[:t_many + 1].sum()


@pytest.mark.slow
@pytest.mark.parametrize("privacy, chernoff, one_uniform", [
    ("dataset", False, False), ("dataset", True, False),
    ("dataset", False, True), ("dataset", True, True),
    ("distributional", False, True)])
def test_each_quantile_bound_holds_for_the_population(privacy, chernoff,
                                                      one_uniform,
                                                      monkeypatch):
    # Each value's W_j must bound its move but with chance delta / K under
    # the population's own law, for references drawn from the population
    # (the bands hold with probability 0.999: no miss); and be useful: a
    # few times the population's own W_j. ``chernoff``: the tails of many
    # moved records (Chernoff's bound) on this small n. One column's
    # quantiles alone: each moved record's two values from one uniform
    # (``one_uniform``, the law fitted here); a ledger's law draws them
    # independently (the same law, one_uniform=False).
    if chernoff:
        monkeypatch.setattr(_count_bound, "_EXACT_MOVED", 5)
    rng = np.random.default_rng(0)
    moves = _coupled_moves(rng, 150_000, privacy == "distributional",
                           comonotone=one_uniform)
    share = DELTA / len(LEVELS)
    truth = np.quantile(moves, 1 - share, axis=0)
    margin = share + 4 * np.sqrt(share / len(moves))
    ratios = []
    for size in (300, 300, 3000, 3000):
        law = _fit(population.reference(rng, size), privacy=privacy).law_
        assert isinstance(law, JointBandLaw) and law.one_uniform
        if not one_uniform:
            law = dataclasses.replace(law, one_uniform=False)
        w = law.per_statistic(N, privacy, DELTA)
        assert np.all((moves > w).mean(axis=0) <= margin), w
        assert (moves > w).any(axis=1).mean() <= DELTA + 4 * np.sqrt(
            DELTA / len(moves))
        ratios.append(w / truth)
    assert np.median(ratios) < 4, ratios


@pytest.mark.slow
def test_ties_are_bounded_for_the_population():
    # Integer values (many ties): the bound holds and is a few steps.
    rng = np.random.default_rng(4)
    pop = {1: lambda size: rng.poisson(2.5, size),
           0: lambda size: rng.poisson(2.0, size)}
    g = np.repeat([1, 0], 1000)
    reference = pd.DataFrame({"g": g, "x": np.concatenate(
        [pop[1](1000), pop[0](1000)]).clip(0, 10).astype(float)})
    law = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.quantile("x", q=LEVELS), secret=SECRET,
        bounds={"x": (0, 10)}, delta=DELTA).fit(reference).law_
    w = law.per_statistic(N, "dataset", DELTA)
    k_in, moved, draws = round(0.4 * N), round(0.2 * N), 100_000
    a = np.hstack([pop[1]((draws, k_in)), pop[0]((draws, N - k_in))]).clip(0, 10)
    b = a.copy()
    b[:, k_in:k_in + moved] = pop[1]((draws, moved)).clip(0, 10)
    moves = np.abs(np.quantile(a, LEVELS, axis=1)
                   - np.quantile(b, LEVELS, axis=1)).T
    share = DELTA / len(LEVELS)
    assert np.all((moves > w).mean(axis=0)
                  <= share + 4 * np.sqrt(share / draws))
    assert np.all(w <= 4)


@pytest.mark.slow
def test_the_default_of_several_quantiles_is_the_bands_each_its_own_scale():
    reference = skattr.datasets.make_hospital(2000, random_state=0)
    private = skattr.datasets.make_hospital(200, random_state=1)
    gender = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    # The default takes the least expected error: Gaussian noise certified
    # jointly (apgm), each median its own sd in its own units.
    default = private.attrpriv.plan(["weight", "temperature"],
                                    statistic="median", secret=gender,
                                    reference=reference)
    assert default.mechanism == "apgm" and default.assumes("reference.band")
    sd_weight, sd_temperature = np.sqrt(np.diag(default.noise_covariance))
    assert sd_temperature < sd_weight / 20
    # Laplace noise on the same bands, each its own scale.
    plan = private.attrpriv.plan(["weight", "temperature"], statistic="median",
                                 secret=gender, reference=reference,
                                 mechanism="approx-wasserstein")
    assert plan.expected_error > default.expected_error
    assert plan.assumes("reference.band")
    weight, temperature = plan.noise_law.scales
    # Each statistic in its own units.
    assert temperature < weight / 20
    # Two at once cost more than each alone (the budget split, the joint
    # coupling), but within bounds.
    alone = private.attrpriv.plan(["temperature"], statistic="median",
                                  secret=gender,
                                  reference=reference).noise_law.scale
    assert alone < temperature < 12 * alone
    assert "counting the shared and moved records" in plan.summary()
    quartiles = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.quantile("weight", q=LEVELS), secret=gender,
        random_state=0).fit(reference)
    release = quartiles.release(private)
    assert isinstance(quartiles.law_, JointBandLaw)
    assert len(set(quartiles.plan(private).noise_law.scales)) == 3
    assert np.all(np.isfinite(release.values))


def test_one_columns_quantiles_alone_couple_its_values_by_one_uniform():
    rng = np.random.default_rng(0)
    reference = population.reference(rng, 300)
    reference["y"] = reference["x"] * 2
    # One column's levels (or one median asked by apgm): its coupling.
    assert _fit(reference).law_.one_uniform
    median = skattr.mechanisms.AttributePrivateGaussian(
        query=skattr.Statistic.median(["x"]), secret=SECRET,
        bounds={"x": (0, 20)}, delta=DELTA).fit(reference)
    assert median.law_.one_uniform
    # Two columns, a std beside, or the records' coupling: none.
    two = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.quantile(["x", "y"], q=LEVELS), secret=SECRET,
        bounds={"x": (0, 20), "y": (0, 40)}, delta=DELTA).fit(reference)
    assert not two.law_.one_uniform
    records = _fit(reference, theta=skattr.theta.ConfidenceBand(
        coupling="records")).law_
    assert isinstance(records, JointBandLaw) and not records.one_uniform
    # A ledger plans one column's levels under the records' coupling.
    ledger = skattr.Ledger(reference.sample(N, random_state=0), secret=SECRET,
                           budget=(5.0, DELTA), reference=reference,
                           bounds={"x": (0, 20)}, random_state=0)
    rel = ledger.quantile("x", LEVELS, epsilon=1.0, mechanism="apgm")
    assert rel.plan.assumes("reference.band")
    assert ledger.spent[0] <= 1.0 * (1 + 1e-9)
    # The coupling of one column is refused on two, or beside a std.
    with pytest.raises(ValueError, match="one column only"):
        dataclasses.replace(two.law_, one_uniform=True)


def test_several_stds_are_each_bounded_as_one_is():
    rng = np.random.default_rng(2)
    reference = population.reference(rng, 500).assign(y=lambda d: 3 * d["x"] + 1)
    one = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.std("x"), secret=SECRET, bounds={"x": (0, 20)},
        delta=DELTA).fit(reference).plan(n=N).sensitivity
    both = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.std(["x", "y"]), secret=SECRET,
        bounds={"x": (0, 20), "y": (1, 61)}, delta=DELTA).fit(reference)
    assert isinstance(both.law_, JointBandLaw)
    w_x, w_y = both.law_.per_statistic(N, "dataset", DELTA)
    # Each at delta / 2: at least one's W at delta, and not far above it;
    # y = 3 x + 1 moves three times as far.
    assert one <= w_x < 2 * one
    assert w_y == pytest.approx(3 * w_x, rel=0.05)
    with pytest.raises(DataValidationError, match="at least 2"):
        both.plan(n=1)


def test_the_pure_mechanism_takes_each_range_and_no_range_is_refused():
    rng = np.random.default_rng(3)
    reference = population.reference(rng, 300)
    pure = skattr.mechanisms.WassersteinMechanism(
        query=skattr.Query.quantile("x", q=[0.25, 0.75]), secret=SECRET,
        bounds={"x": (0, 20)}).fit(reference)
    np.testing.assert_allclose(pure.plan(n=N).noise_law.scales, 2 * 20.0)
    with pytest.raises(NotCertifiableError, match="bounds="):
        skattr.mechanisms.ApproximateWassersteinMechanism(
            query=skattr.Query.quantile("x", q=[0.25, 0.75]), secret=SECRET,
            bounds=None).fit(reference).plan(n=N)


@pytest.mark.slow
def test_a_ledger_of_a_median_and_a_std_holds_for_the_population():
    # The ledger certifies a median and a std of one column jointly over the
    # bands, under one coupling (the moved records' rows independent): by
    # joint convexity the true delta at the joint epsilon is at most
    # E_pi H(pair), the two Laplace noises' hockey-stick at each coupled
    # pair's shifts, which is estimated here under the population's own law
    # (simulated): H = E_P (1 - e^(eps - loss))+, the loss of Laplace noise
    # at shift s being |Y - s| - |Y| per value, Y its noise in b's units.
    rng = np.random.default_rng(5)
    ledger = _ledger(rng, 1000, 20.0)
    median = ledger.median(["x"], epsilon=1.0)
    std = ledger.std(["x"], epsilon=1.0)
    joint = ledger.spent[0]
    assert 0.5 < joint < 20.0
    b_median = float(median.noise_law.scales[0])
    b_std = float(std.noise_law.scales[0])
    draws = 100_000
    a, b = population.coupled_pairs(rng, draws)
    shifts = [np.abs(np.median(a, axis=1) - np.median(b, axis=1)) / b_median,
              np.abs(a.std(axis=1, ddof=1) - b.std(axis=1, ddof=1)) / b_std]
    loss = sum(np.abs(y - s) - np.abs(y)
               for y, s in zip(rng.laplace(size=(2, draws)), shifts,
                               strict=True))
    hockey = np.maximum(0.0, 1.0 - np.exp(joint - loss))
    assert hockey.mean() <= DELTA + 4 * np.sqrt(DELTA / draws)
    # Useful, not only valid: the joint is a few times the simulated loss's
    # own (1 - delta)-quantile.
    worst = sum(shifts)
    assert joint < 6 * np.quantile(worst, 1 - DELTA)


@pytest.mark.slow
def test_remaining_fits_a_different_statistic_within_the_budget():
    # Over the bands, epsilon="remaining" for a third statistic: the
    # release's own epsilon is the one certified, and the joint guarantee
    # of the three stays within the budget (the fitted estimator replanned
    # at each epsilon tried must release at the chosen one).
    ledger = _ledger(np.random.default_rng(6), 600, 10.0)
    ledger.median(["x"], epsilon=1.0)
    ledger.std(["x"], epsilon=1.0)
    plan, joint = ledger.plan(skattr.Query.quantile("x", q=[0.25, 0.75]),
                              epsilon="remaining")
    release = ledger.quantile(["x"], q=[0.25, 0.75], epsilon="remaining")
    assert release.epsilon == pytest.approx(plan.epsilon)
    assert joint <= 10.0 * (1 + 1e-9)
    assert ledger.spent[0] == pytest.approx(joint) and ledger.spent[0] <= 10.0
    assert ledger.spent[0] > 9.9          # the budget is used, not wasted


def test_a_quantile_pinned_to_a_tie_is_still_bounded():
    # Found by review: when one side's order statistic sits on one value
    # nearly surely (a 0/1 column, n = 1000), its likely range is a point;
    # the bound must still count the other side's move (here the median is
    # 0 under 0.3 and 1 under 0.7, surely), never certify W = 0.
    rng = np.random.default_rng(7)
    g = np.repeat([1, 0], 3000)
    x = np.where(g == 1, rng.random(6000) < 0.9, rng.random(6000) < 0.1)
    reference = pd.DataFrame({"g": g, "x": x.astype(float)})
    law = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.quantile("x", q=[0.25, 0.5]),
        secret=skattr.Secret.proportion("g", 1, pairs=[(0.3, 0.7)]),
        bounds={"x": (0, 1)}).fit(reference).law_
    quarter, median = law.per_statistic(1000, "dataset", DELTA)
    assert median >= 1.0          # the median moves from 0 to 1
    assert quarter >= 0.0


@pytest.mark.slow
def test_pinned_quantiles_of_counts_hold_for_the_population():
    # Poisson counts at n = 1000: quartiles on ties; the simulated moves
    # never exceed W_j more often than delta / K.
    rng = np.random.default_rng(8)
    pop = {1: lambda size: rng.poisson(3.0, size).clip(0, 10).astype(float),
           0: lambda size: rng.poisson(1.5, size).clip(0, 10).astype(float)}
    reference = pd.DataFrame({"g": np.repeat([1, 0], 5000), "x": np.concatenate(
        [pop[1](5000), pop[0](5000)])})
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.3, 0.7)])
    w = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.quantile("x", q=LEVELS), secret=secret,
        bounds={"x": (0, 10)}).fit(reference).law_.per_statistic(
            1000, "dataset", DELTA)
    draws = 6000
    shared_in, shared_out = 300, 300
    a = np.hstack([pop[1]((draws, shared_in)), pop[0]((draws, shared_out)),
                   pop[0]((draws, 400))])
    b = a.copy()
    b[:, shared_in + shared_out:] = pop[1]((draws, 400))
    moves = np.abs(np.quantile(a, LEVELS, axis=1)
                   - np.quantile(b, LEVELS, axis=1)).T
    share = DELTA / len(LEVELS)
    assert np.all((moves > w).mean(axis=0)
                  <= share + 4 * np.sqrt(share / draws))
