"""Certified W_inf sensitivity over a box of thetas: Zhang et al. (long), Sec. 6."""

import dataclasses
from fractions import Fraction
from itertools import accumulate, combinations, product
from math import comb

import numpy as np
import pytest

from skattr.exceptions import InvalidParameterError
from skattr.laws._count_sensitivity import (
    BoxSensitivity,
    count_sensitivity,
    count_sensitivity_box,
)
from skattr.laws._counts import _as_shares, _count_log_pmfs
from skattr.laws._lattice import _least_shift, _log_tails
from skattr.theta import count_pmf
from skattr.wasserstein import w_infinity

N = 4
SHARES = [k / N for k in range(N + 1)]  # g(X2) = 0, ..., 4 as shares of n = 4
# Example 3's Phi^2 = [0.2, 0.8], as in tests/test_counts.py.
PHIS = np.linspace(0.2, 0.8, 61)


def _grid(low, high, num):
    """Every point of a grid with ``num`` nodes per axis, corners included."""
    axes = (np.linspace(lo, hi, num) for lo, hi in zip(low, high, strict=True))
    return list(product(*axes))


def _exact_pmf(a, n, p, privacy):
    """Pmf of F in rational arithmetic for a binary X2, p = (p0, p1).

    Fractions of the floats given, so the law of exactly the theta passed.
    """
    a, p0, p1 = Fraction(a), Fraction(p[0]), Fraction(p[1])

    def binomial(m, q):
        return [comb(m, j) * q**j * (1 - q) ** (m - j) for j in range(m + 1)]

    if privacy == "distributional":
        return binomial(n, (1 - a) * p0 + a * p1)
    in_group = round(a * n)
    pmf = [Fraction(0)] * (n + 1)
    for i, x in enumerate(binomial(n - in_group, p0)):
        for j, y in enumerate(binomial(in_group, p1)):
            pmf[i + j] += x * y
    return pmf


def _exact_w_inf(u, v):
    """sup over levels of |Q_u - Q_v|, Q(level) = min{x : CDF(x) >= level}.

    Quantiles are constant between consecutive cumulative masses, so the
    right ends of those intervals are the only levels to check.
    """
    cu, cv = list(accumulate(u)), list(accumulate(v))

    def quantile(cdf, level):
        return next(x for x, c in enumerate(cdf) if c >= level)

    levels = {c for c in cu + cv if c > 0}
    return max(abs(quantile(cu, q) - quantile(cv, q)) for q in levels)


def _criterion_w_inf(u, v):
    """Least w with no t where F_u(t) < F_v(t - w) or F_v(t) < F_u(t - w)."""
    n = len(u) - 1
    cu, cv = list(accumulate(u)), list(accumulate(v))

    def cdf(c, t):
        return 0 if t < 0 else c[min(t, n)]

    w = 0
    while any(cdf(cu, t) < cdf(cv, t - w) or cdf(cv, t) < cdf(cu, t - w)
              for t in range(n + 1)):
        w += 1
    return w


@pytest.mark.parametrize("lo, hi, expected", [(0.4, 0.6, 1), (0.3, 0.7, 2),
                                              (0.0, 1.0, 4)])
def test_example_2_boxes(lo, hi, expected):
    # "Suppose 0.4 <= p1 <= 0.6 and 0.4 <= p2 <= 0.6" ... W_inf = 1; "when
    # Theta = {0.3 <= p1, p2 <= 0.7}, the worst case Wasserstein distance is 2";
    # "When Theta = {0 <= p1, p2 <= 1}, the worst case ... is 4".
    pairs = list(combinations(SHARES, 2))
    result = count_sensitivity_box(pairs, N, (lo, lo), (hi, hi))
    assert result.exact
    assert result.upper == result.lower == expected
    assert all(lo <= x <= hi for x in result.worst_p)
    assert count_sensitivity(pairs, N, [result.worst_p]) == expected


@pytest.mark.parametrize("lo, hi, expected", [(0.4, 0.6, 1), (0.3, 0.7, 2)])
def test_example_3_boxes(lo, hi, expected):
    # Example 3 fixes p1 = 0.4, p2 = 0.6 and gets 1; over the whole box around
    # it the supremum is the same, and [0.3, 0.7]^2 gives 2 as in Example 2.
    pairs = list(combinations(PHIS, 2))
    result = count_sensitivity_box(pairs, N, (lo, lo), (hi, hi),
                                   privacy="distributional")
    assert result.exact
    assert result.upper == expected
    assert count_sensitivity(pairs, N, [result.worst_p],
                             privacy="distributional") == expected


@pytest.mark.slow
def test_distributional_unit_box_stays_conservative():
    # With distributional privacy every law is the point mass at 0 when
    # p = (0, 0) (at n when p = (1, 1)), and close to it nearby, so cells
    # touching those corners keep a bound of n (see Notes): upper stays at n,
    # above the 3 reached at p = (0, 1), the most any grid or search point saw.
    pairs = list(combinations([0.2, 0.5, 0.8], 2))
    result = count_sensitivity_box(pairs, N, (0, 0), (1, 1),
                                   privacy="distributional")
    grid_max = count_sensitivity(pairs, N, _grid((0, 0), (1, 1), 21),
                                 privacy="distributional")
    assert result.lower == grid_max == 3
    assert result.upper == N
    assert not result.exact


