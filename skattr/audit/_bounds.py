"""Clopper-Pearson bounds and the epsilon lower bound of one event."""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["clopper_pearson", "epsilon_lower_bound"]


def clopper_pearson(count, total, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Return one-sided Clopper-Pearson bounds on a binomial probability.

    Parameters
    ----------
    count : int or array-like of int
        Successes (outputs in the event).
    total : int or array-like of int
        Trials (releases).
    alpha : float in (0, 1)
        Failure probability of each bound: ``P(p < lower) <= alpha`` and,
        separately, ``P(p > upper) <= alpha``.

    Returns
    -------
    lower, upper : ndarray
        The exact (conservative) bounds from the beta quantiles; 0 and 1 at
        the ends.

    References
    ----------
    .. [1] C. J. Clopper and E. S. Pearson. "The use of confidence or
       fiducial limits illustrated in the case of the binomial."
       Biometrika 26(4), 1934.

    Examples
    --------
    >>> lower, upper = clopper_pearson(50, 100, 0.025)
    >>> round(float(lower), 4), round(float(upper), 4)
    (0.3983, 0.6017)
    >>> clopper_pearson(0, 100, 0.05)[1].round(4)
    np.float64(0.0295)
    """
    count = np.asarray(count, dtype=float)
    total = np.asarray(total, dtype=float)
    with np.errstate(invalid="ignore"):
        lower = np.where(count > 0,
                         stats.beta.ppf(alpha, np.maximum(count, 1),
                                        total - count + 1), 0.0)
        upper = np.where(count < total,
                         stats.beta.ppf(1 - alpha, count + 1,
                                        np.maximum(total - count, 1)), 1.0)
    return lower, upper


def epsilon_lower_bound(count_top, count_bottom, total_top: int,
                        total_bottom: int, delta: float, alpha: float
                        ) -> np.ndarray:
    """Return ``log((p_top_lower - delta) / p_bottom_upper)``, 0 when not positive.

    If a release is (epsilon, delta)-indistinguishable on the pair, then
    ``P_top(S) <= e^epsilon P_bottom(S) + delta`` for every event S, so
    ``epsilon >= log((P_top(S) - delta) / P_bottom(S))``. With the lower
    Clopper-Pearson bound of ``P_top(S)`` and the upper bound of
    ``P_bottom(S)``, each at failure probability ``alpha / 2``, the result is
    a lower bound on epsilon with confidence ``1 - alpha`` for an event chosen
    before the counts were drawn.

    Parameters
    ----------
    count_top, count_bottom : int or array-like of int
        Outputs in the event on the side on top of the ratio, and on the other.
    total_top, total_bottom : int
        Releases on each side.
    delta : float
        The certified delta.
    alpha : float
        Failure probability of the bound (split in two halves).

    Returns
    -------
    ndarray
        The lower bound on epsilon for each event (0: nothing shown).

    Examples
    --------
    >>> float(epsilon_lower_bound(5000, 500, 10_000, 10_000, 0.0, 0.05).round(3))
    2.197
    """
    lower, _ = clopper_pearson(count_top, total_top, alpha / 2)
    _, upper = clopper_pearson(count_bottom, total_bottom, alpha / 2)
    excess = lower - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        found = np.log(np.where(excess > 0, excess, 1.0) / upper)
    return np.where(excess > 0, np.maximum(found, 0.0), 0.0)
