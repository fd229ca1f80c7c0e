"""The record of one release (or of a dry run): values, noise law, certificate."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import integrate, special, stats

__all__ = ["Plan", "Release", "expected_gaussian_norm", "gaussian_accuracy"]


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
    # E e^(-t Q) = prod (1 + 2 lam t)^(-1/2) for Q = sum lam_i chi2_1.
    def integrand(t):
        return (1.0 - np.prod((1.0 + 2.0 * lam * t) ** -0.5)) * t ** -1.5

    value, _ = integrate.quad(integrand, 0, np.inf, limit=200)
    return float(value / (2 * math.sqrt(math.pi)))


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
    noise_covariance : ndarray of shape (k, k)
        Covariance of the added Gaussian noise (zeros when none is added).
    noise_scale : float or None
        Scale of Laplace noise; None for Gaussian mechanisms.
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
    noise_scale: float | None = None
    noiseless: bool = False
    expected_error: float = 0.0
    accuracy: tuple = (0.0, 0.05)
    method: str = ""
    assumptions: tuple = ()
    random_state: object = field(default=None, repr=False)

    def __post_init__(self):
        cov = np.array(self.noise_covariance, dtype=float)
        cov.setflags(write=False)
        object.__setattr__(self, "noise_covariance", cov)

    @property
    def noise_std(self) -> np.ndarray:
        """Standard deviation of the noise on each statistic."""
        return np.sqrt(np.diagonal(self.noise_covariance))

    def alpha(self, beta: float = 0.05) -> float:
        """Return alpha: the l2 error exceeds it with probability at most beta."""
        k = len(self.statistics)
        return gaussian_accuracy(float(self.noise_covariance[0, 0]), k, beta)

    def _rows(self) -> list[tuple[str, str]]:
        alpha, beta = self.accuracy
        rows = [
            ("mechanism", self.mechanism),
            ("guarantee", f"({_fmt(self.epsilon)}, {_fmt(self.delta)})-attribute "
                          "privacy"),
            ("calibration", self.calibration),
            ("hidden", "; ".join(self.secrets)),
            ("Theta", self.theta),
            ("records n", str(self.n)),
            ("sensitivity", _fmt(self.sensitivity)),
            ("inherent variance", ", ".join(_fmt(v) for v in self.inherent_variance)),
            ("noise", "none: the data's own variance covers the sensitivity"
             if self.noiseless else
             "N(0, " + _fmt(float(self.noise_covariance[0, 0])) + " I)"),
            ("expected error", _fmt(self.expected_error)),
            ("accuracy", f"||error|| <= {_fmt(alpha)} with probability "
                         f"{_fmt(1 - beta)}"),
            ("certified by", self.method),
        ]
        rows += [("assumes", a) for a in self.assumptions]
        return rows

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
        return [("released", released)] + super()._rows()
