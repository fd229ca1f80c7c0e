"""Chen and Ohrimenko's Expected Value Mechanism family, and skattr's optimal one."""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np
from scipy import optimize

from skattr._release import Certificate
from skattr.calibration._exact_noise import exact_required_noise_variance
from skattr.calibration._gaussian import max_mahalanobis
from skattr.calibration._pair_noise import (
    certify_noise_covariance,
    covariances_equal,
    max_covariance_gap,
    pairs_certified,
    required_noise_variance,
)
from skattr.exceptions import NotCertifiableError
from skattr.mechanisms._pair_laws import GaussianPairLawMechanism
from skattr.mechanisms._registry import register
from skattr.mechanisms._relaxations import (
    check_relaxations,
    max_divergence_relaxation,
    wasserstein_relaxation,
)
from skattr.noise import GaussianNoise, LaplaceNoise, NoiseLaw
from skattr.theta._pairs import PairLaws
from skattr.utils._docstrings import fill_doc
from skattr.utils._param_validation import Interval

__all__ = [
    "DirectionalGaussian",
    "DirectionalLaplace",
    "DirectionalUncertaintyGaussian",
    "EigenvectorGaussian",
    "ExpectedValueGaussian",
    "ExpectedValueLaplace",
    "OptimalGaussian",
    "daum_variance",
    "span_basis",
]

_RANK_TOL = 1e-9


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


class _ExpectedValueMechanism(GaussianPairLawMechanism):
    """Shared plan of the Expected Value family: noise law, then certificate."""

    _parameter_constraints = {
        **GaussianPairLawMechanism._parameter_constraints,
        "lambda_eta": [Interval("real", 0, None, closed="left"), None],
        "eta": [Interval("real", 0, 1, closed="left")],
        "wasserstein_w": [Interval("real", 0, None, closed="left"), None],
        "wasserstein_lambda": [Interval("real", 0, None, closed="neither"), None],
    }

    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=1e-3,
                 calibration="analytic", theta="auto",
                 sampling="without-replacement", covariances="certify",
                 law="auto", lambda_eta=None, eta=0.0, wasserstein_w=None,
                 wasserstein_lambda=None, random_state=None):
        self.query = query
        self.secret = secret
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.theta = theta
        self.sampling = sampling
        self.covariances = covariances
        self.law = law
        self.lambda_eta = lambda_eta
        self.eta = eta
        self.wasserstein_w = wasserstein_w
        self.wasserstein_lambda = wasserstein_lambda
        self.random_state = random_state

    def _mu(self) -> float:
        return max_mahalanobis(self.epsilon, self.delta, self.calibration)

    @abstractmethod
    def _calibrate(self, laws: PairLaws, n: int
                   ) -> tuple[NoiseLaw, float, str, list[str]]:
        """Return the noise law, its delta, how it was derived, what it assumes."""

    def _plan(self, n: int) -> tuple[NoiseLaw, Certificate]:
        check_relaxations(self.lambda_eta, self.wasserstein_w,
                          self.wasserstein_lambda)
        per_secret, assumptions = self._prepared_laws(n)
        laws = PairLaws.concatenate(per_secret)
        noise, delta, method, assumed = self._calibrate(laws, n)
        assumptions = list(laws.assumptions) + assumptions + assumed
        epsilon = self.epsilon
        if self.lambda_eta is not None:
            epsilon, delta, assumed = max_divergence_relaxation(
                epsilon, delta, self.lambda_eta, self.eta)
            assumptions.append(assumed)
        if self.wasserstein_w is not None and self.wasserstein_w > 0:
            noise, epsilon, delta, note, assumed = wasserstein_relaxation(
                noise, epsilon, delta, self.wasserstein_w,
                self.wasserstein_lambda)
            method += note
            assumptions.append(assumed)
        return noise, Certificate(
            epsilon=epsilon, delta=delta, sensitivity=laws.sensitivity,
            inherent_variance=laws.min_variance, method=method,
            assumptions=tuple(assumptions))