@pytest.mark.slow
def test_never_below_a_dense_grid():
    # Boxes inside [0.05, 0.95]^2 and n <= 8 keep every tail above 1e-12, where
    # count_sensitivity (w_infinity's absolute resolution) is exact too.
    rng = np.random.default_rng(20240607)
    for i in range(4):
        n = int(rng.integers(2, 9))
        privacy = ("dataset", "distributional")[i % 2]
        if privacy == "dataset":
            pair = tuple(rng.choice(n + 1, size=2, replace=False) / n)
        else:
            pair = tuple(rng.uniform(0.05, 0.95, size=2))
        low = rng.uniform(0.05, 0.75, size=2)
        high = low + rng.uniform(0.02, 0.2, size=2)
        result = count_sensitivity_box([pair], n, low, high, privacy=privacy)
        grid_max = count_sensitivity([pair], n, _grid(low, high, 31),
                                     privacy=privacy)
        assert result.upper >= grid_max
        assert result.exact
        # lower is reached at worst_p; a grid cannot exceed it, and this one
        # (corners included, where every maximum we met lay) reaches it.
        assert count_sensitivity([pair], n, [result.worst_p],
                                 privacy=privacy) == result.lower == grid_max


def test_three_categories_against_a_grid():
    pairs = [((1, 0, 0), (0, 1 / 3, 2 / 3)), ((1 / 3, 1 / 3, 1 / 3), (0, 0, 1))]
    low, high = (0.2, 0.3, 0.5), (0.5, 0.6, 0.7)
    result = count_sensitivity_box(pairs, 3, low, high)
    assert result.exact
    assert result.upper == count_sensitivity(pairs, 3, _grid(low, high, 5)) == 2


def test_grid_without_corners_misses_the_supremum():
    # The centres of a 2 x 2 partition of [0.3, 0.7]^2 (a midpoint grid) see 1;
    # the supremum is 2, at a corner, which the box search evaluates.
    pairs = list(combinations(SHARES, 2))
    centres = list(product([0.4, 0.6], repeat=2))
    assert count_sensitivity(pairs, N, centres) == 1
    result = count_sensitivity_box(pairs, N, (0.3, 0.3), (0.7, 0.7))
    assert result.exact
    assert result.upper == 2


@pytest.mark.parametrize("privacy", ["dataset", "distributional"])
def test_log_laws_match_count_pmf(privacy):
    # The search's laws, many thetas at once in logs, against count_pmf's.
    rng = np.random.default_rng(5)
    secrets = [(0.0, 0.25, 0.75), (1 / 3, 1 / 3, 1 / 3), (0.5, 0.5, 0.0)]
    points = rng.uniform(0, 1, size=(4, 3))
    points[0] = (0.0, 1.0, 0.5)
    shares = np.array([_as_shares(a, 3) for a in secrets])
    laws = np.exp(_count_log_pmfs(shares, 12, points, privacy))
    for i, p in enumerate(points):
        for j, a in enumerate(secrets):
            np.testing.assert_allclose(
                laws[i, j], count_pmf(a, 12, p, privacy=privacy)[1],
                rtol=1e-10, atol=1e-300)


def test_criterion_against_w_infinity():
    rng = np.random.default_rng(7)
    # Two point masses one apart: W_inf = 1, yet F_mu(t) < F_nu(t - 1) holds at
    # no t, so that inequality characterises W_inf > w, not W_inf >= w.
    assert _criterion_w_inf([0, 1], [1, 0]) == 1
    for _ in range(200):
        n = int(rng.integers(1, 9))
        # Dyadic masses with zeros: exact floats, with exact ties and gaps.
        u, v = (rng.multinomial(64, rng.dirichlet(np.full(n + 1, 0.5))) / 64
                for _ in range(2))
        exact = _exact_w_inf([Fraction(x) for x in u], [Fraction(x) for x in v])
        assert _criterion_w_inf([Fraction(x) for x in u],
                                [Fraction(x) for x in v]) == exact
        assert w_infinity(np.arange(n + 1), np.arange(n + 1), a_weights=u,
                          b_weights=v) == exact
        with np.errstate(divide="ignore"):
            tu, tv = _log_tails(np.log(u)), _log_tails(np.log(v))
        certain = max(_least_shift(tu, tv, certain=True),
                      _least_shift(tv, tu, certain=True))
        possible = max(_least_shift(tu, tv, certain=False),
                       _least_shift(tv, tu, certain=False))
        assert certain == exact
        # Over a cell, exact ties count as possible crossings.
        assert exact <= possible <= exact + 1


