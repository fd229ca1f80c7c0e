import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from _couplings import (
    coupled_mass_within,
    exact_closeness,
    exact_law,
    exact_quantile_distance,
)
from scipy.spatial.distance import cdist
from scipy.stats import binom

from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.theta import count_pmf
from skattr.wasserstein import approximate_wasserstein_bound, w_infinity, wd_closeness

# ----------------------------------------------------------- independent answers


def _points(x):
    x = np.asarray(x, dtype=float)
    return x[:, None] if x.ndim == 1 else x


def _brute_permutations(a, b):
    """min over perfect matchings of the largest L1 distance (m <= 6)."""
    d = cdist(_points(a), _points(b), "cityblock")
    m = d.shape[0]
    return min(d[np.arange(m), list(p)].max() for p in itertools.permutations(range(m)))


def _brute_closeness(a, b, wa, wb, delta):
    """Least pairwise distance t whose full-coupling mass within t >= 1 - delta."""
    d = cdist(_points(a), _points(b), "cityblock")
    for t in np.unique(d):
        if coupled_mass_within(d, np.asarray(wa), np.asarray(wb), t) >= (
                1 - delta - 1e-9):
            return float(t)
    raise AssertionError("the largest distance is always feasible")


def _random_weights(rng, m):
    w = rng.random(m)
    return w / w.sum()


# ----------------------------------------------------------------- w_infinity


@pytest.mark.parametrize("k", [None, 1, 3])
@pytest.mark.parametrize("m", [1, 2, 4, 6])
def test_equal_samples_match_permutation_brute_force(k, m):
    rng = np.random.default_rng(100 * m + (k or 0))
    for _ in range(5):
        shape = (m,) if k is None else (m, k)
        a = rng.integers(-3, 4, size=shape).astype(float)  # ties on purpose
        b = rng.normal(size=shape)
        assert w_infinity(a, b) == pytest.approx(_brute_permutations(a, b), abs=1e-12)


@pytest.mark.parametrize("k", [None, 2])
def test_tiny_weighted_supports_match_lp_threshold_search(k):
    rng = np.random.default_rng(7 + (k or 0))
    for _ in range(20):
        m, n = rng.integers(1, 4, size=2)
        a = rng.normal(size=(m,) if k is None else (m, k))
        b = rng.normal(size=(n,) if k is None else (n, k))
        wa, wb = _random_weights(rng, m), _random_weights(rng, n)
        expected = _brute_closeness(a, b, wa, wb, 0.0)
        assert w_infinity(a, b, wa, wb) == pytest.approx(expected, abs=1e-12)


def test_unequal_samples_in_plane_match_lp():
    rng = np.random.default_rng(3)
    for m, n in [(2, 3), (3, 5), (4, 6), (5, 2)]:
        a, b = rng.normal(size=(m, 2)), rng.normal(size=(n, 2))
        expected = _brute_closeness(a, b, np.full(m, 1 / m), np.full(n, 1 / n), 0.0)
        assert w_infinity(a, b) == pytest.approx(expected, abs=1e-12)


def test_point_masses_are_at_their_l1_distance():
    assert w_infinity([2.5], [-1.0]) == 3.5
    assert w_infinity([[0.0, 1.0, 2.0]], [[1.0, -1.0, 2.5]]) == 3.5


def test_shifted_samples_are_at_the_shift():
    rng = np.random.default_rng(11)
    a = rng.normal(size=500)
    assert w_infinity(a, a + 0.75) == pytest.approx(0.75, abs=1e-12)
    assert w_infinity(a, rng.permutation(a) - 2.0) == pytest.approx(2.0, abs=1e-12)
    cloud = rng.normal(size=(60, 3))
    shift = np.array([0.2, -0.1, 0.05])
    # Any coupling moves mass by E(y - x) = shift on average, so >= ||shift||_1.
    assert w_infinity(cloud, cloud + shift) == pytest.approx(0.35, abs=1e-12)


