"""The least-error noise under the exact profile: estimate, search, certificate."""

import math

import numpy as np
import pytest

from skattr import MethodStep
from skattr.calibration._noise_shape import (
    least_error_noise,
    least_multiples,
    noise_objective,
)
from skattr.calibration._pair_noise import (
    certify_noise_covariance,
    exact_max_delta,
    exact_pairs_certified,
    pairs_delta,
)
from skattr.calibration._profile_estimate import estimate_pairs_delta
from skattr.calibration._quadratic_loss import multivariate_gaussian_pair_delta
from skattr.exceptions import NotCertifiableError
from skattr.laws._gaussian import PairLaws
from skattr.mechanisms._least_error import least_error_covariance

DELTA = 1e-3


def _laws(diff, cov_a, cov_b) -> PairLaws:
    diff = np.atleast_2d(np.asarray(diff, dtype=float))
    cov_a = np.asarray(cov_a, dtype=float).reshape(-1, diff.shape[1], diff.shape[1])
    cov_b = np.asarray(cov_b, dtype=float).reshape(-1, diff.shape[1], diff.shape[1])
    m = diff.shape[0]
    return PairLaws(diff, cov_a, cov_b, np.arange(m), m)


def _random_pair(rng, k, gap):
    g = rng.normal(size=(k, k))
    cov_a = g @ g.T / k + 0.2 * np.eye(k)
    h = rng.normal(size=(k, k))
    cov_b = cov_a + gap * h @ h.T / k
    return rng.normal(size=k), cov_a, cov_b


# A two-statistic pair like Adult's: a mean difference of a few standard
# deviations and covariances a few percent apart.
DIFF = np.array([1.0, 0.4])
COV_A = np.array([[1.0, 0.3], [0.3, 2.0]])
COV_B = np.array([[1.1, 0.25], [0.25, 1.8]])


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("gap", [0.01, 0.3, 2.0])
def test_estimate_matches_the_exact_profile(k, gap):
    rng = np.random.default_rng(k * 10 + int(gap * 10))
    for epsilon in (0.2, 1.0, 4.0):
        diff, cov_a, cov_b = _random_pair(rng, k, gap)
        exact = multivariate_gaussian_pair_delta(np.zeros(k), cov_a, diff, cov_b,
                                                 epsilon)
        estimate = estimate_pairs_delta(diff[None], cov_a[None], cov_b[None],
                                        epsilon)[0]
        # An estimate that steers searches (never certifies): within 0.1%,
        # heavy-tailed losses (large gaps) included.
        assert estimate == pytest.approx(exact, rel=1e-3, abs=1e-9)


def test_least_multiple_is_the_estimated_frontier():
    laws = _laws(DIFF, COV_A, COV_B)
    eye = np.eye(2)
    (t,) = least_multiples(laws, np.zeros((1, 2, 2)), eye[None], 1.0, DELTA,
                           np.ones(1))
    at = estimate_pairs_delta(DIFF[None], (COV_A + t * eye)[None],
                              (COV_B + t * eye)[None], 1.0)[0]
    below = estimate_pairs_delta(DIFF[None], (COV_A + 0.999 * t * eye)[None],
                                 (COV_B + 0.999 * t * eye)[None], 1.0)[0]
    assert at <= DELTA < below


def _frontier_minimum(laws, shapes, epsilon, objective="expected-error"):
    """Brute force: the least multiple of every shape, the least objective."""
    k = laws.mean_diff.shape[1]
    t = least_multiples(laws, np.zeros((len(shapes), k, k)), np.array(shapes),
                        epsilon, DELTA, np.ones(len(shapes)))
    return min(noise_objective(ti * s, objective)
               for ti, s in zip(t, shapes, strict=True) if np.isfinite(ti))


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
def test_search_is_no_worse_than_brute_force_over_both_families(epsilon):
    # k = 2: rank-one-plus-isotropic a u u^T + b I on a fine grid of the
    # ratio a / b, and eigen-aligned V diag(s) V^T on a fine grid of the
    # angle of s; no point of either grid beats the search by more than 1%.
    laws = _laws(DIFF, COV_A, COV_B)
    u = DIFF / np.linalg.norm(DIFF)
    ray = [np.outer(u, u) * math.tan(x) + np.eye(2) * math.cos(x)
           for x in np.linspace(0.0, math.pi / 2 - 1e-3, 181)]
    _, vecs = np.linalg.eigh((COV_A + COV_B) / 2)
    aligned = [(vecs * [math.cos(x) ** 2, math.sin(x) ** 2]) @ vecs.T
               for x in np.linspace(1e-3, math.pi / 2 - 1e-3, 181)]
    brute = min(_frontier_minimum(laws, ray, epsilon),
                _frontier_minimum(laws, aligned, epsilon))
    found = min(noise_objective(c, "expected-error")
                for c in least_error_noise(laws, epsilon, DELTA))
    assert found <= brute * 1.01


