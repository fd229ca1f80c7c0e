"""Gaussian noise calibration: classic and analytic constants, exact privacy profiles."""  # noqa: E501

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from skattr.exceptions import ClassicCalibrationWarning, InvalidParameterError
from skattr.utils._stack import warn_once

__all__ = [
    "classic_constant",
    "gaussian_delta",
    "analytic_mu",
    "classic_mu",
    "max_mahalanobis",
    "epsilon_for_mahalanobis",
    "gaussian_pair_delta",
    "gaussian_pair_epsilon",
    "renyi_gaussian_delta",
]

_SQRT2 = math.sqrt(2.0)

# Root-finding tolerances: callers need 1e-9 relative on the resulting delta, and
# delta can be ~100 times more sensitive than its argument (tiny deltas), so roots
# are found to brentq's finest rtol (4 ulp, well below the required 1e-12); xtol
# is tiny so that small roots (mu ~ 1e-3) get relative, not absolute, precision.
_RTOL = 4 * np.finfo(float).eps
_XTOL = 1e-300
_MAX_BRACKET_DOUBLINGS = 200

# Orders of the Renyi bound. Small orders win when the divergence is large compared
# with epsilon, large orders when it is small; the minimum over the grid is taken,
# so a denser grid only tightens (never invalidates) the bound.
_DEFAULT_ORDERS = np.unique(
    np.concatenate(
        [
            np.geomspace(1.01, 512.0, 200),
            [1.001, 1.002, 1.005, 1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0],
            [128.0, 256.0, 768.0, 1024.0],
        ]
    )
)


# --------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------


def _as_float(value, name: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"The {name!r} parameter must be a real number. Got {value!r} instead."
        ) from None


def _check_epsilon(epsilon) -> float:
    eps = _as_float(epsilon, "epsilon")
    if not (math.isfinite(eps) and eps > 0):
        raise InvalidParameterError(
            "The 'epsilon' parameter must be a finite number > 0. "
            f"Got {epsilon!r} instead."
        )
    return eps


def _check_delta(delta) -> float:
    d = _as_float(delta, "delta")
    if not (0.0 <= d < 1.0):
        raise InvalidParameterError(
            f"The 'delta' parameter must be in [0, 1). Got {delta!r} instead."
        )
    return d