def test_binomial_pmfs_against_hand_computation():
    # CDFs: Bin(3, 1/2) .125 .5 .875 1; Bin(3, 0.1) .729 .972 .999 1. On
    # (.5, .729] the quantiles are 2 and 0, on (.875, .972] 3 and 1: W = 2.
    support = np.arange(4)
    assert w_infinity(support, support, binom.pmf(support, 3, 0.5),
                      binom.pmf(support, 3, 0.1)) == 2.0
    # Same law: zero, even through floating-point pmfs.
    pmf = binom.pmf(np.arange(31), 30, 0.3)
    assert w_infinity(np.arange(31), np.arange(31), pmf, pmf) == 0.0


def test_rounding_in_cumulative_weights_does_not_create_a_quantile_interval():
    # The same law twice: 1/4 + 2^-54 at 0, 3/4 - 2^-54 at 100. Summed in
    # floats, 1/4 + 2^-55 + 2^-55 rounds to 1/4 (ties to even) while b's first
    # mass is 1/4 + 2^-54 exactly: the exact tie must stay a tie.
    a = [0.25, 2.0**-55, 2.0**-55, 0.5, 0.25 - 2.0**-54]
    b = [0.25 + 2.0**-54, 0.5, 0.25 - 2.0**-54]
    assert w_infinity([0, 0, 0, 100, 100], [0, 100, 100], a, b) == 0.0
    assert wd_closeness([0, 0, 0, 100, 100], [0, 100, 100], 0.0, a, b) == 0.0


def test_decimal_weights_are_not_exact_ties():
    # In binary, 0.1 + 0.2 exceeds 0.3 and the sums differ, so the first law's
    # CDF passes 0 about 2e-17 later than the second's: that mass goes 0 -> 100.
    a, b = [0.1, 0.2, 0.7], [0.3, 0.7]
    ca = (Fraction(0.1) + Fraction(0.2)) / sum(map(Fraction, a))
    assert ca > Fraction(0.3) / sum(map(Fraction, b))
    assert w_infinity([0, 0, 100], [0, 100], a, b) == 100.0


def test_zero_weights_are_outside_the_support():
    assert w_infinity([0, 50, 1], [1], [0.5, 0.0, 0.5], None) == 1.0
    assert w_infinity([[0, 0], [50, 0]], [[1, 0]], [1.0, 0.0], None) == 1.0


def test_line_quantiles_agree_with_matching_and_flows_for_k_equal_1():
    rng = np.random.default_rng(5)
    for m, n in [(7, 7), (5, 8), (9, 6), (12, 4)]:
        a = rng.integers(0, 6, size=m).astype(float)
        b = rng.normal(size=n) * 3
        assert w_infinity(a, b) == w_infinity(a[:, None], b[:, None])
        wa, wb = _random_weights(rng, m), _random_weights(rng, n)
        assert w_infinity(a, b, wa, wb) == w_infinity(a[:, None], b[:, None], wa, wb)


def test_unequal_sample_sizes_on_the_line_use_exact_masses():
    # a = {0, 1, 2}, b = {0, 2}: quantiles (0,1/3] 0-0, (1/3,1/2] 1-0,
    # (1/2,2/3] 1-2, (2/3,1] 2-2.
    assert w_infinity([2, 0, 1], [0, 2]) == 1.0
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=4), rng.normal(size=6)
    expected = _brute_closeness(a, b, np.full(4, 0.25), np.full(6, 1 / 6), 0.0)
    assert w_infinity(a, b) == pytest.approx(expected, abs=1e-12)


def test_symmetric():
    rng = np.random.default_rng(9)
    a, b = rng.normal(size=(6, 2)), rng.normal(size=(4, 2))
    assert w_infinity(a, b) == w_infinity(b, a)
    wa, wb = _random_weights(rng, 6), _random_weights(rng, 4)
    assert w_infinity(a[:, 0], b[:, 0], wa, wb) == w_infinity(b[:, 0], a[:, 0], wb, wa)


