"""Gaussian and Laplace noise in one ledger: every release through the bands' coupling.

The truth is simulated with numpy and scipy alone: datasets drawn from the
population under one value of the secret, the moved records redrawn from
the other group (the coupling the band law bounds), and, for each coupled
pair, the hockey-stick divergence of the two noisy releases (Laplace noise
on the median, Gaussian on the mean) at the joint epsilon, from the
Gaussian's closed form averaged over a draw of the Laplace privacy loss.
The average over pairs bounds the divergence of the two releases' laws
(joint convexity), so it must stay within delta.
"""

import math

import _lognormal_population as population
import numpy as np
import pytest
from scipy import stats

import skattr
from skattr._ledger._mixed import _precision, worst_mahalanobis
from skattr.exceptions import NotCertifiableError

SECRET = skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)])
N, DELTA = 105, 1e-3


def _pairwise_hockey_stick(epsilon, laplace_move, scale, gaussian_mu, z):
    """Average over pairs of H_{e^eps} of (Laplace x Gaussian) shifted releases.

    ``z`` is one draw of the Laplace noise per pair (its privacy loss is
    averaged by Monte Carlo, the Gaussian's in closed form).
    """
    loss = (np.abs(z + laplace_move) - np.abs(z)) / scale
    c = epsilon - loss
    mu = np.maximum(gaussian_mu, 1e-12)
    h = (stats.norm.cdf(-c / mu + mu / 2)
         - np.exp(c) * stats.norm.cdf(-c / mu - mu / 2))
    return float(np.mean(np.maximum(h, 0.0)))


def _ledger(rng, law):
    reference = population.reference(rng, 1000)
    private = reference.sample(N, random_state=0)
    return skattr.Ledger(private, secret=SECRET, budget=(100.0, DELTA),
                         reference=reference, bounds={"x": (0, 20)},
                         law=law, random_state=0)


@pytest.mark.slow
def test_a_gaussian_mean_and_a_laplace_median_hold_for_the_population():
    # Issue 28: a ledger under the Gaussian model releases a mean with
    # Gaussian noise (apgm) and a median with Laplace noise; the joint
    # guarantee is certified through the bands' one coupling, and holds for
    # the population the reference was drawn from.
    rng = np.random.default_rng(11)
    ledger = _ledger(rng, "gaussian")
    mean = ledger.mean(["x"], epsilon=1.0)
    median = ledger.median(["x"], epsilon=1.0)
    assert mean.mechanism == "apgm"
    assert median.mechanism == "approx-wasserstein"
    joint, delta = ledger.spent
    assert delta == DELTA and 2.0 < joint < 100.0
    sigma = math.sqrt(float(mean.noise_law.covariance[0, 0]))
    scale = float(median.noise_law.scales[0])
    draws = 100_000
    a, b = population.coupled_pairs(rng, draws)
    move_median = np.abs(np.median(a, axis=1) - np.median(b, axis=1))
    mu = np.abs(a.mean(axis=1) - b.mean(axis=1)) / sigma
    z = rng.laplace(0.0, scale, draws)
    assert _pairwise_hockey_stick(joint, move_median, scale, mu, z) <= DELTA
    # Useful, not only valid: within ten times the least epsilon at which
    # the simulated divergence is within delta (8.6x here, measured: the
    # coupling bounds the mean's move over every law in the bands, where
    # the Gaussian noise was calibrated to the data's own variance).
    low, high = 0.0, joint
    while high - low > 0.01:
        middle = (low + high) / 2
        held = _pairwise_hockey_stick(middle, move_median, scale, mu, z)
        low, high = (middle, high) if held > DELTA else (low, middle)
    assert joint < 10 * high
    # Either order: the mean again after the median, the joint grows.
    ledger.mean(["x"], epsilon=1.0)
    assert ledger.spent[0] > joint


