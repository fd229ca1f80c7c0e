"""Couplings valid over a box of count probabilities (docs/population.md).

The bounds are checked against the exact laws of the count at points of the
box (corners, centre and random points), computed here with scipy's binomial
and normal laws: the true delta of the noisy count at the calibrated noise,
and the true (W, delta)-closeness of the quantile coupling.
"""

import numpy as np
import pytest
from scipy import stats

from skattr.calibration._coupled import (
    coupled_required_noise_variance,
    pairs_coupled_delta,
    pairs_coupled_variance,
)
from skattr.laws._distances import CoupledDistances, count_coupled_distances

BOXES = [
    ((0.0, 0.0), (0.3, 0.56)),           # a reference with no 1 at all
    ((0.17, 0.27), (0.23, 0.34)),        # 1,000 records a group
    ((0.195, 0.295), (0.205, 0.305)),    # a narrow box: the quantile coupling
    ((0.0, 0.81), (0.02, 1.0)),          # near-structural zeros and ones
]


def _count_law(k, n, p_out, p_in):
    return np.convolve(stats.binom.pmf(np.arange(k + 1), k, p_in),
                       stats.binom.pmf(np.arange(n - k + 1), n - k, p_out))


def _gaussian_delta(pa, pb, sigma, epsilon):
    grid = np.linspace(-12 * sigma, pa.size - 1 + 12 * sigma, 30_001)
    support = np.arange(pa.size)
    kernel = stats.norm.pdf((grid[:, None] - support[None, :]) / sigma) / sigma
    p, q = kernel @ pa, kernel @ pb
    step = grid[1] - grid[0]
    return max(np.maximum(0, p - np.exp(epsilon) * q).sum(),
               np.maximum(0, q - np.exp(epsilon) * p).sum()) * step


def _points(low, high, rng):
    low, high = np.asarray(low), np.asarray(high)
    corners = [np.where([i, j], high, low) for i in (0, 1) for j in (0, 1)]
    return corners + [(low + high) / 2] + [low + rng.random(2) * (high - low)
                                            for _ in range(2)]


@pytest.mark.slow
@pytest.mark.parametrize("box", BOXES)
def test_gaussian_noise_through_the_couplings_holds_over_the_box(box):
    n, pair, epsilon, delta = 100, (0.4, 0.6), 1.0, 1e-3
    per_pair = count_coupled_distances([pair], n, *box, "dataset", 1.0)
    sigma = np.sqrt(pairs_coupled_variance(per_pair, epsilon, delta))
    assert pairs_coupled_delta(per_pair, sigma, epsilon) <= delta
    rng = np.random.default_rng(0)
    for p_out, p_in in _points(*box, rng):
        laws = [_count_law(round(a * n), n, p_out, p_in) for a in pair]
        assert _gaussian_delta(*laws, sigma, epsilon) <= delta * (1 + 1e-6)


@pytest.mark.parametrize("box", BOXES)
def test_closeness_through_the_couplings_holds_over_the_box(box):
    n, pair, delta = 200, (0.4, 0.6), 1e-3
    per_pair = count_coupled_distances([pair], n, *box, "dataset", 1.0)
    (laws,) = per_pair
    w = min(law.closeness(delta) for law in laws)
    levels = (np.arange(400_000) + 0.5) / 400_000
    rng = np.random.default_rng(1)
    for p_out, p_in in _points(*box, rng):
        cdfs = [np.cumsum(_count_law(round(a * n), n, p_out, p_in))
                for a in pair]
        qa, qb = (np.searchsorted(c, levels) for c in cdfs)
        # The quantile coupling is the least-W coupling of two laws on a line.
        assert np.mean(np.abs(qa - qb) > w) <= delta + 1e-5


def test_the_quantile_coupling_wins_on_a_narrow_box_and_the_swap_on_a_wide_one():
    narrow, wide = BOXES[2], BOXES[1]
    ((swap, envelope),) = count_coupled_distances([(0.4, 0.6)], 1000, *narrow,
                                                  "dataset", 1.0)
    assert envelope.closeness(1e-3) < swap.closeness(1e-3)
    ((swap, envelope),) = count_coupled_distances([(0.4, 0.6)], 1000, *wide,
                                                  "dataset", 1.0)
    assert swap.closeness(1e-3) < envelope.closeness(1e-3)


def test_the_coupled_variance_is_the_least_that_certifies():
    d = np.arange(21.0)
    probs = stats.binom.pmf(d, 20, 0.3)
    variance = coupled_required_noise_variance(
        CoupledDistances.binomial(20, 0.3, 1.0), 1.0, 1e-3)
    sigma = np.sqrt(variance)

    def delta_at(s):
        return float(probs @ [_shift_delta(x / s, 1.0) for x in d])

    assert delta_at(sigma) <= 1e-3
    assert delta_at(0.999 * sigma) > 1e-3


def _shift_delta(mu, epsilon):
    if mu == 0:
        return 0.0
    return (stats.norm.cdf(mu / 2 - epsilon / mu)
            - np.exp(epsilon) * stats.norm.cdf(-mu / 2 - epsilon / mu))


def test_distributional_privacy_moves_each_record_with_the_shares_gap():
    ((swap, _),) = count_coupled_distances([(0.4, 0.6)], 50, (0.1, 0.2),
                                           (0.2, 0.5), "distributional", 1.0)
    # Each record's group differs with probability 0.2, and then its count
    # with probability at most 0.5 - 0.1.
    assert swap.records == 50 and swap.gap == pytest.approx(0.2 * 0.4)


def test_only_almost_sure_bounds_reach_a_pure_epsilon_w():
    # The quantile envelope is read from float CDFs, blind to tails below
    # their resolution: it bounds D only up to mass counted as infinite, so
    # it has no almost-sure bound. The swap coupling's is the records moved,
    # even where the binomial's top atoms underflow to 0.
    ((swap, envelope),) = count_coupled_distances(
        [(0.4, 0.6)], 3000, (0.198, 0.298), (0.202, 0.302), "dataset", 1.0)
    assert envelope.largest == np.inf
    assert swap.probs[-1] == 0.0 and swap.largest == 600.0


def test_a_law_that_is_not_a_law_refuses():
    from skattr.exceptions import NotCertifiableError

    with pytest.raises(NotCertifiableError, match="coupled distance law"):
        CoupledDistances(np.array([0.0, np.nan]), np.array([0.5, 0.5]))
    with pytest.raises(NotCertifiableError, match="coupled distance law"):
        CoupledDistances(np.array([1.0, 0.0]), np.array([0.5, 0.5]))


def test_the_least_bound_skips_an_alternative_that_certifies_nothing():
    # Found by review: a law counting mass as infinite refused a small delta,
    # and the refusal stopped the search although another law certified.
    import numpy as np
    import pytest

    from skattr.exceptions import NotCertifiableError
    from skattr.laws._distances import CoupledDistances, least_certified

    blind = CoupledDistances(np.array([1.0]), np.array([1.0 - 1e-4]))
    sure = CoupledDistances(np.array([0.0, 3.0]), np.array([0.9, 0.1]))
    assert least_certified((blind, sure), lambda law: law.closeness(1e-6)) == 3.0
    assert least_certified((blind, sure), lambda law: law.closeness(0.2)) == 0.0
    with pytest.raises(NotCertifiableError):
        least_certified((blind,), lambda law: law.closeness(1e-6))
