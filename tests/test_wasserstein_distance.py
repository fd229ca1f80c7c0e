import itertools

import numpy as np
import pytest
from _couplings import coupled_mass_within
from scipy.spatial.distance import cdist
from scipy.stats import binom

from skattr.exceptions import DataValidationError, InvalidParameterError
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
    # 0.1 + 0.2 == 0.30000000000000004 != 0.3; both laws are 0.3 at 0, 0.7 at 100.
    assert w_infinity([0, 0, 100], [0, 100], [0.1, 0.2, 0.7], [0.3, 0.7]) == 0.0


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
    x = [1, 2, 3, 100]
    mu, nu = [0.6, 0.2, 0.0, 0.2], [0.4, 0.3, 0.2, 0.1]
    assert w_infinity(x, x, mu, nu) == 97.0
    assert wd_closeness(x, x, 0.1, mu, nu) == 1.0
    assert wd_closeness(x, x, 0.09, mu, nu) == 97.0
    xk = np.asarray(x, dtype=float)[:, None]
    assert wd_closeness(xk, xk, 0.1, mu, nu) == 1.0


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
    # Within the tolerance, weights are accepted as they are.
    assert w_infinity([0, 1], [0, 1], [0.5, 0.5 + 1e-12], [0.5, 0.5]) == 0.0


@pytest.mark.parametrize("bad", [-0.01, 1.5, np.nan, "0.1", None])
def test_closeness_rejects_bad_delta(bad):
    with pytest.raises(InvalidParameterError, match="'delta' parameter"):
        wd_closeness([0.0], [1.0], bad)
