"""The exact privacy profile of two Gaussians with different covariances.

Between P = N(m_a, S_a) and Q = N(m_b, S_b) the privacy loss L = log p/q is a
quadratic function of a Gaussian vector, so under either law it is a
generalised chi-square variable: a weighted sum of independent noncentral
chi-squares with one degree of freedom, plus a normal term and a constant. The
hockey-stick divergence is

    delta(epsilon) = P(L_P > epsilon) - e^epsilon P(L_Q > epsilon),

with L_P, L_Q the loss under P and under Q, and each tail comes from the
characteristic function by Gil-Pelaez inversion (Imhof 1961), integrated
numerically with its error estimate carried to the certified side.
"""

from __future__ import annotations

import cmath
import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, special

from skattr.exceptions import NotCertifiableError

__all__ = [
    "LossLaw",
    "loss_laws",
    "multivariate_gaussian_pair_delta",
    "multivariate_gaussian_pair_epsilon",
]

# Eigenvalues of M - I below this (relative to 1) are zero: the direction then
# carries a normal term, not a chi-square one.
_ZERO = 1e-12


#: A term's offset b = beta / (2 a) up to which its square is completed (its
#: phase a b^2 u moved into the oscillating factor): beyond, a b^2 is so large
#: that moving it would cancel catastrophically, and the term is kept in the
#: stable form, whose magnitude has decayed long before its phase matters.
_COMPLETE_UP_TO = 8.0


# Above this many chi-square terms the characteristic function is evaluated
# with numpy rather than term by term in cmath.
_SCALAR_TERMS = 24


