"""Moment bounds on the laws of a mean or sum, checked against exact laws."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import skattr
from skattr.exceptions import InvalidParameterError
from skattr.laws._moment_bounds import MomentLaws
from skattr.mechanisms import ApproximateWassersteinMechanism
from skattr.theta import Resample
from skattr.wasserstein import wd_closeness

# Small integer-valued groups: their sums have exact laws by convolution.
INSIDE = np.array([0, 1, 1, 2, 3, 3, 4, 7, 9, 12], dtype=float)
OUTSIDE = np.array([0, 0, 1, 1, 1, 2, 2, 3, 5, 6, 8], dtype=float)


def _pmf(values):
    """pmf of one record drawn uniformly from integer ``values`` (offset 0)."""
    return np.bincount(values.astype(int)) / values.size


def _power(pmf, k):
    out = np.array([1.0])
    for _ in range(k):
        out = np.convolve(out, pmf)
    return out


def _sum_law_with(a, n, privacy):
    """Exact pmf of S (support 0, 1, ...) with replacement."""
    pin, pout = _pmf(INSIDE), _pmf(OUTSIDE)
    if privacy == "dataset":
        k = round(a * n)
        return np.convolve(_power(pin, k), _power(pout, n - k))
    size = max(pin.size, pout.size)
    mix = a * np.pad(pin, (0, size - pin.size)) + (1 - a) * np.pad(
        pout, (0, size - pout.size))
    return _power(mix, n)


def _sum_law_without(a, n, privacy="dataset"):
    """Exact law of S without replacement: every subset, every group size."""
    ks = ([(round(a * n), 1.0)] if privacy == "dataset" else
          [(k, stats.binom.pmf(k, n, a)) for k in range(n + 1)])
    sums, weights = [], []
    for k, pk in ks:
        part = [sum(i) + sum(o) for i in itertools.combinations(INSIDE, k)
                for o in itertools.combinations(OUTSIDE, n - k)]
        sums += part
        weights += [pk / len(part)] * len(part)
    values, where = np.unique(sums, return_inverse=True)
    return values, np.bincount(where, weights=weights)


def _laws(replace, weight=lambda n: 1.0):
    return MomentLaws(INSIDE[:, None], OUTSIDE[:, None], weight=weight,
                      replace=replace)


def _quantiles(support, pmf, levels):
    cdf = np.cumsum(pmf)
    return support[np.minimum(np.searchsorted(cdf, levels - 1e-12), cdf.size - 1)]


@pytest.mark.parametrize("privacy", ["dataset", "distributional"])
@pytest.mark.parametrize("a", [0.2, 0.5, 0.8])
def test_tail_bounds_hold_on_the_exact_law_with_replacement(privacy, a):
    n, tail = 30, 1e-3
    pmf = _sum_law_with(a, n, privacy)
    support = np.arange(pmf.size, dtype=float)
    low, high = _laws(True).tail_bounds(a, n, privacy, tail)
    assert pmf[support < low].sum() <= tail
    assert pmf[support > high].sum() <= tail
    # Not vacuous: inside the range of the sums.
    assert 0 < low < high < support[-1]


@pytest.mark.parametrize("privacy", ["dataset", "distributional"])
@pytest.mark.parametrize("a", [0.4, 0.6])
def test_tail_bounds_hold_on_every_subset_without_replacement(a, privacy):
    n, tail = 5, 0.05
    support, pmf = _sum_law_without(a, n, privacy)
    low, high = _laws(False).tail_bounds(a, n, privacy, tail)
    assert pmf[support < low].sum() <= tail
    assert pmf[support > high].sum() <= tail


@pytest.mark.parametrize("privacy", ["dataset", "distributional"])
def test_quantile_bounds_bracket_the_exact_quantiles(privacy):
    n, a = 40, 0.5
    pmf = _sum_law_with(a, n, privacy)
    support = np.arange(pmf.size, dtype=float)
    levels = np.linspace(0.001, 0.999, 999)
    low, high = _laws(True)._quantile_bounds(a, n, privacy, levels)
    exact = _quantiles(support, pmf, levels)
    assert np.all(low <= exact) and np.all(exact <= high)
    # Berry-Esseen narrows the middle below the Chernoff bounds alone.
    chernoff_low, chernoff_high = _laws(False)._quantile_bounds(
        a, n, privacy, levels)
    middle = np.abs(levels - 0.5) < 0.1
    assert np.all(high[middle] - low[middle]
                  < chernoff_high[middle] - chernoff_low[middle])


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("privacy", ["dataset", "distributional"])
def test_closeness_is_at_least_the_least_w_of_the_exact_laws(replace, privacy):
    n, delta = (5, 0.05) if not replace else (30, 1e-3)
    pairs = [(0.4, 0.6)]
    w, _ = _laws(replace).closeness(pairs, n, privacy, delta)
    if replace:
        laws = [(np.arange(p.size, dtype=float), p)
                for p in (_sum_law_with(a, n, privacy) for a in pairs[0])]
    else:
        laws = [_sum_law_without(a, n, privacy) for a in pairs[0]]
    (xa, pa), (xb, pb) = laws
    keep_a, keep_b = pa > 0, pb > 0
    least = wd_closeness(xa[keep_a], xb[keep_b], delta, pa[keep_a], pb[keep_b])
    assert w >= least - 1e-9
    trivial = max(xa.max(), xb.max()) - min(xa.min(), xb.min())
    assert w <= trivial * (1 + 1e-6)   # never beyond the laws' range
    if replace or privacy == "dataset":
        assert w < 0.5 * trivial       # and informative


@pytest.mark.parametrize("delta", [0.01, 0.2])
@pytest.mark.parametrize("replace", [False, True])
def test_swap_bound_holds_on_the_exact_law_of_the_difference(replace, delta):
    """P(|D| > T) <= delta, D the swapped records' difference."""
    n = 10
    laws = _laws(replace)
    swap = laws._swap_bound(0.3, 0.6, n, "dataset", 0, delta)
    j = 3
    if replace:
        plus = _power(_pmf(INSIDE), j)
        minus = _power(_pmf(OUTSIDE), j)
        diff = np.convolve(plus, minus[::-1])
        support = np.arange(diff.size) - (minus.size - 1)
    else:
        ins = [sum(c) for c in itertools.combinations(INSIDE, j)]
        outs = [sum(c) for c in itertools.combinations(OUTSIDE, j)]
        d = np.subtract.outer(ins, outs).ravel()
        support, counts = np.unique(d, return_counts=True)
        diff = counts / counts.sum()
    assert diff[np.abs(support) > swap].sum() <= delta
    # Never beyond the range of D; inside it when delta is not tiny.
    assert swap <= np.abs(support).max() * (1 + 1e-6)
    if delta > 0.1:
        assert swap < 0.9 * np.abs(support).max()


