"""Certificates that allow for a modelled law differing from the true one.

Chen and Ohrimenko's Theorems 4.6 (approximate max-divergence) and 4.7
(infinity-Wasserstein distance), used by the Attribute-Private Gaussian
Mechanism (Zhang et al.'s Alg. 2) and the Expected Value family.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skattr._certificate import Assumption, Method, MethodStep
from skattr._persistence import persistable
from skattr.exceptions import InvalidParameterError
from skattr.noise import LaplaceNoise, NoiseLaw

__all__ = [
    "MaxDivergenceGap",
    "WassersteinGap",
    "max_divergence_relaxation",
    "relaxed_certificate",
    "wasserstein_relaxation",
]


def _number(value, name: str, *, low: float, high: float = math.inf,
            open_low: bool = False) -> float:
    """Return ``value`` as a finite float in its range, or refuse it."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    below = number <= low if open_low else number < low
    if not math.isfinite(number) or below or number >= high:
        bracket = "(" if open_low else "["
        raise InvalidParameterError(
            f"{name} must be a finite number in {bracket}{low:g}, {high:g}); "
            f"got {value!r}.")
    return number


@persistable
@dataclass(frozen=True)
class MaxDivergenceGap:
    """The modelled law of F and the true one within a max-divergence (Thm 4.6).

    Pass as ``relaxation=`` to the Attribute-Private Gaussian Mechanism
    (Zhang et al.'s Algorithm 2) or an Expected Value mechanism when the law
    the noise is calibrated to (the Gaussian approximation, say) may differ
    from the true law of F given each secret: both ways, for every event S,
    P(S) <= e^lam P'(S) + eta. The certificate then holds on the true laws:
    (epsilon + 2 lam, (1 + e^(epsilon + lam)) eta + e^lam delta), Chen and
    Ohrimenko's Theorem 4.6 (see :func:`relaxed_certificate`). The release
    records the assumption.

    Parameters
    ----------
    lam : float
        The max-divergence lambda, >= 0.
    eta : float, default=0.0
        Its slack, in [0, 1).

    Examples
    --------
    >>> import skattr
    >>> from skattr.mechanisms import AttributePrivateGaussian, MaxDivergenceGap
    >>> from skattr.datasets import make_hospital
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> mech = AttributePrivateGaussian(
    ...     query=skattr.Query.mean(["weight"]), secret=secret, law="gaussian",
    ...     relaxation=MaxDivergenceGap(lam=0.1, eta=1e-5), random_state=0,
    ... ).fit(make_hospital(2000, random_state=0))
    >>> plan = mech.plan(n=50)
    >>> round(plan.epsilon, 2), plan.assumes("relaxation.max-divergence")
    (1.2, True)
    """

    lam: float
    eta: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "lam", _number(self.lam, "MaxDivergenceGap.lam",
                                                low=0.0))
        object.__setattr__(self, "eta", _number(self.eta, "MaxDivergenceGap.eta",
                                                low=0.0, high=1.0))

    def apply(self, noise: NoiseLaw, epsilon: float, delta: float, method: Method
              ) -> tuple[NoiseLaw, float, float, Method, Assumption]:
        """Return the noise, certificate and method that hold on the true laws."""
        epsilon, delta, assumed = max_divergence_relaxation(
            epsilon, delta, self.lam, self.eta)
        return noise, epsilon, delta, method, assumed