@dataclass(frozen=True)
class LossLaw:
    """A generalised chi-square: sum_j (a_j Z_j^2 + beta_j Z_j) + s Z_0 + c.

    Written with the linear coefficients beta_j rather than completed squares
    a_j (Z_j + b_j)^2: when the two covariances are nearly equal, a_j is tiny
    and b_j = beta_j / (2 a_j) huge, and the completed form cancels every
    digit (its characteristic function multiplies a huge phase by a tiny
    weight).

    Attributes
    ----------
    weights, linear : ndarray of shape (r,)
        a_j and beta_j (Z_j standard normal).
    normal_sd : float
        s, the standard deviation of the normal term.
    constant : float
        c.
    """

    weights: np.ndarray
    linear: np.ndarray
    normal_sd: float
    constant: float

    def negated(self) -> LossLaw:
        """Return the law of -X (every coefficient negated; exact)."""
        return LossLaw(weights=-self.weights, linear=-self.linear,
                       normal_sd=self.normal_sd, constant=-self.constant)

    def mean(self) -> float:
        """Return E[X] = sum a_j + c."""
        return float(np.sum(self.weights) + self.constant)

    def variance(self) -> float:
        """Return Var X = sum (2 a_j^2 + beta_j^2) + s^2."""
        return float(np.sum(2 * self.weights**2 + self.linear**2)
                     + self.normal_sd**2)

    def _log_mgf(self, t: float) -> tuple[float, float]:
        """Return log E[exp(t X)] (for 1 - 2 a_j t > 0) and its rounding scale.

        log E exp(t (a Z^2 + beta Z)) = -log(1 - 2 a t) / 2
        + beta^2 t^2 / (2 (1 - 2 a t)).
        """
        z = 1.0 - 2.0 * self.weights * t
        terms = np.concatenate([-0.5 * np.log(z), self.linear**2 * t * t / (2 * z),
                                [0.5 * (self.normal_sd * t) ** 2, self.constant * t]])
        return float(np.sum(terms)), float(np.sum(np.abs(terms)))

    def upper_tail_bound(self, x: float) -> float:
        """Return a bound on P(X >= x) from the moment generating function.

        Chernoff: P(X >= x) <= E[exp(t X)] exp(-t x) for every admissible
        t > 0, so any t gives a bound and the search (Brent's method on log t,
        the exponent being convex in t) only tightens it; the exponent's
        floating-point error is added. 1 when x is not above the mean.
        """
        if not x > self.mean():
            return 1.0
        sd = math.sqrt(self.variance())
        if sd == 0.0:
            return 0.0          # X is its mean
        positive = self.weights[self.weights > 0]
        t_max = 1 / (2 * positive.max()) if positive.size else math.inf
        top = min(t_max * (1 - 1e-9), 1e12 / sd)
        bottom = min(1e-12 / sd, top / 2)

        def exponent(log_t):
            t = math.exp(log_t)
            log_mgf, _ = self._log_mgf(t)
            return log_mgf - t * x

        found = optimize.minimize_scalar(
            exponent, bounds=(math.log(bottom), math.log(top)), method="bounded",
            options={"xatol": 1e-6})
        t = math.exp(found.x)
        log_mgf, scale = self._log_mgf(t)
        # Every term is rounded by at most a few units in the last place.
        value = log_mgf - t * x + 16 * np.finfo(float).eps * (scale + abs(t * x))
        return math.exp(value) if value < 0 else 1.0

    def tail_bounds(self, x: float) -> tuple[float, float]:
        """Return (low, high) with low <= P(X > x) <= high (Chernoff, both sides).

        Rigorous whatever the numerical integration does: :meth:`sf` keeps
        its answer within them.
        """
        if x >= self.mean():
            return 0.0, self.upper_tail_bound(x)
        # P(X > x) = 1 - P(X <= x) and P(X <= x) = P(-X >= -x).
        return max(0.0, 1.0 - self.negated().upper_tail_bound(-x)), 1.0

    def log_cf(self, u: np.ndarray) -> np.ndarray:
        """Return log E[exp(i u X)] for u >= 0, in the stable form.

        E exp(i u (a Z^2 + beta Z)) = (1 - 2 i a u)^(-1/2)
        exp(-beta^2 u^2 / (2 (1 - 2 i a u))); the principal logarithm of
        1 - 2 i a u has no jump along u (its real part is 1).
        """
        u = np.asarray(u, dtype=float)[..., None]
        z = 1.0 - 2j * self.weights * u
        terms = -0.5 * np.log(z) - self.linear**2 * u**2 / (2 * z)
        total = terms.sum(axis=-1)
        u = u[..., 0]
        return total + 1j * self.constant * u - 0.5 * (self.normal_sd * u) ** 2

    def sf(self, x: float, tolerance: float | None = None
           ) -> tuple[float, float]:
        """Return P(X > x) and a bound on its numerical error (Gil-Pelaez).

        P(X > x) = 1/2 + (1/pi) int_0^inf Im[exp(-i u x) phi(u)] / u du
        (Imhof 1961). With psi(u) = phi(u) exp(-i c u) and omega = c - x the
        integrand is (sin(omega u) Re psi + cos(omega u) Im psi) / u: on
        (0, 1] it is integrated as it is, beyond by QUADPACK's Fourier
        integrator (QAWF), which handles the slowly decaying oscillatory
        tail of a few chi-square terms. The error is QUADPACK's estimate;
        ``tolerance`` (absolute) trades it for speed where a coarse answer
        settles the question, the default asks for the tightest QUADPACK
        meets.
        """
        if self.weights.size == 0:
            # No chi-square term: X is normal (equal covariances), in closed
            # form, which keeps the analytic Gaussian profile to rounding.
            if self.normal_sd == 0.0:
                return float(self.constant > x), 0.0
            return (float(special.ndtr((self.constant - x) / self.normal_sd)),
                    1e-16)
        # Chernoff bounds hold whatever QUADPACK does: far in a tail they
        # settle the answer alone; otherwise the integral is kept within them,
        # and one that contradicts them (an oscillation it could not follow,
        # a peak it never sampled) is replaced by them.
        low, high = self.tail_bounds(x)
        if high - low <= max(tolerance or 0.0, 1e-15):
            return 0.5 * (low + high), 0.5 * (high - low)
        prob, err = self._gil_pelaez(x, tolerance)
        inside_low, inside_high = max(prob - err, low), min(prob + err, high)
        if inside_low > inside_high:
            inside_low, inside_high = low, high
        return 0.5 * (inside_low + inside_high), 0.5 * (inside_high - inside_low)

    def _gil_pelaez(self, x: float, tolerance: float | None
                    ) -> tuple[float, float]:
        """Return P(X > x) and its error by Gil-Pelaez inversion (see :meth:`sf`)."""
        # Terms with a moderate offset have their square completed, which
        # moves their phase a b^2 u into exp(i omega u) (QAWF's weight) and
        # leaves the envelope's phase bounded.
        offsets = self.linear / (2 * self.weights)
        shifts = self.weights * offsets**2
        complete = np.abs(offsets) <= _COMPLETE_UP_TO
        omega = self.constant - x - float(np.sum(shifts[complete]))
        # QUADPACK calls the integrands one point at a time: a scalar
        # evaluation in cmath avoids numpy's per-call overhead on arrays of a
        # few terms. Every point is remembered: the cosine part's nodes are
        # among the sine part's (QAWF subdivides both tails alike), which
        # saves about a third of the evaluations.
        terms = list(zip(self.weights.tolist(), (self.linear**2).tolist(),
                         shifts.tolist(), complete.tolist(), strict=True))
        half_var = 0.5 * self.normal_sd**2
        seen: dict = {}

        def envelope(u):
            value = seen.get(u)
            if value is None:
                total = -half_var * u * u
                for w, beta_sq, shift, completed in terms:
                    z = 1.0 - 2j * w * u
                    total += -0.5 * cmath.log(z)
                    if completed:
                        total += 1j * shift * u / z
                    else:
                        total += -beta_sq * u * u / (2 * z)
                value = seen[u] = cmath.exp(total)
            return value

        if len(terms) > _SCALAR_TERMS:
            # Many terms (a joint law of many statistics): one numpy pass per
            # point costs less than a Python loop over the terms.
            slope = -2j * self.weights
            done, rest = np.flatnonzero(complete), np.flatnonzero(~complete)
            shift_done, beta_sq_rest = shifts[done], (self.linear**2)[rest]

            def envelope(u):  # noqa: F811 - the vectorised form of the above
                value = seen.get(u)
                if value is None:
                    z = 1.0 + slope * u
                    inverse = 1.0 / z
                    total = (-0.5 * complex(np.log(z).sum())
                             + 1j * u * complex(shift_done @ inverse[done])
                             - 0.5 * u * u * complex(beta_sq_rest @ inverse[rest])
                             - half_var * u * u)
                    value = seen[u] = cmath.exp(total)
                return value

        def full(u):
            if u == 0.0:
                # The limit u -> 0 of Im[exp(-i u x) phi(u)] / u is E[X] - x.
                return self.mean() - x
            return (envelope(u) * cmath.exp(1j * omega * u)).imag / u

        def real_part(u):
            return envelope(u).real / u

        def imag_part(u):
            return envelope(u).imag / u

        plain = dict(tolerances=(1e-15, 1e-12, 1e-9) if tolerance is None
                     else (tolerance,), limit=400, epsrel=1e-12)
        # The integrand lives where |phi| has not yet decayed, about u < 1 / sd:
        # breakpoints there, so that a narrow peak at 0 is never stepped over.
        sd = math.sqrt(self.variance())
        breaks = [k / sd for k in (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64) if k < sd]
        head, err = _quad_checked(full, 0.0, 1.0, points=breaks or None, **plain)
        if omega == 0.0:
            tail, tail_err = _quad_checked(imag_part, 1.0, np.inf, **plain)
        else:
            # sin(omega u) and cos(omega u) weights; QAWF needs omega > 0.
            sign = 1.0 if omega > 0 else -1.0
            fourier = dict(tolerances=(1e-13, 1e-11, 1e-9) if tolerance is None
                           else (tolerance,), wvar=abs(omega), limlst=200)
            sin_part, e1 = _quad_checked(real_part, 1.0, np.inf, weight="sin",
                                         **fourier)
            cos_part, e2 = _quad_checked(imag_part, 1.0, np.inf, weight="cos",
                                         **fourier)
            tail, tail_err = sign * sin_part + cos_part, e1 + e2
        prob = 0.5 + (head + tail) / math.pi
        return min(max(prob, 0.0), 1.0), (err + tail_err) / math.pi


