"""The least isotropic Gaussian noise that certifies every pair, and raw leakage.

Given the Gaussian laws of F on both sides of each discriminative pair (see
:mod:`skattr.laws._gaussian`), adding independent noise N(0, s I) gives laws with
covariances Cov + s I. For equal covariances the privacy loss is that of a
Gaussian shift by the Mahalanobis distance, so the analytic (or classic)
calibration applies exactly; for unequal covariances the exact one-dimensional
hockey-stick divergence, in one dimension or in k (the exact profile of two
Gaussians, a generalised chi-square), certifies the pair. Adding the same
independent noise to both sides is post-processing, so each pair's divergence
is non-increasing in s and the least s is found by a vectorised bisection that
always returns the certified side.

In k dimensions the exact profile costs milliseconds a pair, so searches are
steered by its batched estimate (:mod:`skattr.calibration._profile_estimate`)
and only their answer is certified exactly; the Renyi-divergence bound, an
upper bound that costs microseconds, settles the pairs it already covers.
"""

from __future__ import annotations

import math

import numpy as np

from skattr._certificate import MethodStep
from skattr.calibration._gaussian import (
    _DEFAULT_ORDERS,
    _renyi_divergence,
    epsilon_for_mahalanobis,
    gaussian_delta,
    gaussian_pair_delta,
    gaussian_pair_epsilon,
    max_mahalanobis,
    renyi_gaussian_delta,
)
from skattr.calibration._noise_shape import least_multiples
from skattr.calibration._profile_estimate import estimate_pairs_delta
from skattr.calibration._quadratic_loss import (
    multivariate_gaussian_pair_delta,
    multivariate_gaussian_pair_epsilon,
)
from skattr.exceptions import NotCertifiableError
from skattr.laws._gaussian import PairLaws

__all__ = [
    "EXACT_PROFILE",
    "certify_noise_covariance",
    "covariances_equal",
    "mahalanobis_sq",
    "max_covariance_gap",
    "pairs_certified",
    "pairs_delta",
    "raw_leakage_epsilon",
    "required_noise_variance",
]

_BISECTION_STEPS = 80

#: How a certificate of several statistics with unequal covariances is made.
EXACT_PROFILE = MethodStep.of("profile.unequal-covariances")



# Absolute integration tolerance, as a share of delta * exp(-epsilon) (the
# second tail's error counts exp(epsilon) times), at which a pair is first
# screened against the largest epsilon found: a coarse profile settles most
# pairs, and its error is added, so a pass is certified.
_SCREEN_TOLERANCE = 1e-2

def covariances_equal(laws: PairLaws) -> bool:
    """Whether both sides of every pair have the same covariance."""
    scale = max(float(np.abs(laws.cov_a).max(initial=0.0)), 1e-300)
    return bool(np.all(np.abs(laws.cov_a - laws.cov_b) <= 1e-12 * scale))


