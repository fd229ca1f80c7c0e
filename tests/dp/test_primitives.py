"""Randomized response and the exponential mechanism against their formulas."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from skattr import _random
from skattr.dp import (
    _primitives,
    exponential_mechanism,
    exponential_mechanism_probabilities,
    randomized_response,
    randomized_response_estimate,
    randomized_response_variance,
)
from skattr.dp._primitives import _rr_probabilities
from skattr.exceptions import DataValidationError, InvalidParameterError

BAD_EPSILONS = [0, -1.0, float("nan"), float("inf"), "1", None, True]


def hand_channel(epsilon, k):
    """P(report j | true i), written from the slides' formula."""
    e = math.exp(epsilon)
    matrix = np.full((k, k), 1.0 / (e + k - 1))
    np.fill_diagonal(matrix, e / (e + k - 1))
    return matrix


# --------------------------------------------------------------------------------
# Randomized response: the channel
# --------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon, k", [(0.5, 2), (math.log(3), 2), (1.0, 5),
                                        (2.0, 10)])
def test_rr_keep_rate_matches_formula(epsilon, k):
    rng = np.random.default_rng(0)
    n = 200_000
    values = rng.integers(0, k, n)
    reports = randomized_response(values, epsilon, categories=range(k),
                                  random_state=1)
    keep = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    rate = np.mean(reports == values)
    se = math.sqrt(keep * (1 - keep) / n)
    assert abs(rate - keep) < 4 * se


def test_rr_warner_coin_flip_keeps_three_quarters():
    # The slides' protocol: e^eps = 3 keeps the truth with probability 3/4.
    keep, other = _rr_probabilities(math.log(3), 2)
    assert keep == pytest.approx(0.75, abs=1e-15)
    assert other == pytest.approx(0.25, abs=1e-15)


def test_rr_replacement_is_uniform_over_the_other_categories():
    k, epsilon, n = 6, 0.3, 120_000
    reports = randomized_response(np.full(n, 2), epsilon, categories=range(k),
                                  random_state=2)
    counts = np.bincount(reports, minlength=k)
    expected = n * hand_channel(epsilon, k)[2]
    assert stats.chisquare(counts, expected).pvalue > 1e-3