@pytest.mark.slow
def test_the_mix_is_dearer_than_one_noise_and_the_plan_says_so_first():
    # The same two releases, Laplace noise on both (the default ledger) or
    # a Gaussian mean among them: the mix re-certifies the Gaussian mean
    # through the coupling, which costs more; ledger.plan shows the joint
    # before anything is released, and the release spends exactly that.
    spent = {}
    for law in ("auto", "gaussian"):
        ledger = _ledger(np.random.default_rng(12), law)
        ledger.mean(["x"], epsilon=1.0)
        _, planned = ledger.plan(["x"], statistic="median", epsilon=1.0)
        ledger.median(["x"], epsilon=1.0)
        assert ledger.spent[0] == pytest.approx(planned)
        spent[law] = ledger.spent[0]
    # Laplace on both composes under one coupling (issue 46): at most their
    # sum, here just under it.
    assert 1.0 < spent["auto"] <= 2.0 + 1e-9
    assert spent["auto"] < spent["gaussian"] < math.inf


@pytest.mark.slow
def test_a_mixed_ledger_is_kept_in_a_file():
    ledger = _ledger(np.random.default_rng(13), "gaussian")
    ledger.mean(["x"], epsilon=1.0)
    ledger.median(["x"], epsilon=1.0)
    loaded = skattr.Ledger.from_json(ledger.to_json(), ledger._data,
                                     reference=ledger.reference)
    assert loaded.spent == pytest.approx(ledger.spent)
    before = loaded.spent[0]
    loaded.quantile(["x"], q=[0.25], epsilon=0.5)
    assert loaded.spent[0] > before


@pytest.mark.parametrize("m", [1, 3, 6])
def test_the_worst_move_in_the_box_is_at_a_corner(m):
    rng = np.random.default_rng(m)
    root = rng.normal(size=(m, m))
    precision = root @ root.T + 0.1 * np.eye(m)
    bounds = rng.uniform(0.1, 2.0, m)
    worst = worst_mahalanobis(precision, bounds)
    points = rng.uniform(-1, 1, (20_000, m)) * bounds
    inside = np.einsum("ci,ij,cj->c", points, precision, points)
    assert inside.max() <= worst * (1 + 1e-12)
    signs = np.sign(rng.normal(size=(2000, m))) * bounds
    corners = np.einsum("ci,ij,cj->c", signs, precision, signs)
    assert worst == pytest.approx(corners.max()) or worst >= corners.max()


def test_many_coordinates_take_a_bound_above_every_corner():
    rng = np.random.default_rng(0)
    m = 20
    root = rng.normal(size=(m, m))
    precision = root @ root.T
    bounds = rng.uniform(0.1, 2.0, m)
    worst = worst_mahalanobis(precision, bounds)
    signs = np.sign(rng.normal(size=(5000, m))) * bounds
    assert np.einsum("ci,ij,cj->c", signs, precision, signs).max() <= worst
    diagonal = np.diag(rng.uniform(1, 2, m))
    assert worst_mahalanobis(diagonal, bounds) == pytest.approx(
        float(np.sum(np.diag(diagonal) * bounds ** 2)))


def _gaussian_epsilon(mu, delta):
    """The least eps with Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) <= delta."""
    def excess(eps):
        return (stats.norm.cdf(mu / 2 - eps / mu)
                - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)) - delta

    low, high = 0.0, 1.0
    while excess(high) > 0:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if excess(middle) > 0 else (low, middle)
    return high


@pytest.mark.slow
def test_the_joint_is_the_rule_written_out():
    # The rule of docs/many_releases.rst by hand, from the band law's own
    # bounds: for each split of delta, the median's move over its Laplace
    # scale plus the Gaussian mechanism's epsilon at the mean's worst move
    # over its noise sd; the least over the splits.
    ledger = _ledger(np.random.default_rng(11), "gaussian")
    mean = ledger.mean(["x"], epsilon=1.0)
    median = ledger.median(["x"], epsilon=1.0)
    sigma = math.sqrt(float(mean.noise_law.covariance[0, 0]))
    scale = float(median.noise_law.scales[0])
    (law, slices), = ledger._laplace.banded.values()
    kinds = [kind for _, kind, _ in law.outputs]
    at_median, at_sum = kinds.index("order"), kinds.index("linear")
    expected = []
    for share in (0.25, 0.5, 0.75):
        bounds = law.per_statistic(N, "dataset", share * DELTA)
        mu = bounds[at_sum] / N / sigma
        expected.append(bounds[at_median] / scale
                        + _gaussian_epsilon(mu, (1 - share) * DELTA))
    assert ledger.spent[0] == pytest.approx(min(expected), rel=1e-6)