def _quad_checked(f, a: float, b: float, tolerances, **options
                  ) -> tuple[float, float]:
    """Return int_a^b f and its error, never letting an IntegrationWarning out.

    QUADPACK is asked for each of ``tolerances`` in turn (absolute, tightest
    first) until a run meets its tolerance without an IntegrationWarning; the
    error returned is that run's estimate (at least the tolerance), so the
    caller's rounding to the certified side stays honest. When no run meets
    any, its estimate is taken with a wide margin. ``options`` go to
    :func:`scipy.integrate.quad` (a ``weight`` for QAWF's Fourier tails).
    """
    for tolerance in tolerances:
        with warnings.catch_warnings():
            warnings.simplefilter("error", integrate.IntegrationWarning)
            try:
                value, err = integrate.quad(f, a, b, epsabs=tolerance, **options)
            except integrate.IntegrationWarning:
                continue
        return value, max(err, tolerance)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        value, err = integrate.quad(f, a, b, epsabs=1e-8, **options)
    return value, max(10 * err, 1e-6)


def _sqrt_psd(cov: np.ndarray) -> np.ndarray:
    lam, vecs = np.linalg.eigh(cov)
    if lam.min() <= 1e-14 * max(lam.max(), 1e-300):
        raise NotCertifiableError(
            "A covariance of the statistic's law is singular; the exact profile "
            "of two Gaussians needs both positive definite (add noise, or use "
            "the Renyi bound).")
    return (vecs * np.sqrt(lam)) @ vecs.T


