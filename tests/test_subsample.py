"""Groups subsampled to public sizes hide the share exactly (issue 43).

The laws here are computed by enumeration, with code that shares nothing with
skattr but the sizes it is asked to check: every dataset (each record's
group and value), every subset of each group, exactly.
"""

import itertools
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import skattr
from skattr._subsample import public_sizes, subsample_groups
from skattr.exceptions import DataValidationError, InvalidParameterError

LAW_IN = {0: 0.5, 1: 0.3, 2: 0.2}          # a value's law inside the group
LAW_OUT = {0: 0.2, 1: 0.2, 2: 0.6}         # and outside


def _kept_law(n, k, s_in, s_out):
    """Law of (sorted kept values inside, sorted kept values outside).

    Dataset privacy: k records of the group, n - k others, each value drawn
    independently from its group's law; s_in of the group and s_out of the
    others kept, each subset equally likely.
    """
    law = defaultdict(float)
    for values in itertools.product(LAW_IN, repeat=n):
        inside, outside = values[:k], values[k:]
        p = np.prod([LAW_IN[v] for v in inside]) * np.prod(
            [LAW_OUT[v] for v in outside])
        subsets = [(a, b) for a in itertools.combinations(range(k), s_in)
                   for b in itertools.combinations(range(n - k), s_out)]
        for a, b in subsets:
            key = (tuple(sorted(inside[i] for i in a)),
                   tuple(sorted(outside[j] for j in b)))
            law[key] += p / len(subsets)
    return law


def _full_law(n, k):
    """Law of the whole data's (sorted inside values, sorted outside values)."""
    return _kept_law(n, k, k, n - k)


def _same(u, v, tol=1e-12):
    return all(abs(u.get(x, 0.0) - v.get(x, 0.0)) <= tol for x in {*u, *v})


@pytest.mark.parametrize("secret, n", [
    (skattr.Secret.proportion("g", 1, pairs=[(1 / 3, 2 / 3)]), 6),
    # Off the grid of 7 records: 2 or 3 vs 4 or 5 of them.
    (skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)]), 7),
    (skattr.Secret.proportion("g", 1, window=0.2, support=(0.3, 0.7)), 7),
    (skattr.Secret.proportion("g", 1, sets=[(0.1, 0.3), (0.6, 0.8)]), 6),
])
def test_the_subsampled_groups_have_one_law_under_every_secret(secret, n):
    sizes = public_sizes(secret, n)
    counts = sorted({round(v * n) for pair in secret.certified_pairs(
        n, "dataset") for v in pair})
    assert sizes.inside == counts[0] and sizes.outside == n - counts[-1]
    assert sizes.failure == 0.0
    laws = [_kept_law(n, k, sizes.inside, sizes.outside) for k in counts]
    for law in laws:
        assert sum(law.values()) == pytest.approx(1.0, abs=1e-12)
        assert _same(law, laws[0])
    # The positive control: the whole data's law tells the secrets apart.
    full = [_full_law(n, k) for k in (counts[0], counts[-1])]
    assert not _same(full[0], full[1], tol=1e-3)


def _distributional_law(n, p, sizes):
    """Law of the kept values, or "refused", when each record is in the group
    with chance p (values {0, 1} only, to keep the enumeration small)."""
    inner, outer = {0: 0.7, 1: 0.3}, {0: 0.2, 1: 0.8}
    law = defaultdict(float)
    for records in itertools.product([(1, 0), (1, 1), (0, 0), (0, 1)],
                                     repeat=n):
        prob = np.prod([p * inner[v] if g else (1 - p) * outer[v]
                        for g, v in records])
        inside = [v for g, v in records if g]
        outside = [v for g, v in records if not g]
        if len(inside) < sizes.inside or len(outside) < sizes.outside:
            law["refused"] += prob
            continue
        subsets = [(a, b) for a in itertools.combinations(inside, sizes.inside)
                   for b in itertools.combinations(outside, sizes.outside)]
        for a, b in subsets:
            law[(tuple(sorted(a)), tuple(sorted(b)))] += prob / len(subsets)
    return law


def test_distributional_sizes_fail_only_within_delta():
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    n, delta = 6, 0.5
    sizes = public_sizes(secret, n, "distributional", delta=delta)
    assert sizes.inside >= 1 and sizes.outside >= 1
    laws = [_distributional_law(n, p, sizes) for p in (0.4, 0.6)]
    for law in laws:
        assert law["refused"] <= delta
    total_variation = 0.5 * sum(abs(laws[0].get(x, 0.0) - laws[1].get(x, 0.0))
                                for x in {*laws[0], *laws[1]})
    # Equal laws once both groups hold their sizes: what differs is the
    # chance of refusing, at most delta under either share.
    assert total_variation <= delta
    # A window's least share is its support's end, not a grid point.
    window = skattr.Secret.proportion("g", 1, window=0.1, support=(0.301, 0.6))
    assert public_sizes(window, 10, "distributional", delta=0.5).least == 0.301
    kept = [{x: v for x, v in law.items() if x != "refused"} for law in laws]
    scaled = [{x: v / sum(k.values()) for x, v in k.items()} for k in kept]
    assert _same(*scaled)


def test_each_subset_is_equally_likely():
    frame = pd.DataFrame({"g": [1, 1, 1, 1, 0, 0], "x": range(6)})
    secret = skattr.Secret.proportion("g", 1, pairs=[(1 / 3, 2 / 3)])
    sizes = public_sizes(secret, 6)                   # 2 of the group, 2 else
    seen = defaultdict(int)
    for seed in range(1200):
        kept = subsample_groups(frame, secret, sizes, random_state=seed)
        assert list(kept.index) == [0, 1, 2, 3]
        assert kept["g"].sum() == 2
        seen[tuple(sorted(kept.loc[kept["g"] == 1, "x"]))] += 1
    assert len(seen) == 6                             # C(4, 2) subsets
    assert stats.chisquare(list(seen.values())).pvalue > 1e-3


def test_data_outside_the_secret_or_of_another_size_is_refused():
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
    sizes = public_sizes(secret, 10)
    few = pd.DataFrame({"g": [1] * 2 + [0] * 8})
    with pytest.raises(DataValidationError, match="outside the secret's pairs"):
        subsample_groups(few, secret, sizes, random_state=0)
    with pytest.raises(DataValidationError, match="planned for n = 10"):
        subsample_groups(few.iloc[:9], secret, sizes, random_state=0)
    data = pd.DataFrame({"g": [1] * 5 + [0] * 5})
    before = data.copy()
    subsample_groups(data, secret, sizes)             # secure randomness
    pd.testing.assert_frame_equal(data, before)


def test_bad_secrets_and_sizes_are_refused_naming_what_works():
    with pytest.raises(InvalidParameterError, match="Secret.proportion"):
        public_sizes(skattr.Secret.mean("x", pairs=[(1.0, 2.0)]), 10)
    secret = skattr.Secret.proportion("g", 1, pairs=[(0.01, 0.5)])
    with pytest.raises(InvalidParameterError, match="n = 100 records would do"):
        public_sizes(secret, 50)
    with pytest.raises(InvalidParameterError, match="strictly between 0 and 1"):
        public_sizes(skattr.Secret.proportion("g", 1, pairs=[(0.0, 0.5)]), 50)
    with pytest.raises(InvalidParameterError, match="0 < delta < 1"):
        public_sizes(skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)]), 50,
                     "distributional")
    with pytest.raises(InvalidParameterError, match="'dataset' or"):
        public_sizes(skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)]), 50,
                     "datset")
