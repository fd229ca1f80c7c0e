"""Certificates that allow for a modelled law differing from the true one.

Chen and Ohrimenko's Theorems 4.6 (approximate max-divergence) and 4.7
(infinity-Wasserstein distance), used by the Attribute-Private Gaussian
Mechanism (Zhang et al.'s Alg. 2) and the Expected Value family.
"""

from __future__ import annotations

import math

from skattr._certificate import Assumption, MethodStep
from skattr.exceptions import InvalidParameterError
from skattr.noise import LaplaceNoise, NoiseLaw

__all__ = [
    "check_relaxations",
    "max_divergence_relaxation",
    "relaxed_certificate",
    "wasserstein_relaxation",
]


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


def check_relaxations(lambda_eta, wasserstein_w, wasserstein_lambda) -> None:
    """Refuse an incomplete Thm 4.7, or Thms 4.6 and 4.7 together."""
    if (wasserstein_w is None) != (wasserstein_lambda is None):
        raise InvalidParameterError(
            "Theorem 4.7 needs both wasserstein_w (the infinity-Wasserstein "
            "distance between the modelled and true laws) and "
            "wasserstein_lambda (the privacy it may cost); give both or neither.")
    if lambda_eta is not None and wasserstein_w is not None:
        raise InvalidParameterError(
            "Theorems 4.6 (lambda_eta, eta) and 4.7 (wasserstein_w, "
            "wasserstein_lambda) are alternative relaxations; give one.")