class _LaplaceExpectedValue(_ExpectedValueMechanism):
    """Laplace noise: (epsilon, 0) when the two sides are translations."""

    @abstractmethod
    def _laplace_noise(self, laws: PairLaws) -> tuple[float, np.ndarray, str]:
        """Return the Laplace scale, basis (k, d) and derivation."""

    def _calibrate(self, laws, n):
        if self.law_ == "exact":
            raise NotCertifiableError(
                "The exact laws of a count or an integer sum are not "
                "translations of each other, so the Expected Value Mechanism's "
                "Laplace noise cannot certify (epsilon, 0) on them (Chen & "
                "Ohrimenko Thm 4.1/4.3). Use mechanism='wasserstein' (Laplace "
                "noise certified from the exact laws) or a Gaussian variant.")
        if not covariances_equal(laws):
            raise NotCertifiableError(
                f"The laws of F under the two secrets of a pair are not "
                f"translations of each other (their covariances differ by up "
                f"to {max_covariance_gap(laws):.2%}), so Laplace noise cannot "
                "certify an (epsilon, 0) guarantee (Chen & Ohrimenko Thm "
                "4.1/4.3). Use a Gaussian variant, or "
                "covariances='assume-equal' to take the translation "
                "assumption explicitly.")
        scale, basis, method = self._laplace_noise(laws)
        assumptions = [
            "the laws of F under the two secrets of each pair are translations "
            "of each other (Chen & Ohrimenko Thm 4.1, 4.3)"]
        assumptions += self._law_assumptions(n, scale == 0.0)
        return LaplaceNoise(scale, basis), 0.0, method, assumptions


class _GaussianExpectedValue(_ExpectedValueMechanism):
    """Gaussian noise from the theorem's formula, verified pair by pair."""

    # Gaussian noise certifies no (epsilon, 0) guarantee.
    _parameter_constraints = {
        **_ExpectedValueMechanism._parameter_constraints,
        "delta": [Interval("real", 0, 1, closed="neither")],
    }

    @abstractmethod
    def _gaussian_noise(self, laws: PairLaws) -> tuple[np.ndarray, str]:
        """Return the noise covariance (k, k) and how it was derived."""

    def _calibrate(self, laws, n):
        equal = covariances_equal(laws)
        assumptions = []
        noise_cov, method = self._gaussian_noise(laws)
        delta = self.delta
        if not np.any(noise_cov) and not pairs_certified(
                laws, noise_cov, self.epsilon, self.delta,
                self.calibration).all():
            # The theorem's formula asks for no noise (it assumes equal
            # covariances) but the pairs are not certified without: start
            # from noise along the mean differences' span and scale it.
            basis = span_basis(laws.mean_diff)
            noise_cov = basis @ basis.T * (laws.sensitivity / self._mu()) ** 2
            method += "; the formula's zero noise did not certify"
        if self.law_ == "exact":
            # The formula used the pmfs' moments; the exact laws decide.
            required = exact_required_noise_variance(
                self._exact_pairs(n), self.epsilon, self.delta)
            if required > float(noise_cov[0, 0]):
                method += (f"; raised to variance {required:.4g} to certify "
                           "the exact laws")
                noise_cov = np.array([[required]])
            method += ("; exact laws of the statistic plus the noise: privacy "
                       "profile computed numerically, rounded up")
        else:
            factor = certify_noise_covariance(laws, noise_cov, self.epsilon,
                                              self.delta, self.calibration)
            if factor > 1.0:
                why = ("unequal covariances (exact 1-D profile or Renyi "
                       "bound)" if not equal else "every pair (the theorem's "
                       "assumptions hold only approximately)")
                method += f"; scaled by {factor:.4g} to certify {why}"
            noise_cov = noise_cov * factor
            if not equal:
                assumptions.append(
                    f"the two sides' covariances differ by up to "
                    f"{max_covariance_gap(laws):.2%} and the certificate "
                    "covers that")
            delta, note = self._stated_delta(laws, noise_cov, delta)
            method += note
        assumptions += self._law_assumptions(n, not np.any(noise_cov))
        return GaussianNoise(noise_cov), delta, method, assumptions


_COVARIANCES = """
    covariances : {"certify", "assume-equal"}, default="certify"
        The theorems assume the laws under the two secrets are translations
        (equal covariances). ``"certify"``: when the modelled covariances differ,
        the noise is verified with a bound that holds for unequal covariances and
        scaled up until it certifies (Gaussian), or the release is refused
        (Laplace). ``"assume-equal"``: take the assumption as the paper's
        experiments do; the release records it.
    """