@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 3.0, 50.0, 700.0])
@pytest.mark.parametrize("k", [2, 3, 10])
def test_rr_channel_privacy_ratio_is_exactly_e_epsilon(epsilon, k):
    keep, other = _rr_probabilities(epsilon, k)
    channel = np.full((k, k), other)
    np.fill_diagonal(channel, keep)
    assert np.allclose(channel.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    ratio = max(
        np.max(channel[a] / channel[b]) for a in range(k) for b in range(k) if a != b
    )
    assert ratio == pytest.approx(math.exp(epsilon), rel=1e-12)
    np.testing.assert_allclose(channel, hand_channel(epsilon, k), rtol=1e-12)


class _ConstantUniforms:
    """A generator whose uniforms are all ``u``, to probe the flip threshold."""

    def __init__(self, u):
        self.u = u

    def random(self, size):
        return np.full(size, self.u)

    def integers(self, low, high, size):
        return np.full(size, low)


@pytest.mark.parametrize("epsilon", [50.0, 800.0])
def test_rr_still_randomizes_at_huge_epsilon(monkeypatch, epsilon):
    # e^-eps is below the uniforms' grid (and at 800 below the smallest float):
    # the flip probability must round up to one grid point (more privacy), never
    # down to 0 (a deterministic report, no privacy at all).
    assert _rr_probabilities(50.0, 2)[0] == 1.0  # why keep is never compared
    monkeypatch.setattr(_primitives, "check_random_state",
                        lambda _: _ConstantUniforms(0.0))
    assert randomized_response(["a"], epsilon, categories=["a", "b"]) == ["b"]
    grid = 2.0**-53
    monkeypatch.setattr(_primitives, "check_random_state",
                        lambda _: _ConstantUniforms(grid))
    assert randomized_response(["a"], epsilon, categories=["a", "b"]) == ["a"]


# --------------------------------------------------------------------------------
# Randomized response: the estimate
# --------------------------------------------------------------------------------


def test_rr_estimate_inverts_expected_counts_exactly():
    # e^eps = 3 and k = 4: keep 1/2, other 1/6; truth (1/2, 1/4, 1/8, 1/8) gives
    # expected report frequencies (1/3, 1/4, 5/24, 5/24): counts 8, 6, 5, 5 of 24.
    epsilon, categories = math.log(3), ["a", "b", "c", "d"]
    reports = ["a"] * 8 + ["b"] * 6 + ["c"] * 5 + ["d"] * 5
    estimate = randomized_response_estimate(reports, epsilon, categories=categories)
    assert list(estimate.index) == categories and estimate.name == "frequency"
    np.testing.assert_allclose(estimate, [0.5, 0.25, 0.125, 0.125], atol=1e-14)
    observed = np.array([8, 6, 5, 5]) / 24
    np.testing.assert_allclose(
        estimate, np.linalg.solve(hand_channel(epsilon, 4).T, observed), atol=1e-14
    )


def test_rr_estimate_is_unbiased_and_variance_matches():
    k, epsilon, n, repeats = 4, 1.0, 2_000, 400
    truth = np.array([0.5, 0.3, 0.15, 0.05])
    values = np.repeat(np.arange(k), (truth * n).astype(int))
    rng = np.random.default_rng(3)
    estimates = np.array([
        randomized_response_estimate(
            randomized_response(values, epsilon, categories=range(k),
                                random_state=rng),
            epsilon, categories=range(k),
        ).to_numpy()
        for _ in range(repeats)
    ])
    variance = np.array(
        [randomized_response_variance(n, p, epsilon, k=k) for p in truth]
    )
    se = np.sqrt(variance / repeats)
    assert np.all(np.abs(estimates.mean(axis=0) - truth) < 4 * se)
    # Sample variance of 400 draws: relative SE about sqrt(2 / 400) = 0.07.
    ratio = estimates.var(axis=0, ddof=1) / variance
    assert np.all((ratio > 0.75) & (ratio < 1.3)), ratio


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_rr_binary_variance_closed_form(epsilon):
    e = math.exp(epsilon)
    for p in [0.0, 0.3, 1.0]:
        assert randomized_response_variance(1000, p, epsilon) == pytest.approx(
            e / (1000 * (e - 1) ** 2), rel=1e-12
        )


def test_rr_variance_k_ary_against_bernoulli_sum():
    epsilon, k, n, p = 0.7, 5, 300, 0.2
    keep, other = hand_channel(epsilon, k)[0, :2]
    count_variance = n * p * keep * (1 - keep) + n * (1 - p) * other * (1 - other)
    assert randomized_response_variance(n, p, epsilon, k=k) == pytest.approx(
        count_variance / (n * (keep - other)) ** 2, rel=1e-12
    )


# --------------------------------------------------------------------------------
# Randomized response: types, inputs and randomness
# --------------------------------------------------------------------------------


def test_rr_series_keeps_index_and_name_and_is_not_mutated():
    values = pd.Series(["no", "yes", "no"], index=[7, 3, 5], name="answer")
    before = values.copy()
    reports = randomized_response(values, 1.0, categories=["no", "yes"],
                                  random_state=0)
    pd.testing.assert_series_equal(values, before)
    assert isinstance(reports, pd.Series)
    assert list(reports.index) == [7, 3, 5] and reports.name == "answer"
    assert set(reports) <= {"no", "yes"}


def test_rr_array_and_list_give_arrays_and_are_not_mutated():
    values = np.array([0, 1, 2, 1])
    before = values.copy()
    reports = randomized_response(values, 0.5, categories=[0, 1, 2], random_state=0)
    np.testing.assert_array_equal(values, before)
    assert isinstance(reports, np.ndarray) and reports.shape == (4,)
    listed = ["a", "b"]
    assert isinstance(randomized_response(listed, 1.0, random_state=0), np.ndarray)
    assert listed == ["a", "b"]


def test_rr_categorical_series_keeps_its_dtype():
    dtype = pd.CategoricalDtype(["x", "y", "z"])
    values = pd.Series(["x", "y", "x"], dtype=dtype)
    reports = randomized_response(values, 1.0, categories=["x", "y", "z"],
                                  random_state=0)
    assert reports.dtype == dtype


def test_rr_default_categories_are_the_sorted_values_seen():
    values = np.array(["b", "c", "a"] * 1000)
    reports = randomized_response(values, 0.01, random_state=0)
    assert set(reports) == {"a", "b", "c"}


def test_rr_seed_reproduces_and_global_state_is_untouched():
    values = np.arange(1000) % 3
    np.random.seed(0)
    state = np.random.get_state()[1].copy()
    first = randomized_response(values, 1.0, random_state=5)
    second = randomized_response(values, 1.0, random_state=np.random.default_rng(5))
    np.testing.assert_array_equal(first, second)
    randomized_response(values, 1.0)
    exponential_mechanism([0, 1], [0.0, 1.0], 1.0, 1.0)
    np.testing.assert_array_equal(np.random.get_state()[1], state)


def test_default_randomness_reads_os_entropy(monkeypatch):
    calls = []
    source = np.random.default_rng(11)

    def fake_urandom(size):
        calls.append(size)
        return source.bytes(size)

    monkeypatch.setattr(_random.os, "urandom", fake_urandom)
    k, epsilon, n = 3, 1.0, 60_000
    values = np.zeros(n, dtype=int)
    reports = randomized_response(values, epsilon, categories=range(k))
    assert calls  # the OS was asked, no seed was used
    expected = n * hand_channel(epsilon, k)[0]
    assert stats.chisquare(np.bincount(reports, minlength=k), expected).pvalue > 1e-3
    calls.clear()
    assert exponential_mechanism(["a", "b"], [0.0, -1e6], 1.0, 1.0) == "a"
    assert calls == [8]  # one 64-bit word for the one uniform


def test_os_entropy_integers_are_uniform_for_odd_spans(monkeypatch):
    source = np.random.default_rng(12)
    monkeypatch.setattr(_random.os, "urandom", source.bytes)
    draws = _random.OSEntropy().integers(1, 8, 70_000)
    assert draws.min() >= 1 and draws.max() <= 7
    counts = np.bincount(draws, minlength=8)[1:]
    assert stats.chisquare(counts).pvalue > 1e-3
    uniforms = _random.OSEntropy().random(50_000)
    assert uniforms.min() >= 0 and uniforms.max() < 1
    assert stats.kstest(uniforms, "uniform").pvalue > 1e-3


# --------------------------------------------------------------------------------
# Randomized response: errors
# --------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", BAD_EPSILONS)
def test_rr_rejects_bad_epsilon(epsilon):
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter of "
                       "randomized_response must be a finite real number"):
        randomized_response(["a", "b"], epsilon)
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter"):
        randomized_response_estimate(["a", "b"], epsilon, categories=["a", "b"])
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter"):
        randomized_response_variance(10, 0.5, epsilon)