def _loss_under(mean_p, cov_p, mean_q, cov_q, sign: float) -> LossLaw:
    """Return the law of sign * log(p/q)(Y) for Y ~ N(mean_p, cov_p).

    With Y = m_p + A Z (A A^T = S_p), d = m_p - m_q:
    log p/q = c0 - Z^T Z / 2 + (A Z + d)^T S_q^-1 (A Z + d) / 2, a quadratic
    form diagonalised by the eigenvectors of M = A^T S_q^-1 A.
    """
    root = _sqrt_psd(cov_p)
    prec_q = np.linalg.inv(cov_q)
    d = mean_p - mean_q
    m = root.T @ prec_q @ root
    m = 0.5 * (m + m.T)
    b = root.T @ prec_q @ d
    _, logdet_p = np.linalg.slogdet(cov_p)
    _, logdet_q = np.linalg.slogdet(cov_q)
    c0 = 0.5 * (logdet_q - logdet_p) + 0.5 * d @ prec_q @ d
    lam, vecs = np.linalg.eigh(m - np.eye(m.shape[0]))
    beta = vecs.T @ b
    # lam / 2 w^2 + beta w per eigen-direction; exact zeros carry a normal
    # term only.
    quad = np.abs(lam) > _ZERO
    return LossLaw(weights=sign * lam[quad] / 2, linear=sign * beta[quad],
                   normal_sd=float(np.sqrt(np.sum(beta[~quad] ** 2))),
                   constant=float(sign * c0))


def loss_laws(mean_a, cov_a, mean_b, cov_b) -> tuple[LossLaw, LossLaw]:
    """Return the laws of L = log p_a / p_b under P_a and under P_b."""
    ma, mb = (np.atleast_1d(np.asarray(m, dtype=float)) for m in (mean_a, mean_b))
    sa, sb = (np.atleast_2d(np.asarray(c, dtype=float)) for c in (cov_a, cov_b))
    under_a = _loss_under(ma, sa, mb, sb, 1.0)
    # Under P_b, log p_a/p_b = -log p_b/p_a.
    under_b = _loss_under(mb, sb, ma, sa, -1.0)
    return under_a, under_b


def _both_orders(mean_a, cov_a, mean_b, cov_b) -> tuple:
    """Return the loss laws of both orders of a pair, from one decomposition.

    The order (b, a) has the loss -L: its law under P_b is that of -L under
    P_b, and under P_a that of -L under P_a (the same laws, negated).
    """
    under_a, under_b = loss_laws(mean_a, cov_a, mean_b, cov_b)
    return (under_a, under_b), (under_b.negated(), under_a.negated())


