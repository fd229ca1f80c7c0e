"""The record of one release (or of a dry run): values, noise law, certificate."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import integrate, special, stats

__all__ = [
    "Plan",
    "Release",
    "expected_gaussian_norm",
    "expected_laplace_norm",
    "gaussian_accuracy",
]


def expected_gaussian_norm(cov: np.ndarray) -> float:
    """Return E ||Z||_2 for Z ~ N(0, cov).

    For cov = s I_k, E||Z|| = sqrt(2 s) Gamma((k+1)/2) / Gamma(k/2) exactly. Other
    covariances have no closed form; the expectation is then one-dimensional
    quadrature of the chi-square mixture's Laplace transform.
    """
    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    k = cov.shape[0]
    lam = np.clip(np.linalg.eigvalsh(cov), 0.0, None)
    if lam.max(initial=0.0) == 0.0:
        return 0.0
    if np.allclose(lam, lam[0], rtol=1e-12):
        return float(math.sqrt(2 * lam[0]) * math.exp(
            special.gammaln((k + 1) / 2) - special.gammaln(k / 2)))
    # sqrt(q) = 1 / (2 sqrt(pi)) * integral_0^inf (1 - e^(-t q)) t^(-3/2) dt, and
    # E e^(-t Q) = prod (1 + 2 lam t)^(-1/2) for Q = sum lam_i chi2_1. The
    # eigenvalues are scaled to at most 1 so the quadrature sees one scale
    # whatever the noise's size: E||Z|| = sqrt(lam_max) E||Z / sqrt(lam_max)||.
    top = float(lam.max())
    unit = lam / top

    def integrand(t):
        return (1.0 - np.prod((1.0 + 2.0 * unit * t) ** -0.5)) * t ** -1.5

    head, _ = integrate.quad(integrand, 0, 1, limit=200)
    tail, _ = integrate.quad(integrand, 1, np.inf, limit=200)
    return float(math.sqrt(top) * (head + tail) / (2 * math.sqrt(math.pi)))


def expected_laplace_norm(scale: float, d: int) -> float:
    """Return E ||y||_2 for y of d i.i.d. Laplace(0, scale) components.

    For d = 1 it is the scale. Otherwise it follows from
    sqrt(q) = 1 / (2 sqrt(pi)) integral (1 - e^(-t q)) t^(-3/2) dt with
    E e^(-t y^2) = sqrt(pi / (4 t)) erfcx(1 / (2 scale sqrt(t))) / scale, by
    one-dimensional quadrature.
    """
    if scale <= 0 or d == 0:
        return 0.0
    if d == 1:
        return float(scale)

    def integrand(u):
        # For unit scale, with t = u^2 (dt = 2 u du) to spread the mass near 0.
        t = u * u
        one = math.sqrt(math.pi / (4 * t)) * special.erfcx(1 / (2 * u))
        return (1.0 - one**d) * t**-1.5 * 2 * u

    value, _ = integrate.quad(integrand, 0, np.inf, limit=400)
    return float(scale * value / (2 * math.sqrt(math.pi)))


def gaussian_accuracy(variance: float, k: int, beta: float) -> float:
    """Return alpha with P(||Z||_2 > alpha) = beta for Z ~ N(0, variance I_k).

    For k = 1 this is Zhang et al.'s Theorem 2: alpha = sigma Phi^-1(1 - beta/2).
    """
    if variance <= 0:
        return 0.0
    return float(math.sqrt(variance * stats.chi2.isf(beta, k)))


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What a release would do, computed before any noise is drawn.

    Attributes
    ----------
    mechanism : str
        The ``mechanism=`` name (e.g. ``"apgm"``).
    statistics : tuple of str
        The released statistics' labels.
    n : int
        Records in the private data (public).
    epsilon, delta : float
        The certified guarantee (after any stated relaxation).
    calibration : str
        ``"analytic"`` or ``"classic"``.
    secrets : tuple of str
        What is hidden.
    theta : str
        Where Theta came from.
    sensitivity : float
        The largest l2 distance between the means of F given two secrets of a
        pair, worst case over Theta (Zhang et al. Eq. 1).
    inherent_variance : tuple of float
        The smallest conditional variance of each statistic over pairs and Theta.
    noise : {"gaussian", "laplace", "none"}
        The law of the added noise.
    noise_covariance : ndarray of shape (k, k)
        Covariance of the added noise (zeros when none is added; 2 b^2 B B^T for
        Laplace noise of scale b on the columns of B).
    noise_scale : float or None
        Scale b of Laplace noise; None for Gaussian noise.
    noise_basis : ndarray of shape (k, d) or None
        For Laplace noise: the orthonormal directions each carrying one
        Laplace(b) draw (the identity for per-component noise).
    extra_laplace_scale : float or None
        Chen & Ohrimenko Thm 4.7: the scale W / lambda of Laplace noise added to
        every statistic on top of the mechanism's own (``noise_covariance``
        then includes it).
    noiseless : bool
        True when the data's own randomness covers the sensitivity and no noise
        is added.
    expected_error : float
        E ||noise||_2.
    accuracy : tuple of (alpha, beta)
        P(||M(X) - F(X)||_2 > alpha) <= beta (Zhang et al. Thm 2).
    method : str
        How the pairs were certified.
    assumptions : tuple of str
        What the certificate takes for granted.
    guarantee : str
        The kind of privacy certified at (epsilon, delta): "attribute privacy"
        unless the mechanism certifies another (the differential-privacy
        baselines).
    """

    mechanism: str
    statistics: tuple
    n: int
    epsilon: float
    delta: float
    calibration: str
    secrets: tuple
    theta: str
    sensitivity: float
    inherent_variance: tuple
    noise_covariance: np.ndarray
    noise: str = "gaussian"
    noise_scale: float | None = None
    noise_basis: np.ndarray | None = None
    extra_laplace_scale: float | None = None
    noiseless: bool = False
    expected_error: float = 0.0
    method: str = ""
    assumptions: tuple = ()
    guarantee: str = "attribute privacy"
    random_state: object = field(default=None, repr=False)

    def __post_init__(self):
        cov = np.array(self.noise_covariance, dtype=float)
        cov.setflags(write=False)
        object.__setattr__(self, "noise_covariance", cov)
        if self.noise_basis is not None:
            basis = np.array(self.noise_basis, dtype=float)
            basis.setflags(write=False)
            object.__setattr__(self, "noise_basis", basis)

    @property
    def accuracy(self) -> tuple[float, float]:
        """(alpha, beta) with beta = 0.05: see :meth:`alpha`."""
        return self.alpha(0.05), 0.05

    @property
    def noise_std(self) -> np.ndarray:
        """Standard deviation of the noise on each statistic."""
        return np.sqrt(np.diagonal(self.noise_covariance))

    def alpha(self, beta: float = 0.05) -> float:
        """Return alpha: the l2 error exceeds it with probability at most beta.

        Exact for isotropic Gaussian noise (Zhang et al. Thm 2 for one
        statistic) and for Laplace noise in one direction; otherwise an upper
        bound (the largest noise variance in every direction for Gaussian noise,
        ||y||_2 <= ||y||_1 ~ Gamma(d, b) for Laplace noise).
        """
        if self.noiseless:
            return 0.0
        if self.extra_laplace_scale:
            # Union bound: the main noise and the extra Laplace noise each exceed
            # their share with probability beta / 2.
            k = len(self.statistics)
            b = self.extra_laplace_scale
            main = replace(self, extra_laplace_scale=None,
                           noise_covariance=self.noise_covariance
                           - 2 * b**2 * np.eye(k))
            return main.alpha(beta / 2) + float(b * stats.gamma.isf(beta / 2, k))
        if self.noise == "laplace":
            d = self.noise_basis.shape[1]
            return float(self.noise_scale * stats.gamma.isf(beta, d))
        lam = np.linalg.eigvalsh(self.noise_covariance)
        if lam.max() <= 0:
            return 0.0
        k = int(np.sum(lam > 1e-15 * lam.max()))
        return gaussian_accuracy(float(lam.max()), k, beta)

    def _rows(self) -> list[tuple[str, str]]:
        alpha, beta = self.accuracy
        rows = [
            ("statistics", ", ".join(self.statistics)),
            ("mechanism", self.mechanism),
            ("guarantee", f"({_fmt(self.epsilon)}, {_fmt(self.delta)})-"
                          f"{self.guarantee}"),
            ("covers", self._scope_text()),
            ("calibration", self.calibration),
            ("hidden", "; ".join(self.secrets)),
            ("Theta", self.theta),
            ("records n", str(self.n)),
            ("sensitivity", _fmt(self.sensitivity)),
            ("inherent variance", ", ".join(_fmt(v) for v in self.inherent_variance)),
            ("noise", self._noise_text()),
            ("expected error", _fmt(self.expected_error)),
            ("accuracy", f"||error|| <= {_fmt(alpha)} with probability "
                         f"{_fmt(1 - beta)}"),
            ("certified by", self.method),
        ]
        rows += [("assumes", a) for a in self.assumptions]
        return rows

    def _scope_text(self) -> str:
        if "differential privacy" in self.guarantee:
            return ("this release alone; differential privacy composes, so "
                    "several releases cost at most the sum of their epsilons and "
                    "deltas")
        return ("this release alone: Pufferfish guarantees do not add up, and "
                "two releases of the same data can reveal together what neither "
                "reveals alone")

    def _noise_text(self) -> str:
        if self.noiseless and self.noise == "laplace":
            return ("none: the laws of the statistic given the two secrets "
                    "coincide (up to the disregarded mass)")
        if self.noiseless:
            return "none: the data's own variance covers the sensitivity"
        if self.noise == "laplace":
            d = self.noise_basis.shape[1]
            where = ("each statistic" if d == len(self.statistics) and np.allclose(
                self.noise_basis, np.eye(d)) else f"{d} direction(s)")
            return f"Laplace(0, {_fmt(float(self.noise_scale))}) on {where}"
        cov = self.noise_covariance
        if np.allclose(cov, cov[0, 0] * np.eye(cov.shape[0])):
            return "N(0, " + _fmt(float(cov[0, 0])) + " I)"
        sd = ", ".join(_fmt(float(v)) for v in self.noise_std)
        return f"N(0, Sigma), rank {np.linalg.matrix_rank(cov)}; sd per statistic {sd}"

    def summary(self) -> str:
        """Return a human-readable report."""
        rows = self._rows()
        width = max(len(k) for k, _ in rows)
        title = "Release plan (no noise drawn)" if type(self) is Plan else "Release"
        lines = [title, "=" * len(title)]
        lines += [f"{k:<{width}}  {v}" for k, v in rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
            f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
            for k, v in self._rows())
        return f"<table>{rows}</table>"


@dataclass(frozen=True, kw_only=True)
class Release(Plan):
    """A released statistic with its certificate.

    Attributes
    ----------
    values : pandas.Series
        The noisy statistics, one entry per released column.

    See :class:`Plan` for the certificate's attributes. The true statistic is
    never stored.
    """

    values: pd.Series

    def __post_init__(self):
        super().__post_init__()
        values = self.values.copy()
        values.flags.allows_duplicate_labels = False
        object.__setattr__(self, "values", values)

    def _rows(self) -> list[tuple[str, str]]:
        released = ", ".join(f"{k} = {_fmt(float(v))}" for k, v in self.values.items())
        # The released values name the statistics.
        return [("released", released)] + super()._rows()[1:]