def test_rr_rejects_values_not_in_categories():
    with pytest.raises(DataValidationError, match=r"1 value\(s\) that are not in "
                       r"`categories` \(e.g. \['maybe'\]\)"):
        randomized_response(["yes", "maybe"], 1.0, categories=["yes", "no"])
    with pytest.raises(DataValidationError, match="not in `categories`"):
        randomized_response_estimate(["yes", "maybe"], 1.0, categories=["yes", "no"])


@pytest.mark.parametrize("values, message", [
    ([], "values is empty"),
    (pd.Series([], dtype=object), "values is empty"),
    (["a", None], "1 missing value"),
    ([1.0, np.nan], "1 missing value"),
    ("ab", "1-d sequence"),
    (np.zeros((2, 2)), "1-d sequence"),
])
def test_rr_rejects_bad_values(values, message):
    with pytest.raises(DataValidationError, match=message):
        randomized_response(values, 1.0, categories=["a", "b"])


@pytest.mark.parametrize("categories, message", [
    (["a"], "at least 2 categories"),
    (["a", "b", "a"], r"repeats \['a'\]"),
    (["a", None], "contains NaN/None"),
    ({"a", "b"}, "ordered sequence"),
    ("ab", "ordered sequence"),
])
def test_rr_rejects_bad_categories(categories, message):
    with pytest.raises(InvalidParameterError, match=message):
        randomized_response(["a"], 1.0, categories=categories)