def _check_nonnegative_array(value, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if np.any(np.isnan(arr) | (arr < 0)):
        raise InvalidParameterError(
            f"The {name!r} parameter must be >= 0 (infinity allowed, NaN not). "
            f"Got {value!r} instead."
        )
    return arr


def _check_finite_array(value, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise InvalidParameterError(
            f"The {name!r} parameter must be finite. Got {value!r} instead."
        )
    return arr


def _check_variance_array(value, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr) & (arr > 0)):
        raise InvalidParameterError(
            f"The {name!r} parameter must be a finite variance > 0. "
            f"Got {value!r} instead."
        )
    return arr


def _scalar_or_array(arr: np.ndarray):
    return float(arr) if arr.ndim == 0 else arr


def _nudge(f, x: float, direction: float) -> float:
    """Move ``x >= 0`` towards ``direction`` until ``f(x) >= 0`` (certified side)."""
    # Steps double from one ulp, so rounding on the wrong side of a root costs a
    # handful of evaluations and at most twice the distance actually needed.
    step = math.ulp(x) if x != 0 else _XTOL
    while f(x) < 0:
        x = max(x + math.copysign(step, direction), 0.0)
        step *= 2.0
    return x


def _bracket_up(f, start: float) -> float | None:
    """Double ``start`` until ``f`` changes sign from its value at 0, or give up."""
    hi = start
    for _ in range(_MAX_BRACKET_DOUBLINGS):
        if f(hi) >= 0:
            return hi
        hi *= 2.0
    return None


# --------------------------------------------------------------------------------
# Calibration constants
# --------------------------------------------------------------------------------


def classic_constant(delta: float) -> float:
    r"""Return the classic Gaussian-mechanism constant :math:`c(\delta)`.

    Parameters
    ----------
    delta : float
        Target :math:`\delta`, in :math:`(0, 1)`.

    Returns
    -------
    float
        :math:`c = \sqrt{2 \ln(1.25 / \delta)}`.

    Raises
    ------
    InvalidParameterError
        If ``delta`` is not in :math:`(0, 1)`.

    Notes
    -----
    The classic calibration adds noise of standard deviation
    :math:`\sigma = c \Delta / \varepsilon` for a query of L2 sensitivity
    :math:`\Delta`, with

    .. math:: c = \sqrt{2 \ln(1.25 / \delta)}.

    Its proof only covers :math:`\varepsilon < 1`.

    References
    ----------
    .. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", Foundations and Trends in Theoretical Computer Science 9 (3-4),
       2014, Theorem A.1.
    """
    d = _as_float(delta, "delta")
    if not (0.0 < d < 1.0):
        raise InvalidParameterError(
            "The 'delta' parameter must be in (0, 1) for the classic calibration. "
            f"Got {delta!r} instead."
        )
    return math.sqrt(2.0 * math.log(1.25 / d))


def _gaussian_delta_unchecked(mu: np.ndarray, eps: np.ndarray) -> np.ndarray:
    mu, eps = np.broadcast_arrays(mu, eps)
    regular = (mu > 0) & np.isfinite(mu)
    safe_mu = np.where(regular, mu, 1.0)
    safe_eps = np.where(regular, eps, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = safe_mu / 2.0 - safe_eps / safe_mu
        minus_b = safe_mu / 2.0 + safe_eps / safe_mu
        # Phi(a) - e^eps Phi(b) is rewritten as
        #   [Phi(|a|) - Phi(-|a|)]_{a>0} + e^{-a^2/2}/2 [erfcx(|a|/r2) - erfcx(-b/r2)]
        # using b^2/2 = a^2/2 + eps, so e^eps never appears (no overflow at large
        # epsilon) and the two terms are non-negative (erfcx is decreasing and
        # -b >= |a|): the only cancellation left is inside the erfcx difference,
        # which is bounded by mu / (-b) and keeps tiny deltas accurate.
        central = special.erf(np.maximum(a, 0.0) / _SQRT2)
        tail = (
            0.5
            * np.exp(-0.5 * a * a)
            * (special.erfcx(np.abs(a) / _SQRT2) - special.erfcx(minus_b / _SQRT2))
        )
        delta = np.clip(central + tail, 0.0, 1.0)
    delta = np.where(mu == 0, 0.0, delta)
    # Singular distributions: the event separating them has P = 1, Q = 0.
    delta = np.where(np.isinf(mu), 1.0, delta)
    return delta


def gaussian_delta(mu, epsilon):
    r"""Exact privacy profile of two Gaussians at Mahalanobis distance ``mu``.

    Parameters
    ----------
    mu : float or array_like
        Mahalanobis distance :math:`\mu \ge 0` between the means of two Gaussians
        with the same covariance (``inf`` allowed).
    epsilon : float or array_like
        :math:`\varepsilon \ge 0` (``inf`` allowed); broadcast against ``mu``.

    Returns
    -------
    float or numpy.ndarray
        The smallest :math:`\delta` for which the pair is
        :math:`(\varepsilon, \delta)`-indistinguishable (in both directions, the
        profile being symmetric). A float when both inputs are scalars.

    Raises
    ------
    InvalidParameterError
        If ``mu`` or ``epsilon`` is negative or NaN.

    Notes
    -----
    For :math:`\mu > 0`,

    .. math::

        \delta(\varepsilon) = \Phi\left(\frac{\mu}{2} - \frac{\varepsilon}{\mu}
        \right) - e^{\varepsilon} \Phi\left(-\frac{\mu}{2} - \frac{\varepsilon}{\mu}
        \right),

    and :math:`\delta = 0` for :math:`\mu = 0`, :math:`\delta = 1` for
    :math:`\mu = \infty`. It is evaluated through the scaled complementary error
    function, without forming :math:`e^{\varepsilon}`, so it neither overflows at
    large :math:`\varepsilon` nor loses tiny :math:`\delta` to cancellation.

    References
    ----------
    .. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018, Theorem 8.

    Examples
    --------
    >>> round(gaussian_delta(1.0, 1.0), 6)
    0.126937
    """
    mu_arr = _check_nonnegative_array(mu, "mu")
    eps_arr = _check_nonnegative_array(epsilon, "epsilon")
    return _scalar_or_array(_gaussian_delta_unchecked(mu_arr, eps_arr))


# Largest relative error, in units of u = 2**-53, of one call to erf, erfcx or exp
# as skattr calls them: measured against mpmath at 40 digits on 50,000 points in
# [1e-17, 1e12], erfcx errs by at most 7.9 u (near 0), erf by 3.1 u and exp by 1.1 u.
# Twice the worst is assumed.
_SPECIAL_ULPS = 16.0


def _profile_rounding_bound(mu: float, eps: float) -> float:
    """Bound |float profile - exact profile| of ``_gaussian_delta_unchecked``.

    Running error analysis of the evaluation there, u = 2**-53, B = mu/2 + eps/mu:

    - a = mu/2 - eps/mu and -b = B are each off by at most 2uB (one rounding of
      eps/mu, one of the sum), so x1 = |a|/sqrt2 and x2 = B/sqrt2 are off by
      h <= 3uB, and a^2/2 by at most 3u|a|B;
    - erfcx(x) has slope at most min(2/sqrt(pi), erfcx(x)/x) for x > 0 (the second
      from erfcx(x) > 2/(sqrt(pi) (x + sqrt(x^2 + 2)))), so each erfcx value is off
      by K u erfcx(x) plus h times that slope (K = ``_SPECIAL_ULPS``);
    - the difference erfcx(x1) - erfcx(x2) inherits both absolute errors: this is
      the cancellation, relative error K u (X1 + X2) / (X1 - X2), which reaches
      1e-5 at epsilon = 1e-8, delta = 1e-15, where x2 - x1 = mu/sqrt2 is tiny next
      to x1 (the error measured there is 5e-7);
    - exp(-a^2/2) is off by (K + 3|a|B) u relative, the products by 2u;
    - erf(a/sqrt2) by K u relative plus h times its slope 2/sqrt(pi) e^{-a^2/2}, and
      is exactly 0 when a <= -h (then the true a is negative too).

    Products of two of these errors, and the slopes being taken at the computed
    rather than the exact arguments, change the sum by a relative O(bound + h/x),
    under 1e-3 even at epsilon = 1e-12: a 1% allowance covers them. Four smallest
    subnormals cover an underflowing e^{-a^2/2}.
    """
    u = 2.0**-53
    floor = 4.0 * math.ulp(0.0)
    if mu == 0.0:
        return 0.0
    a = mu / 2.0 - eps / mu
    big = mu / 2.0 + eps / mu
    envelope = math.exp(-0.5 * a * a)
    if envelope == 0.0 or not math.isfinite(big):
        return floor
    h = 3.0 * u * big
    x1, x2 = abs(a) / _SQRT2, big / _SQRT2
    erfcx1, erfcx2 = float(special.erfcx(x1)), float(special.erfcx(x2))
    slope_bound = 2.0 / math.sqrt(math.pi)
    argument_error = h * sum(
        min(slope_bound, value / x) if x > 0 else slope_bound
        for x, value in ((x1, erfcx1), (x2, erfcx2))
    )
    difference = erfcx1 - erfcx2
    difference_error = (
        _SPECIAL_ULPS * u * (erfcx1 + erfcx2) + argument_error + u * abs(difference)
    )
    tail = 0.5 * envelope * difference
    tail_error = 0.5 * envelope * difference_error + abs(tail) * u * (
        _SPECIAL_ULPS + 3.0 * abs(a) * big + 2.0
    )
    central, central_error = 0.0, 0.0
    if a > -h:
        central = float(special.erf(max(a, 0.0) / _SQRT2))
        central_error = _SPECIAL_ULPS * u * central + slope_bound * h * envelope
    return 1.01 * (central_error + tail_error + u * (central + abs(tail))) + floor


def analytic_mu(epsilon: float, delta: float) -> float:
    r"""Largest Mahalanobis distance certified at :math:`(\varepsilon, \delta)`.

    Parameters
    ----------
    epsilon : float
        Target :math:`\varepsilon > 0`, finite.
    delta : float
        Target :math:`\delta \in [0, 1)`.

    Returns
    -------
    float
        The largest :math:`\mu` with ``gaussian_delta(mu, epsilon) <= delta``.
        Noise of standard deviation :math:`\sigma = \Delta / \mu` then certifies a
        query of L2 sensitivity :math:`\Delta`. ``0.0`` when ``delta == 0``: no
        finite Gaussian noise achieves :math:`\delta = 0`, so no distance is
        certified.

    Raises
    ------
    InvalidParameterError
        If ``epsilon`` is not finite and positive or ``delta`` not in
        :math:`[0, 1)`.

    Notes
    -----
    Solves :math:`\delta(\mu; \varepsilon) = \delta` with the exact profile

    .. math::

        \Phi\left(\frac{\mu}{2} - \frac{\varepsilon}{\mu}\right)
        - e^{\varepsilon} \Phi\left(-\frac{\mu}{2} - \frac{\varepsilon}{\mu}\right)
        = \delta,

    which is increasing in :math:`\mu`, by Brent's method to relative precision
    of a few ulp (at least :math:`10^{-12}`). The double-precision profile is
    compared with :math:`\delta` only after adding a bound on its rounding error
    (a few ulp, but up to :math:`10^{-5}` relative at :math:`\varepsilon = 10^{-8}`
    where the evaluation cancels), and the root is
    nudged down until that sum is at most :math:`\delta`: the exact profile at the
    returned distance never exceeds :math:`\delta`. The margin costs less than
    :math:`10^{-6}` of :math:`\mu` for :math:`\varepsilon \ge 10^{-8}`.

    References
    ----------
    .. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018, Theorem 8 and Algorithm 1.

    Examples
    --------
    >>> mu = analytic_mu(1.0, 1e-5)
    >>> round(mu, 6)
    0.268051
    >>> gaussian_delta(mu, 1.0) <= 1e-5
    True
    """
    eps = _check_epsilon(epsilon)
    d = _check_delta(delta)
    if d == 0.0:
        return 0.0

    def excess(mu: float) -> float:
        # Positive unless the exact profile is certainly <= delta: the float
        # profile is off by 5e-7 relative at epsilon = 1e-8 and more below
        # (cancellation), so it meets delta only with a bound on that error added.
        profile = float(_gaussian_delta_unchecked(np.asarray(mu), np.asarray(eps)))
        return profile + _profile_rounding_bound(mu, eps) - d

    hi = _bracket_up(excess, 1.0)
    if hi is None:  # pragma: no cover - the profile tends to 1 as mu grows
        raise InvalidParameterError(
            f"Could not bracket analytic_mu for epsilon={eps!r}, delta={d!r}."
        )
    mu = optimize.brentq(excess, 0.0, hi, xtol=_XTOL, rtol=_RTOL, maxiter=500)
    # brentq may stop on either side of the root: step down to the certified side.
    return float(_nudge(lambda m: -excess(m), mu, -1.0))


def classic_mu(epsilon: float, delta: float) -> float:
    r"""Mahalanobis distance certified by the classic Gaussian constant.

    Parameters
    ----------
    epsilon : float
        Target :math:`\varepsilon > 0`, finite.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\mu = \varepsilon / \sqrt{2 \ln(1.25 / \delta)}`.

    Raises
    ------
    InvalidParameterError
        If ``epsilon`` is not finite and positive or ``delta`` not in
        :math:`(0, 1)`.

    Warns
    -----
    ClassicCalibrationWarning
        When ``epsilon >= 1``, where the classic proof does not apply.

    Notes
    -----
    .. math:: \mu = \frac{\varepsilon}{\sqrt{2 \ln(1.25 / \delta)}}

    The result is proven for :math:`\varepsilon < 1` only; for large
    :math:`\varepsilon` it can exceed :func:`analytic_mu` and then is not private
    [2]_.

    References
    ----------
    .. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", 2014, Theorem A.1.
    .. [2] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018, Section 3.
    """
    eps = _check_epsilon(epsilon)
    c = classic_constant(delta)
    if eps >= 1.0:
        # At the user's line (a release computes it deep inside a plan), once
        # a release however many candidates and plans compute it.
        warn_once(
            "The classic constant sqrt(2 ln(1.25/delta)) is proven for epsilon < 1 "
            "only (Dwork & Roth Thm A.1); use calibration='analytic' for a "
            f"certified release at epsilon >= 1 (got epsilon={eps!r}).",
            ClassicCalibrationWarning,
        )
    return eps / c


def max_mahalanobis(
    epsilon: float, delta: float, calibration: str = "analytic"
) -> float:
    r"""Largest Mahalanobis distance released at :math:`(\varepsilon, \delta)`.

    Parameters
    ----------
    epsilon : float
        Target :math:`\varepsilon > 0`, finite.
    delta : float
        Target :math:`\delta`.
    calibration : {"analytic", "classic"}, default="analytic"
        ``"analytic"`` uses the exact profile (:func:`analytic_mu`);
        ``"classic"`` the constant :math:`\sqrt{2 \ln(1.25/\delta)}`
        (:func:`classic_mu`).

    Returns
    -------
    float
        The certified distance :math:`\mu`; the noise standard deviation for L2
        sensitivity :math:`\Delta` is :math:`\Delta / \mu`.

    Raises
    ------
    InvalidParameterError
        If ``calibration`` is unknown, or ``epsilon`` / ``delta`` are invalid.

    Notes
    -----
    Analytic: :math:`\max\{\mu : \delta(\mu; \varepsilon) \le \delta\}`.
    Classic: :math:`\mu = \varepsilon / \sqrt{2 \ln(1.25/\delta)}`.

    References
    ----------
    .. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018.
    """
    if calibration == "analytic":
        return analytic_mu(epsilon, delta)
    if calibration == "classic":
        return classic_mu(epsilon, delta)
    raise InvalidParameterError(
        "The 'calibration' parameter must be 'analytic' or 'classic'. "
        f"Got {calibration!r} instead."
    )


def _epsilon_for_mahalanobis_scalar(mu: float, d: float) -> float:
    if mu == 0.0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    if d == 0.0:
        return math.inf
    mu_arr = np.asarray(mu)

    def excess(eps: float) -> float:
        # Negated so that it increases in eps, the convention _bracket_up expects.
        return d - float(_gaussian_delta_unchecked(mu_arr, np.asarray(eps)))

    if excess(0.0) >= 0:
        return 0.0
    # Start near the Gaussian-tail estimate of the answer to save doublings.
    start = max(1.0, 0.5 * mu * mu + mu * math.sqrt(2.0 * math.log(1.0 / d)))
    hi = _bracket_up(excess, start)
    if hi is None:  # pragma: no cover - the profile tends to 0 as epsilon grows
        return math.inf
    eps = optimize.brentq(excess, 0.0, hi, xtol=_XTOL, rtol=_RTOL, maxiter=500)
    # Round up, never down: the returned epsilon must be certified.
    return float(_nudge(excess, eps, 1.0))


def epsilon_for_mahalanobis(mu, delta: float):
    r"""Smallest :math:`\varepsilon` certifying Mahalanobis distance ``mu``.

    Parameters
    ----------
    mu : float or array_like
        Mahalanobis distance(s) :math:`\mu \ge 0` (``inf`` allowed).
    delta : float
        Target :math:`\delta \in [0, 1)`.

    Returns
    -------
    float or numpy.ndarray
        The smallest :math:`\varepsilon \ge 0` with
        ``gaussian_delta(mu, epsilon) <= delta``. ``0.0`` when the pair is already
        :math:`(0, \delta)`-indistinguishable; ``inf`` when ``mu`` is infinite or
        ``delta == 0 < mu``. A float when ``mu`` is a scalar.

    Raises
    ------
    InvalidParameterError
        If ``mu`` is negative or NaN, or ``delta`` not in :math:`[0, 1)`.

    Notes
    -----
    Solves, for :math:`\varepsilon`,

    .. math::

        \Phi\left(\frac{\mu}{2} - \frac{\varepsilon}{\mu}\right)
        - e^{\varepsilon} \Phi\left(-\frac{\mu}{2} - \frac{\varepsilon}{\mu}\right)
        = \delta,

    whose left side decreases in :math:`\varepsilon`, by Brent's method, rounding
    the root up to the certified side.

    References
    ----------
    .. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018, Theorem 8.
    """
    mu_arr = _check_nonnegative_array(mu, "mu")
    d = _check_delta(delta)
    solve = np.vectorize(_epsilon_for_mahalanobis_scalar, otypes=[float])
    return _scalar_or_array(np.asarray(solve(mu_arr, d)))


# --------------------------------------------------------------------------------
# One-dimensional Gaussians with unequal variances
# --------------------------------------------------------------------------------


def _log_interval_prob(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Return log(Phi(hi) - Phi(lo)) for lo <= hi, accurate in both tails."""
    # Reflect intervals lying mostly in the upper tail so the subtraction is always
    # done between small lower-tail probabilities (no 1 - 1 cancellation).
    flip = lo + hi > 0
    low = np.where(flip, -hi, lo)
    high = np.where(flip, -lo, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_high = special.log_ndtr(high)
        log_low = special.log_ndtr(low)
        out = log_high + np.log(-np.expm1(log_low - log_high))
    return np.where(lo >= hi, -np.inf, out)


def _hockey_stick_unequal(ma, va, mb, vb, eps) -> np.ndarray:
    """H_eps(P||Q) for P = N(ma, va), Q = N(mb, vb); entries with va == vb are junk."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # Standardise by P: z = (x - ma)/sa, so P = N(0, 1), Q = N(m, s^2).
        sa = np.sqrt(va)
        m = (mb - ma) / sa
        s2 = vb / va
        s = np.sqrt(s2)
        # 1 - s^2 and ln s^2 from the variance difference keep near-equal variances
        # accurate.
        one_minus_s2 = (va - vb) / va
        log_s2 = np.log1p((vb - va) / va)
        # 2 s^2 (log p - log q - eps) = (1 - s^2) z^2 - 2 m z + c; its roots are
        # (m +- s sqrt(D)) / (1 - s^2).
        c = m * m + s2 * log_s2 - 2.0 * s2 * eps
        disc = m * m + one_minus_s2 * (2.0 * eps - log_s2)
        has_roots = disc > 0
        root_disc = np.sqrt(np.where(has_roots, disc, 0.0))
        # Stable pair of roots (no m - s sqrt(D) cancellation): via Vieta.
        big = m + np.where(m >= 0, 1.0, -1.0) * s * root_disc
        r_far = big / one_minus_s2
        r_near = np.where(big == 0, 0.0, c / np.where(big == 0, 1.0, big))
        lo = np.where(has_roots, np.minimum(r_far, r_near), 0.0)
        hi = np.where(has_roots, np.maximum(r_far, r_near), 0.0)

        # P wider than Q: the loss exceeds eps outside [lo, hi]; narrower: inside.
        outside = one_minus_s2 > 0
        u_lo = (lo - m) / s
        u_hi = (hi - m) / s
        log_p_in = _log_interval_prob(lo, hi)
        log_q_in = _log_interval_prob(u_lo, u_hi)
        log_p_out = np.logaddexp(special.log_ndtr(lo), special.log_ndtr(-hi))
        log_q_out = np.logaddexp(special.log_ndtr(u_lo), special.log_ndtr(-u_hi))
        log_p = np.where(outside, log_p_out, log_p_in)
        log_q = np.where(outside, log_q_out, log_q_in)

        # P(T) - e^eps Q(T) = P(T) (1 - e^{eps + log Q(T) - log P(T)}): no e^eps
        # overflow, and the factor is computed with expm1.
        log_ratio = np.minimum(eps + log_q - log_p, 0.0)
        h = np.exp(log_p) * -np.expm1(log_ratio)
    return np.where(np.isneginf(log_p), 0.0, np.clip(h, 0.0, 1.0))


def _pair_delta_unchecked(ma, va, mb, vb, eps) -> np.ndarray:
    ma, va, mb, vb, eps = np.broadcast_arrays(ma, va, mb, vb, eps)
    inf_eps = np.isinf(eps)
    eps = np.where(inf_eps, 0.0, eps)
    equal = va == vb
    with np.errstate(invalid="ignore", divide="ignore"):
        mu_equal = np.abs(ma - mb) / np.sqrt(va)
    delta_equal = _gaussian_delta_unchecked(mu_equal, eps)
    delta_unequal = np.maximum(
        _hockey_stick_unequal(ma, va, mb, vb, eps),
        _hockey_stick_unequal(mb, vb, ma, va, eps),
    )
    delta = np.where(equal, delta_equal, delta_unequal)
    # Mutually absolutely continuous Gaussians: no event has P > 0 = e^inf Q.
    return np.where(inf_eps, 0.0, delta)


def gaussian_pair_delta(mean_a, var_a, mean_b, var_b, epsilon):
    r"""Exact symmetrised hockey-stick divergence of two 1-D Gaussians.

    Parameters
    ----------
    mean_a, var_a : float or array_like
        Mean and variance (> 0) of :math:`P = N(m_a, v_a)`.
    mean_b, var_b : float or array_like
        Mean and variance (> 0) of :math:`Q = N(m_b, v_b)`.
    epsilon : float or array_like
        :math:`\varepsilon \ge 0` (``inf`` gives 0). All inputs broadcast.

    Returns
    -------
    float or numpy.ndarray
        :math:`\max(H_\varepsilon(P \| Q), H_\varepsilon(Q \| P))`, the smallest
        :math:`\delta` for which the pair is :math:`(\varepsilon,
        \delta)`-indistinguishable. A float when all inputs are scalars.

    Raises
    ------
    InvalidParameterError
        If a mean is not finite, a variance not finite and positive, or
        ``epsilon`` negative or NaN.

    Notes
    -----
    .. math::

        H_\varepsilon(P \| Q) = \int (p - e^{\varepsilon} q)_+
        = P(T) - e^{\varepsilon} Q(T), \quad
        T = \{x : \ln p(x) - \ln q(x) > \varepsilon\}.

    The log-ratio minus :math:`\varepsilon` is a quadratic
    :math:`A x^2 + B x + C` with :math:`A = (1/v_b - 1/v_a)/2`. For
    :math:`A = 0` (equal variances) the profile is :func:`gaussian_delta` at
    :math:`\mu = |m_a - m_b| / \sqrt{v_a}`. For :math:`A > 0` (:math:`P` wider),
    :math:`T` is the complement of the interval between the real roots (all of
    the line, giving 0, when there are none); for :math:`A < 0` it is the
    interval between the roots (empty without real roots). Interval
    probabilities are differences of normal CDFs taken in the lower tail
    (reflected when the interval lies in the upper one), in log space.

    References
    ----------
    .. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018, Section 4 (privacy profiles and the hockey-stick divergence).

    Examples
    --------
    >>> round(gaussian_pair_delta(0.0, 1.0, 0.0, 2.0, 1.0), 6)
    0.045612
    """
    ma = _check_finite_array(mean_a, "mean_a")
    mb = _check_finite_array(mean_b, "mean_b")
    va = _check_variance_array(var_a, "var_a")
    vb = _check_variance_array(var_b, "var_b")
    eps = _check_nonnegative_array(epsilon, "epsilon")
    return _scalar_or_array(_pair_delta_unchecked(ma, va, mb, vb, eps))


def gaussian_pair_epsilon(mean_a, var_a, mean_b, var_b, delta) -> float:
    r"""Smallest :math:`\varepsilon` making two 1-D Gaussians indistinguishable.

    Parameters
    ----------
    mean_a, var_a : float
        Mean and variance (> 0) of :math:`P = N(m_a, v_a)`.
    mean_b, var_b : float
        Mean and variance (> 0) of :math:`Q = N(m_b, v_b)`.
    delta : float
        Target :math:`\delta \in [0, 1)`.

    Returns
    -------
    float
        The smallest :math:`\varepsilon \ge 0` with
        ``gaussian_pair_delta(mean_a, var_a, mean_b, var_b, epsilon) <= delta``.
        Finite for ``delta > 0``; for ``delta == 0`` it is ``0.0`` when the two
        distributions are identical and ``inf`` otherwise.

    Raises
    ------
    InvalidParameterError
        On invalid means, variances or ``delta``.

    Notes
    -----
    Solves :math:`\max(H_\varepsilon(P \| Q), H_\varepsilon(Q \| P)) = \delta`
    by Brent's method (the profile is continuous and non-increasing in
    :math:`\varepsilon`, tending to 0), rounding the root up to the certified
    side. See :func:`gaussian_pair_delta` for :math:`H_\varepsilon`.

    References
    ----------
    .. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018.
    """
    ma = float(_check_finite_array(mean_a, "mean_a"))
    mb = float(_check_finite_array(mean_b, "mean_b"))
    va = float(_check_variance_array(var_a, "var_a"))
    vb = float(_check_variance_array(var_b, "var_b"))
    d = _check_delta(delta)
    if ma == mb and va == vb:
        return 0.0
    if d == 0.0:
        return math.inf

    def excess(eps: float) -> float:
        return d - float(_pair_delta_unchecked(ma, va, mb, vb, eps))

    if excess(0.0) >= 0:
        return 0.0
    hi = _bracket_up(excess, 1.0)
    if hi is None:  # pragma: no cover - the profile tends to 0 as epsilon grows
        return math.inf
    eps = optimize.brentq(excess, 0.0, hi, xtol=_XTOL, rtol=_RTOL, maxiter=500)
    return float(_nudge(excess, eps, 1.0))


# --------------------------------------------------------------------------------
# Multivariate Gaussians with unequal covariances: Renyi upper bound
# --------------------------------------------------------------------------------


def _renyi_divergence(
    mean_diff: np.ndarray, cov_p: np.ndarray, cov_q: np.ndarray, orders: np.ndarray
) -> np.ndarray:
    """D_alpha(N(d, cov_p) || N(0, cov_q)) of shape (p, n_orders); inf if undefined.

    ``mean_diff`` is (p, k), covariances (p, k, k), ``orders`` (n,) all > 1.
    """
    # Whitening by cov_q turns every S_alpha into L (alpha I + (1-alpha) M) L^T with
    # one eigendecomposition M = U diag(lam) U^T per pair, instead of one slogdet
    # and one solve per (pair, order); it also makes the positive-definiteness test
    # exact (alpha + (1 - alpha) lam > 0) and lets log1p absorb the log-det
    # cancellation near alpha = 1.
    chol_q = np.linalg.cholesky(cov_q)
    half = np.linalg.solve(chol_q, cov_p)  # L^-1 cov_p
    whitened = np.linalg.solve(chol_q, np.swapaxes(half, -1, -2))  # L^-1 cov_p L^-T
    whitened = 0.5 * (whitened + np.swapaxes(whitened, -1, -2))
    lam, vecs = np.linalg.eigh(whitened)  # (p, k), (p, k, k)
    d_white = np.linalg.solve(chol_q, mean_diff[..., None])[..., 0]
    d_rot = np.einsum("pki,pk->pi", vecs, d_white)  # U^T L^-1 d

    alpha = orders[None, :, None]  # (1, n, 1)
    lam_ = lam[:, None, :]  # (p, 1, k)
    # alpha + (1 - alpha) lam = 1 + (alpha - 1)(1 - lam): the eigenvalues of
    # L^-1 S_alpha L^-T.
    step = (alpha - 1.0) * (1.0 - lam_)
    valid = np.all(step > -1.0, axis=-1)  # (p, n): S_alpha positive definite
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s_eig = 1.0 + step
        quad = np.sum(d_rot[:, None, :] ** 2 / s_eig, axis=-1)
        # ln det S_alpha - (1 - alpha) ln det cov_p - alpha ln det cov_q, per unit
        # of cov_q: sum ln(1 + (a-1)(1-lam)) + (a-1) ln lam.
        log_det = np.sum(np.log1p(step) + (alpha - 1.0) * np.log(lam_), axis=-1)
        div = 0.5 * orders[None, :] * quad - log_det / (2.0 * (orders[None, :] - 1.0))
    return np.where(valid, div, np.inf)


def _renyi_log_delta_bound(mean_diff, cov_p, cov_q, epsilon, orders) -> np.ndarray:
    div = _renyi_divergence(mean_diff, cov_p, cov_q, orders)
    with np.errstate(invalid="ignore"):
        log_delta = (orders[None, :] - 1.0) * (div - epsilon)
    return np.min(log_delta, axis=-1)


def renyi_gaussian_delta(mean_diff, cov_a, cov_b, epsilon, orders=None):
    r"""Certified upper bound on the hockey-stick divergence of two Gaussians.

    Parameters
    ----------
    mean_diff : array_like of shape (k,) or (p, k)
        :math:`d = m_a - m_b`, or a batch of ``p`` such differences.
    cov_a, cov_b : array_like of shape (k, k) or (p, k, k)
        Covariances of :math:`P = N(m_a, \Sigma_a)` and :math:`Q = N(m_b,
        \Sigma_b)`, symmetric positive definite; broadcast against the batch.
    epsilon : float
        :math:`\varepsilon \ge 0`, finite.
    orders : array_like, optional
        Renyi orders :math:`\alpha > 1` to minimise over. Defaults to about 220
        orders geometrically spaced in :math:`[1.001, 1024]`.

    Returns
    -------
    float or numpy.ndarray
        An upper bound, at most 1, on
        :math:`\max(H_\varepsilon(P \| Q), H_\varepsilon(Q \| P))`: a float for a
        single pair, shape ``(p,)`` for a batch.

    Raises
    ------
    InvalidParameterError
        On mismatched shapes, non-finite inputs, covariances that are not
        positive definite, ``epsilon`` negative or not finite, or orders not
        above 1.

    Notes
    -----
    For :math:`\alpha > 1` with :math:`S_\alpha = \alpha \Sigma_Q + (1 - \alpha)
    \Sigma_P` positive definite,

    .. math::

        D_\alpha(P \| Q) = \frac{\alpha}{2} d^\top S_\alpha^{-1} d
        - \frac{1}{2(\alpha - 1)} \ln \frac{\det S_\alpha}
        {(\det \Sigma_P)^{1-\alpha} (\det \Sigma_Q)^{\alpha}}

    [1]_ (orders where :math:`S_\alpha` is not positive definite have infinite
    divergence and are skipped), and each order certifies

    .. math::

        H_\varepsilon(P \| Q) \le \exp\big((\alpha - 1)(D_\alpha(P \| Q)
        - \varepsilon)\big)

    [2]_. The bound is the minimum over orders, taken per direction, and the
    maximum over the two directions. It is computed in the basis that whitens
    :math:`\Sigma_Q` and diagonalises the whitened :math:`\Sigma_P` (a Cholesky
    factor, linear solves and a symmetric eigendecomposition; no explicit
    inverse). The conversion is conservative: on equal covariances it is
    typically one to two orders of magnitude above the exact
    :func:`gaussian_delta`.

    References
    ----------
    .. [1] M. Gil, F. Alajaji and T. Linder, "Renyi divergence measures for
       commonly used univariate continuous distributions", Information
       Sciences 249, 2013 (multivariate normal entry).
    .. [2] I. Mironov, "Renyi Differential Privacy", IEEE CSF 2017,
       Proposition 3.
    """
    d = _check_finite_array(mean_diff, "mean_diff")
    ca = _check_finite_array(cov_a, "cov_a")
    cb = _check_finite_array(cov_b, "cov_b")
    eps = _as_float(epsilon, "epsilon")
    if not (math.isfinite(eps) and eps >= 0):
        raise InvalidParameterError(
            "The 'epsilon' parameter must be a finite number >= 0. "
            f"Got {epsilon!r} instead."
        )
    if orders is None:
        alphas = _DEFAULT_ORDERS
    else:
        alphas = np.atleast_1d(np.asarray(orders, dtype=float)).ravel()
        if alphas.size == 0 or not np.all(np.isfinite(alphas) & (alphas > 1)):
            raise InvalidParameterError(
                "The 'orders' parameter must be a non-empty list of finite Renyi "
                f"orders > 1. Got {orders!r} instead."
            )
    if d.ndim not in (1, 2):
        raise InvalidParameterError(
            "The 'mean_diff' parameter must have shape (k,) or (p, k). "
            f"Got shape {d.shape} instead."
        )
    single = d.ndim == 1
    k = d.shape[-1]
    for name, cov in (("cov_a", ca), ("cov_b", cb)):
        if cov.ndim not in (2, 3) or cov.shape[-2:] != (k, k):
            raise InvalidParameterError(
                f"The {name!r} parameter must have shape ({k}, {k}) or (p, {k}, "
                f"{k}) to match mean_diff. Got shape {cov.shape} instead."
            )
    d2 = d.reshape(-1, k)
    try:
        p = np.broadcast_shapes(d2.shape[:1], ca.shape[:-2], cb.shape[:-2])
    except ValueError:
        raise InvalidParameterError(
            "The batch sizes of 'mean_diff', 'cov_a' and 'cov_b' do not match: "
            f"{d.shape}, {ca.shape}, {cb.shape}."
        ) from None
    if single and p != (1,):
        raise InvalidParameterError(
            "A batch of covariances needs a batch of mean differences of shape "
            f"(p, k). Got mean_diff of shape {d.shape}."
        )
    d2 = np.broadcast_to(d2, p + (k,))
    ca3 = np.broadcast_to(ca, p + (k, k))
    cb3 = np.broadcast_to(cb, p + (k, k))
    checked = []
    for name, cov in (("cov_a", ca3), ("cov_b", cb3)):
        # Asymmetry is judged against each matrix's scale, so that rounding noise on
        # zero off-diagonal entries (as left by sums of outer products) passes.
        asym = np.abs(cov - np.swapaxes(cov, -1, -2)).max(axis=(-2, -1))
        if np.any(asym > 1e-10 * np.abs(cov).max(axis=(-2, -1))):
            raise InvalidParameterError(
                f"The {name!r} parameter must be symmetric positive definite; "
                "it is not symmetric."
            )
        cov = 0.5 * (cov + np.swapaxes(cov, -1, -2))
        try:
            np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            raise InvalidParameterError(
                f"The {name!r} parameter must be symmetric positive definite; "
                "it is not positive definite."
            ) from None
        checked.append(cov)
    ca3, cb3 = checked

    log_ab = _renyi_log_delta_bound(d2, ca3, cb3, eps, alphas)
    log_ba = _renyi_log_delta_bound(-d2, cb3, ca3, eps, alphas)
    delta = np.exp(np.minimum(np.maximum(log_ab, log_ba), 0.0))
    return float(delta[0]) if single else delta
