"""The exact law of several counts (floor trick) against brute force.

The oracle (``tests/_count_cells_oracle.py``) shares nothing with skattr:
the two counts' exact laws by loops over multinomial outcomes, the noisy
hockey-stick by quadrature. Certified deltas must dominate the exact ones at
every corner of the box and at random laws in it; a certificate with the
floor trick misapplied (every shared record taken as known, the moved
records' unknown share ignored) or with less noise is caught.
"""

from __future__ import annotations

import _count_cells_oracle as oracle
import numpy as np
import pytest
from scipy import stats

from skattr.calibration._count_lattice import (
    cells_gaussian_delta,
    cells_gaussian_scale,
    lattice_hockey_sticks,
    shaped_covariance,
)
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws import _count_cells
from skattr.laws._count_cells import cell_floors, cell_pairs, record_powers

LOW_IN = np.array([0.5, 0.2, 0.1, 0.1])
LOW_OUT = np.array([0.1, 0.2, 0.2, 0.4])
N, K_A, K_B = 8, 3, 5
# Each shared binomial read at a few levels; terms of least weight, 1e-4 in
# all, counted as delta 1 (the deltas compared are 1e-2 and above).
PROBS, SPARE = (0.05, 1e-4, 1e-9), 1e-4


def _pairs(low_in=LOW_IN, low_out=LOW_OUT, k_a=K_A, k_b=K_B, n=N):
    return cell_pairs([(low_in, low_out)], [[(k_a, k_b)]], n)


def _delta(pairs, cov):
    return cells_gaussian_delta(pairs, cov, 1.0, probs=PROBS, spare=SPARE)


def _exact(sd, epsilon, seed=0, draws=2, low_in=LOW_IN, low_out=LOW_OUT,
           k_a=K_A, k_b=K_B, n=N):
    return oracle.worst_delta(n, k_a, k_b, low_in, low_out, (sd, sd), epsilon,
                              np.random.default_rng(seed), draws=draws)


def test_floors_are_clopper_pearson_lower_bounds():
    counts = np.array([[30, 5, 0, 65], [10, 10, 10, 70]])
    low = cell_floors(counts, 0.99, 8)
    alpha = 0.01 / 8
    expected = stats.beta.ppf(alpha, counts[0, 0], 100 - counts[0, 0] + 1)
    assert low[0, 0] <= expected and low[0, 0] > expected * (1 - 1e-9)
    assert low[0, 2] == 0.0
    assert np.all(low.sum(1) < 1)
    # Coverage: the population's q is above its floor in ~all references.
    rng = np.random.default_rng(3)
    q = np.array([0.3, 0.05, 0.0, 0.65])
    misses = sum(np.any(cell_floors([rng.multinomial(200, q), [1, 1, 1, 1]],
                                    0.9, 8)[0] > q) for _ in range(400))
    assert misses <= 400 * 0.1 / 2 + 3 * np.sqrt(400 * 0.05)


def test_distributional_privacy_and_bad_pairs_are_refused():
    with pytest.raises(NotCertifiableError, match="dataset privacy only"):
        cell_pairs([(LOW_IN, LOW_OUT)], [[(3, 5)]], N, privacy="distributional")
    with pytest.raises(InvalidParameterError, match="must lie in"):
        cell_pairs([(LOW_IN, LOW_OUT)], [[(3, 9)]], N)
    with pytest.raises(InvalidParameterError, match="no negative count"):
        cell_floors([[1, -1, 2, 3]], 0.99, 4)


def test_record_powers_are_multinomial_laws():
    law = np.array([0.4, 0.3, 0.2, 0.1])
    got = record_powers(law, [0, 5])
    assert got[0].shape == (1, 1) and got[0][0, 0] == 1.0
    expected = oracle.group_law(5, law)
    np.testing.assert_allclose(got[5], expected, atol=1e-15)


def test_hockey_sticks_dominate_quadrature():
    # One lattice law plus isotropic noise, shifts in [-2, 2]^2.
    t = oracle.group_law(6, [0.3, 0.3, 0.2, 0.2])
    h = lattice_hockey_sticks(t, np.eye(2) * 1.5 ** 2, 2, 1.0)
    for s in [(0, 0), (1, 0), (2, 1), (-2, -2), (0, -1)]:
        shifted = np.zeros((11, 11))
        shifted[2 + s[0]:9 + s[0], 2 + s[1]:9 + s[1]] = t
        padded = np.zeros((11, 11))
        padded[2:9, 2:9] = t
        exact = oracle.hockey_stick(padded, shifted, (1.5, 1.5), 1.0)
        bound = h[s[0] + 2, s[1] + 2]
        assert bound >= exact
        assert bound <= exact * 1.1 + 1e-6  # second order: within 10%


