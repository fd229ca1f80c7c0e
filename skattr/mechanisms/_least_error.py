"""The least-error Gaussian noise that certifies every pair, and its shapes.

The noise of ``mechanism="optimal"``, also the yardstick the other Gaussian
mechanisms report their expected error against (``Plan.error_ratio``); and the
fixed shapes of Chen and Ohrimenko's Expected Value family (DauM, EigM, DirM)
as functions of the pairs' laws.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict

import numpy as np
from scipy import optimize

from skattr._certificate import MethodStep
from skattr.calibration._gaussian import max_mahalanobis
from skattr.calibration._noise_shape import least_error_noise, noise_objective
from skattr.calibration._pair_noise import (
    EXACT_PROFILE,
    certify_noise_covariance,
    covariances_equal,
    pairs_certified,
    required_noise_variance,
)
from skattr.exceptions import NotCertifiableError
from skattr.laws._gaussian import PairLaws

__all__ = [
    "daum_noise",
    "daum_variance",
    "dirm_noise",
    "eigm_noise",
    "least_error_covariance",
    "profile_name",
    "span_basis",
]

_RANK_TOL = 1e-9

# The Theta mechanisms of one release share their pair laws ("auto" plans
# every candidate, and each Expected Value mechanism compares itself with
# optimal), so the least-error noise is kept per (laws, epsilon, delta, ...).
_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 32


def span_basis(diffs: np.ndarray) -> np.ndarray:
    """Orthonormal basis (k, d) of the span of the mean differences (rows)."""
    if not np.any(diffs):
        return np.zeros((diffs.shape[1], 0))
    _, sing, vt = np.linalg.svd(diffs, full_matrices=False)
    rank = int(np.sum(sing > _RANK_TOL * sing[0]))
    return vt[:rank].T


def daum_variance(alpha: np.ndarray, cov: np.ndarray, v: np.ndarray,
                  mu: float) -> np.ndarray:
    """DauM's noise variance along v, in closed form (Chen & Ohrimenko App. A.2).

    Algorithm 1 searches for the least sigma^2 with
    Sigma + (sigma^2 - (alpha c / epsilon)^2) v v^T positive definite. Since
    det(Sigma + t v v^T) = det(Sigma) (1 + t v^T Sigma^-1 v), that happens exactly
    when t > -1 / (v^T Sigma^-1 v), so

        sigma^2 = max(0, (alpha / mu)^2 - 1 / (v^T Sigma^-1 v)),

    with mu = epsilon / c (classic) or the analytic bound. A covariance singular
    along v gives v^T Sigma^-1 v = inf: no help from the data's own variance.

    Parameters
    ----------
    alpha : ndarray of shape (m,)
        The mean differences' components along v.
    cov : ndarray of shape (m, k, k)
        The covariance of F on the side each difference is measured from.
    v : ndarray of shape (k,)
        The unit direction.
    mu : float
        The largest certified Mahalanobis distance.

    Returns
    -------
    ndarray of shape (m,)
        The variance each pair needs.
    """
    lam, vecs = np.linalg.eigh(cov)
    proj_sq = np.einsum("mki,k->mi", vecs, v) ** 2
    tol = 1e-12 * np.maximum(np.abs(lam).max(axis=1, keepdims=True), 1e-300)
    with np.errstate(divide="ignore"):
        terms = np.where(lam > tol, proj_sq / np.where(lam > tol, lam, 1.0),
                         np.where(proj_sq > 1e-24, np.inf, 0.0))
    quad = terms.sum(axis=1)
    with np.errstate(divide="ignore"):
        inherent = np.where(quad > 0, 1.0 / quad, np.inf)
    return np.maximum(0.0, (alpha / mu) ** 2 - inherent)


def profile_name(laws: PairLaws) -> MethodStep:
    """Name the certificate of unequal covariances for these pairs' dimension."""
    if laws.mean_diff.shape[1] == 1:
        return MethodStep.of("profile.two-gaussians")
    return EXACT_PROFILE


def _fixed_shapes(laws: PairLaws, mu: float) -> list[np.ndarray]:
    """Return the DauM, EigM and directional noise covariances for these pairs."""
    shapes = []
    for noise in (daum_noise, eigm_noise, dirm_noise):
        try:
            shapes.append(noise(laws, mu)[0])
        except NotCertifiableError:
            pass
    return shapes