# --------------------------------------------------------------- wd_closeness


def test_closeness_at_delta_zero_is_w_infinity():
    rng = np.random.default_rng(21)
    for shape_a, shape_b in [((6,), (6,)), ((5,), (8,)), ((6, 2), (6, 2)),
                             ((4, 3), (7, 3))]:
        a, b = rng.normal(size=shape_a), rng.normal(size=shape_b)
        assert wd_closeness(a, b, 0.0) == w_infinity(a, b)
        wa, wb = _random_weights(rng, shape_a[0]), _random_weights(rng, shape_b[0])
        assert wd_closeness(a, b, 0.0, wa, wb) == pytest.approx(
            w_infinity(a, b, wa, wb), abs=1e-12)


def test_chen_ohrimenko_figure_1():
    # Mass 0.9 moves by at most 1 and 0.1 (at 100) by 97. In binary floats,
    # though, the weights move 0.9 - 8.3e-18 within 1, which falls short of
    # 1 - float(0.1) = 0.9 - 5.6e-18: delta = 0.1 needs W = 97 for these laws.
    x = [1, 2, 3, 100]
    mu, nu = [0.6, 0.2, 0.0, 0.2], [0.4, 0.3, 0.2, 0.1]
    xk = np.asarray(x, dtype=float)[:, None]
    within_one = (Fraction(0.6) + Fraction(0.2)) / sum(map(Fraction, mu)) + (
        Fraction(0.1) / sum(map(Fraction, nu)))
    assert within_one < 1 - Fraction(0.1) < within_one + Fraction(1, 10**16)
    for pa, pb in ((x, x), (xk, xk)):
        assert w_infinity(pa, pb, mu, nu) == 97.0
        assert wd_closeness(pa, pb, 0.1, mu, nu) == 97.0
        assert wd_closeness(pa, pb, 0.1 + 1e-16, mu, nu) == 1.0
        assert wd_closeness(pa, pb, 0.09, mu, nu) == 97.0


def test_figure_1_with_dyadic_weights_ties_exactly():
    # Same shape with binary-exact masses: 0.75 within 1 plus 0.125 at 100 is
    # exactly 1 - 0.125; and the CDFs tie exactly at 0.625.
    x = [1, 2, 3, 100]
    mu, nu = [0.625, 0.125, 0.0, 0.25], [0.375, 0.25, 0.25, 0.125]
    xk = np.asarray(x, dtype=float)[:, None]
    for pa, pb in ((x, x), (xk, xk)):
        assert w_infinity(pa, pb, mu, nu) == 97.0
        assert wd_closeness(pa, pb, 0.125, mu, nu) == 1.0
        assert wd_closeness(pa, pb, 0.125 - 2.0**-50, mu, nu) == 97.0


def test_dropping_one_outlier_of_mass_delta():
    a = [0, 1, 2, 3, 100]
    b = [0, 1, 2, 3, 4]
    assert w_infinity(a, b) == 96.0
    assert wd_closeness(a, b, 0.2) == 0.0
    assert wd_closeness(a, b, 0.19) == 96.0  # 4.05 points must move: all five
    a2 = np.c_[a, np.zeros(5)]
    b2 = np.c_[b, np.ones(5)]
    assert wd_closeness(a2, b2, 0.2) == 1.0
    assert wd_closeness(a2, b2, 0.0) == 97.0


def test_closeness_is_not_the_quantile_coupling():
    # The quantile coupling moves every unit by 10; dropping half the mass lets
    # the 10s stay put.
    assert wd_closeness([0, 10], [10, 20], 0.5) == 0.0
    assert wd_closeness([0, 10], [10, 20], 0.49) == 10.0


