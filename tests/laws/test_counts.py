"""Exact count laws and Wasserstein sensitivity: Zhang et al., long version, Sec. 6."""

from itertools import combinations, product

import numpy as np
import pytest

from skattr.exceptions import InvalidParameterError
from skattr.laws._count_sensitivity import count_sensitivity
from skattr.laws._counts import count_pmf
from skattr.wasserstein import w_infinity


def _w_inf_1d(u, v):
    """W_inf between pmfs on 0, 1, ... (skattr.wasserstein.w_infinity)."""
    return w_infinity(np.arange(len(u)), np.arange(len(v)), a_weights=u,
                      b_weights=v)

N = 4
# Paper's (12): P(X1 = 1 | X2 = 1) = p1, P(X1 = 1 | X2 = 0) = p2; our p is
# indexed by X2's value, so p = (p2, p1). Worst case of both examples: p1 = 0.4,
# p2 = 0.6.
P_WORST = (0.6, 0.4)
SHARES = [k / N for k in range(N + 1)]  # g(X2) = 0, ..., 4 as shares of n = 4

# Table 1 of the long version (papers/002, Example 2): "P(F(X)=j|g(X2)=0)
# 0.0256 0.1536 0.3456 0.3456 0.1296" and "P(F(X)=j|g(X2)=4) 0.1296 0.3456
# 0.3456 0.1536 0.0256", j = 0, ..., 4.
TABLE_1 = {
    0.0: [0.0256, 0.1536, 0.3456, 0.3456, 0.1296],
    1.0: [0.1296, 0.3456, 0.3456, 0.1536, 0.0256],
}
# Table 2 of the long version (papers/002, Example 3): "P(F(X)=j|phi2=0.8)
# 0.0983 0.3091 0.3643 0.1908 0.0375" and "P(F(X)=j|phi2=0.2) 0.0375 0.1908
# 0.3643 0.3091 0.0983".
TABLE_2 = {
    0.8: [0.0983, 0.3091, 0.3643, 0.1908, 0.0375],
    0.2: [0.0375, 0.1908, 0.3643, 0.3091, 0.0983],
}


def _box(lo, hi, num=21):
    """Theta = {lo <= p1, p2 <= hi} as a grid including its corners."""
    return list(product(np.linspace(lo, hi, num), repeat=2))


def _brute_force(a, n, p, privacy, prior=0.3):
    """Law of F by enumerating every dataset of (x2, counted) pairs.

    Dataset privacy conditions an i.i.d. prior on X2 (any prior with full
    support gives the same conditional law) on the realised shares.
    """
    p = np.asarray(p, dtype=float)
    k = p.size
    if privacy == "distributional":
        law = np.atleast_1d(np.asarray(a, dtype=float))
        law = np.array([1 - law[0], law[0]]) if law.size == 1 else law
        target = None
    else:
        law = np.full(k, 1 / k) if k > 2 else np.array([1 - prior, prior])
        shares = np.atleast_1d(np.asarray(a, dtype=float))
        shares = np.array([1 - shares[0], shares[0]]) if shares.size == 1 else shares
        target = np.rint(shares * n).astype(int)
    pmf = np.zeros(n + 1)
    for x2 in product(range(k), repeat=n):
        if target is not None and not np.array_equal(
            np.bincount(x2, minlength=k), target
        ):
            continue
        for x1 in product((0, 1), repeat=n):
            prob = np.prod(law[list(x2)])
            for c, counted in zip(x2, x1, strict=True):
                prob *= p[c] if counted else 1 - p[c]
            pmf[sum(x1)] += prob
    return pmf / pmf.sum()


@pytest.mark.parametrize("a", sorted(TABLE_1))
def test_table_1(a):
    support, pmf = count_pmf(a, N, P_WORST)
    np.testing.assert_array_equal(support, np.arange(N + 1))
    np.testing.assert_allclose(pmf, TABLE_1[a], atol=5e-5)


@pytest.mark.parametrize("phi", sorted(TABLE_2))
def test_table_2(phi):
    # Example 3: phi1 = 0.6 - 0.2 phi2, i.e. 0.44 for phi2 = 0.8.
    _, pmf = count_pmf(phi, N, P_WORST, privacy="distributional")
    np.testing.assert_allclose(pmf, TABLE_2[phi], atol=5e-5)