@pytest.mark.parametrize("privacy", ["dataset", "distributional"])
def test_point_box_is_the_value_at_the_point(privacy):
    rng = np.random.default_rng(11)
    pairs = list(combinations(SHARES, 2))
    points = [(0.5, 0.5)] + [tuple(rng.uniform(0.05, 0.95, size=2))
                             for _ in range(3)]
    for p in points:
        result = count_sensitivity_box(pairs, N, p, p, privacy=privacy)
        assert result.exact
        assert result.n_cells == 1
        assert result.worst_p == p
        assert result.upper == count_sensitivity(pairs, N, [p], privacy=privacy)
    # Equal laws (p1 = p2) are at distance 0, not 1 from rounding.
    assert count_sensitivity_box(pairs, N, (0.5, 0.5), (0.5, 0.5)).upper == 0


@pytest.mark.parametrize("privacy", ["dataset", "distributional"])
def test_tails_below_1e_12_count(privacy):
    # p = (1e-9, 1e-3): the laws given secrets 0 and 1 differ mostly in tails
    # far below 1e-12, which W_inf sees in full.
    p = (1e-9, 1e-3)
    exact = _exact_w_inf(_exact_pmf(0, 8, p, privacy), _exact_pmf(1, 8, p, privacy))
    assert exact == 6
    result = count_sensitivity_box([(0.0, 1.0)], 8, p, p, privacy=privacy)
    assert result.upper == result.lower == exact


def test_exact_values_at_random_points():
    rng = np.random.default_rng(3)
    for i in range(20):
        n = int(rng.integers(1, 7))
        privacy = ("dataset", "distributional")[i % 2]
        a, b = rng.choice(n + 1, size=2, replace=False) / n
        # Small probabilities too, where tails fall below 1e-12.
        p = tuple(rng.uniform(0, 1, size=2) ** rng.choice([1, 8], size=2))
        exact = _exact_w_inf(_exact_pmf(a, n, p, privacy),
                             _exact_pmf(b, n, p, privacy))
        result = count_sensitivity_box([(a, b)], n, p, p, privacy=privacy)
        assert result.upper == result.lower == exact


def test_one_fixed_coordinate():
    pairs = [(0.3, 0.5), (0.4, 0.6), (0.1, 0.9)]
    result = count_sensitivity_box(pairs, 10, (0.2, 0.55), (0.7, 0.55))
    segment = [(p0, 0.55) for p0 in np.linspace(0.2, 0.7, 41)]
    assert result.exact
    assert result.upper == count_sensitivity(pairs, 10, segment) == 4


@pytest.mark.parametrize("max_cells", [1, 2, 3, 5, 9])
def test_small_budget_still_bounds(max_cells):
    # This box needs 17 cells to be exact at 5 (twenty records).
    pairs = [(0.3, 0.5), (0.4, 0.6), (0.1, 0.9)]
    low, high = (0.3, 0.35), (0.5, 0.6)
    full = count_sensitivity_box(pairs, 20, low, high)
    assert full.exact and full.upper == 5 and full.n_cells > 9
    result = count_sensitivity_box(pairs, 20, low, high, max_cells=max_cells)
    assert result.n_cells <= max_cells
    assert result.upper >= full.upper >= result.lower
    assert not result.exact


def test_trivial_cases():
    assert count_sensitivity_box([(0.5, 0.5)], N, (0.2, 0.2), (0.8, 0.8)).upper == 0
    assert count_sensitivity_box([(0.0, 1.0)], 0, (0.2, 0.2), (0.8, 0.8)).upper == 0


def test_result_is_a_frozen_record():
    result = count_sensitivity_box([(0.0, 1.0)], N, (0.4, 0.4), (0.6, 0.6))
    assert isinstance(result, BoxSensitivity)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.upper = 0.0
    assert dataclasses.replace(result, upper=result.upper + 1).exact is False


@pytest.mark.parametrize("kwargs, message", [
    ({"low": (0.4,), "high": (0.6,)}, "one entry per category"),
    ({"low": (0.4, 0.4), "high": (0.6, 0.6, 0.6)}, "same length"),
    ({"low": (0.6, 0.4), "high": (0.4, 0.6)}, "low <= high"),
    ({"low": (-0.1, 0.4), "high": (0.6, 0.6)}, "probabilities in"),
    ({"high": (0.6, 1.5)}, "probabilities in"),
    ({"n": -1}, "'n' parameter of count_sensitivity_box"),
    ({"n": 4.0}, "'n' parameter"),
    ({"privacy": "individual"}, "'privacy' parameter of count_sensitivity_box"),
    ({"max_cells": 0}, "'max_cells' parameter"),
    ({"pairs": []}, "at least one pair"),
    ({"pairs": [(0.0, 0.5, 1.0)]}, "pairs \\(a, b\\) of secrets"),
    ({"pairs": [0.5]}, "pairs \\(a, b\\) of secrets"),
    ({"pairs": [(0.3, 0.5)]}, "whole number of records"),
    ({"pairs": [((0.5, 0.6), 0.5)]}, "summing to 1"),
])
def test_invalid_inputs(kwargs, message):
    arguments = {"pairs": [(0.0, 1.0)], "n": N, "low": (0.4, 0.4),
                 "high": (0.6, 0.6)} | kwargs
    with pytest.raises(InvalidParameterError, match=message):
        count_sensitivity_box(**arguments)
