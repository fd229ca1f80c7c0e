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


@dataclass(frozen=True)
class LossLaw:
    """A generalised chi-square: sum_j w_j (Z_j + b_j)^2 + s Z_0 + c.

    Attributes
    ----------
    weights, offsets : ndarray of shape (r,)
        w_j and b_j of the chi-square terms (Z_j standard normal).
    normal_sd : float
        s, the standard deviation of the normal term.
    constant : float
        c.
    """

    weights: np.ndarray
    offsets: np.ndarray
    normal_sd: float
    constant: float

    def mean(self) -> float:
        """Return E[X] = sum w_j (1 + b_j^2) + c."""
        return float(np.sum(self.weights * (1 + self.offsets**2)) + self.constant)

    def log_cf(self, u: np.ndarray) -> np.ndarray:
        """Return log E[exp(i u X)] for u >= 0 (principal branches are continuous).

        Each term's log(1 - 2 i w u) has a positive real part's argument in
        (-pi/2, pi/2), so the principal logarithm has no jump along u.
        """
        u = np.asarray(u, dtype=float)[..., None]
        w, b = self.weights, self.offsets
        z = 1.0 - 2j * w * u
        terms = -0.5 * np.log(z) + 1j * w * b**2 * u / z
        total = terms.sum(axis=-1)
        u = u[..., 0]
        return total + 1j * self.constant * u - 0.5 * (self.normal_sd * u) ** 2

    def sf(self, x: float) -> tuple[float, float]:
        """Return P(X > x) and a bound on its numerical error (Gil-Pelaez).

        P(X > x) = 1/2 + (1/pi) int_0^inf Im[exp(-i u x) phi(u)] / u du
        (Imhof 1961). With psi(u) = phi(u) exp(-i c u) and omega = c - x the
        integrand is (sin(omega u) Re psi + cos(omega u) Im psi) / u: on
        (0, 1] it is integrated as it is, beyond by QUADPACK's Fourier
        integrator (QAWF), which handles the slowly decaying oscillatory
        tail of a few chi-square terms. The error is QUADPACK's estimate.
        """
        omega = self.constant - x
        if self.weights.size == 0:
            # No chi-square term: X is normal (equal covariances), in closed
            # form, which keeps the analytic Gaussian profile to rounding.
            if self.normal_sd == 0.0:
                return float(self.constant > x), 0.0
            return float(special.ndtr(omega / self.normal_sd)), 1e-16

        # QUADPACK calls the integrands one point at a time: a scalar
        # evaluation in cmath, with the last point remembered (the sine and
        # cosine parts are evaluated at the same nodes), avoids numpy's
        # per-call overhead on arrays of a few terms.
        terms = list(zip(self.weights.tolist(),
                         (self.weights * self.offsets**2).tolist(), strict=True))
        half_var = 0.5 * self.normal_sd**2
        last = [None, 0j]

        def envelope(u):
            if last[0] != u:
                total = -half_var * u * u
                for w, wb2 in terms:
                    z = 1.0 - 2j * w * u
                    total += -0.5 * cmath.log(z) + 1j * wb2 * u / z
                last[0], last[1] = u, cmath.exp(total)
            return last[1]

        def full(u):
            if u == 0.0:
                # The limit u -> 0 of Im[exp(-i u x) phi(u)] / u is E[X] - x.
                return self.mean() - x
            return (envelope(u) * cmath.exp(1j * omega * u)).imag / u

        def real_part(u):
            return envelope(u).real / u

        def imag_part(u):
            return envelope(u).imag / u

        head, err = integrate.quad(full, 0.0, 1.0, limit=400, epsabs=1e-15,
                                   epsrel=1e-12)
        if omega == 0.0:
            tail, tail_err = integrate.quad(imag_part, 1.0, np.inf, limit=400,
                                            epsabs=1e-15, epsrel=1e-12)
        else:
            # sin(omega u) and cos(omega u) weights; QAWF needs omega > 0.
            sign = 1.0 if omega > 0 else -1.0
            sin_part, e1 = _fourier_tail(real_part, "sin", abs(omega))
            cos_part, e2 = _fourier_tail(imag_part, "cos", abs(omega))
            tail, tail_err = sign * sin_part + cos_part, e1 + e2
        prob = 0.5 + (head + tail) / math.pi
        return min(max(prob, 0.0), 1.0), (err + tail_err) / math.pi