@pytest.mark.slow
@pytest.mark.parametrize("objective", ["expected-error", "trace"])
def test_least_error_covariance_is_certified_by_the_exact_profile(objective):
    laws = _laws(DIFF, COV_A, COV_B)
    for epsilon in (0.3, 1.0, 3.0):
        cov, method = least_error_covariance(laws, epsilon, DELTA,
                                             objective=objective)
        assert method == MethodStep.of(
            "least-error.unequal",
            profile=MethodStep.of("profile.unequal-covariances"))
        delta = multivariate_gaussian_pair_delta(np.zeros(2), COV_A + cov, DIFF,
                                                 COV_B + cov, epsilon)
        assert delta <= DELTA
        # Least: 2% less noise of the same shape no longer certifies.
        less = multivariate_gaussian_pair_delta(
            np.zeros(2), COV_A + 0.98 * cov, DIFF, COV_B + 0.98 * cov, epsilon)
        assert less > DELTA


def test_objectives_rank_the_same_candidates_differently():
    laws = _laws(DIFF, COV_A, COV_B)
    by_error, _ = least_error_covariance(laws, 0.5, DELTA)
    by_trace, _ = least_error_covariance(laws, 0.5, DELTA, objective="trace")
    assert (noise_objective(by_trace, "trace")
            <= noise_objective(by_error, "trace") * (1 + 1e-6))
    assert (noise_objective(by_error, "expected-error")
            <= noise_objective(by_trace, "expected-error") * (1 + 1e-6))


@pytest.mark.slow
def test_certified_noise_holds_under_monte_carlo():
    # delta = E_P[(1 - exp(epsilon - L))_+] over draws of the release under P,
    # with L the privacy loss of the two Gaussian laws with the noise added.
    laws = _laws(DIFF, COV_A, COV_B)
    epsilon = 1.0
    cov, _ = least_error_covariance(laws, epsilon, DELTA)
    rng = np.random.default_rng(0)
    worst = 0.0
    for mean_p, cov_p, mean_q, cov_q in (
            (np.zeros(2), COV_A + cov, DIFF, COV_B + cov),
            (DIFF, COV_B + cov, np.zeros(2), COV_A + cov)):
        y = rng.multivariate_normal(mean_p, cov_p, 2_000_000)

        def logpdf(y, mean, c):
            diff = y - mean
            return -0.5 * (np.einsum("ni,ij,nj->n", diff, np.linalg.inv(c), diff)
                           + np.linalg.slogdet(c)[1])

        loss = logpdf(y, mean_p, cov_p) - logpdf(y, mean_q, cov_q)
        terms = np.clip(1 - np.exp(epsilon - loss), 0.0, None)
        estimate, se = terms.mean(), terms.std() / math.sqrt(terms.size)
        assert estimate <= DELTA + 4 * se
        worst = max(worst, estimate)
    # The noise is the least of its shape: its delta is close to the target.
    assert worst > 0.8 * DELTA


def test_exact_checks_agree_with_the_profile_and_prune_with_renyi():
    rng = np.random.default_rng(3)
    pairs = [_random_pair(rng, 3, 0.2) for _ in range(4)]
    laws = _laws([p[0] for p in pairs], [p[1] for p in pairs],
                 [p[2] for p in pairs])
    noise = 2.0 * np.eye(3)
    deltas = [multivariate_gaussian_pair_delta(np.zeros(3), a + noise, d,
                                               b + noise, 1.0)
              for d, a, b in pairs]
    assert exact_max_delta(laws, noise, 1.0) == pytest.approx(max(deltas))
    assert pairs_delta(laws, noise, 1.0) == pytest.approx(max(deltas))
    cut = sorted(deltas)[1] * 1.0001
    certified = exact_pairs_certified(laws, noise, 1.0, cut)
    assert certified.tolist() == [d <= cut for d in deltas]


@pytest.mark.slow
def test_scaling_a_shape_that_cannot_cover_the_gap_is_refused():
    # Covariances that differ only across the mean difference: noise along
    # the difference never closes the gap.
    laws = _laws([1.0, 0.0], np.diag([1.0, 1.0]), np.diag([1.0, 3.0]))
    along = np.diag([1.0, 0.0])
    with pytest.raises(NotCertifiableError, match="mechanism='optimal'"):
        certify_noise_covariance(laws, along, 1.0, DELTA, "analytic")
    cov, _ = least_error_covariance(laws, 1.0, DELTA)
    assert cov[1, 1] > 0


def test_per_pair_multiples_match_one_pair_at_a_time():
    rng = np.random.default_rng(7)
    pairs = [_random_pair(rng, 3, 0.3) for _ in range(5)]
    laws = _laws([p[0] for p in pairs], [p[1] for p in pairs],
                 [p[2] for p in pairs])
    eye = np.eye(3)[None]
    together = least_multiples(laws, np.zeros((1, 3, 3)), eye, 1.0, DELTA,
                               np.ones(5), per_pair=True)
    for i, (d, a, b) in enumerate(pairs):
        (alone,) = least_multiples(_laws(d, a, b), np.zeros((1, 3, 3)), eye, 1.0,
                                   DELTA, np.ones(1))
        assert together[i] == pytest.approx(alone, rel=2e-4)
    # Jointly, the largest of them covers every pair.
    (joint,) = least_multiples(laws, np.zeros((1, 3, 3)), eye, 1.0, DELTA,
                               np.ones(1))
    assert joint == pytest.approx(together.max(), rel=2e-4)
