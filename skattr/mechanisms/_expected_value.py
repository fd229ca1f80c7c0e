"""Chen and Ohrimenko's Expected Value Mechanism family, and skattr's optimal one."""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np

from skattr._certificate import Assumption, Method, MethodStep
from skattr._release import Certificate
from skattr.calibration._exact_noise import exact_required_noise_variance
from skattr.calibration._gaussian import max_mahalanobis
from skattr.calibration._noise_shape import (
    OBJECTIVES,
    noise_objective,
)
from skattr.calibration._pair_noise import (
    certify_noise_covariance,
    covariances_equal,
    max_covariance_gap,
    pairs_certified,
)
from skattr.exceptions import NotCertifiableError
from skattr.laws._gaussian import PairLaws
from skattr.mechanisms._keywords_of_0_2 import (
    pair_law_keywords,
    takes_keywords_of_0_2,
)
from skattr.mechanisms._least_error import (
    daum_noise,
    daum_variance,
    dirm_noise,
    eigm_noise,
    least_error_covariance,
    profile_name,
    span_basis,
)
from skattr.mechanisms._pair_laws import GaussianPairLawMechanism
from skattr.mechanisms._registry import register
from skattr.mechanisms._relaxations import MaxDivergenceGap, WassersteinGap
from skattr.noise import GaussianNoise, LaplaceNoise, NoiseLaw
from skattr.utils._docstrings import fill_doc
from skattr.utils._param_validation import Interval, Options

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

#: Default of ``max_error_ratio``: a fixed noise shape scaled to certify unequal
#: covariances is refused when its expected error exceeds optimal's by more.
MAX_ERROR_RATIO = 10.0


class _ExpectedValueMechanism(GaussianPairLawMechanism):
    """Shared plan of the Expected Value family: noise law, then certificate."""

    _parameter_constraints = {
        **GaussianPairLawMechanism._parameter_constraints,
        "relaxation": [MaxDivergenceGap, WassersteinGap, None],
    }

    @takes_keywords_of_0_2
    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=1e-3,
                 calibration="analytic", theta="auto", law="auto",
                 relaxation=None, bounds="robust", secure=False,
                 random_state=None, allow_large_delta=False, **deprecated):
        self.query = query
        self.secret = secret
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.theta = theta
        self.law, self.relaxation = pair_law_keywords(
            law, relaxation, deprecated, type(self).__name__, wasserstein=True)
        self.bounds = bounds
        self.secure = secure
        self.random_state = random_state
        self.allow_large_delta = allow_large_delta

    def _mu(self) -> float:
        return max_mahalanobis(self.epsilon, self.delta, self.calibration)

    @abstractmethod
    def _calibrate(self, laws: PairLaws, n: int
                   ) -> tuple[NoiseLaw, float, Method, list[Assumption],
                              float | None]:
        """Return the noise law, its delta, how it was derived, what it assumes.

        And the ratio of its expected error to optimal's (None when not
        compared).
        """

    def _plan(self, n: int) -> tuple[NoiseLaw, Certificate]:
        per_secret, assumptions = self._prepared_laws(n)
        laws = PairLaws.concatenate(per_secret)
        noise, delta, method, assumed, ratio = self._calibrate(laws, n)
        assumptions = list(laws.assumptions) + assumptions + assumed
        epsilon = self.epsilon
        if self.relaxation is not None:
            noise, epsilon, delta, method, assumed = self.relaxation.apply(
                noise, epsilon, delta, method)
            if assumed is not None:
                assumptions.append(assumed)
        return noise, Certificate(
            epsilon=epsilon, delta=delta, sensitivity=laws.sensitivity,
            inherent_variance=laws.min_variance, certified_by=method,
            assumed=tuple(assumptions), error_ratio=ratio)


class _LaplaceExpectedValue(_ExpectedValueMechanism):
    """Laplace noise: (epsilon, 0) when the two sides are translations."""

    noise = "laplace"
    # Exact laws are not translations of each other.
    calibrates = ("gaussian",)

    @abstractmethod
    def _laplace_noise(self, laws: PairLaws
                       ) -> tuple[float, np.ndarray, MethodStep]:
        """Return the Laplace scale, basis (k, d) and derivation."""

    def _uncalibrated(self) -> NotCertifiableError:
        return NotCertifiableError(
            "The exact laws of a count or an integer sum are not "
            "translations of each other, so the Expected Value Mechanism's "
            "Laplace noise cannot certify (epsilon, 0) on them (Chen & "
            "Ohrimenko Thm 4.1/4.3). Use mechanism='wasserstein' (Laplace "
            "noise certified from the exact laws) or a Gaussian variant.")

    def _calibrate(self, laws, n):
        if not covariances_equal(laws):
            raise NotCertifiableError(
                f"The laws of F under the two secrets of a pair are not "
                f"translations of each other (their covariances differ by up "
                f"to {max_covariance_gap(laws):.2%}), so Laplace noise cannot "
                "certify an (epsilon, 0) guarantee (Chen & Ohrimenko Thm "
                "4.1/4.3). Use a Gaussian variant, or "
                "law=AssumeGaussian(covariances='assume-equal') to take the "
                "translation assumption explicitly.")
        scale, basis, step = self._laplace_noise(laws)
        assumptions = [Assumption.of("laws.translations")]
        assumptions += self._law_assumptions(n, scale == 0.0)
        return LaplaceNoise(scale, basis), 0.0, Method((step,)), assumptions, None


