"""The trimmed mean's band law, against its exact law computed independently.

The exact laws of the trimmed mean of n records drawn from two known
discrete populations are enumerated here (every multiset of values, its
multinomial probability, the mean of the middle n - 2g values), with code
that shares nothing with skattr; the band law fitted on a reference sample
of the same populations must bound their distance, its weight 1 / (n - 2g)
and its cap at the clipping range's width included.
"""

import math
from collections import defaultdict
from itertools import combinations_with_replacement

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr._kinds import TrimmedMean
from skattr.laws._band import BandLaw
from skattr.laws._distances import least_certified
from skattr.theta import ConfidenceBand

BOUNDS = {"x": (0.0, 100.0)}
SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])


def _draws(values, probs, k):
    """Every multiset of k draws from a discrete law, with its probability."""
    for picked in combinations_with_replacement(range(len(values)), k):
        counts = [picked.count(i) for i in range(len(values))]
        ways = math.factorial(k)
        for c in counts:
            ways //= math.factorial(c)
        yield ([values[i] for i in picked],
               ways * math.prod(p**c for p, c in zip(probs, counts, strict=True)))


def _trimmed(xs, cut):
    n = len(xs)
    g = int(cut * n)            # as scipy.stats.trim_mean cuts
    kept = sorted(xs)[g:n - g]
    return sum(kept) / len(kept)


def exact_law(inside, outside, k, n, cut):
    """Return the law of the trimmed mean of k records in, n - k out."""
    law = defaultdict(float)
    for xs_in, p_in in _draws(*inside, k):
        for xs_out, p_out in _draws(*outside, n - k):
            law[round(_trimmed(xs_in + xs_out, cut), 9)] += p_in * p_out
    return dict(law)


def _distributional(inside, outside, a, n, cut):
    # Each record in the group with chance a, independently.
    law = defaultdict(float)
    for k in range(n + 1):
        weight = math.comb(n, k) * a**k * (1 - a) ** (n - k)
        for t, p in exact_law(inside, outside, k, n, cut).items():
            law[t] += weight * p
    return dict(law)


def _cdf(law, t):
    # The atoms are rounded to 1e-9 (exact_law): a tolerance of 1e-8.
    return sum(p for x, p in law.items() if x <= t + 1e-8)


def w_infinity(law_a, law_b):
    """sup over u of |Q_a(u) - Q_b(u)|, the quantile functions' largest gap."""
    def quantile(law, u):
        total = 0.0
        for x in sorted(law):
            total += law[x]
            if total >= u - 1e-12:
                return x
        return max(law)

    cuts = sorted({0.0, 1.0} | {_cdf(law_a, x) for x in law_a}
                  | {_cdf(law_b, x) for x in law_b})
    levels = [(lo + hi) / 2 for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)
              if hi > lo + 1e-12]
    return max(abs(quantile(law_a, u) - quantile(law_b, u)) for u in levels)


def half_lines_close(law_a, law_b, w, delta):
    """Whether P(T_a <= t) <= P(T_b <= t + w) + delta both ways, for every t:
    what (w, delta)-closeness implies of the half-lines."""
    atoms = sorted(set(law_a) | set(law_b))
    return all(_cdf(one, t) <= _cdf(other, t + w) + delta + 1e-9
               for one, other in ((law_a, law_b), (law_b, law_a))
               for t in atoms)


def _reference(inside, outside, per, seed):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.choice(inside[0], per, p=inside[1]),
                        rng.choice(outside[0], per, p=outside[1])])
    return pd.DataFrame({"g": np.repeat([1, 0], per), "x": x.astype(float)})


def _law(reference, cut, secret=SECRET):
    mech = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Statistic.trimmed_mean(["x"], cut), secret=secret,
        bounds=BOUNDS, theta=ConfidenceBand())
    return mech.fit(reference).law_