def _one_order(laws: tuple, epsilon: float, tolerance: float | None) -> float:
    under_a, under_b = laws
    pa, err_a = under_a.sf(epsilon, tolerance)
    pb, err_b = under_b.sf(epsilon, tolerance)
    # Rounded to the certified side: the first tail up, the second down.
    # e^epsilon overflows beyond 709; e^700 subtracts less, so it stays on
    # the certified side.
    return min(1.0, max(0.0, (pa + err_a) - math.exp(min(epsilon, 700.0))
                        * max(pb - err_b, 0.0)))


def multivariate_gaussian_pair_delta(mean_a, cov_a, mean_b, cov_b,
                                     epsilon: float, *,
                                     tolerance: float | None = None) -> float:
    """Return delta(epsilon) between N(m_a, S_a) and N(m_b, S_b), both orders.

    Exact up to the numerical integration's error, which is added (the value
    is never below the true one beyond floating-point rounding of the
    integrand). Reduces to the analytic Gaussian formula when S_a = S_b.
    ``tolerance`` (absolute, per integral) makes the integration coarser and
    faster; the error added grows with it, so the value stays certified.

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.calibration import gaussian_delta
    >>> d = multivariate_gaussian_pair_delta([0.0, 0.0], np.eye(2), [1.0, 0.0],
    ...                                np.eye(2), 1.0)
    >>> bool(abs(d - gaussian_delta(1.0, 1.0)) < 1e-9)
    True
    """
    forward, backward = _both_orders(mean_a, cov_a, mean_b, cov_b)
    return max(_one_order(forward, epsilon, tolerance),
               _one_order(backward, epsilon, tolerance))


def multivariate_gaussian_pair_epsilon(mean_a, cov_a, mean_b, cov_b,
                                       delta: float, *,
                                       bracket: tuple | None = None) -> float:
    """Return the least epsilon whose certified delta is at most ``delta``.

    The inverse of :func:`multivariate_gaussian_pair_delta` (decreasing in
    epsilon), found by Brent's method on a bracket and returned from the certified
    side: the value's own delta is checked to be at most ``delta``. 0 when
    the two laws are already (0, delta)-close. ``bracket=(lo, hi)``, when
    the delta at ``lo`` exceeds ``delta`` and at ``hi`` does not (checked),
    starts the search there.

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.calibration import epsilon_for_mahalanobis
    >>> eps = multivariate_gaussian_pair_epsilon([0.0], [[1.0]], [1.0], [[1.0]],
    ...                                          1e-3)
    >>> bool(abs(eps - epsilon_for_mahalanobis(1.0, 1e-3)) < 1e-6)
    True
    """
    if not 0 < delta < 1:
        raise NotCertifiableError(f"delta must lie in (0, 1); got {delta!r}.")

    # One decomposition for every epsilon tried.
    forward, backward = _both_orders(mean_a, cov_a, mean_b, cov_b)

    def excess(eps):
        return max(_one_order(forward, eps, None),
                   _one_order(backward, eps, None)) - delta

    lo, hi = 0.0, 1.0
    # An infinite upper end (a Renyi bound of inf) is no bracket: QUADPACK's
    # Fourier integrator crashes the interpreter at an infinite frequency.
    if (bracket is not None and math.isfinite(bracket[1])
            and excess(bracket[0]) > 0 >= excess(bracket[1])):
        # A caller's bracket (say, an epsilon known to fail and an upper
        # bound known to hold), checked here: fewer steps than from 0.
        lo, hi = float(bracket[0]), float(bracket[1])
    else:
        if excess(0.0) <= 0:
            return 0.0
        while excess(hi) > 0:
            hi *= 2.0
            if hi > 1e6:
                return math.inf
    root = optimize.brentq(excess, lo, hi, xtol=1e-12, rtol=1e-10)
    # From the certified side: step up until the value's own delta holds.
    step = max(abs(root), 1e-12) * 1e-9
    while excess(root) > 0:
        root += step
        step *= 2.0
    return float(root)