class _GaussianExpectedValue(_ExpectedValueMechanism):
    """Gaussian noise from the theorem's formula, verified pair by pair."""

    noise = "gaussian"

    # Gaussian noise certifies no (epsilon, 0) guarantee.
    _parameter_constraints = {
        **_ExpectedValueMechanism._parameter_constraints,
        "delta": [Interval("real", 0, 1, closed="neither")],
        "max_error_ratio": [Interval("real", 1, None, closed="left"), None],
    }

    @takes_keywords_of_0_2
    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=1e-3,
                 calibration="analytic", theta="auto", law="auto",
                 max_error_ratio=MAX_ERROR_RATIO, relaxation=None,
                 bounds="robust", secure=False, random_state=None,
                 allow_large_delta=False, **deprecated):
        super().__init__(
            query=query, secret=secret, epsilon=epsilon, delta=delta,
            calibration=calibration, theta=theta, law=law, relaxation=relaxation,
            bounds=bounds, secure=secure, random_state=random_state,
            allow_large_delta=allow_large_delta, **deprecated)
        self.max_error_ratio = max_error_ratio

    @abstractmethod
    def _gaussian_noise(self, laws: PairLaws) -> tuple[np.ndarray, MethodStep]:
        """Return the noise covariance (k, k) and how it was derived."""

    def _calibrate(self, laws, n):
        equal = covariances_equal(laws)
        assumptions = []
        noise_cov, step = self._gaussian_noise(laws)
        method = Method((step,))
        delta = self.delta
        ratio = None
        replaced = False
        if not np.any(noise_cov) and not pairs_certified(
                laws, noise_cov, self.epsilon, self.delta,
                self.calibration).all():
            # The theorem's formula asks for no noise (it assumes equal
            # covariances) but the pairs are not certified without: start
            # from noise along the mean differences' span and scale it.
            basis = span_basis(laws.mean_diff)
            noise_cov = basis @ basis.T * (laws.sensitivity / self._mu()) ** 2
            method = method.then("zero-noise-replaced")
            replaced = True
        if self._exact_law() is not None:
            # The formula used the pmfs' moments; the exact laws decide.
            required = exact_required_noise_variance(
                self._exact_pairs(n), self.epsilon, self.delta)
            if required > float(noise_cov[0, 0]):
                method = method.then("exact-laws.raised", variance=required)
                noise_cov = np.array([[required]])
            method = method.then("exact-laws.profile")
        else:
            factor = certify_noise_covariance(laws, noise_cov, self.epsilon,
                                              self.delta, self.calibration)
            # Noise the formula did not ask for (scaled up, or in place of
            # none) certifies the unequal covariances, not the calibration.
            inflated = (factor > 1.0 or replaced) and not equal
            if inflated:
                self._refuse_replaced_classic(laws)
            if factor > 1.0:
                method = (method.then("scaled.unequal-covariances",
                                      factor=factor, profile=profile_name(laws))
                          if not equal else
                          method.then("scaled.every-pair", factor=factor))
            noise_cov = noise_cov * factor
            if not equal:
                assumptions.append(Assumption.of(
                    "covariances.certified", gap=max_covariance_gap(laws)))
            ratio = self._error_ratio(laws, noise_cov, inflated, (
                f"adding noise its formula does not ask for (it asks for "
                f"none), scaled by {factor:.4g}" if replaced else
                f"scaling its noise by {factor:.4g}"))
            delta, note = self._stated_delta(laws, noise_cov, delta)
            if note is not None:
                method = method.then(note)
        assumptions += self._law_assumptions(n, not np.any(noise_cov))
        return GaussianNoise(noise_cov), delta, method, assumptions, ratio

    def _error_ratio(self, laws: PairLaws, noise_cov: np.ndarray,
                     inflated: bool, how: str) -> float:
        """Return the expected error over optimal's; refuse drowning noise.

        A fixed noise shape that certifies unequal covariances only once
        ``inflated`` (``how``: scaled up, or put in place of none) is refused
        when its expected error exceeds ``max_error_ratio`` times that of the
        least-error certified noise.
        """
        own = noise_objective(noise_cov, "expected-error")
        best, _ = least_error_covariance(laws, self.epsilon, self.delta,
                                         self._comparison_calibration(laws))
        least = noise_objective(best, "expected-error")
        ratio = 1.0 if own <= least else (own / least if least > 0 else math.inf)
        limit = self.max_error_ratio
        if inflated and limit is not None and ratio > limit:
            raise NotCertifiableError(
                f"{self.mechanism_name} certifies the two secrets' unequal "
                f"covariances only by {how}, to an expected error of "
                f"{own:.4g}: {ratio:.3g} times the {least:.4g} of "
                "mechanism='optimal', which certifies the same guarantee with "
                "noise shaped for the unequal covariances. Use "
                f"mechanism='optimal', or pass max_error_ratio=None (or a "
                f"limit above {ratio:.3g}) to release with this mechanism's "
                "noise anyway.")
        return ratio

    def _comparison_calibration(self, laws: PairLaws) -> str:
        # Under unequal covariances optimal certifies by the exact profile
        # whatever the calibration; with equal ones it follows this one's.
        return self.calibration if covariances_equal(laws) else "analytic"