def _key(laws: PairLaws, *parts) -> str:
    digest = hashlib.sha256(repr(parts).encode())
    for array in (laws.mean_diff, laws.cov_a, laws.cov_b):
        digest.update(np.ascontiguousarray(array, dtype=float).tobytes())
        digest.update(repr(array.shape).encode())
    return digest.hexdigest()


def least_error_covariance(laws: PairLaws, epsilon: float, delta: float,
                           calibration: str = "analytic",
                           objective: str = "expected-error"
                           ) -> tuple[np.ndarray, str]:
    """Return the least-error Gaussian noise covariance certifying every pair.

    Equal covariances: the least-trace semidefinite program (SLSQP with cuts)
    and the DauM, EigM, directional and isotropic candidates, each certified
    by the Gaussian-shift condition with ``calibration``. Unequal
    covariances: the rank-one-plus-isotropic and eigen-aligned families
    searched along their certified frontier
    (:mod:`skattr.calibration._noise_shape`), with those candidates, each
    certified by the exact privacy profile. The least by ``objective`` wins.

    Parameters
    ----------
    laws : PairLaws
        The laws of F on both sides of every pair.
    epsilon, delta : float
        The guarantee.
    calibration : {"analytic", "classic"}
        Used with equal covariances only.
    objective : {"expected-error", "trace"}
        E||Z||_2, or tr(Sigma_Z) = E||Z||_2^2.

    Returns
    -------
    covariance : ndarray of shape (k, k)
    method : MethodStep
    """
    equal = covariances_equal(laws)
    key = _key(laws, epsilon, delta, calibration if equal else "exact",
               objective)
    if key not in _CACHE:
        _CACHE[key] = _least_error_covariance(laws, epsilon, delta, calibration,
                                              objective, equal)
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    cov, method = _CACHE[key]
    return cov.copy(), method


def _least_error_covariance(laws, epsilon, delta, calibration, objective,
                            equal):
    k = laws.mean_diff.shape[1]
    sides = laws.equalised()
    diffs, covs = sides.mean_diff, sides.cov_a
    if not np.any(diffs):
        if equal or pairs_certified(laws, np.zeros((k, k)), epsilon, delta,
                                    calibration).all():
            return np.zeros((k, k)), MethodStep.of("no-mean-difference")
    if k == 1:
        # One statistic: the least noise is the least variance, certified by
        # the closed-form profile (of a shift, or of two Gaussians).
        required, method = required_noise_variance(laws, epsilon, delta,
                                                   calibration)
        return float(required.max(initial=0.0)) * np.eye(1), method
    mu = max_mahalanobis(epsilon, delta, calibration if equal else "analytic")
    # The isotropic noise the equal-covariance condition needs: the program's
    # start (and, with equal covariances, a candidate that always certifies).
    required, _ = required_noise_variance(sides, epsilon, delta,
                                          calibration if equal else "analytic")
    iso = float(required.max()) * np.eye(k)
    shapes = _fixed_shapes(laws, mu)
    if np.any(diffs):
        try:
            shapes.append(_solve_least_trace(diffs, covs, mu, iso))
        except np.linalg.LinAlgError:
            # A search that met a singular matrix (a constant statistic)
            # proposes nothing; the other shapes are certified as usual.
            pass
    if equal:
        candidates = [iso, *shapes]
        method = MethodStep.of("least-error")
    else:
        # Rank-one shapes lie in the searched families already; the program's
        # solution and a many-direction span do not.
        extra = [c for c in shapes if np.linalg.matrix_rank(c) > 1]
        candidates = least_error_noise(laws, epsilon, delta, objective,
                                       extra=tuple(extra))
        method = MethodStep.of("least-error.unequal", profile=profile_name(laws))
    best, best_size = None, math.inf
    for cov in sorted(candidates, key=lambda c: noise_objective(c, objective)):
        cov = 0.5 * (cov + cov.T)
        if noise_objective(cov, objective) >= best_size:
            break
        try:
            factor = certify_noise_covariance(laws, cov, epsilon, delta,
                                              calibration)
        except NotCertifiableError:
            continue
        size = noise_objective(cov * factor, objective)
        if size < best_size:
            best, best_size = cov * factor, size
    if best is None:
        raise NotCertifiableError(
            "No Gaussian noise of the searched shapes certifies every pair; the "
            "secret's two sides are too far apart for a Gaussian mechanism. "
            "Use mechanism='approx-wasserstein'.")
    return best, method