_WASSERSTEIN_RELAXATION = """
    wasserstein_w : float or None, default=None
        Thm 4.7: if the modelled laws are within infinity-Wasserstein distance
        W = ``wasserstein_w`` of the true ones, Laplace noise of scale
        W / lambda is added to every statistic and the certificate becomes
        (epsilon + 2 lambda, e^lambda delta). Not with ``lambda_eta``.
    wasserstein_lambda : float or None, default=None
        The lambda of Thm 4.7, > 0; given with ``wasserstein_w``.
    """

# The parameters in the order of the signature; the Laplace variants differ
# in delta, which their noise does not use, and in refusing the exact law.
_LAPLACE_PARAMETERS = """
    Parameters
    ----------
    %(query)s
    %(pair_law_secret)s
    %(epsilon)s
    delta : float, default=1e-3
        Not used by the noise: Laplace noise certifies delta = 0 (Thm 4.1,
        4.3). It is the delta at which ``leakage`` and ``noiseless_certified``
        judge the statistic without noise.
    %(gaussian_calibration)s
    %(pair_law_theta)s
    %(sampling)s
    %(covariances)s
    %(law)s
        The Laplace variants refuse the exact law: their theorems need the
        laws under the two secrets to be translations of each other.
    %(max_divergence)s
    %(wasserstein_relaxation)s
    %(random_state)s
    """

_GAUSSIAN_PARAMETERS = """
    Parameters
    ----------
    %(query)s
    %(pair_law_secret)s
    %(epsilon)s
    %(gaussian_delta)s
    %(gaussian_calibration)s
    %(pair_law_theta)s
    %(sampling)s
    %(covariances)s
    %(law)s
    %(max_divergence)s
    %(wasserstein_relaxation)s
    %(random_state)s
    """

_ATTRIBUTES = """
    Attributes
    ----------
    %(pair_law_attributes)s
    """

_REFERENCES = """
    References
    ----------
    .. [1]
       %(chen_ohrimenko)s
    """

_fill_doc = fill_doc(
    covariances=_COVARIANCES,
    wasserstein_relaxation=_WASSERSTEIN_RELAXATION,
    laplace_parameters=_LAPLACE_PARAMETERS,
    gaussian_parameters=_GAUSSIAN_PARAMETERS,
    attributes=_ATTRIBUTES,
    references=_REFERENCES,
)


@_fill_doc
@register
class ExpectedValueLaplace(_LaplaceExpectedValue):
    """Expected Value Mechanism, Laplace noise (Chen & Ohrimenko Thm 4.1).

    Adds Laplace noise of scale Delta_E,1 / epsilon to every statistic, where
    Delta_E,1 is the largest l1 distance between the expected statistics under
    the two secrets of a pair. Certifies (epsilon, 0) when the laws under the two
    secrets are translations of each other.

    %(laplace_parameters)s

    %(attributes)s

    %(references)s

    Examples
    --------
    >>> import skattr
    >>> from skattr.datasets import make_hospital
    >>> ref = make_hospital(3000, random_state=0)
    >>> mech = skattr.mechanisms.ExpectedValueLaplace(
    ...     query=skattr.Query.mean(["blood_pressure"]),
    ...     secret=skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)]),
    ...     covariances="assume-equal", law="gaussian").fit(ref)
    >>> plan = mech.plan(n=50)
    >>> round(plan.noise_scale, 3), plan.delta
    (1.213, 0.0)
    """

    mechanism_name = "expm-laplace"

    def _laplace_noise(self, laws):
        k = laws.mean_diff.shape[1]
        l1 = float(np.abs(laws.mean_diff).sum(axis=1).max(initial=0.0))
        return (l1 / self.epsilon, np.eye(k),
                "Laplace scale Delta_E,1 / epsilon on each statistic (Thm 4.1)")


@_fill_doc
@register
class ExpectedValueGaussian(_GaussianExpectedValue):
    """Expected Value Mechanism, Gaussian noise (Chen & Ohrimenko Thm 4.2).

    Adds N(0, sigma^2 I) with sigma = Delta_E,2 / mu, where Delta_E,2 is the
    largest l2 distance between the expected statistics under the two secrets
    of a pair and mu = epsilon / c (classic) or the analytic bound.

    %(gaussian_parameters)s

    %(attributes)s

    %(references)s
    """

    mechanism_name = "expm-gaussian"

    def _gaussian_noise(self, laws):
        k = laws.mean_diff.shape[1]
        variance = (laws.sensitivity / self._mu()) ** 2
        return (variance * np.eye(k),
                "N(0, (Delta_E,2 / mu)^2 I) (Thm 4.2)")