@pytest.mark.parametrize("k", [None, 2])
def test_closeness_matches_lp_brute_force(k):
    rng = np.random.default_rng(31 + (k or 0))
    for _ in range(10):
        m, n = rng.integers(1, 5, size=2)
        a = rng.integers(0, 5, size=(m,) if k is None else (m, k)).astype(float)
        b = rng.integers(0, 5, size=(n,) if k is None else (n, k)).astype(float)
        wa, wb = _random_weights(rng, m), _random_weights(rng, n)
        for delta in (0.0, 0.1, 0.3, 0.6):
            expected = _brute_closeness(a, b, wa, wb, delta)
            assert wd_closeness(a, b, delta, wa, wb) == pytest.approx(
                expected, abs=1e-12)
        for delta in (0.0, 0.25, 0.5):
            expected = _brute_closeness(a, b, np.full(m, 1 / m), np.full(n, 1 / n),
                                        delta)
            assert wd_closeness(a, b, delta) == pytest.approx(expected, abs=1e-12)


def test_closeness_on_the_line_equals_flow_for_k_equal_1():
    rng = np.random.default_rng(41)
    for m, n in [(10, 10), (8, 13)]:
        a, b = rng.normal(size=m), rng.normal(size=n) + 0.5
        for delta in (0.05, 0.2, 0.5):
            assert wd_closeness(a, b, delta) == wd_closeness(a[:, None], b[:, None],
                                                             delta)


def test_closeness_is_non_increasing_in_delta():
    rng = np.random.default_rng(51)
    a, b = rng.standard_t(2, size=40), rng.standard_t(2, size=30) + 1
    values = [wd_closeness(a, b, d) for d in np.linspace(0, 1, 21)]
    assert all(x >= y for x, y in zip(values[:-1], values[1:], strict=True))
    assert values[0] == w_infinity(a, b)
    assert values[-1] == 0.0


# ------------------------------------------------- exactness: never below


def _round_up(q):
    f = float(q)
    return math.nextafter(f, math.inf) if Fraction(f) < q else f