@pytest.mark.parametrize("privacy", ["dataset", "distributional"])
@pytest.mark.parametrize("p", [P_WORST, (0.3, 0.7), (0.0, 1.0), (0.25, 0.25)])
def test_binary_law_matches_enumeration(p, privacy):
    for a in SHARES:
        _, pmf = count_pmf(a, N, p, privacy=privacy)
        np.testing.assert_allclose(pmf.sum(), 1.0, rtol=1e-12)
        np.testing.assert_allclose(pmf, _brute_force(a, N, p, privacy), atol=1e-12)


@pytest.mark.parametrize("privacy", ["dataset", "distributional"])
def test_categorical_law_matches_enumeration(privacy):
    p = (0.1, 0.5, 0.8)
    for a in [(1 / 3, 1 / 3, 1 / 3), (0.0, 2 / 3, 1 / 3), (1.0, 0.0, 0.0)]:
        _, pmf = count_pmf(a, 3, p, privacy=privacy)
        np.testing.assert_allclose(pmf.sum(), 1.0, rtol=1e-12)
        np.testing.assert_allclose(pmf, _brute_force(a, 3, p, privacy), atol=1e-12)


@pytest.mark.slow
def test_example_2_sensitivity():
    # "the Wasserstein distance W_inf(P(F(X)|g(X2=0)), P(F(X)|g(X2=4)) = 1".
    u, v = (count_pmf(a, N, P_WORST)[1] for a in (0.0, 1.0))
    assert _w_inf_1d(u, v) == 1
    assert count_sensitivity(combinations(SHARES, 2), N, _box(0.4, 0.6)) == 1


@pytest.mark.slow
@pytest.mark.parametrize("lo, hi, expected", [(0.3, 0.7, 2), (0.0, 1.0, 4)])
def test_sensitivity_grows_with_theta(lo, hi, expected):
    # "when Theta = {0.3 <= p1, p2 <= 0.7}, the worst case Wasserstein distance
    # is 2"; "When Theta = {0 <= p1, p2 <= 1}, the worst case ... is 4".
    pairs = list(combinations(SHARES, 2))
    assert count_sensitivity(pairs, N, _box(lo, hi)) == expected
    # The grid's maximum is reached at the corners and a finer grid keeps it.
    assert count_sensitivity(pairs, N, [(hi, lo)]) == expected
    assert count_sensitivity(pairs, N, _box(lo, hi, num=31)) == expected


def test_example_3_sensitivity():
    # Phi^2 = [0.2, 0.8], p1 = 0.4 and p2 = 0.6 fixed: "W_inf(P(F(X)|phi2=0.8),
    # P(F(X)|phi2=0.2)) = 1", and no other pair does worse.
    phis = np.linspace(0.2, 0.8, 61)
    w = count_sensitivity(
        combinations(phis, 2), N, [P_WORST], privacy="distributional"
    )
    assert w == 1


def test_w_inf_1d_against_hand_values():
    assert _w_inf_1d([1.0, 0, 0], [0, 0, 1.0]) == 2
    assert _w_inf_1d([0.5, 0.5], [0.5, 0.5]) == 0
    # Half the mass moves by 2: W_inf sees the farthest move, not the average.
    assert _w_inf_1d([0.5, 0, 0, 0.5], [0.5, 0.5]) == 2
    assert _w_inf_1d([0.5, 0.5, 0, 0], [0.5, 0, 0, 0.5]) == 2
    # Equal laws whose cdfs differ only by rounding.
    third = np.full(3, 1 / 3)
    assert _w_inf_1d(third, [0.1 + 0.2 + 1 / 3 - 0.3, 1 / 3, 1 / 3]) == 0


def test_invalid_inputs():
    with pytest.raises(InvalidParameterError, match="'privacy' parameter"):
        count_pmf(0.5, 4, P_WORST, privacy="individual")
    with pytest.raises(InvalidParameterError, match="whole number of records"):
        count_pmf(0.3, 4, P_WORST)
    with pytest.raises(InvalidParameterError, match="summing to 1"):
        count_pmf((0.5, 0.6), 4, P_WORST)
    with pytest.raises(InvalidParameterError, match="probabilities in"):
        count_pmf(0.5, 4, (0.5, 1.5))
    with pytest.raises(InvalidParameterError, match="'n' parameter"):
        count_pmf(0.5, -1, P_WORST)
    with pytest.raises(InvalidParameterError, match="at least one pair"):
        count_sensitivity([], 4, [P_WORST])