def test_switch_coupling_holds_for_distributional_privacy():
    """With replacement, Binomial(n, b - a) switched records: P(|D| > T) <= delta."""
    n, delta, a, b = 12, 0.01, 0.3, 0.5
    swap = _laws(True)._swap_bound(a, b, n, "distributional", 0, delta)
    one = np.convolve(_pmf(INSIDE), _pmf(OUTSIDE)[::-1])
    offset = _pmf(OUTSIDE).size - 1
    law = np.zeros(1)
    for j in range(n + 1):
        part = np.convolve(_power(_pmf(INSIDE), j), _power(_pmf(OUTSIDE)[::-1], j))
        weight = stats.binom.pmf(j, n, b - a)
        size = max(law.size, part.size)
        law = np.pad(law, (0, size - law.size))
        # Align on the zero of the difference: part's zero sits at j * offset.
        shifted = np.zeros(size + n * offset)
        shifted[n * offset - j * offset:n * offset - j * offset + part.size] = part
        law = np.pad(law, (0, shifted.size - law.size)) + weight * shifted
    support = np.arange(law.size) - n * offset
    assert abs(law.sum() - 1) < 1e-12 and one.size
    assert law[np.abs(support) > swap].sum() <= delta


def test_weight_scales_the_bounds():
    plain = _laws(True).tail_bounds(0.5, 20, "dataset", 0.01)
    mean = _laws(True, weight=lambda n: 1 / n).tail_bounds(0.5, 20, "dataset", 0.01)
    assert mean == pytest.approx((plain[0] / 20, plain[1] / 20))


def test_constant_groups_give_the_shift_exactly():
    laws = MomentLaws(np.full((5, 1), 2.0), np.zeros((5, 1)),
                      weight=lambda n: 1 / n, replace=True)
    w, _ = laws.closeness([(0.4, 0.6)], 10, "dataset", 0.01)
    assert w == pytest.approx(0.4, rel=1e-6)


def test_several_statistics_add_in_l1():
    two = MomentLaws(np.column_stack([INSIDE, 2 * INSIDE]),
                     np.column_stack([OUTSIDE, 2 * OUTSIDE]),
                     weight=lambda n: 1.0, replace=False)
    w2, _ = two.closeness([(0.4, 0.6)], 5, "dataset", 0.05)
    w1, _ = _laws(False).closeness([(0.4, 0.6)], 5, "dataset", 0.05)
    # Each coordinate at delta / 2 costs more than one at delta.
    assert w2 >= 3 * w1 - 1e-9