def mahalanobis_sq(diff: np.ndarray, cov: np.ndarray, extra) -> np.ndarray:
    """diff^T (cov + extra I)^-1 diff per pair; inf where cov is singular along diff."""
    lam, vecs = np.linalg.eigh(cov)
    proj_sq = np.einsum("mki,mk->mi", vecs, diff) ** 2
    extra = np.asarray(extra, dtype=float).reshape(-1, 1)
    total = lam + extra
    scale = np.maximum(np.abs(lam).max(axis=1, keepdims=True), 1e-300)
    singular = total <= 1e-12 * scale
    moved = proj_sq > 1e-24 * np.maximum(proj_sq.sum(axis=1, keepdims=True), 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(singular, np.where(moved, np.inf, 0.0), proj_sq / total)
    return terms.sum(axis=1)


def _least_variance(satisfied, m: int, start_high: np.ndarray) -> np.ndarray:
    """Least s >= 0 with satisfied(s) per pair, for monotone ``satisfied``.

    ``satisfied(s)`` maps an (m,) array of variances to an (m,) boolean array;
    the result is always on the satisfied side of the bisection.
    """
    zero = np.zeros(m)
    done = satisfied(zero)
    hi = np.where(done, 0.0, np.maximum(start_high, 1e-300))
    for _ in range(200):
        ok = satisfied(hi) | done
        if ok.all():
            break
        hi = np.where(ok, hi, hi * 4.0)
    else:
        raise NotCertifiableError(
            "No finite Gaussian noise certifies every pair; the secret's two sides "
            "are too far apart for a Gaussian mechanism."
        )
    lo = np.zeros(m)
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if np.all((mid == lo) | (mid == hi)):
            # Every bracket is down to adjacent doubles: further steps would
            # test lo (not satisfied) or hi (satisfied) and change nothing.
            break
        ok = satisfied(mid)
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return np.where(done, 0.0, hi)


def required_noise_variance(laws: PairLaws, epsilon: float, delta: float,
                            calibration: str) -> tuple[np.ndarray, MethodStep]:
    """Per-pair least variance s of isotropic noise certifying (epsilon, delta).

    Returns
    -------
    variances : ndarray of shape (m,)
        The noise variance each pair needs; the mechanism adds the maximum.
    method : MethodStep
        How the pairs were certified.
    """
    m, k = laws.mean_diff.shape
    if delta == 0:
        raise NotCertifiableError(
            "Gaussian noise cannot certify delta = 0; give a delta in (0, 1)."
        )
    if covariances_equal(laws):
        mu = max_mahalanobis(epsilon, delta, calibration)
        sq_norm = (laws.mean_diff**2).sum(axis=1)
        if k == 1:
            variance = sq_norm / mu**2 - laws.cov_a[:, 0, 0]
            return np.maximum(variance, 0.0), MethodStep.of(
                "gaussian.calibration", calibration=calibration)
        lam, vecs = np.linalg.eigh(laws.cov_a)
        proj_sq = np.einsum("mki,mk->mi", vecs, laws.mean_diff) ** 2
        tol = 1e-12 * np.maximum(np.abs(lam).max(axis=1, keepdims=True), 1e-300)

        def ok(s):
            total = lam + s[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                terms = np.where(total > tol, proj_sq / total,
                                 np.where(proj_sq > 0, np.inf, 0.0))
            return terms.sum(axis=1) <= mu**2

        return (_least_variance(ok, m, sq_norm / mu**2),
                MethodStep.of("gaussian.calibration.mahalanobis",
                              calibration=calibration))
    start = (laws.mean_diff**2).sum(axis=1) / max_mahalanobis(
        epsilon, delta, "analytic") ** 2 + 1e-300
    if k == 1:
        va, vb = laws.cov_a[:, 0, 0], laws.cov_b[:, 0, 0]
        diff = laws.mean_diff[:, 0]

        def ok(s):
            a, b = va + s, vb + s
            valid = (a > 0) & (b > 0)
            out = np.zeros(m, dtype=bool)
            if valid.any():
                d = gaussian_pair_delta(0.0, a[valid], diff[valid], b[valid], epsilon)
                out[valid] = d <= delta
            return out | ((diff == 0) & (va == vb))

        return (_least_variance(ok, m, start),
                MethodStep.of("profile.unequal-variances"))
    eye = np.eye(k)

    # Each pair's least variance by the estimate (to a relative 1e-4); the
    # largest, which the mechanisms add, is then certified for every pair by
    # the exact profile.
    variances = least_multiples(laws, np.zeros((1, k, k)), eye[None], epsilon,
                                delta, start, per_pair=True)
    if not np.isfinite(variances).all():
        raise NotCertifiableError(
            "No finite Gaussian noise certifies every pair; the secret's two "
            "sides are too far apart for a Gaussian mechanism.")
    top = int(np.argmax(variances))
    variances[top] = step_up_to_certified(laws, eye, float(variances[top]),
                                          epsilon, delta,
                                          floor=float(start[top]))
    return variances, EXACT_PROFILE


def exact_pairs_certified(laws: PairLaws, noise_cov: np.ndarray, epsilon: float,
                          delta: float, *, stop_early: bool = False
                          ) -> np.ndarray:
    """Whether each pair is certified with the noise added, by the exact profile.

    Pairs the Renyi bound (an upper bound of delta) already covers are settled
    by it; the rest are integrated exactly, likeliest failures first (by the
    estimate). With ``stop_early`` the pairs after the first failure are
    reported as failing without being integrated.
    """
    m, k = laws.mean_diff.shape
    cov_a = laws.cov_a + noise_cov
    cov_b = laws.cov_b + noise_cov
    out = np.zeros(m, dtype=bool)
    valid = _positive_definite(cov_a) & _positive_definite(cov_b)
    if not valid.any():
        return out
    index = np.flatnonzero(valid)
    bound = np.atleast_1d(renyi_gaussian_delta(laws.mean_diff[index],
                                               cov_a[index], cov_b[index],
                                               epsilon))
    out[index[bound <= delta]] = True
    rest = index[bound > delta]
    if rest.size:
        guess = estimate_pairs_delta(laws.mean_diff[rest], cov_a[rest],
                                     cov_b[rest], epsilon)
        # A coarse integration first: its error (added) costs at most a
        # thousandth of delta once multiplied by e^epsilon; a pair it leaves
        # above delta is integrated again as tightly as QUADPACK can.
        coarse = float(np.clip(1e-3 * delta * math.exp(-epsilon), 1e-15, 1e-9))
        for i in rest[np.argsort(-guess)]:
            law = (np.zeros(k), cov_a[i], laws.mean_diff[i], cov_b[i], epsilon)
            out[i] = (multivariate_gaussian_pair_delta(*law, tolerance=coarse)
                      <= delta or multivariate_gaussian_pair_delta(*law)
                      <= delta)
            if stop_early and not out[i]:
                break
    return out


def exact_max_delta(laws: PairLaws, noise_cov: np.ndarray, epsilon: float
                    ) -> float:
    """Return the largest delta of any pair at ``epsilon``, by the exact profile.

    Pairs are integrated in decreasing order of their Renyi bound, until no
    remaining bound exceeds the largest exact delta found (their own delta is
    then below it).
    """
    m, k = laws.mean_diff.shape
    cov_a = laws.cov_a + noise_cov
    cov_b = laws.cov_b + noise_cov
    if not (_positive_definite(cov_a) & _positive_definite(cov_b)).all():
        return 1.0
    bound = np.atleast_1d(renyi_gaussian_delta(laws.mean_diff, cov_a, cov_b,
                                               epsilon))
    best = 0.0
    for i in np.argsort(-bound):
        if bound[i] <= best:
            break
        best = max(best, multivariate_gaussian_pair_delta(
            np.zeros(k), cov_a[i], laws.mean_diff[i], cov_b[i], epsilon))
    return float(best)


def least_certified_scale(laws: PairLaws, shape: np.ndarray, epsilon: float,
                          delta: float, *, start: float) -> float:
    """Least t >= 0 with noise ``t * shape`` certified for every pair (exact).

    Adding more of a noise is post-processing, so each pair's delta does not
    increase with t. The estimate finds t (:func:`~skattr.calibration.
    _noise_shape.least_multiples`, from the guess ``start``); the exact profile
    then decides (:func:`step_up_to_certified`).
    """
    k = shape.shape[0]
    (t,) = least_multiples(laws, np.zeros((1, k, k)), shape[None], epsilon,
                           delta, np.array([start]))
    if not np.isfinite(t):
        raise NotCertifiableError(
            "No Gaussian noise of this shape up to 1e14 times its first guess "
            "certifies every pair; the secret's two sides are too far apart, "
            "or the noise misses a direction the two sides' laws differ in.")
    return step_up_to_certified(laws, shape, float(t), epsilon, delta,
                                floor=start)


def step_up_to_certified(laws: PairLaws, shape: np.ndarray, t: float,
                         epsilon: float, delta: float, *, floor: float) -> float:
    """Return the least t' >= t found with ``t' * shape`` certified exactly.

    ``t`` comes from the estimate, which is accurate to about 1e-9 relative:
    it is checked by the exact profile and stepped up (rarely more than once)
    until every pair holds, so the value is on the certified side. A t of 0
    that the exact profile refuses restarts from a millionth of ``floor``.
    """
    def exact_ok(scale: float) -> bool:
        return bool(exact_pairs_certified(laws, scale * shape, epsilon, delta,
                                          stop_early=True).all())

    if exact_ok(t):
        return t
    base = t if t > 0 else 1e-6 * max(floor, 1e-300)
    step = 1e-7
    for _ in range(60):
        if exact_ok(base * (1 + step)):
            return base * (1 + step)
        step *= 4.0
    raise NotCertifiableError(
        "The exact privacy profile does not certify the noise the search "
        "found; no certified noise of this shape was found.")


def raw_leakage_epsilon(laws: PairLaws, delta: float) -> np.ndarray:
    """Per-pair epsilon, at ``delta``, of releasing F with no noise at all.

    The maximum over pairs is exact (up to the profile's integration error,
    rounded to the certified side): the analytic formula for equal
    covariances, the closed form for one statistic, and the exact profile of
    two Gaussians otherwise. A pair whose Renyi bound already lies below the
    maximum keeps that bound (an upper bound, which does not move the max).
    """
    m, k = laws.mean_diff.shape
    if covariances_equal(laws):
        dist = np.sqrt(mahalanobis_sq(laws.mean_diff, laws.cov_a, 0.0))
        return np.atleast_1d(epsilon_for_mahalanobis(dist, delta))
    out = np.empty(m)
    renyi = []
    for i in range(m):
        ca, cb, diff = laws.cov_a[i], laws.cov_b[i], laws.mean_diff[i]
        if np.linalg.eigvalsh(ca)[0] <= 0 or np.linalg.eigvalsh(cb)[0] <= 0:
            out[i] = 0.0 if (np.allclose(ca, cb) and not diff.any()) else np.inf
        elif k == 1:
            out[i] = gaussian_pair_epsilon(0.0, ca[0, 0], diff[0], cb[0, 0], delta)
        else:
            out[i] = _renyi_epsilon(diff, ca, cb, delta)
            renyi.append(i)
    # Several statistics with unequal covariances: the Renyi bound is an upper
    # bound of each pair's epsilon; the exact profile (a generalised
    # chi-square, calibration/_quadratic_loss.py) replaces it pair by pair, in
    # decreasing order of the bound, until no remaining bound exceeds the
    # largest exact epsilon found: the maximum over pairs is then exact, and
    # pairs left with their bound stay upper bounds below it.
    # A pair whose exact delta at the best epsilon so far is within delta has
    # its own epsilon below it: one profile evaluation settles it, where an
    # inversion takes a dozen.
    bounded = set(renyi)
    best = max((out[i] for i in range(m) if i not in bounded), default=0.0)
    for i in sorted(renyi, key=lambda j: -out[j]):
        if out[i] <= best:
            break
        law = (np.zeros(k), laws.cov_a[i], laws.mean_diff[i], laws.cov_b[i])
        # First at a coarse integration tolerance (its error is added, so a
        # pass is certified), then at the tightest only if that fails.
        if best > 0 and any(
                multivariate_gaussian_pair_delta(*law, best, tolerance=tol)
                <= delta for tol in (_SCREEN_TOLERANCE * delta
                                     * math.exp(-best), None)):
            out[i] = best
            continue
        # Its epsilon lies above best (just checked) and at most its Renyi
        # epsilon (an upper bound): search between them.
        out[i] = multivariate_gaussian_pair_epsilon(*law, delta,
                                                    bracket=(best, out[i]))
        best = max(best, out[i])
    return out


def _renyi_epsilon(diff, cov_a, cov_b, delta: float) -> float:
    """Least epsilon whose Renyi bound is at most ``delta``.

    Each order alpha certifies delta at epsilon when (alpha - 1)(D_alpha -
    epsilon) <= log delta, i.e. epsilon >= D_alpha + log(1 / delta) /
    (alpha - 1) (Mironov, Prop. 3); the least such epsilon is the minimum
    over orders, the largest of the two directions, from one evaluation of
    the divergences (they do not depend on epsilon). The value is then
    checked against :func:`renyi_gaussian_delta` and nudged up until it holds.
    """
    d = np.asarray(diff, dtype=float)[None]
    ca, cb = np.asarray(cov_a, dtype=float)[None], np.asarray(cov_b, dtype=float)[None]
    slack = math.log(1.0 / delta) / (_DEFAULT_ORDERS - 1.0)
    eps = 0.0
    for div in (_renyi_divergence(d, ca, cb, _DEFAULT_ORDERS)[0],
                 _renyi_divergence(-d, cb, ca, _DEFAULT_ORDERS)[0]):
        with np.errstate(invalid="ignore"):
            bound = np.where(np.isfinite(div), div + slack, np.inf)
        eps = max(eps, float(bound.min()))
    if not math.isfinite(eps) or eps > 1e6:
        return np.inf
    step = max(eps, 1e-12) * 1e-12
    while renyi_gaussian_delta(diff, cov_a, cov_b, eps) > delta:
        eps += step
        step *= 2.0
    return eps


def max_covariance_gap(laws: PairLaws) -> float:
    """Largest relative difference between the two sides' covariances of a pair.

    Measured as max |C_a - C_b| over entries, relative to the largest entry.
    """
    scale = max(float(np.abs(laws.cov_a).max(initial=0.0)), 1e-300)
    return float(np.abs(laws.cov_a - laws.cov_b).max(initial=0.0) / scale)


def _positive_definite(covs: np.ndarray) -> np.ndarray:
    """Whether each (k, k) matrix is positive definite beyond rounding.

    A smallest eigenvalue within rounding of zero (relative to the largest) is
    taken as singular: Cholesky, which the Renyi bound uses, fails on such.
    """
    lam = np.linalg.eigvalsh(covs)
    return lam[:, 0] > 1e-12 * np.maximum(np.abs(lam[:, -1]), 1e-300)


def pairs_certified(laws: PairLaws, noise_cov: np.ndarray, epsilon: float,
                    delta: float, calibration: str) -> np.ndarray:
    """Whether each pair is (epsilon, delta)-indistinguishable with the noise added.

    Equal covariances: the exact Gaussian-shift condition (classic or analytic).
    Unequal: the exact profile of two Gaussians (closed form for one statistic,
    a generalised chi-square for several).
    """
    m, k = laws.mean_diff.shape
    if covariances_equal(laws):
        mu = max_mahalanobis(epsilon, delta, calibration)
        dist_sq = mahalanobis_sq(laws.mean_diff, laws.cov_a + noise_cov, 0.0)
        return dist_sq <= mu**2 * (1 + 1e-12)
    if k > 1:
        return exact_pairs_certified(laws, noise_cov, epsilon, delta)
    cov_a = laws.cov_a + noise_cov
    cov_b = laws.cov_b + noise_cov
    valid = _positive_definite(cov_a) & _positive_definite(cov_b)
    out = np.zeros(m, dtype=bool)
    if valid.any():
        d = gaussian_pair_delta(0.0, cov_a[valid, 0, 0], laws.mean_diff[valid, 0],
                                cov_b[valid, 0, 0], epsilon)
        out[valid] = np.asarray(d) <= delta
    return out


def pairs_delta(laws: PairLaws, noise_cov: np.ndarray, epsilon: float) -> float:
    """Return the largest delta, at ``epsilon``, of any pair with the noise added.

    What a noise covariance achieves, whatever calibration chose it: the exact
    Gaussian-shift profile for equal covariances, or the exact profile of two
    Gaussians with unequal ones (rounded up).
    """
    k = laws.mean_diff.shape[1]
    cov_a = laws.cov_a + noise_cov
    cov_b = laws.cov_b + noise_cov
    if covariances_equal(laws):
        dist = np.sqrt(mahalanobis_sq(laws.mean_diff, cov_a, 0.0))
        return float(np.max(np.atleast_1d(gaussian_delta(dist, epsilon)),
                            initial=0.0))
    if k > 1:
        return exact_max_delta(laws, noise_cov, epsilon)
    valid = _positive_definite(cov_a) & _positive_definite(cov_b)
    if not valid.all():
        return 1.0
    d = gaussian_pair_delta(0.0, cov_a[:, 0, 0], laws.mean_diff[:, 0],
                            cov_b[:, 0, 0], epsilon)
    return float(np.max(np.atleast_1d(d), initial=0.0))


def certify_noise_covariance(laws: PairLaws, noise_cov: np.ndarray, epsilon: float,
                             delta: float, calibration: str) -> float:
    """Least factor t >= 1 such that t * noise_cov certifies every pair.

    Returns 1.0 when the proposed noise is already certified. Raises when no
    multiple of it certifies (noise confined to directions that cannot cover a
    pair, or covariances too different for any multiple to close the gap).
    """
    if delta == 0:
        raise NotCertifiableError(
            "Gaussian noise cannot certify delta = 0; give a delta in (0, 1).")
    k = laws.mean_diff.shape[1]
    if k > 1 and not covariances_equal(laws):
        if exact_pairs_certified(laws, noise_cov, epsilon, delta,
                                 stop_early=True).all():
            return 1.0
        if not np.any(noise_cov):
            raise _no_multiple()
        try:
            return max(1.0, least_certified_scale(laws, noise_cov, epsilon,
                                                  delta, start=2.0))
        except NotCertifiableError:
            raise _no_multiple() from None

    def ok(t: float) -> bool:
        return bool(pairs_certified(laws, t * noise_cov, epsilon, delta,
                                    calibration).all())

    if ok(1.0):
        return 1.0
    hi = 2.0
    while not ok(hi):
        hi *= 2.0
        if hi > 1e12 or not np.any(noise_cov):
            raise _no_multiple()
    lo = hi / 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _no_multiple() -> NotCertifiableError:
    return NotCertifiableError(
        "No multiple (up to about 1e14) of this mechanism's noise certifies every "
        "pair: the noise lies in directions that cannot cover the pairs' mean "
        "differences or the gap between the two sides' covariances, so it "
        "would drown the release. Use mechanism='optimal', whose noise is "
        "shaped for unequal covariances, or mechanism='apgm'.")