def dirm_noise(laws: PairLaws, mu: float) -> tuple[np.ndarray, MethodStep]:
    """DirM: N(0, (Delta_E,2 / mu)^2 V V^T) on the span of the differences."""
    basis = span_basis(laws.mean_diff)
    variance = (laws.sensitivity / mu) ** 2
    return (variance * basis @ basis.T,
            MethodStep.of("dirm.gaussian", dimension=basis.shape[1]))


def eigm_noise(laws: PairLaws, mu: float) -> tuple[np.ndarray, MethodStep]:
    """EigM: sigma_k^2 = max(0, (Delta_E,2 / mu)^2 - lambda_k) (Thm 4.5)."""
    covs = laws.equalised().cov_a  # every side's covariance
    _, vecs = np.linalg.eigh(covs.mean(axis=0))
    lam = np.einsum("ki,mkl,li->mi", vecs, covs, vecs)
    target = (laws.sensitivity / mu) ** 2
    variances = np.maximum(0.0, target - lam.min(axis=0))
    return (vecs * variances) @ vecs.T, MethodStep.of("eigm")


def daum_noise(laws: PairLaws, mu: float) -> tuple[np.ndarray, MethodStep]:
    """DauM: Algorithm 1's variance along v, in closed form (App. A.2)."""
    basis = span_basis(laws.mean_diff)
    k = laws.mean_diff.shape[1]
    if basis.shape[1] == 0:
        return np.zeros((k, k)), MethodStep.of("no-mean-difference")
    if basis.shape[1] > 1:
        raise NotCertifiableError(
            f"DauM needs the mean differences to be parallel (Chen & Ohrimenko "
            f"App. A.2); here they span {basis.shape[1]} directions. Use "
            "mechanism='optimal' or 'dirm-gaussian'.")
    v = basis[:, 0]
    sides = laws.equalised()
    diffs, covs = sides.mean_diff, sides.cov_a
    variance = float(daum_variance(diffs @ v, covs, v, mu).max())
    return variance * np.outer(v, v), MethodStep.of("daum")


def _solve_least_trace(diffs, covs, mu, start) -> np.ndarray:
    """Minimise tr(L L^T) s.t. d^T (Sigma + L L^T)^-1 d <= mu^2 for every side."""
    k = diffs.shape[1]
    scale = float((np.linalg.norm(diffs, axis=1) ** 2).max()) / mu**2
    d = diffs / math.sqrt(scale)
    c = covs / scale
    rows, cols = np.tril_indices(k)
    lower = np.linalg.cholesky(start / scale + 1e-12 * np.eye(k))
    x0 = lower[rows, cols]

    def unpack(x):
        low = np.zeros((k, k))
        low[rows, cols] = x
        return low

    def margins(x, active):
        low = unpack(x)
        a = c[active] + low @ low.T
        w = np.linalg.solve(a, d[active][..., None])[..., 0]
        return mu**2 - np.einsum("mi,mi->m", d[active], w), w, low

    # Start with the eight tightest constraints; add violated ones as cuts.
    active = list(np.argsort(margins(x0, np.arange(len(d)))[0])[:8])
    x = x0
    for _ in range(10):
        act = np.array(sorted(set(active)))

        def cons(x, act=act):
            return margins(x, act)[0]

        def cons_jac(x, act=act):
            _, w, low = margins(x, act)
            grads = 2 * np.einsum("mi,mj,jl->mil", w, w, low)
            return grads[:, rows, cols]

        result = optimize.minimize(
            lambda x: float(x @ x), x, jac=lambda x: 2 * x, method="SLSQP",
            constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac}],
            options={"maxiter": 300, "ftol": 1e-12})
        x = result.x
        all_margins = margins(x, np.arange(len(d)))[0]
        violated = np.flatnonzero(all_margins < -1e-9 * mu**2)
        if violated.size == 0:
            break
        active.extend(violated[np.argsort(all_margins[violated])][:8].tolist())
    low = unpack(x)
    return low @ low.T * scale