@pytest.mark.slow
@pytest.mark.parametrize("sd, probs", [(1.0, PROBS), (2.5, "all")])
def test_certified_delta_dominates_exact(sd, probs):
    certified = cells_gaussian_delta(_pairs(), np.eye(2) * sd ** 2, 1.0,
                                     probs=probs, spare=SPARE)
    assert certified >= _exact(sd, 1.0)
    if probs == "all":
        # The check has teeth: 0.8 of the noise exceeds the certificate.
        assert certified < _exact(0.8 * sd, 1.0)


@pytest.mark.slow
def test_several_pairs_take_the_worst():
    pairs = cell_pairs([(LOW_IN, LOW_OUT)], [[(3, 5), (4, 5)]], N)
    assert len(pairs) == 2
    cov = np.eye(2) * 4.0
    both = _delta(pairs, cov)
    one = [_delta([p], cov) for p in pairs]
    assert both == pytest.approx(max(one), rel=1e-12)
    assert both >= oracle.worst_delta(N, 4, 5, LOW_IN, LOW_OUT, (2.0, 2.0), 1.0,
                                      np.random.default_rng(1), draws=1)


def _careless(monkeypatch):
    """Misapply the floor trick: every record known, drawn from low / lam."""
    monkeypatch.setattr(
        "skattr.calibration._count_lattice.shared_levels",
        lambda size, lam, probs: ([size], [1.0], 0.0))
    real = _count_cells.CellPair.moved_terms

    def no_unknown(self):
        for _weight, a_in, a_out, known_in, known_out in real(self):
            if a_in == 0 and a_out == 0:
                yield 1.0, a_in, a_out, known_in, known_out

    monkeypatch.setattr(_count_cells.CellPair, "moved_terms", no_unknown)


# Twelve records, 4 against 8 in the group: the bound is within about 2x of
# the exact delta there, so a certificate that is wrong by more is caught.
WIDE_IN = np.array([0.5, 0.2, 0.1, 0.17])
WIDE_OUT = np.array([0.1, 0.2, 0.2, 0.47])


@pytest.mark.slow
def test_careless_floor_is_caught(monkeypatch):
    # Wide boxes (lam = 0.5): the unknown share is what the careless floor drops.
    low_in, low_out = WIDE_IN * 0.5 / WIDE_IN.sum(), WIDE_OUT * 0.5 / WIDE_OUT.sum()
    sd = 1.5
    pairs = _pairs(low_in, low_out, 4, 8, 12)
    exact = _exact(sd, 1.0, low_in=low_in, low_out=low_out, draws=0,
                   k_a=4, k_b=8, n=12)
    honest = _delta(pairs, np.eye(2) * sd ** 2)
    _careless(monkeypatch)
    careless = _delta(pairs, np.eye(2) * sd ** 2)
    assert honest >= exact
    assert careless < exact  # the check above would fail for it


@pytest.mark.slow
def test_scale_certifies_and_less_noise_fails():
    pairs = _pairs(WIDE_IN, WIDE_OUT, 4, 8, 12)
    target = 0.05
    sigma = cells_gaussian_scale(pairs, np.eye(2), 1.0, target, rtol=2e-2,
                                 probs=PROBS, spare=SPARE)
    assert cells_gaussian_delta(pairs, np.eye(2) * sigma ** 2, 1.0,
                                probs=PROBS, spare=SPARE) <= target

    def exact(sd):
        return _exact(sd, 1.0, low_in=WIDE_IN, low_out=WIDE_OUT, draws=1,
                      k_a=4, k_b=8, n=12)

    assert exact(sigma) <= target
    # 0.6 of the noise breaks the guarantee for a law in the box.
    assert exact(0.6 * sigma) > target


@pytest.mark.slow
def test_shaped_noise_dominates_exact():
    # Noise along the shift with a floor across it (diagonal in this frame:
    # the shift direction is an axis, so the oracle's per-coordinate noise).
    shape = shaped_covariance([1.0, 0.0], 0.5)
    np.testing.assert_allclose(shape, np.diag([1.0, 0.25]))
    certified = _delta(_pairs(), shape * 2.0 ** 2)
    exact = oracle.worst_delta(N, K_A, K_B, LOW_IN, LOW_OUT, (2.0, 1.0), 1.0,
                               np.random.default_rng(2), draws=1)
    assert certified >= exact
