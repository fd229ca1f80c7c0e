"""The resampling Theta: uniform subsets, exact laws and order-statistic tail bounds."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import skattr
from skattr._random import draw_k_subsets
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._draws import (
    coupled_subsets,
    draw_subsets,
    minimum_draws,
    quantile_bounds,
    tail_bounds,
)
from skattr.theta import Resample


@pytest.mark.parametrize("pool, count", [(30, 3), (6, 3), (7, 6)])
def test_subsets_are_uniform(pool, count):
    # Both samplers: rejection when count^2 <= pool, random keys otherwise.
    rng = np.random.default_rng(0)
    m = 40_000
    rows = draw_k_subsets(pool, count, m, rng)
    assert rows.shape == (m, count)
    ordered = np.sort(rows, axis=1)
    assert np.all(ordered[:, 1:] > ordered[:, :-1])          # distinct
    subsets = list(itertools.combinations(range(pool), count))
    index = {s: i for i, s in enumerate(subsets)}
    freq = np.bincount([index[tuple(r)] for r in ordered], minlength=len(subsets))
    # Every subset equally likely: a chi-square test at level 1e-4.
    _, p_value = stats.chisquare(freq)
    assert p_value > 1e-4


def test_draw_subsets_holds_the_exact_group_sizes():
    rng = np.random.default_rng(1)
    inside, outside = np.arange(0, 40, 2), np.arange(1, 40, 2)
    counts = rng.integers(0, 11, 500)
    rows = draw_subsets(inside, outside, counts, 10, rng)
    assert np.array_equal((rows % 2 == 0).sum(axis=1), counts)
    assert all(len(set(r)) == 10 for r in rows)
    with pytest.raises(NotCertifiableError, match="holds 20"):
        draw_subsets(inside, outside, [21], 25, rng)


def _rank(m, tail, failure):
    # Independent: the least r with P(Binomial(m, 1 - tail) >= r) <= failure,
    # by summing the pmf from the top in exact rational arithmetic.
    from fractions import Fraction
    p = Fraction(1) - Fraction(tail)
    total = Fraction(0)
    for r in range(m, -1, -1):
        total += math.comb(m, r) * p**r * (1 - p) ** (m - r)
        if total > Fraction(failure):
            return r + 1
    return 0


@pytest.mark.parametrize("m, tail, failure", [(200, 0.05, 0.01), (300, 0.02, 0.1),
                                              (60, 0.05, 0.05)])
def test_tail_bounds_pick_the_right_order_statistic(m, tail, failure):
    samples = np.arange(m, dtype=float)[::-1, None]     # draw r-1 is value r-1
    lower, upper = tail_bounds(samples, tail, failure)
    rank = _rank(m, tail, failure)
    assert upper[0] == rank - 1 and lower[0] == m - rank


def _lower_rank(m, level, failure):
    # Independent: the largest s with P(Binomial(m, level) <= s - 1) <= failure.
    from fractions import Fraction
    p = Fraction(level)
    total = Fraction(0)
    for s in range(m + 1):
        total += math.comb(m, s) * p**s * (1 - p) ** (m - s)
        if total > Fraction(failure):
            return s
    return m + 1


@pytest.mark.parametrize("m, failure", [(200, 0.01), (300, 1e-4)])
def test_quantile_bounds_pick_the_right_order_statistics(m, failure):
    samples = np.arange(m, dtype=float)[::-1, None]
    levels = [0.05, 0.2, 0.5, 0.9]
    lower, upper = quantile_bounds(samples, levels, failure)
    for i, u in enumerate(levels):
        assert upper[i, 0] == _rank(m, 1 - u, failure) - 1
        assert lower[i, 0] == _lower_rank(m, u, failure) - 1


def test_quantile_bounds_cover_with_the_stated_confidence():
    rng = np.random.default_rng(5)
    law = stats.poisson(3.0)
    levels = np.array([0.1, 0.5, 0.8])
    failure, misses = 0.05, np.zeros((2, 3))
    for _ in range(400):
        lower, upper = quantile_bounds(law.rvs((200, 1), random_state=rng),
                                       levels, failure)
        truth = law.ppf(levels)
        misses[0] += lower[:, 0] > truth
        misses[1] += upper[:, 0] < truth
    assert np.all(misses / 400 <= failure + 3 * math.sqrt(failure / 400))


def test_tail_bounds_hold_with_the_stated_confidence():
    # A law with atoms: the true tail beyond each bound exceeds `tail` in at most
    # about `failure` of repeated experiments.
    rng = np.random.default_rng(2)
    law = stats.binom(20, 0.3)
    tail, failure, wrong = 0.05, 0.1, 0
    for _ in range(400):
        lower, upper = tail_bounds(law.rvs((300, 1), random_state=rng), tail,
                                   failure)
        wrong += law.sf(upper[0]) > tail
    assert wrong / 400 <= failure + 3 * math.sqrt(failure / 400)
    assert minimum_draws(tail, failure) == math.ceil(math.log(0.1)
                                                     / math.log(0.95))
    with pytest.raises(NotCertifiableError, match="at least 45"):
        tail_bounds(np.zeros((44, 1)), tail, failure)


def _tiny():
    return pd.DataFrame({"g": [1, 1, 1, 0, 0, 0, 0],
                         "x": [5.0, 1.0, 9.0, 2.0, 7.0, 3.0, 4.0]})


def test_exact_law_enumerates_every_dataset():
    frame = _tiny()
    secret = skattr.Secret.proportion("g", 1, pairs=[(1 / 3, 2 / 3)])
    laws = Resample().fit(frame, skattr.Query.median("x"), ("x",), secret)
    support, mass = laws.exact_law(2 / 3, 3, "dataset")
    # Independent: every dataset of 2 group records and 1 other, equally likely.
    medians = [np.median([*a, b]) for a in itertools.combinations([5, 1, 9], 2)
               for b in [2, 7, 3, 4]]
    values, counts = np.unique(medians, return_counts=True)
    assert np.array_equal(support[:, 0], values)
    assert np.array_equal(mass, counts)         # whole counts: an exact law
    assert laws.n_subsets(2 / 3, 3, "dataset") == 12
    # Distributional privacy: a Binomial(3, a) number of group records.
    support, mass = laws.exact_law(0.5, 3, "distributional")
    assert mass.sum() == pytest.approx(1.0)
    with pytest.raises(NotCertifiableError, match="multiples of 1/3"):
        laws.exact_law(0.5, 3, "dataset")


def test_drawn_law_matches_the_exact_law():
    frame = _tiny()
    secret = skattr.Secret.proportion("g", 1, pairs=[(1 / 3, 2 / 3)])
    laws = Resample(random_state=3).fit(frame, skattr.Query.mean("x"), ("x",),
                                        secret)
    support, mass = laws.exact_law(1 / 3, 3, "dataset")
    draws = laws.drawn_law(1 / 3, 3, "dataset", 60_000)[:, 0]
    assert draws.mean() == pytest.approx(float(support[:, 0] @ mass / mass.sum()),
                                        abs=0.03)
    # Same seed, value and size: the same draws, whatever the order of calls.
    again = Resample(random_state=3).fit(frame, skattr.Query.mean("x"), ("x",),
                                         secret)
    again.drawn_law(2 / 3, 3, "dataset", 100)
    assert np.array_equal(again.drawn_law(1 / 3, 3, "dataset", 60_000)[:, 0],
                          draws)


def test_resample_parameters_are_checked():
    for bad in ({"n_draws": 1}, {"n_draws": 2.5}, {"failure_share": 1.0},
                {"max_exact": -1}, {"random_state": "x"}):
        with pytest.raises(InvalidParameterError):
            Resample(**bad)
    frame = _tiny()
    with pytest.raises(InvalidParameterError, match="Secret.proportion"):
        Resample().fit(frame, skattr.Query.mean("x"), ("x",),
                       skattr.Secret.mean("x", pairs=[(1, 2)]))


def test_ten_thousand_subsets_of_a_hundred():
    # 10^4 subsets of 100 rows from 25,000 reference rows, the median of each;
    # its speed is a ratio in benchmarks/bench_resample.py (no wall-clock
    # assertion here: a loaded machine runs 2-3x slower).
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"g": rng.random(25_000) < 0.25,
                          "x": rng.normal(size=25_000)})
    secret = skattr.Secret.proportion("g", True, pairs=[(0.2, 0.3)])
    laws = Resample(random_state=0).fit(frame, skattr.Query.median("x"), ("x",),
                                        secret)
    values = laws.drawn_law(0.3, 100, "dataset", 10_000)
    assert values.shape == (10_000, 1)


@pytest.mark.parametrize("k_a, k_b", [(3, 1), (1, 3), (0, 4), (2, 2)])
def test_coupled_datasets_have_the_model_marginals(k_a, k_b):
    # Each side of the coupling is a uniform dataset with its number of
    # group records, in a uniformly random order; the two share the rest.
    inside, outside = np.arange(5), np.arange(5, 11)
    n, m = 4, 40_000
    rows_a, rows_b = coupled_subsets(inside, outside, np.full(m, k_a),
                                     np.full(m, k_b), n,
                                     np.random.default_rng(1))
    for rows, k in ((rows_a, k_a), (rows_b, k_b)):
        assert np.all((rows < 5).sum(axis=1) == k)
        ordered = np.sort(rows, axis=1)
        assert np.all(ordered[:, 1:] > ordered[:, :-1])     # distinct records
        sets = [tuple(sorted((*i, *o))) for i, o in itertools.product(
            itertools.combinations(inside, k),
            itertools.combinations(outside, n - k))]
        index = {x: i for i, x in enumerate(sets)}
        freq = np.bincount([index[tuple(r)] for r in ordered],
                           minlength=len(sets))
        assert stats.chisquare(freq).pvalue > 1e-4
        # The first record is any of the dataset's with equal chance.
        first = (rows[:, 0] == ordered[:, 0]).mean()
        assert first == pytest.approx(1 / n, abs=0.01)
    shared = [len(set(a) & set(b)) for a, b in zip(rows_a, rows_b, strict=True)]
    assert set(shared) == {n - abs(k_a - k_b)}


def test_coupled_datasets_with_binomial_group_sizes():
    frame = _tiny()
    secret = skattr.Secret.proportion("g", 1, pairs=[(1 / 3, 2 / 3)])
    laws = Resample(random_state=3).fit(frame, skattr.Query.mean("x"), ("x",),
                                        secret)
    va, vb = laws.coupled_values(0.3, 0.6, 3, "distributional", 60_000)
    for values, a in ((va, 0.3), (vb, 0.6)):
        support, mass = laws.exact_law(a, 3, "distributional")
        assert values.mean() == pytest.approx(float(support[:, 0] @ mass),
                                              abs=0.03)
    # Statistics of one reference and secret see the same pairs of datasets.
    other = Resample(random_state=3).fit(frame, skattr.Query.sum("x"), ("x",),
                                         secret)
    sa, sb = other.coupled_values(0.3, 0.6, 3, "distributional", 60_000)
    assert np.allclose(sa, 3 * va) and np.allclose(sb, 3 * vb)
