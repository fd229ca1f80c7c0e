"""Exact infinity-Wasserstein distance and (W, delta)-closeness of discrete laws."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from skattr.exceptions import InvalidParameterError
from skattr.wasserstein._exact import _measures
from skattr.wasserstein._quantile import _quantile_distance
from skattr.wasserstein._transport import _least_threshold_moving

__all__ = ["w_infinity", "wd_closeness", "approximate_wasserstein_bound"]


def _check_delta(delta):
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.number)):
        raise InvalidParameterError(
            "The 'delta' parameter of wd_closeness must be a float in [0, 1]; got "
            f"{delta!r} instead."
        )
    if not (0.0 <= float(delta) <= 1.0):
        raise InvalidParameterError(
            "The 'delta' parameter of wd_closeness must be a float in [0, 1]; got "
            f"{delta!r} instead."
        )
    return float(delta)


def w_infinity(a, b, a_weights=None, b_weights=None) -> float:
    """Exact infinity-Wasserstein distance between two discrete distributions.

    ``W_inf(mu, nu) = inf over couplings gamma of max_{(x, y) in supp(gamma)}
    ||x - y||_1`` (Chen & Ohrimenko [1]_ Def 3.1; Zhang et al. [2]_ Def 9 on the
    line): the least distance that every unit of mass must be allowed to travel
    to turn ``mu`` into ``nu``.

    Parameters
    ----------
    a, b : array-like of shape (m,) or (m, k)
        Support points of the two distributions: on the line (1-d arrays) or in
        R^k with the L1 ground metric (2-d arrays with the same k).
    a_weights, b_weights : array-like of shape (m,), default=None
        Probabilities of the points, or whole-number counts (multiplicities);
        ``None`` means each point carries equal mass (``a`` is a sample).
        Probabilities must be non-negative and sum to 1 within 1e-9; points of
        weight zero are not in the support. The law is
        ``weights / sum(weights)`` in exact arithmetic, the float weights being
        binary fractions (see Notes), so counts give an exact rational law.

    Returns
    -------
    float
        The distance for the laws given, exactly, rounded up to a float when it
        is not one.

    Raises
    ------
    DataValidationError
        Empty arrays, NaN or infinite points, or ``a`` and ``b`` in different
        spaces.
    InvalidParameterError
        Weights of the wrong shape, negative, non-finite, or not summing to 1.

    See Also
    --------
    wd_closeness : the same with a mass ``delta`` allowed to be disregarded.

    Notes
    -----
    On the line, ``W_inf = sup_t |F_a^-1(t) - F_b^-1(t)|`` (the monotone coupling
    is optimal), computed by sorting and merging the breakpoints of both CDFs in
    O(m log m). For equal-size samples this is ``max |sort(a) - sort(b)|``.

    In R^k, the distance is the least pairwise distance t such that all the mass
    can be moved along pairs at distance <= t. The candidates for t are the
    pairwise distances (at least the largest nearest-neighbour distance), and a
    binary search tests each one by a maximum bipartite matching (equal-size
    samples: a bottleneck matching), an integer maximum flow (samples of
    different sizes, whose masses are integers over lcm(m, n)) or, for given
    weights, an exact maximum flow warm-started by a linear program. Memory is
    O(m n).

    The result is exact for the laws given, never below (it sets noise
    scales). Samples have integer masses. Float weights are exact binary
    fractions: on the line, each cumulative mass is bounded within a few
    rounding errors, from prefix sums below 1/2 and suffix sums above (so a
    mass of 1e-300 in either tail counts), and only breakpoints of the two laws
    whose bounds overlap (near-ties, exact ties included) are ordered with
    exact integer sums. In R^k the linear program only warm-starts an exact
    augmenting-path flow. Distances are rounded up: the L1 distance of points
    is rechecked exactly for the pairs whose rounding could matter.

    Being exact for floats, ties of decimal intent are not ties:
    ``[0.1, 0.2, 0.7]`` and ``[0.3, 0.7]`` differ by 2e-17 of mass
    (0.1 + 0.2 > 0.3 in binary) and that mass must travel. Weights computed
    from a rational law (counts over a total) carry such roundings; tied
    cumulative masses stay tied only if their float sums are exact.

    References
    ----------
    .. [1] Chen, M. and Ohrimenko, O. "Protecting Global Properties of Datasets
       with Distribution Privacy Mechanisms." AISTATS 2023, Definition 3.1.
    .. [2] Zhang, W., Ohrimenko, O. and Cummings, R. "Attribute Privacy:
       Framework and Mechanisms." FAccT 2022, long version, Definition 9.

    Examples
    --------
    >>> from skattr.wasserstein import w_infinity
    >>> w_infinity([0.0, 1.0, 5.0], [2.0, 0.5, 1.5])
    3.0
    >>> w_infinity([0, 1], [0, 1], a_weights=[0.5, 0.5], b_weights=[0.25, 0.75])
    1.0
    >>> w_infinity([[0.0, 0.0], [1.0, 1.0]], [[1.0, 0.0], [1.0, 2.0]])
    1.0
    """
    ma, mb = _measures(a, b, a_weights, b_weights)
    if ma.points.ndim == 1:
        return _quantile_distance(ma, mb)
    return _least_threshold_moving(ma, mb, Fraction(1))



def wd_closeness(a, b, delta, a_weights=None, b_weights=None) -> float:
    """Least W such that two distributions are (W, delta)-close.

    Chen & Ohrimenko [1]_ Def 3.2: ``mu`` and ``nu`` are (W, delta)-close if some
    coupling ``gamma`` and a subset R of its support satisfy ``||x - y||_1 <= W``
    on R and ``gamma(R) >= 1 - delta``. This returns the least such W.

    Parameters
    ----------
    a, b : array-like of shape (m,) or (m, k)
        Support points, as in :func:`w_infinity`.
    delta : float in [0, 1]
        Probability mass whose movement may be disregarded.
    a_weights, b_weights : array-like of shape (m,), default=None
        Probabilities of the points, as in :func:`w_infinity`.

    Returns
    -------
    float
        The least W. ``wd_closeness(a, b, 0) == w_infinity(a, b)``, and it is 0
        when ``delta == 1``.

    Raises
    ------
    DataValidationError, InvalidParameterError
        As :func:`w_infinity`; also ``delta`` outside [0, 1].

    See Also
    --------
    w_infinity : the case ``delta = 0``.
    approximate_wasserstein_bound : an upper bound from means (Thm 3.3).

    Notes
    -----
    Any partial transport of mass ``1 - delta`` along pairs at distance <= W
    extends to a full coupling (couple the leftover masses arbitrarily) whose
    pairs within W carry at least ``1 - delta``. So the least W is the least
    pairwise distance t at which the maximum mass movable along pairs within t
    reaches ``1 - delta``, found by binary search over the pairwise distances.

    The mass movable is computed on the line by a greedy sweep (the partners
    of a point form a window that slides right), and in R^k by a maximum
    matching, an integer maximum flow or an exact flow warm-started by a linear
    program, as in :func:`w_infinity`. Every mass is an exact integer (float
    weights are binary fractions, scaled to a common denominator), and it is
    compared with ``1 - delta`` exactly: the W returned certifies
    (W, delta)-closeness of the laws given, never of (W, delta + rounding).
    The quantile coupling is *not* used on the line: it is optimal for
    delta = 0 but can waste the disregarded mass (mu = {0, 10}, nu = {10, 20}
    with delta = 1/2 have W = 0, the quantile coupling gives 10). Memory is
    O(m n), time O(m n log(m n)).

    References
    ----------
    .. [1] Chen, M. and Ohrimenko, O. "Protecting Global Properties of Datasets
       with Distribution Privacy Mechanisms." AISTATS 2023, Definition 3.2.

    Examples
    --------
    The example of Chen & Ohrimenko (Figure 1): mass 0.9 moves by at most 1,
    the rest (0.1 at 100) by 97.

    >>> from skattr.wasserstein import wd_closeness
    >>> x = [1, 2, 3, 100]
    >>> mu, nu = [0.6, 0.2, 0.0, 0.2], [0.4, 0.3, 0.2, 0.1]
    >>> wd_closeness(x, x, 0.0, mu, nu), wd_closeness(x, x, 0.11, mu, nu)
    (97.0, 1.0)

    In binary floats these weights move 0.9 - 8e-18 within 1, just short of
    ``1 - 0.1``, so delta = 0.1 exactly is not enough for the laws given:

    >>> wd_closeness(x, x, 0.1, mu, nu)
    97.0
    """
    delta = _check_delta(delta)
    ma, mb = _measures(a, b, a_weights, b_weights)
    if delta >= 1.0:
        return 0.0
    return _least_threshold_moving(ma, mb, 1 - Fraction(delta))


def approximate_wasserstein_bound(delta_e, c) -> float:
    """W for which Chen & Ohrimenko's Theorem 3.3 certifies (W, delta)-closeness.

    Theorem 3.3 [1]_: if ``||F(Data) - E[F(Data)]||_1 <= c`` with probability at
    least ``1 - delta/2`` for each ``Data ~ theta`` in Theta, and
    ``Delta_E = sup over pairs (theta_i, theta_j) of ||E f_theta_i -
    E f_theta_j||_1``, then every pair ``f_theta_i, f_theta_j`` is
    ``(Delta_E + 2 c, delta)``-close; Laplace noise of scale
    ``(Delta_E + 2 c) / epsilon`` then gives (epsilon, delta)-distribution
    privacy (Thm 3.2).

    Parameters
    ----------
    delta_e : float >= 0
        ``Delta_E``, the largest L1 distance between the means of a pair.
    c : float >= 0
        The L1 concentration radius holding with probability ``1 - delta/2``
        under every theta (the caller is responsible for that probability).

    Returns
    -------
    float
        ``delta_e + 2 * c``.

    References
    ----------
    .. [1] Chen, M. and Ohrimenko, O. "Protecting Global Properties of Datasets
       with Distribution Privacy Mechanisms." AISTATS 2023, Theorem 3.3.

    Examples
    --------
    >>> from skattr.wasserstein import approximate_wasserstein_bound
    >>> approximate_wasserstein_bound(0.5, 0.25)
    1.0
    """
    for name, value in (("delta_e", delta_e), ("c", c)):
        if (isinstance(value, bool)
                or not isinstance(value, (int, float, np.number))
                or not math.isfinite(value) or value < 0):
            raise InvalidParameterError(
                f"The '{name}' parameter of approximate_wasserstein_bound must be "
                f"a finite float >= 0; got {value!r} instead."
            )
    return float(delta_e) + 2.0 * float(c)