@_fill_doc
@register
class DirectionalLaplace(_LaplaceExpectedValue):
    """Directional Expected Value Mechanism, Laplace (Chen & Ohrimenko 4.3).

    Adds Laplace noise only along the directions the expected statistics move in
    as the secret changes: along v when every mean difference is parallel to v
    (scale Delta_E,2 / epsilon), otherwise along an orthonormal basis of their
    span, with scale the largest l1 norm of a difference in that basis over
    epsilon (the Laplace mechanism in those coordinates).

    %(laplace_parameters)s

    %(attributes)s

    %(references)s
    """

    mechanism_name = "dirm-laplace"

    def _laplace_noise(self, laws):
        basis = span_basis(laws.mean_diff)
        l1 = float(np.abs(laws.mean_diff @ basis).sum(axis=1).max(initial=0.0))
        return (l1 / self.epsilon, basis,
                f"Laplace noise on the {basis.shape[1]}-dimensional span of the "
                "mean differences (Thm 4.3)")


@_fill_doc
@register
class DirectionalGaussian(_GaussianExpectedValue):
    """Directional Expected Value Mechanism, Gaussian (Chen & Ohrimenko 4.2).

    Adds N(0, sigma^2 V V^T), sigma = Delta_E,2 / mu, with V an orthonormal basis
    of the span of the mean differences (one direction when they are parallel).

    %(gaussian_parameters)s

    %(attributes)s

    %(references)s
    """

    mechanism_name = "dirm-gaussian"

    def _gaussian_noise(self, laws):
        basis = span_basis(laws.mean_diff)
        variance = (laws.sensitivity / self._mu()) ** 2
        return (variance * basis @ basis.T,
                f"N(0, (Delta_E,2 / mu)^2 V V^T) on the {basis.shape[1]}-"
                "dimensional span of the mean differences (Sec. 4.2)")


@_fill_doc
@register
class EigenvectorGaussian(_GaussianExpectedValue):
    """Eigenvector Gaussian Mechanism (Chen & Ohrimenko Thm 4.5).

    Uses the data's own variance along the eigenvectors v_k of the covariance of
    F: sigma_k^2 = max(0, (Delta_E,2 / mu)^2 - min_theta v_k^T Sigma_theta v_k)
    and noise sum_k sigma_k^2 v_k v_k^T. The theorem assumes the eigenvectors are
    the same under every theta; skattr takes those of the average covariance
    and verifies the certificate of every pair exactly, scaling or refusing
    when the assumption fails.

    %(gaussian_parameters)s

    %(attributes)s

    %(references)s

    Examples
    --------
    The paper's example (Sec. 4.3): two Gaussians with means (100, 101) and
    (99, 102) and covariance [[22, -6], [-6, 13]] at epsilon = 1, delta = 1e-3
    need variances of about 18.52 and 3.52 along the eigenvectors.

    >>> import numpy as np, pandas as pd, skattr
    >>> from skattr.theta import ExpertTheta, GroupMoments
    >>> cov = np.array([[22.0, -6.0], [-6.0, 13.0]])
    >>> theta = ExpertTheta([GroupMoments(
    ...     mean_in=[99.0, 102.0], mean_out=[100.0, 101.0], cov_in=cov,
    ...     cov_out=cov, columns=("a", "b"))])
    >>> frame = pd.DataFrame({"s": [0, 1] * 5, "a": 0.0, "b": 0.0})
    >>> mech = skattr.mechanisms.EigenvectorGaussian(
    ...     query=skattr.Query.sum(["a", "b"]),
    ...     secret=skattr.Secret.proportion("s", 1, pairs=[(0.0, 1.0)]),
    ...     theta=theta, sampling="with-replacement", calibration="classic",
    ...     law="gaussian",
    ...     epsilon=0.999, delta=1e-3).fit(frame)
    >>> lam, vec = np.linalg.eigh(mech.plan(n=1).noise_covariance)
    >>> np.round(lam, 2)
    array([ 3.58, 18.58])
    """

    mechanism_name = "eigm"

    def _gaussian_noise(self, laws):
        covs = laws.equalised().cov_a  # every side's covariance
        _, vecs = np.linalg.eigh(covs.mean(axis=0))
        lam = np.einsum("ki,mkl,li->mi", vecs, covs, vecs)
        target = (laws.sensitivity / self._mu()) ** 2
        variances = np.maximum(0.0, target - lam.min(axis=0))
        return ((vecs * variances) @ vecs.T,
                "sigma_k^2 = max(0, (Delta_E,2 / mu)^2 - lambda_k) along the "
                "covariance's eigenvectors (Thm 4.5)")