def _binomial_pmf(n, p):
    return [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def test_count_laws_with_rare_counts_keep_their_tails():
    # Bin(8, 1e-9) vs Bin(8, 1e-3): at the top, P(F_b = 8) = 1e-24 must be
    # matched from the first law's quantile at level 1 - 1e-24, which is 2
    # (P(F_a >= 3) ~ 5.6e-26): W = 8 - 2 = 6. An absolute resolution of 1e-12
    # on the CDFs drops both tails and gave 3.
    p = (1e-9, 1e-3)
    x, u = count_pmf(0.0, 8, p)
    y, v = count_pmf(1.0, 8, p)
    expected = exact_quantile_distance(
        x, _binomial_pmf(8, Fraction(p[0])), y, _binomial_pmf(8, Fraction(p[1])))
    assert expected == 6
    assert exact_quantile_distance(x, u, y, v) == expected  # the float pmfs too
    assert w_infinity(x, y, u, v) == 6.0
    assert wd_closeness(x, y, 0.0, u, v) == 6.0
    assert w_infinity(x[:, None], y[:, None], u, v) == 6.0  # LP + exact flow
    # Disregarding the b-tail beyond 4 (mass ~7e-11) brings W down to 3.
    assert wd_closeness(x, y, 1e-10, u, v) == 3.0


@pytest.mark.parametrize("where", ["top", "bottom"])
def test_a_mass_of_1e_30_at_either_end_must_travel(where):
    # 1e-30 next to 1 is lost in a forward cumulative sum (1 - 1e-30 == 1.0).
    a, wa = [0.0, 1.0, 10.0], [0.5, 0.5, 1e-30]
    if where == "bottom":
        a, wa = [-9.0, 0.0, 1.0], [1e-30, 0.5, 0.5]
    b, wb = [0.0, 1.0], [0.5, 0.5]
    ak, bk = np.c_[a, np.zeros(3)], np.c_[b, np.zeros(2)]
    for pa, pb in ((a, b), (ak, bk)):
        assert w_infinity(pa, pb, wa, wb) == 9.0
        assert wd_closeness(pa, pb, 0.0, wa, wb) == 9.0
        # The exact tail is 1e-30 / (1 + 1e-30) < 1e-30.
        assert wd_closeness(pa, pb, 1e-30, wa, wb) == 0.0
        assert wd_closeness(pa, pb, 1e-31, wa, wb) == 9.0


def test_distances_are_rounded_up_not_to_nearest():
    # 1e16 + 1 is not a float; rounded to nearest it would be 1e16.
    assert w_infinity([1e16], [-1.0]) == 1e16 + 2
    assert w_infinity([0.0, 1e16], [-1.0, -1.0], [0.5, 0.5], [0.5, 0.5]) == 1e16 + 2
    assert wd_closeness([1e16], [-1.0], 0.0) == 1e16 + 2
    assert w_infinity([[1e16, 0.0]], [[-1.0, 0.0]]) == 1e16 + 2
    assert w_infinity([[1e16, 1.0]], [[0.0, 0.0]], [1.0], [1.0]) == 1e16 + 2


def _extreme_weights(rng, m):
    """Random weights, some of them 1e-300..1e-15, or dyadic (exact ties)."""
    if rng.random() < 0.3:
        w = rng.integers(1, 8, size=m) / 8.0
    else:
        w = rng.random(m)
        tiny = rng.random(m) < 0.4
        w[tiny] = 10.0 ** -rng.uniform(15, 300, size=tiny.sum())
    return w / w.sum()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_tiny_masses_anywhere_match_exact_arithmetic(seed):
    rng = np.random.default_rng(1000 + seed)
    for _ in range(25):
        m, n = rng.integers(1, 5, size=2)
        if rng.random() < 0.5:  # integer points: ties of points and distances
            a = rng.integers(0, 6, size=m).astype(float)
            b = rng.integers(0, 6, size=n).astype(float)
        else:
            a, b = rng.normal(size=m), rng.normal(size=n)
        wa, wb = _extreme_weights(rng, m), _extreme_weights(rng, n)
        expected = _round_up(exact_quantile_distance(a, wa, b, wb))
        assert w_infinity(a, b, wa, wb) == expected
        assert w_infinity(a[:, None], b[:, None], wa, wb) == expected
        for delta in (0.0, 1e-200, 0.1, 0.3, 0.5):
            expected = _round_up(exact_closeness(a, b, wa, wb, delta))
            assert wd_closeness(a, b, delta, wa, wb) == expected
            assert wd_closeness(a[:, None], b[:, None], delta, wa, wb) == expected


def test_tiny_masses_in_the_plane_match_exact_arithmetic():
    rng = np.random.default_rng(77)
    for _ in range(30):
        m, n = rng.integers(1, 4, size=2)
        a = rng.integers(0, 4, size=(m, 2)).astype(float)
        b = rng.integers(0, 4, size=(n, 2)).astype(float)
        wa, wb = _extreme_weights(rng, m), _extreme_weights(rng, n)
        for delta in (0.0, 0.2):
            expected = _round_up(exact_closeness(a, b, wa, wb, delta))
            assert wd_closeness(a, b, delta, wa, wb) == expected


def test_exact_law_helper_normalises_exactly():
    assert sum(exact_law([0.1, 0.2, 0.7])) == 1


# ------------------------------------------------------------------- Thm 3.3


def test_approximate_bound_is_delta_e_plus_two_c():
    assert approximate_wasserstein_bound(0.5, 0.25) == 1.0
    assert approximate_wasserstein_bound(0, 0) == 0.0


def test_approximate_bound_covers_the_exact_closeness():
    # f_i = U{0..9}/10, f_j = f_i + 0.3; all mass within c = 0.45 of its mean,
    # so Thm 3.3 holds for every delta and the exact closeness is below it.
    x = np.arange(10) / 10
    bound = approximate_wasserstein_bound(0.3, 0.45)
    assert wd_closeness(x, x + 0.3, 0.0) == pytest.approx(0.3)
    assert wd_closeness(x, x + 0.3, 0.0) <= bound


@pytest.mark.parametrize("bad", [-0.1, np.inf, np.nan, "1", True])
def test_approximate_bound_rejects_bad_values(bad):
    with pytest.raises(InvalidParameterError, match="'c' parameter"):
        approximate_wasserstein_bound(0.1, bad)
    with pytest.raises(InvalidParameterError, match="'delta_e' parameter"):
        approximate_wasserstein_bound(bad, 0.1)


# ---------------------------------------------------------------- validation


def test_rejects_non_finite_and_empty_points():
    with pytest.raises(DataValidationError, match="NaN or infinite"):
        w_infinity([0.0, np.nan], [1.0])
    with pytest.raises(DataValidationError, match="NaN or infinite"):
        w_infinity([[0.0, 1.0]], [[np.inf, 1.0]])
    with pytest.raises(DataValidationError, match="a is empty"):
        w_infinity([], [1.0])
    with pytest.raises(DataValidationError, match="b is empty"):
        w_infinity(np.zeros((2, 3)), np.zeros((0, 3)))
    with pytest.raises(DataValidationError, match="3 dimensions"):
        w_infinity(np.zeros((2, 2, 2)), np.zeros((2, 2, 2)))


def test_rejects_points_in_different_spaces():
    with pytest.raises(DataValidationError, match="must both be 1-d"):
        w_infinity([0.0, 1.0], [[0.0], [1.0]])
    with pytest.raises(DataValidationError, match=r"R\^2 but b has points in R\^3"):
        w_infinity(np.zeros((2, 2)), np.zeros((2, 3)))


def test_rejects_bad_weights():
    with pytest.raises(InvalidParameterError, match="non-negative"):
        w_infinity([0, 1], [0], [1.5, -0.5])
    with pytest.raises(InvalidParameterError, match="must sum to 1"):
        w_infinity([0, 1], [0], [0.5, 0.4])
    with pytest.raises(InvalidParameterError, match="one weight per point"):
        w_infinity([0, 1], [0], None, [0.5, 0.5])
    with pytest.raises(InvalidParameterError, match="NaN or infinite"):
        w_infinity([0, 1], [0], [np.nan, 1.0])
    # Within the tolerance, weights are accepted and normalised exactly: equal
    # halves stay equal, unequal ones move 5e-13 of mass from 1 to 0.
    assert w_infinity([0, 1], [0, 1], [0.5 + 1e-12] * 2, [0.5, 0.5]) == 0.0
    assert w_infinity([0, 1], [0, 1], [0.5, 0.5 + 1e-12], [0.5, 0.5]) == 1.0


@pytest.mark.parametrize("bad", [-0.01, 1.5, np.nan, "0.1", None])
def test_closeness_rejects_bad_delta(bad):
    with pytest.raises(InvalidParameterError, match="'delta' parameter"):
        wd_closeness([0.0], [1.0], bad)


def test_whole_number_weights_are_exact_counts():
    # Counts give the exact rational law: the same as repeating the points.
    rng = np.random.default_rng(12)
    for _ in range(5):
        x = np.sort(rng.integers(0, 20, 6)).astype(float)
        y = np.sort(rng.integers(0, 20, 5)).astype(float)
        ca, cb = rng.integers(1, 7, 6), rng.integers(1, 9, 5)
        xs, ys = np.repeat(x, ca), np.repeat(y, cb)
        assert w_infinity(x, y, ca, cb) == w_infinity(xs, ys)
        assert wd_closeness(x, y, 0.2, ca, cb) == wd_closeness(xs, ys, 0.2)
        assert w_infinity(x[:, None], y[:, None], ca, cb) == w_infinity(
            xs[:, None], ys[:, None])
    with pytest.raises(InvalidParameterError, match="whole-number counts"):
        w_infinity([0, 1], [0, 1], [0.5, 1.5], [0.5, 0.5])