_RELAXATION = """
    relaxation : MaxDivergenceGap, WassersteinGap or None, default=None
        How far the modelled law of F may be from the true one, for a
        certificate that holds on the truth (recorded on the release).
        :class:`~skattr.mechanisms.MaxDivergenceGap` ``(lam, eta)``: Chen
        and Ohrimenko's Thm 4.6, (epsilon + 2 lam, (1 + e^(epsilon + lam))
        eta + e^lam delta). :class:`~skattr.mechanisms.WassersteinGap`
        ``(w, lam)``: Thm 4.7, Laplace noise of scale w / lam added to every
        statistic and (epsilon + 2 lam, e^lam delta). Replaces 0.2's
        ``lambda_eta``, ``eta``, ``wasserstein_w`` and ``wasserstein_lambda``
        (still taken, with a FutureWarning, until 0.4).
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
    %(law)s
        The Laplace variants refuse the exact law: their theorems need the
        laws under the two secrets to be translations of each other.
    %(relaxation)s
    %(theta_bounds)s
    %(secure)s
    %(random_state)s
    %(allow_large_delta)s
    """

_MAX_ERROR_RATIO = """
    max_error_ratio : float >= 1 or None, default=10.0
        With unequal covariances (``AssumeGaussian(covariances="certify")``,
        the default) this mechanism's
        fixed noise shape may certify only once scaled up. It is then refused
        (``NotCertifiableError``, saying by how much) when its expected error
        exceeds ``max_error_ratio`` times that of ``mechanism="optimal"``,
        whose noise is shaped for the unequal covariances. None releases
        whatever the ratio. The ratio is reported as ``Plan.error_ratio``.
    """

_OBJECTIVE = """
    objective : {"expected-error", "trace"}, default="expected-error"
        What "least noise" means: the expected l2 error E||Z||_2 of the
        release, or the trace of the noise covariance (E||Z||_2^2).
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
    %(law)s
    %(max_error_ratio)s
    %(relaxation)s
    %(theta_bounds)s
    %(secure)s
    %(random_state)s
    %(allow_large_delta)s
    """