def test_rr_single_category_in_data_without_categories_raises():
    # Everyone answered "yes": the data's own category list would be the answer.
    with pytest.raises(InvalidParameterError, match="Pass the public list"):
        randomized_response(["yes"] * 5, 1.0)


def test_rr_unsortable_default_categories_raise():
    with pytest.raises(InvalidParameterError, match="cannot be sorted"):
        randomized_response([1, "a"], 1.0)


def test_rr_rejects_legacy_random_state():
    with pytest.raises(InvalidParameterError, match="'random_state' parameter"):
        randomized_response(["a", "b"], 1.0, random_state=np.random.RandomState(0))


def test_rr_estimate_needs_categories():
    with pytest.raises(InvalidParameterError, match="Pass `categories`"):
        randomized_response_estimate(["a", "b"], 1.0, categories=None)
    with pytest.raises(DataValidationError, match="reports is empty"):
        randomized_response_estimate([], 1.0, categories=["a", "b"])


@pytest.mark.parametrize("kwargs, name", [
    ({"n": 0}, "'n'"), ({"n": 2.5}, "'n'"), ({"p": 1.5}, "'p'"),
    ({"p": float("nan")}, "'p'"), ({"k": 1}, "'k'"),
])
def test_rr_variance_rejects_bad_parameters(kwargs, name):
    params = {"n": 10, "p": 0.5, "epsilon": 1.0} | kwargs
    k = params.pop("k", 2)
    with pytest.raises(InvalidParameterError, match=f"The {name} parameter"):
        randomized_response_variance(**params, k=k)


# --------------------------------------------------------------------------------
# Exponential mechanism
# --------------------------------------------------------------------------------


def test_em_probabilities_match_hand_computation():
    # epsilon * u / (2 * sensitivity) = u for epsilon = 2, sensitivity = 1.
    e = math.e
    expected = np.array([1.0, e, e * e]) / (1 + e + e * e)
    got = exponential_mechanism_probabilities([0.0, 1.0, 2.0], 2.0, 1.0)
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    # Shifting every score changes nothing; huge scores do not overflow.
    shifted = exponential_mechanism_probabilities([1e6, 1e6 + 1, 1e6 + 2], 2.0, 1.0)
    np.testing.assert_allclose(shifted, expected, rtol=1e-9)
    # epsilon 0.4, sensitivity 0.5: exponent 0.4 * u.
    got = exponential_mechanism_probabilities([3.0, -1.0], 0.4, 0.5)
    assert got[0] == pytest.approx(1 / (1 + math.exp(-1.6)), rel=1e-14)
    assert exponential_mechanism_probabilities([5.0], 1.0, 1.0).tolist() == [1.0]


def test_em_privacy_ratio_on_random_neighbours():
    rng = np.random.default_rng(4)
    worst = 0.0
    for _ in range(2_000):
        m = int(rng.integers(1, 9))
        epsilon = float(rng.uniform(0.05, 4.0))
        sensitivity = float(rng.uniform(0.1, 3.0))
        scores = rng.normal(0, 5, m)
        neighbour = scores + rng.uniform(-sensitivity, sensitivity, m)
        p = exponential_mechanism_probabilities(scores, epsilon, sensitivity)
        q = exponential_mechanism_probabilities(neighbour, epsilon, sensitivity)
        log_ratio = np.max(np.abs(np.log(p) - np.log(q)))
        assert log_ratio <= epsilon * (1 + 1e-12)
        worst = max(worst, log_ratio / epsilon)
    assert worst > 0.5  # the check above is not vacuous


def test_em_privacy_ratio_is_nearly_attained_by_the_worst_neighbour():
    # One candidate up by the sensitivity, many others down by it: the ratio
    # approaches e^eps, so a missing factor 2 in the exponent would fail here.
    epsilon, sensitivity, m = 1.0, 0.5, 10_000
    scores = np.zeros(m)
    neighbour = np.full(m, -sensitivity)
    neighbour[0] = sensitivity
    p = exponential_mechanism_probabilities(scores, epsilon, sensitivity)
    q = exponential_mechanism_probabilities(neighbour, epsilon, sensitivity)
    log_ratio = math.log(q[0] / p[0])
    assert epsilon * 0.999 < log_ratio <= epsilon * (1 + 1e-12)