@_fill_doc
@register
class DirectionalUncertaintyGaussian(_GaussianExpectedValue):
    """DauM: directional noise and adversarial uncertainty (Chen & Ohrimenko).

    When every mean difference is parallel to a unit vector v, adds
    N(0, sigma^2 v v^T) with Algorithm 1's variance in closed form:
    sigma^2 = max over pairs of max(0, (alpha / mu)^2 - 1 / (v^T Sigma^-1 v)),
    alpha the difference's component along v (see :func:`daum_variance`).
    Refuses when the differences are not parallel.

    %(gaussian_parameters)s

    %(attributes)s

    %(references)s
    """

    mechanism_name = "daum"

    def _gaussian_noise(self, laws):
        basis = span_basis(laws.mean_diff)
        k = laws.mean_diff.shape[1]
        if basis.shape[1] == 0:
            return np.zeros((k, k)), "no mean difference: no noise"
        if basis.shape[1] > 1:
            raise NotCertifiableError(
                f"DauM needs the mean differences to be parallel (Chen & Ohrimenko "
                f"App. A.2); here they span {basis.shape[1]} directions. Use "
                "mechanism='optimal' or 'dirm-gaussian'.")
        v = basis[:, 0]
        sides = laws.equalised()
        diffs, covs = sides.mean_diff, sides.cov_a
        variance = float(daum_variance(diffs @ v, covs, v, self._mu()).max())
        return (variance * np.outer(v, v),
                "sigma^2 = max(0, (alpha / mu)^2 - 1 / (v^T Sigma^-1 v)) along v "
                "(App. A.2, Alg. 1, closed form)")


@_fill_doc
@register
class OptimalGaussian(_GaussianExpectedValue):
    """Least-error Gaussian noise that certifies every pair (skattr's own).

    Finds the noise covariance Sigma_Z of least expected squared error
    tr(Sigma_Z) such that, for every pair and each side's covariance Sigma,
    (mu_a - mu_b)^T (Sigma + Sigma_Z)^-1 (mu_a - mu_b) <= mu^2, i.e.
    Sigma + Sigma_Z >= d d^T / mu^2 (a semidefinite program). For one pair the
    optimum is the positive part of d d^T / mu^2 - Sigma, a rank-one matrix; in
    general skattr solves the program with scipy (SLSQP on a Cholesky factor,
    adding violated pairs as cuts), then keeps the least-trace certified
    candidate among that solution and the DauM, EigM, directional and isotropic
    ones, so it never does worse than any of them.

    %(gaussian_parameters)s

    %(attributes)s

    %(references)s
    """

    mechanism_name = "optimal"

    def _gaussian_noise(self, laws):
        mu = self._mu()
        k = laws.mean_diff.shape[1]
        sides = laws.equalised()
        diffs, covs = sides.mean_diff, sides.cov_a
        if not np.any(diffs):
            return np.zeros((k, k)), "no mean difference: no noise"
        # The isotropic noise of the Attribute-Private Gaussian Mechanism, found
        # on the actual laws, always certifies: the fallback candidate.
        required, _ = required_noise_variance(laws, self.epsilon, self.delta,
                                              self.calibration)
        iso = float(required.max()) * np.eye(k)
        candidates = [iso]
        for cls in (DirectionalUncertaintyGaussian, EigenvectorGaussian,
                    DirectionalGaussian):
            try:
                candidates.append(cls._gaussian_noise(self, laws)[0])
            except NotCertifiableError:
                pass
        candidates.append(_solve_least_trace(diffs, covs, mu, iso))
        best, best_trace = iso, np.trace(iso)
        for cov in candidates:
            cov = 0.5 * (cov + cov.T)
            try:
                factor = certify_noise_covariance(laws, cov, self.epsilon,
                                                  self.delta, self.calibration)
            except NotCertifiableError:
                continue
            if factor * np.trace(cov) < best_trace:
                best, best_trace = cov * factor, factor * np.trace(cov)
        return best, ("least-trace noise covariance certifying every pair "
                      "(semidefinite program)")


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