_OPTIMAL_PARAMETERS = """
    Parameters
    ----------
    %(query)s
    %(pair_law_secret)s
    %(epsilon)s
    %(gaussian_delta)s
    %(gaussian_calibration)s
        With unequal covariances (``AssumeGaussian(covariances="certify")``)
        the noise is certified by the exact privacy profile, the counterpart of the
        analytic calibration; ``"classic"`` is then refused.
    %(pair_law_theta)s
    %(law)s
    %(objective)s
    %(relaxation)s
    %(theta_bounds)s
    %(secure)s
    %(random_state)s
    %(allow_large_delta)s
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
    relaxation=_RELAXATION,
    laplace_parameters=_LAPLACE_PARAMETERS,
    max_error_ratio=_MAX_ERROR_RATIO,
    objective=_OBJECTIVE,
    gaussian_parameters=_GAUSSIAN_PARAMETERS,
    optimal_parameters=_OPTIMAL_PARAMETERS,
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
    ...     law=skattr.laws.AssumeGaussian(covariances="assume-equal"),
    ... ).fit(ref)
    >>> plan = mech.plan(n=50)
    >>> round(plan.noise_scale, 3), plan.delta
    (1.205, 0.0)
    """

    mechanism_name = "expm-laplace"

    def _laplace_noise(self, laws):
        k = laws.mean_diff.shape[1]
        l1 = float(np.abs(laws.mean_diff).sum(axis=1).max(initial=0.0))
        return l1 / self.epsilon, np.eye(k), MethodStep.of("expm.laplace")


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
        return variance * np.eye(k), MethodStep.of("expm.gaussian")


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
                MethodStep.of("dirm.laplace", dimension=basis.shape[1]))


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
        return dirm_noise(laws, self._mu())


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
    ...     theta=theta, calibration="classic",
    ...     law=skattr.laws.AssumeGaussian(sampling="with-replacement"),
    ...     epsilon=0.999, delta=1e-3).fit(frame)
    >>> lam, vec = np.linalg.eigh(mech.plan(n=1).noise_covariance)
    >>> np.round(lam, 2)
    array([ 3.58, 18.58])
    """

    mechanism_name = "eigm"

    def _gaussian_noise(self, laws):
        return eigm_noise(laws, self._mu())


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
        return daum_noise(laws, self._mu())


@_fill_doc
@register
class OptimalGaussian(_GaussianExpectedValue):
    """Least-error Gaussian noise that certifies every pair (skattr's own).

    Finds the noise covariance Sigma_Z of least expected error E||Z||_2 (or
    least tr(Sigma_Z) with ``objective="trace"``) that certifies every pair
    and every Theta model.

    With equal covariances (or ``AssumeGaussian(covariances="assume-equal")``) a
    pair is
    certified when (mu_a - mu_b)^T (Sigma + Sigma_Z)^-1 (mu_a - mu_b) <= mu^2,
    i.e. Sigma + Sigma_Z >= d d^T / mu^2 (a semidefinite program): skattr
    solves its least-trace form with scipy (SLSQP on a Cholesky factor, adding
    violated pairs as cuts) and keeps the best certified candidate among that
    solution and the DauM, EigM, directional and isotropic ones, so it never
    does worse than any of them.

    With unequal covariances (``AssumeGaussian(covariances="certify")``) a
    translation-based condition does not apply and scaling a candidate up
    wastes noise: skattr searches two families along their certified frontier,
    rank-one noise along the mean differences plus isotropic noise (a grid of
    the isotropic part refined twice: the frontier's minimum to about 1%), and
    noise aligned with the covariances' eigenvectors (a local pattern search),
    with the program's solution beside them, and certifies the winner by the
    exact privacy profile of two Gaussians (a generalised chi-square, rounded
    up).

    %(optimal_parameters)s

    %(attributes)s

    %(references)s

    Examples
    --------
    Two groups whose two statistics differ in spread as well as in mean: the
    noise is shaped for both, and certified without assuming equal
    covariances.

    >>> import numpy as np, pandas as pd, skattr
    >>> rng = np.random.default_rng(0)
    >>> s = rng.random(4000) < 0.5
    >>> ref = pd.DataFrame({
    ...     "s": s.astype(int),
    ...     "x": rng.normal(np.where(s, 1.0, 0.0), np.where(s, 1.2, 1.0)),
    ...     "y": rng.normal(0.0, np.where(s, 1.0, 1.3))})
    >>> mech = skattr.mechanisms.OptimalGaussian(
    ...     query=skattr.Query.mean(["x", "y"]),
    ...     secret=skattr.Secret.proportion("s", 1, pairs=[(0.3, 0.7)]),
    ...     theta="moments", law="gaussian", epsilon=1.0).fit(ref)
    >>> plan = mech.plan(n=200)
    >>> plan.certified_by.kind
    'least-error.unequal'
    >>> plan.certified_by.uses("profile.unequal-covariances")
    True
    """

    mechanism_name = "optimal"

    _parameter_constraints = {
        **_ExpectedValueMechanism._parameter_constraints,
        "delta": [Interval("real", 0, 1, closed="neither")],
        "objective": [Options(frozenset(OBJECTIVES))],
    }

    @takes_keywords_of_0_2
    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=1e-3,
                 calibration="analytic", theta="auto", law="auto",
                 objective="expected-error", relaxation=None,
                 bounds="robust", secure=False, random_state=None,
                 allow_large_delta=False, **deprecated):
        _ExpectedValueMechanism.__init__(
            self, query=query, secret=secret, epsilon=epsilon, delta=delta,
            calibration=calibration, theta=theta, law=law, relaxation=relaxation,
            bounds=bounds, secure=secure, random_state=random_state,
            allow_large_delta=allow_large_delta, **deprecated)
        self.objective = objective

    def _gaussian_noise(self, laws):
        if self.calibration == "classic" and not covariances_equal(laws):
            # The search certifies by the exact profile; the classic
            # constant has no part in it.
            self._refuse_replaced_classic(laws)
        return least_error_covariance(laws, self.epsilon, self.delta,
                                      self.calibration, self.objective)

    def _error_ratio(self, laws, noise_cov, inflated, how):
        return None
