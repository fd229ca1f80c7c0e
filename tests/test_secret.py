"""Secret: the protected property, its discriminative pairs, and bad input."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from skattr import Secret
from skattr._secret import as_secrets
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
)


def _ks(values, n):
    """Grid values k/n back to their integer k (exactly, or the test fails)."""
    k = np.rint(np.asarray(values) * n).astype(int)
    np.testing.assert_allclose(k / n, values, rtol=0, atol=1e-15)
    return k


def _brute_grid(lo, hi, n):
    """Every k with lo <= k/n <= hi, in exact rational arithmetic."""
    lo, hi = Fraction(str(lo)), Fraction(str(hi))
    return [k for k in range(n + 1) if lo <= Fraction(k, n) <= hi]


# ----------------------------------------------------------------- pair_values


def test_explicit_pairs_are_taken_as_stated():
    s = Secret.proportion("sex", "Female", pairs=[(0.45, 0.55), (0.7, 0.2)])
    assert s.pairs == ((0.45, 0.55), (0.7, 0.2))
    for n in (7, 100):
        a, b = s.pair_values(n)
        np.testing.assert_array_equal(a, [0.45, 0.7])
        np.testing.assert_array_equal(b, [0.55, 0.2])
    m = Secret.mean("income", pairs=[(40_000, 60_000)])
    a, b = m.pair_values(10)
    assert (a.tolist(), b.tolist()) == ([40_000.0], [60_000.0])


@pytest.mark.parametrize("n", [10, 20, 37, 100, 101])
@pytest.mark.parametrize("window, support", [(0.05, (0.3, 0.7)), (0.1, (0.0, 1.0)),
                                             (0.13, (0.25, 0.75)),
                                             (0.02, (0.3, 0.33))])
def test_window_pairs_match_a_brute_force_double_loop(n, window, support):
    grid = _brute_grid(*support, n)
    w = Fraction(str(window))
    expected = {(i, j) for i in grid for j in grid if 0 < Fraction(j - i, n) <= w}
    s = Secret.proportion("sex", "Female", window=window, support=support)
    if not expected:
        with pytest.raises(InvalidParameterError, match="No two proportions"):
            s.pair_values(n)
        return
    a, b = s.pair_values(n)
    got = list(zip(_ks(a, n).tolist(), _ks(b, n).tolist(), strict=True))
    assert len(got) == len(set(got))
    assert set(got) == expected


def test_window_default_support_is_the_unit_interval():
    s = Secret.proportion("sex", "Female", window=0.1)
    assert s.support == (0.0, 1.0)
    a, b = s.pair_values(10)
    # k/10 and (k + 1)/10 for k = 0..9.
    assert list(zip(_ks(a, 10), _ks(b, 10), strict=True)) == [
        (k, k + 1) for k in range(10)]


def test_window_accepts_numpy_numbers():
    s = Secret.proportion("sex", "Female", window=np.float32(0.5),
                          support=(0.0, 1.0))
    assert s.pair_values(2)[0].size == 2        # (0, 0.5) and (0.5, 1)
    s = Secret.proportion("sex", "Female", window=np.int64(1))
    assert s.pair_values(4)[0].size == 10


@pytest.mark.parametrize("n", [4, 12, 40, 42, 101])
def test_set_pairs_pointwise_are_the_product_of_the_grids(n):
    sets = [(0.25, 0.5), (0.5, 0.75), (0.8, 1.0)]
    s = Secret.proportion("sex", "Female", sets=sets)
    a, b = s.pair_values(n)
    got = list(zip(_ks(a, n).tolist(), _ks(b, n).tolist(), strict=True))
    expected = [(i, j) for u, v in [(0, 1), (0, 2), (1, 2)]
                for i in _brute_grid(*sets[u], n)
                for j in _brute_grid(*sets[v], n) if i != j]
    assert sorted(got) == sorted(expected)
    assert s.set_pairs() == [(sets[0], sets[1]), (sets[0], sets[2]),
                             (sets[1], sets[2])]


def test_hospital_sets_extreme_pair():
    s = Secret.proportion("sex", "Female", sets=[(0.25, 0.5), (0.5, 0.75)])
    a, b = s.pair_values(40)
    assert np.abs(a - b).max() == pytest.approx(0.5)
    assert np.abs(a - b).min() == pytest.approx(1 / 40)
    assert a.size == 11 * 11 - 1          # 10..20 vs 20..30, less (20, 20)
    a, b = s.pair_values(42)              # 11..21 vs 21..31
    assert np.abs(a - b).max() == pytest.approx(20 / 42)


def test_mean_secret_window_and_sets():
    s = Secret.mean("income", window=5_000.0, support=(20_000.0, 80_000.0))
    a, b = s.pair_values(100)
    gap = b - a
    assert np.all(gap > 0) and np.all(gap <= 5_000.0 + 1e-6)
    assert np.all((a >= 20_000.0) & (b <= 80_000.0))
    # The widest pairs sit exactly at the window, including at both ends.
    assert gap.max() == pytest.approx(5_000.0)
    assert np.any(np.isclose(a, 20_000.0) & np.isclose(b, 25_000.0))
    assert np.any(np.isclose(a, 75_000.0) & np.isclose(b, 80_000.0))
    # A window wider than the support is the support.
    a, b = Secret.mean("x", window=10.0, support=(0.0, 1.0)).pair_values(5)
    assert (b - a).max() == pytest.approx(1.0)

    s = Secret.mean("income", sets=[(0.0, 10.0), (10.0, 30.0)])
    a, b = s.pair_values(50)
    assert a.min() == 0.0 and a.max() == 10.0 and b.min() == 10.0 and b.max() == 30.0
    assert not np.any(a == b)
    assert a.size == 101 * 101 - 1


def test_sets_without_distinct_values_refuse():
    """On 2 records both sets only hold 0.5: no pair, so no noise; refuse."""
    s = Secret.proportion("sex", "Female", sets=[(0.25, 0.5), (0.5, 0.75)])
    with pytest.raises(InvalidParameterError, match="no pair of distinct values"):
        s.pair_values(2)


def test_sets_with_an_empty_grid_refuse():
    s = Secret.proportion("sex", "Female", sets=[(0.31, 0.39), (0.5, 0.75)])
    with pytest.raises(InvalidParameterError,
                       match=r"No dataset of 10 records has a proportion in "
                             r"\(0\.31, 0\.39\)"):
        s.pair_values(10)
    assert s.pair_values(100)[0].size == 9 * 26


def test_window_without_pairs_for_small_n():
    s = Secret.proportion("sex", "Female", window=0.05, support=(0.4, 0.6))
    with pytest.raises(InvalidParameterError, match="No two proportions of 10"):
        s.pair_values(10)


# ------------------------------------------------------------------- errors


@pytest.mark.parametrize("kwargs, match", [
    ({}, "exactly one way"),
    ({"pairs": [(0.4, 0.6)], "window": 0.1}, "exactly one way"),
    ({"pairs": [(0.4, 0.6)], "sets": [(0, 0.5), (0.5, 1)]}, "exactly one way"),
    ({"pairs": [(0.5, 0.5)]}, "compares a value with itself"),
    ({"pairs": [(0.4, 1.2)]}, r"outside the support \(0\.0, 1\.0\)"),
    ({"pairs": [(-0.1, 0.5)]}, "lie outside the support"),
    ({"pairs": [(0.4, 0.6)], "support": (0.45, 0.7)}, "outside the support"),
    ({"pairs": []}, "'pairs' is empty"),
    ({"pairs": (0.45, 0.55)}, r"two numbers \(a, b\); got 0.45.*pairs=\[\(0.45"),
    ({"pairs": 0.5}, r"must be a list of pairs"),
    ({"pairs": [(0.1, 0.2, 0.3)]}, "two numbers"),
    ({"pairs": [(0.1, np.nan)]}, "non-finite"),
    ({"window": 0.0}, "positive finite number"),
    ({"window": -0.1}, "positive finite number"),
    ({"window": np.inf}, "positive finite number"),
    ({"window": True}, "positive finite number"),
    ({"window": "0.1"}, "positive finite number"),
    ({"window": 0.1, "support": (0.5, 1.5)}, r"must lie inside \[0, 1\]"),
    ({"window": 0.1, "support": (0.6, 0.4)}, "finite low < high"),
    ({"window": 0.1, "support": 0.5}, r"support must be an interval"),
    ({"sets": [(0.25, 0.5)]}, "at least two intervals"),
    ({"sets": [(0.25, 0.5), (0.5, 1.25)]}, r"outside the support"),
    ({"sets": [(0.5, 0.25), (0.5, 0.75)]}, "each set must be an interval"),
    ({"sets": [(0.25, 0.5), 0.7]}, r"each set must be an interval \(low, high\)"),
    ({"pairs": [(0.4, 0.6)], "set_reading": "paper"}, "applies to secrets stated"),
    ({"window": 0.1, "set_reading": "conditional-mean"},
     "applies to secrets stated"),
    ({"sets": [(0, 0.5), (0.5, 1)], "set_reading": "midpoint"},
     "set_reading must be one of"),
])
def test_proportion_secret_errors(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        Secret.proportion("sex", "Female", **kwargs)


def test_mean_secret_errors():
    with pytest.raises(InvalidParameterError, match="needs support=.*for a mean"):
        Secret.mean("income", window=1_000.0)
    with pytest.raises(InvalidParameterError, match="outside the support"):
        Secret.mean("income", pairs=[(0, 10)], support=(1, 20))
    with pytest.raises(InvalidParameterError, match="exactly one way"):
        Secret.mean("income")
    with pytest.raises(InvalidParameterError, match="'proportion' or 'mean'"):
        Secret("income", "median", pairs=[(1, 2)])
    # Pairs of a mean are not confined to [0, 1].
    assert Secret.mean("income", pairs=[(-5, 5)]).support is None


def test_errors_are_value_errors():
    with pytest.raises(ValueError, match="exactly one way"):
        Secret.proportion("sex", "Female")


def test_set_pairs_needs_sets():
    s = Secret.proportion("sex", "Female", pairs=[(0.4, 0.6)])
    with pytest.raises(InvalidParameterError, match="not stated with sets="):
        s.set_pairs()


def test_as_secrets():
    s = Secret.proportion("sex", "Female", pairs=[(0.4, 0.6)])
    t = Secret.mean("age", pairs=[(30, 40)])
    assert as_secrets(s) == (s,)
    assert as_secrets([s, t]) == (s, t)
    with pytest.raises(InvalidParameterError, match="No secret given"):
        as_secrets(None)
    with pytest.raises(InvalidParameterError, match="got str"):
        as_secrets("sex")
    with pytest.raises(InvalidParameterError, match="got list"):
        as_secrets([])
    with pytest.raises(InvalidParameterError, match="got list"):
        as_secrets([s, "age"])


# -------------------------------------------------------- indicator and label


@pytest.fixture()
def frame():
    return pd.DataFrame({
        "sex": ["Female", "Male", "Female", "Female", "Male"],
        "income": [30_000, 60_000, 55_000, 80_000, 20_000],
        "smoker": [1, 0, 0, 1, 1],
        "flag": [True, False, True, True, True],
    })


def test_indicator_and_value_of(frame):
    before = frame.copy()
    s = Secret.proportion("sex", "Female", pairs=[(0.4, 0.6)])
    np.testing.assert_array_equal(s.indicator(frame), [1, 0, 1, 1, 0])
    assert s.value_of(frame) == pytest.approx((frame.sex == "Female").mean())
    rich = Secret.proportion("income", lambda v: v > 50_000, pairs=[(0.4, 0.6)])
    assert rich.value_of(frame) == pytest.approx((frame.income > 50_000).mean())
    assert Secret.proportion("smoker", pairs=[(0.4, 0.6)]).value_of(frame) == 0.6
    assert Secret.proportion("flag", pairs=[(0.4, 0.6)]).value_of(frame) == 0.8
    m = Secret.mean("income", pairs=[(40_000, 60_000)])
    assert m.value_of(frame) == pytest.approx(frame.income.mean())
    pd.testing.assert_frame_equal(frame, before)


def test_indicator_errors(frame):
    with pytest.raises(DataValidationError, match=r"\['age'\] not found"):
        Secret.mean("age", pairs=[(1, 2)]).indicator(frame)
    with pytest.raises(DataValidationError, match="not numeric"):
        Secret.mean("sex", pairs=[(1, 2)]).indicator(frame)
    with pytest.raises(InvalidParameterError, match="not boolean or 0/1"):
        Secret.proportion("income", pairs=[(0.4, 0.6)]).indicator(frame)


def test_labels():
    assert Secret.proportion("sex", "Female", pairs=[(0.45, 0.55)]).label == (
        "proportion(sex == 'Female'): pairs 0.45 vs 0.55")
    assert Secret.mean("income", window=1000.0, support=(0, 10_000)).label == (
        "mean(income): every pair within 1000 in (0.0, 10000.0)")

    def high(v):
        return v > 1

    assert Secret.proportion("income", high, sets=[(0, 0.5), (0.5, 1)],
                             set_reading="paper").label == (
        "proportion(income: high): [0, 0.5] vs [0.5, 1] (paper reading)")
    assert Secret.proportion("smoker", pairs=[(0.1, 0.2)]).label.startswith(
        "proportion(smoker): ")


def test_grid_tolerance_grows_with_n():
    # 0.55 * 5e7 is 27500000.000000004 in floating point: still on the grid.
    secret = Secret.proportion("g", 1, pairs=[(0.45, 0.55)])
    assert secret.grid_pairs(50_000_000, alternative="x") == [(0.45, 0.55)]
    assert secret.grid_reading(50_000_000) == ()
    # 27,500,000.5 records: off the grid, read as the two around it.
    off = Secret.proportion("g", 1, pairs=[(0.45, 0.55000001)])
    assert off.grid_pairs(50_000_000) == [(0.45, 27_500_000 / 50_000_000),
                                          (0.45, 27_500_001 / 50_000_000)]


@pytest.mark.parametrize("column, value", [
    (None, 1), (["a", "b"], 1), ({"a": 1}, 1), (True, 1),
    ("g", [1, 2]), ("g", {"a"}), ("g", (1, 2)), ("g", np.array([1])),
])
def test_a_column_or_value_no_frame_could_match_is_refused_when_built(
        column, value):
    # Issue 29: these were accepted and failed later with TypeError,
    # NotImplementedError or IndexError.
    with pytest.raises(InvalidParameterError, match="column label|one category"):
        Secret.proportion(column, value, pairs=[(0.4, 0.6)])