@pytest.mark.slow
def test_distributional_laplace_beside_gaussian_noise_is_refused():
    ledger = _ledger(np.random.default_rng(14), "auto")
    ledger.median(["x"], epsilon=1.0, privacy="distributional")
    with pytest.raises(NotCertifiableError, match="privacy='dataset'"):
        ledger.mean(["x"], epsilon=1.0, mechanism="apgm")
    assert len(ledger.releases) == 1


def _two_columns(seed):
    """(private, reference): the LogNormal x and a Normal y in [0, 6]."""
    rng = np.random.default_rng(seed)
    reference = population.reference(rng, 1000)
    reference["y"] = np.clip(rng.normal(3, 1, len(reference)), 0, 6)
    return reference.sample(N, random_state=0), reference


@pytest.mark.slow
def test_bounds_by_position_serve_a_mixed_ledger():
    # Each Gaussian value's clipping is the one its release used, not the
    # ledger's bounds resolved again for one column.
    private, reference = _two_columns(15)
    ledger = skattr.Ledger(private, secret=SECRET, budget=(200.0, DELTA),
                           reference=reference, bounds=[(0, 20), (0, 6)],
                           law="gaussian", random_state=0)
    ledger.mean(["x", "y"], epsilon=1.0)
    ledger.mean(["x", "y"], epsilon=1.0, mechanism="approx-wasserstein")
    assert [e.laplace is None for e in ledger.releases] == [True, False]
    assert 2.0 < ledger.spent[0] < 200.0


def test_the_default_stays_laplace_for_a_statistic_not_yet_gaussian():
    # One explicit apgm release does not turn every later default into
    # apgm: only the statistic already released with Gaussian noise stays
    # Gaussian (certified from its law); another takes the accessor's
    # default.
    private, reference = _two_columns(16)
    ledger = skattr.Ledger(private, secret=SECRET, budget=(200.0, DELTA),
                           reference=reference,
                           bounds={"x": (0, 20), "y": (0, 6)}, random_state=0)
    ledger.mean(["x"], epsilon=1.0, mechanism="apgm")
    assert ledger.plan(["y"], epsilon=1.0)[0].mechanism == "approx-wasserstein"
    assert ledger.plan(["x"], epsilon=1.0)[0].mechanism == "apgm"
    assert ledger.plan(["x", "y"], epsilon=1.0)[0].mechanism == (
        "approx-wasserstein")


def test_noise_in_very_different_units_is_still_noise():
    # Each release's noise judged alone: a block of 1e8 beside one of 1e-5
    # is two noisy releases, not a noiseless one.
    both = np.ones(2, dtype=bool)
    precision = _precision([np.array([[1e8]]), np.array([[1e-5]])], np.eye(2),
                           both)
    assert precision == pytest.approx(np.diag([1e-8, 1e5]))
    assert _precision([np.array([[1.0, 1.0], [1.0, 1.0]])], np.eye(2),
                      both) is None
    # One release's values in very different units (apgm's independent
    # noise): each its own, not a singular block.
    assert _precision([np.diag([1e2, 1e-12])], np.eye(2), both) == (
        pytest.approx(np.diag([1e-2, 1e12])))
    assert _precision([np.diag([1.0, 0.0])], np.eye(2), both) is None
    # A value that never moves is left out, noise and all, when its noise is
    # independent of the others' (else seeing it reveals theirs: refused).
    assert _precision([np.diag([4.0, 0.0])], np.eye(1),
                      np.array([True, False])) == pytest.approx(np.array([[0.25]]))
    assert _precision([np.array([[1.0, 0.99], [0.99, 1.0]])], np.eye(1),
                      np.array([True, False])) is None