# ------------------------------------------------------------ mechanisms
def _hospital(n_ref=1000):
    from skattr.datasets import make_hospital
    return make_hospital(n_ref, random_state=0)


SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])


def _mechanism(moment_bounds, **kw):
    return ApproximateWassersteinMechanism(
        query=skattr.Query.mean(["weight"]), secret=SECRET, delta=1e-3,
        theta=Resample(random_state=0, moment_bounds=moment_bounds, **kw))


def test_mean_uses_moment_bounds_without_draws():
    plan = _mechanism(True).fit(_hospital()).plan(n=300)
    # Chernoff tails of the moment generating function, or Berry-Esseen.
    coupling = plan.certified_by.find("closeness.moments").params["coupling"]
    assert coupling.kind in ("coupling.swap", "coupling.quantile.moments") or (
        coupling.kind == "coupling.boxes"
        and coupling.params["faces"] == "chernoff")
    assert not plan.certified_by.uses("closeness.drawn")
    assert plan.delta == 1e-3


@pytest.mark.slow
def test_auto_keeps_the_least_of_the_draws_and_the_moments():
    ref = _hospital()
    auto = _mechanism("auto").fit(ref).plan(n=300).sensitivity
    drawn = _mechanism(False).fit(ref).plan(n=300).sensitivity
    moments = _mechanism(True).fit(ref).plan(n=300).sensitivity
    assert auto <= drawn + 1e-12
    assert moments >= drawn   # the draws are tighter at this size ...
    assert auto == pytest.approx(drawn)


def test_auto_uses_moments_when_draws_are_large(monkeypatch):
    import skattr.laws._coupling as wass
    monkeypatch.setattr(wass, "_DRAWN_RECORDS", 1000)
    ref = _hospital()
    auto = _mechanism("auto").fit(ref).plan(n=300)
    moments = _mechanism(True).fit(ref).plan(n=300)
    assert auto.sensitivity == moments.sensitivity
    assert not auto.certified_by.uses("closeness.drawn")


@pytest.mark.slow
def test_moment_bound_covers_the_drawn_law_at_large_n():
    """At n = 3,000 of 5,000 rows: milliseconds, and never below what draws see."""
    ref = _hospital(5000)
    plan = _mechanism(True).fit(ref).plan(n=3000)
    laws = _mechanism(True).fit(ref).law_.laws[0]
    draws = {a: laws.drawn_law(a, 3000, "dataset", 4000)[:, 0] for a in (0.4, 0.6)}
    # The quantile coupling of 4,000 draws over the middle 1 - delta.
    levels = np.linspace(0.01, 0.99, 99)
    gap = np.abs(np.quantile(draws[0.4], levels) - np.quantile(draws[0.6], levels))
    assert plan.sensitivity >= gap.max()
    assert plan.sensitivity < 2 * gap.max()


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_moment_bounds_parameter_is_checked(bad):
    with pytest.raises(InvalidParameterError, match="moment_bounds"):
        Resample(moment_bounds=bad)


def test_non_linear_statistics_have_no_moment_laws():
    ref = _hospital()
    mech = ApproximateWassersteinMechanism(
        query=skattr.Statistic.std(["weight"]), secret=SECRET,
        theta=Resample(random_state=0, n_draws=200)).fit(ref)
    assert mech.law_.laws[0].moments is None


def test_ledger_round_trips_moment_bounds():
    from skattr._persistence import from_json, to_json
    for value in ("auto", True, False):
        theta = Resample(random_state=3, moment_bounds=value)
        assert from_json(to_json(theta)) == theta


def test_old_ledger_files_draw_means():
    from skattr._ledger._files import _theta_from_json
    old = {"resample": {"n_draws": None, "failure_share": 0.1, "max_exact": 10,
                        "random_state": 1, "replace": False}}
    assert _theta_from_json(old).moment_bounds is False


def test_does_not_mutate_inputs():
    inside, outside = INSIDE[:, None].copy(), OUTSIDE[:, None].copy()
    MomentLaws(inside, outside, weight=lambda n: 1.0).closeness(
        [(0.4, 0.6)], 5, "dataset", 0.05)
    assert np.array_equal(inside[:, 0], INSIDE)
    assert math.isfinite(pd.Series(outside[:, 0]).sum())