@persistable
@dataclass(frozen=True)
class WassersteinGap:
    """The modelled laws of F within infinity-Wasserstein distance W of the truth.

    Pass as ``relaxation=`` to an Expected Value mechanism: Laplace noise of
    scale W / lam is added to every statistic, and the certificate becomes
    (epsilon + 2 lam, e^lam delta) on the true laws (Chen and Ohrimenko's
    Theorem 4.7). With W = 0 the model is the truth and nothing changes. The
    release records the assumption.

    Parameters
    ----------
    w : float
        The infinity-Wasserstein distance W, >= 0.
    lam : float
        The privacy the relaxation may cost, lambda > 0.

    Examples
    --------
    >>> from skattr.mechanisms import WassersteinGap
    >>> WassersteinGap(w=0.3, lam=0.1)
    WassersteinGap(w=0.3, lam=0.1)
    >>> from skattr.exceptions import InvalidParameterError
    >>> try:
    ...     WassersteinGap(w=0.3, lam=0)
    ... except InvalidParameterError as exc:
    ...     print(exc)
    WassersteinGap.lam must be a finite number in (0, inf); got 0.
    """

    w: float
    lam: float

    def __post_init__(self):
        object.__setattr__(self, "w", _number(self.w, "WassersteinGap.w", low=0.0))
        object.__setattr__(self, "lam", _number(self.lam, "WassersteinGap.lam",
                                                low=0.0, open_low=True))

    def apply(self, noise: NoiseLaw, epsilon: float, delta: float, method: Method
              ) -> tuple[NoiseLaw, float, float, Method, Assumption | None]:
        """Return the noise, certificate and method that hold on the true laws."""
        if self.w == 0:
            return noise, epsilon, delta, method, None
        noise, epsilon, delta, step, assumed = wasserstein_relaxation(
            noise, epsilon, delta, self.w, self.lam)
        return noise, epsilon, delta, method.then(step), assumed


def relaxed_certificate(epsilon: float, delta: float, lambda_eta: float,
                        eta: float) -> tuple[float, float]:
    """Return the (epsilon, delta) that holds on the true laws, given the model.

    If the modelled and true laws of F given each secret are within
    eta-approximate max-divergence lambda of each other, both ways
    (P(S) <= e^lambda P'(S) + eta for every event S), and the mechanism is
    (epsilon, delta)-private on the modelled laws, then on the true ones

        P_a(S) <= e^lam (e^eps (e^lam P_b(S) + eta) + delta) + eta
               = e^(eps + 2 lam) P_b(S) + (1 + e^(eps + lam)) eta + e^lam delta,

    which is Chen and Ohrimenko's Theorem 4.6. Zhang et al.'s Theorem 3 states
    e^lam delta + eta: it misses the e^(eps + lam) eta of the step that moves
    the second law back to the truth, and fails (true laws within total
    variation 5e-4 of N(0, 5) and N(1, 5) at epsilon 1: Thm 3 claims delta
    1.5e-3, the true delta is 2.51e-3; this bound gives 2.86e-3).

    Examples
    --------
    >>> eps, delta = relaxed_certificate(1.0, 1e-3, 0.0, 5e-4)
    >>> eps, round(delta, 6)
    (1.0, 0.002859)
    """
    lam = float(lambda_eta)
    return (epsilon + 2 * lam,
            (1 + math.exp(epsilon + lam)) * eta + math.exp(lam) * delta)


def max_divergence_relaxation(epsilon: float, delta: float, lambda_eta: float,
                              eta: float) -> tuple[float, float, Assumption]:
    """Theorem 4.6's certificate and the assumption a release records."""
    epsilon, delta = relaxed_certificate(epsilon, delta, lambda_eta, eta)
    return epsilon, delta, Assumption.of(
        "relaxation.max-divergence", lambda_eta=lambda_eta, eta=eta)


def wasserstein_relaxation(noise: NoiseLaw, epsilon: float, delta: float,
                           w: float, lam: float
                           ) -> tuple[NoiseLaw, float, float, MethodStep,
                                      Assumption]:
    """Theorem 4.7: add Laplace(W / lambda) to every statistic.

    If the modelled laws are within infinity-Wasserstein distance W of the
    true ones, the mechanism plus Laplace noise of scale W / lambda on each
    statistic is (epsilon + 2 lambda, e^lambda delta)-private on the true laws.

    Returns
    -------
    noise, epsilon, delta, method step, assumption
    """
    extra = w / lam
    noise = noise + LaplaceNoise.on_each(extra, noise.k)
    return (noise, epsilon + 2 * lam, math.exp(lam) * delta,
            MethodStep.of("relaxation.wasserstein", scale=extra),
            Assumption.of("relaxation.wasserstein", wasserstein_w=w,
                          wasserstein_lambda=lam))