def _fourier_tail(f, weight: str, omega: float) -> tuple[float, float]:
    """Return int_1^inf f(u) w(omega u) du and its error (QUADPACK's QAWF).

    The tightest tolerance QAWF meets: it is asked for 1e-13 and, when it
    reports that it could not (an IntegrationWarning), for looser ones; the
    error returned is the estimate of the run that met its tolerance, so the
    caller's rounding to the certified side stays honest.
    """
    for tolerance in (1e-13, 1e-11, 1e-9):
        with warnings.catch_warnings():
            warnings.simplefilter("error", integrate.IntegrationWarning)
            try:
                value, err = integrate.quad(f, 1.0, np.inf, weight=weight,
                                            wvar=omega, limlst=200,
                                            epsabs=tolerance)
            except integrate.IntegrationWarning:
                continue
        return value, max(err, tolerance)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        value, err = integrate.quad(f, 1.0, np.inf, weight=weight, wvar=omega,
                                    limlst=400, epsabs=1e-8)
    # QAWF did not meet even 1e-9: take its estimate with a wide margin.
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
    quad = np.abs(lam) > _ZERO
    # lam/2 w^2 + beta w = lam/2 (w + beta/lam)^2 - beta^2 / (2 lam).
    weights = sign * lam[quad] / 2
    offsets = beta[quad] / lam[quad]
    constant = sign * (c0 - np.sum(beta[quad] ** 2 / (2 * lam[quad])))
    normal_sd = float(np.sqrt(np.sum(beta[~quad] ** 2)))
    return LossLaw(weights=weights, offsets=offsets, normal_sd=normal_sd,
                   constant=float(constant))


def loss_laws(mean_a, cov_a, mean_b, cov_b) -> tuple[LossLaw, LossLaw]:
    """Return the laws of L = log p_a / p_b under P_a and under P_b."""
    ma, mb = (np.atleast_1d(np.asarray(m, dtype=float)) for m in (mean_a, mean_b))
    sa, sb = (np.atleast_2d(np.asarray(c, dtype=float)) for c in (cov_a, cov_b))
    under_a = _loss_under(ma, sa, mb, sb, 1.0)
    # Under P_b, log p_a/p_b = -log p_b/p_a.
    under_b = _loss_under(mb, sb, ma, sa, -1.0)
    return under_a, under_b


def _one_order(mean_a, cov_a, mean_b, cov_b, epsilon: float) -> float:
    under_a, under_b = loss_laws(mean_a, cov_a, mean_b, cov_b)
    pa, err_a = under_a.sf(epsilon)
    pb, err_b = under_b.sf(epsilon)
    # Rounded to the certified side: the first tail up, the second down.
    return min(1.0, max(0.0, (pa + err_a) - math.exp(epsilon)
                        * max(pb - err_b, 0.0)))


def multivariate_gaussian_pair_delta(mean_a, cov_a, mean_b, cov_b,
                               epsilon: float) -> float:
    """Return delta(epsilon) between N(m_a, S_a) and N(m_b, S_b), both orders.

    Exact up to the numerical integration's error, which is added (the value
    is never below the true one beyond floating-point rounding of the
    integrand). Reduces to the analytic Gaussian formula when S_a = S_b.

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.calibration import gaussian_delta
    >>> d = multivariate_gaussian_pair_delta([0.0, 0.0], np.eye(2), [1.0, 0.0],
    ...                                np.eye(2), 1.0)
    >>> bool(abs(d - gaussian_delta(1.0, 1.0)) < 1e-9)
    True
    """
    return max(_one_order(mean_a, cov_a, mean_b, cov_b, epsilon),
               _one_order(mean_b, cov_b, mean_a, cov_a, epsilon))


def multivariate_gaussian_pair_epsilon(mean_a, cov_a, mean_b, cov_b,
                                       delta: float) -> float:
    """Return the least epsilon whose certified delta is at most ``delta``.

    The inverse of :func:`multivariate_gaussian_pair_delta` (decreasing in
    epsilon), found by Brent's method on a bracket and returned from the certified
    side: the value's own delta is checked to be at most ``delta``. 0 when
    the two laws are already (0, delta)-close.

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

    def excess(eps):
        return multivariate_gaussian_pair_delta(mean_a, cov_a, mean_b, cov_b,
                                                eps) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
        if hi > 1e6:
            return math.inf
    root = optimize.brentq(excess, 0.0, hi, xtol=1e-12, rtol=1e-10)
    # From the certified side: step up until the value's own delta holds.
    step = max(abs(root), 1e-12) * 1e-9
    while excess(root) > 0:
        root += step
        step *= 2.0
    return float(root)
