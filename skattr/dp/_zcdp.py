"""Zero-concentrated differential privacy's conversion to (epsilon, delta).

Bun and Steinke (2016), Prop. 1.3: rho-zCDP implies (rho + 2 sqrt(rho
log(1/delta)), delta)-differential privacy for every delta > 0. The
synthesisers and the within-group means spend their budget as rho.
"""

from __future__ import annotations

import math

from skattr.exceptions import InvalidParameterError

__all__ = ["epsilon_of_rho", "rho_of_epsilon"]


def rho_of_epsilon(epsilon: float, delta: float) -> float:
    """Return the rho with ``epsilon = rho + 2 sqrt(rho log(1/delta))``.

    With L = log(1/delta), sqrt(rho) = sqrt(L + epsilon) - sqrt(L).

    Examples
    --------
    >>> from skattr.dp import epsilon_of_rho, rho_of_epsilon
    >>> rho = rho_of_epsilon(1.0, 1e-6)
    >>> round(rho, 6), round(epsilon_of_rho(rho, 1e-6), 12)
    (0.017469, 1.0)
    """
    if not (isinstance(epsilon, (int, float)) and 0 < epsilon < math.inf):
        raise InvalidParameterError(
            f"epsilon must be a positive finite number; got {epsilon!r}.")
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise InvalidParameterError(
            f"delta must be in (0, 1) for zCDP's conversion; got {delta!r}.")
    L = math.log(1.0 / delta)
    # (sqrt(L + e) - sqrt(L))^2 = (e / (sqrt(L + e) + sqrt(L)))^2, stable
    # (and finite for any finite epsilon).
    return (epsilon / (math.sqrt(L + epsilon) + math.sqrt(L))) ** 2


def epsilon_of_rho(rho: float, delta: float) -> float:
    """Return ``rho + 2 sqrt(rho log(1/delta))`` (Bun and Steinke, Prop. 1.3)."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