INSIDE = ([20.0, 50.0, 90.0], [0.2, 0.3, 0.5])
OUTSIDE = ([10.0, 40.0, 60.0], [0.5, 0.3, 0.2])
# The group's records at the top of the range, the others at the bottom:
# every moved record moves by the whole range, and the trimmed mean by its
# weight times that (the bound is tight, so a smaller weight breaks it).
TOP, BOTTOM = ([100.0], [1.0]), ([0.0], [1.0])


@pytest.mark.parametrize(("n", "cut"), [(10, 0.2), (11, 0.1)])
@pytest.mark.parametrize(("inside", "outside"), [(INSIDE, OUTSIDE),
                                                 (TOP, BOTTOM)],
                         ids=["three-values", "top-bottom"])
def test_the_band_law_bounds_the_trimmed_means_exact_distance(n, cut, inside,
                                                              outside):
    law = _law(_reference(inside, outside, 3000, seed=0), cut)
    assert isinstance(law, BandLaw)
    # Dataset privacy: a n records of the group, on the grid. The exact laws'
    # atoms are rounded to 1e-9: a tolerance of 1e-8.
    a, b = (exact_law(inside, outside, round(p * n), n, cut) for p in (0.4, 0.6))
    exact = w_infinity(a, b)
    assert 0 < exact <= law.w_infinity(n, "dataset").value + 1e-8
    for delta in (0.05, 0.2):
        w = law.closeness(n, "dataset", delta).value
        assert half_lines_close(a, b, w, delta)
    # Distributional privacy: each record in the group with chance a.
    a, b = (_distributional(inside, outside, p, n, cut) for p in (0.4, 0.6))
    assert w_infinity(a, b) <= law.w_infinity(n, "distributional").value + 1e-8
    w = law.closeness(n, "distributional", 0.05).value
    assert half_lines_close(a, b, w, 0.05)


def test_the_trimmed_means_weight_is_needed(monkeypatch):
    # The group's records at the top of the range, the others at the bottom:
    # the m = 2 moved records move the trimmed mean of 10 (2 cut each end)
    # by 2 x 100 / 6, where a mean moves by 2 x 100 / 10.
    n, cut = 10, 0.2
    a, b = (exact_law(TOP, BOTTOM, k, n, cut) for k in (4, 6))
    exact = w_infinity(a, b)
    assert exact == pytest.approx(200 / 6)
    reference = _reference(TOP, BOTTOM, 500, seed=1)
    certified = _law(reference, cut).w_infinity(n, "dataset").value
    assert exact <= certified + 1e-9
    assert not half_lines_close(a, b, 0.99 * exact, 0.0)
    # With a mean's weight 1 / n the bound would be broken: the check above
    # fails on it.
    monkeypatch.setattr(TrimmedMean, "record_weight",
                        lambda self, stat, n: 1.0 / n)
    assert _law(reference, cut).w_infinity(n, "dataset").value < exact


def test_a_trimmed_mean_is_released_over_the_bands():
    reference = _reference(INSIDE, OUTSIDE, 2000, seed=2)
    query = skattr.Statistic.trimmed_mean(["x"], 0.1)
    mech = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=query, secret=SECRET, bounds=BOUNDS, theta=ConfidenceBand(),
        random_state=0).fit(reference)
    plan = mech.plan(n=1000)
    assert plan.assumes("reference.band")
    # The mean's law, weighted 1 / (n - 2g) = 1 / 800 for 1 / 1000.
    mean = skattr.mechanisms.ApproximateWassersteinMechanism(
        query=skattr.Query.mean(["x"]), secret=SECRET, bounds=BOUNDS,
        theta=ConfidenceBand()).fit(reference).plan(n=1000)
    assert plan.sensitivity == pytest.approx(mean.sensitivity * 1000 / 800,
                                             rel=1e-6)
    release = mech.release(reference.sample(1000, random_state=3))
    assert 0 <= release.values.iloc[0] <= 100


WIDE = skattr.Secret.proportion("g", 1, pairs=[(0.1, 0.9)])


