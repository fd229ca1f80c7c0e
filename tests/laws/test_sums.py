"""Exact laws of sums of an integer attribute given a secret (multinomials)."""

import itertools
from collections import defaultdict

import numpy as np
import pytest

from skattr.exceptions import InvalidParameterError
from skattr.laws._count_sensitivity import count_sensitivity
from skattr.laws._sums import sum_sensitivity
from skattr.theta import count_pmf, sum_pmf
from skattr.wasserstein import w_infinity

VALUES = [0, 2, 5]
PROBS = np.array([[0.5, 0.3, 0.2], [0.1, 0.3, 0.6]])


def _brute(categories, probs, values):
    """The law of the sum for records of the given categories, by enumeration."""
    law = defaultdict(float)
    for picks in itertools.product(range(len(values)), repeat=len(categories)):
        mass = np.prod([probs[c, j] for c, j in zip(categories, picks,
                                                    strict=True)])
        law[sum(values[j] for j in picks)] += mass
    support = np.array(sorted(law))
    return support, np.array([law[s] for s in support])


@pytest.mark.parametrize("a", [0.0, 1 / 3, 2 / 3, 1.0])
def test_dataset_law_matches_enumeration(a):
    n = 3
    k = round(a * n)
    support, pmf = sum_pmf(a, n, PROBS, VALUES)
    exp_support, exp_pmf = _brute([1] * k + [0] * (n - k), PROBS, VALUES)
    assert np.array_equal(support, exp_support)
    assert np.allclose(pmf, exp_pmf, rtol=1e-12, atol=0)


def test_distributional_law_mixes_the_categories():
    phi = 0.3
    support, pmf = sum_pmf(phi, 3, PROBS, VALUES, privacy="distributional")
    mixed = np.array([(1 - phi) * PROBS[0] + phi * PROBS[1]] * 2)
    exp_support, exp_pmf = _brute([0, 0, 0], mixed, VALUES)
    assert np.array_equal(support, exp_support)
    assert np.allclose(pmf, exp_pmf, rtol=1e-12, atol=0)


@pytest.mark.parametrize("privacy", ["dataset", "distributional"])
def test_counts_are_the_binary_case(privacy):
    p = (0.35, 0.8)
    probs = [[1 - p[0], p[0]], [1 - p[1], p[1]]]
    for a in (0.0, 0.4, 1.0):
        support, pmf = sum_pmf(a, 10, probs, [0, 1], privacy=privacy)
        assert np.allclose(pmf, count_pmf(a, 10, p, privacy=privacy)[1],
                           rtol=1e-10, atol=1e-300)
    pairs = list(itertools.combinations([0.0, 0.3, 0.7, 1.0], 2))
    assert sum_sensitivity(pairs, 10, [probs], [0, 1], privacy=privacy) == \
        count_sensitivity(pairs, 10, [p], privacy=privacy)


def test_sensitivity_matches_w_infinity_on_the_lattice():
    rng = np.random.default_rng(0)
    for _ in range(10):
        probs = rng.dirichlet(np.ones(3), size=2)
        values = [-1, 3, 7]
        pairs = [(0.2, 0.6), (0.0, 1.0)]
        expected = 0.0
        for a, b in pairs:
            xa, pa = sum_pmf(a, 5, probs, values)
            xb, pb = sum_pmf(b, 5, probs, values)
            expected = max(expected, w_infinity(xa, xb, pa, pb))
        assert sum_sensitivity(pairs, 5, [probs], values) == expected


def test_identical_laws_are_at_distance_zero_and_inputs_are_checked():
    same = [[0.2, 0.8], [0.2, 0.8]]
    assert sum_sensitivity([(0.0, 1.0)], 6, [same], [0, 3]) == 0.0
    with pytest.raises(InvalidParameterError, match="distinct integers"):
        sum_pmf(0.5, 2, PROBS, [0, 1.5, 2])
    with pytest.raises(InvalidParameterError, match="summing to 1"):
        sum_pmf(0.5, 2, [[0.5, 0.5, 0.5], [0.1, 0.3, 0.6]], VALUES)
    with pytest.raises(InvalidParameterError, match="whole number"):
        sum_pmf(0.5, 3, PROBS, VALUES)
    with pytest.raises(InvalidParameterError, match="at least one pair"):
        sum_sensitivity([], 3, [PROBS], VALUES)