@pytest.mark.slow
def test_em_sampling_frequencies_match_probabilities():
    candidates = ["a", "b", "c", "d", "e"]
    scores = [0.0, 1.0, 2.0, 2.5, -3.0]
    probabilities = exponential_mechanism_probabilities(scores, 1.5, 1.0)
    rng = np.random.default_rng(5)
    draws = [exponential_mechanism(candidates, scores, 1.5, 1.0, random_state=rng)
             for _ in range(20_000)]
    counts = pd.Series(draws).value_counts().reindex(candidates, fill_value=0)
    assert stats.chisquare(counts.to_numpy(), 20_000 * probabilities).pvalue > 1e-3


def test_em_returns_the_candidate_itself_and_never_a_zero_probability_one():
    candidates = [("x", 1), ("y", 2), ("z", 3)]
    # The last two are e^-1000 below the first: probability 0 in floating point.
    scores = [0.0, -2000.0, -2000.0]
    for seed in range(50):
        assert exponential_mechanism(candidates, scores, 1.0, 1.0,
                                     random_state=seed) == ("x", 1)


@pytest.mark.parametrize("u", [0.0, 1 - 2.0**-53, 1.0])
def test_em_inversion_skips_zero_probability_candidates_at_the_edges(
    monkeypatch, u
):
    # Candidates 0 and 2 have probability 0 in floating point. The extreme
    # uniforms (and 1.0, which rounding of u * total could reach) must still
    # land on the only candidate that has any probability.
    monkeypatch.setattr(_primitives, "check_random_state",
                        lambda _: _ConstantUniforms(u))
    scores = [-2000.0, 0.0, -2000.0]
    assert exponential_mechanism(["a", "b", "c"], scores, 1.0, 1.0) == "b"


def test_em_does_not_mutate_inputs():
    candidates = pd.Series(["a", "b", "c"], index=[5, 6, 7])
    scores = np.array([3.0, 1.0, 2.0])
    before_c, before_s = candidates.copy(), scores.copy()
    choice = exponential_mechanism(candidates, scores, 1.0, 1.0, random_state=0)
    assert choice in {"a", "b", "c"}
    pd.testing.assert_series_equal(candidates, before_c)
    np.testing.assert_array_equal(scores, before_s)


@pytest.mark.parametrize("epsilon", BAD_EPSILONS)
def test_em_rejects_bad_epsilon(epsilon):
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter of "
                       "exponential_mechanism must be a finite real number"):
        exponential_mechanism(["a"], [1.0], epsilon, 1.0)
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter"):
        exponential_mechanism_probabilities([1.0], epsilon, 1.0)


@pytest.mark.parametrize("sensitivity", [0, -1.0, 0.0, float("nan"), float("inf")])
def test_em_rejects_bad_sensitivity(sensitivity):
    with pytest.raises(InvalidParameterError, match="'sensitivity' parameter .* "
                       r"range \(0, inf\)"):
        exponential_mechanism(["a"], [1.0], 1.0, sensitivity)
    with pytest.raises(InvalidParameterError, match="'sensitivity' parameter"):
        exponential_mechanism_probabilities([1.0], 1.0, sensitivity)


@pytest.mark.parametrize("candidates, scores, message", [
    ([], [], "`candidates` is empty"),
    (["a"], [], "`scores` is empty"),
    (["a", "b"], [1.0, float("nan")], r"NaN or infinite values at positions \[1\]"),
    (["a", "b"], [float("-inf"), 1.0], r"NaN or infinite values at positions \[0\]"),
    (["a", "b"], [1.0], "Got 2 candidates but 1 scores"),
    ({"a", "b"}, [1.0, 2.0], "ordered sequence"),
    (["a"], [["x"]], "1-d sequence of finite numbers"),
    (["a"], [[1.0]], "must be 1-d"),
])
def test_em_rejects_bad_candidates_and_scores(candidates, scores, message):
    with pytest.raises(InvalidParameterError, match=message):
        exponential_mechanism(candidates, scores, 1.0, 1.0)


def test_errors_are_value_errors():
    with pytest.raises(ValueError):
        exponential_mechanism_probabilities([np.nan], 1.0, 1.0)
    with pytest.raises(ValueError):
        randomized_response([], 1.0)