def _uncapped(law, n, privacy, delta=None):
    """The law's summed distances before the cap: their largest, or quantile."""
    per_pair = law.coupled_distances(n, privacy)
    if delta is None:
        return max(min(one.largest for one in laws) for laws in per_pair)
    return max(least_certified(laws, lambda one: one.closeness(delta))
               for laws in per_pair)


@pytest.mark.parametrize(("cut", "n", "binds"), [
    (0.3, 10, True), (0.45, 10, True), (0.45, 100, True), (0.1, 10, False)])
def test_the_band_law_is_capped_at_the_range_width(cut, n, binds):
    # 8 of 10 (80 of 100) records move, each by up to 90 - 10 = 80 over the
    # bands, weighted 1 / (n - 2g): 160, 320 and 640 for the trimmed means of
    # 4, 2 and 10 kept records, above the range's width 100, which no
    # trimmed mean of values in [0, 100] can move by; 80 for 8 kept records.
    law = _law(_reference(INSIDE, OUTSIDE, 3000, seed=0), cut, secret=WIDE)
    kept = n - 2 * int(cut * n)
    largest = _uncapped(law, n, "dataset")
    assert largest == pytest.approx(math.ceil(0.8 * n) * 80 / kept)
    for privacy in ("dataset", "distributional"):
        bound = law.w_infinity(n, privacy)
        uncapped = _uncapped(law, n, privacy)
        assert bound.value <= 100.0
        assert bound.value == pytest.approx(min(uncapped, 100.0), rel=1e-12)
        for delta in (0.05, 1e-3):
            close = law.closeness(n, privacy, delta)
            assert close.value <= 100.0
            assert close.value == pytest.approx(
                min(_uncapped(law, n, privacy, delta), 100.0), rel=1e-12)
    bound = law.w_infinity(n, "dataset")
    if binds:
        assert bound.value == 100.0 and bound.how.kind == "w-inf.range"
    else:
        # Where the cap does not bind, the bound is the summed gaps', and its
        # step records the weight.
        assert bound.value == largest < 100.0
        assert bound.how.kind == "w-inf.band.weighted"
        assert bound.how.params == {"weight": 1 / kept}
        step = law.closeness(n, "dataset", 0.05).how
        assert step.kind == "closeness.band.weighted"
        assert step.params == {"records": 8, "weight": 1 / kept}
        assert "summed gaps times 1 / 8 " in step.text


@pytest.mark.parametrize(("inside", "outside", "cut"), [
    (TOP, BOTTOM, 0.3), (INSIDE, OUTSIDE, 0.45)], ids=["top-bottom",
                                                       "three-values"])
def test_the_capped_band_law_still_bounds_the_exact_distance(inside, outside,
                                                             cut):
    # n = 10, 1 or 9 records in the group: the uncapped bound, 8 moved
    # records' gaps over 4 or 2 kept, exceeds the width 100; the capped one
    # still bounds the exact laws' distance. At the top and bottom that
    # distance is the width itself (the 4 kept records all 0, then all 100),
    # so a cap below the width would break the bound.
    n = 10
    law = _law(_reference(inside, outside, 3000, seed=0), cut, secret=WIDE)
    assert _uncapped(law, n, "dataset") > 100.0
    a, b = (exact_law(inside, outside, k, n, cut) for k in (1, 9))
    exact = w_infinity(a, b)
    certified = law.w_infinity(n, "dataset").value
    assert 0 < exact <= certified + 1e-8
    for delta in (0.05, 0.2):
        w = law.closeness(n, "dataset", delta).value
        assert half_lines_close(a, b, w, delta)
    if inside == TOP:
        assert exact == pytest.approx(100.0) == certified
        # Any W below the width would not be close: the cap is tight.
        assert not half_lines_close(a, b, 99.0, 0.2)
    a, b = (_distributional(inside, outside, p, n, cut) for p in (0.1, 0.9))
    assert w_infinity(a, b) <= law.w_infinity(n, "distributional").value + 1e-8
    w = law.closeness(n, "distributional", 0.05).value
    assert half_lines_close(a, b, w, 0.05)
