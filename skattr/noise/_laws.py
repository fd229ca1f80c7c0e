"""Noise laws: what a mechanism adds, with its sampling, size and accuracy.

A mechanism's calibration ends in one of these objects; everything a release
needs to know about its noise (drawing it, its expected l2 norm, the alpha of an
(alpha, beta)-accuracy statement, its covariance and a one-line description)
is asked of the law, so no other code branches on the kind of noise.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from skattr._persistence import persistable
from skattr._random import check_random_state, gaussian_noise, laplace_noise
from skattr.exceptions import InvalidParameterError

__all__ = [
    "GaussianNoise",
    "LaplaceNoise",
    "NoiseLaw",
    "SumOfNoises",
    "expected_gaussian_norm",
    "expected_laplace_norm",
    "gaussian_accuracy",
    "marginal_half_widths",
]


def expected_gaussian_norm(cov: np.ndarray) -> float:
    """Return E ||Z||_2 for Z ~ N(0, cov).

    For cov = s I_k, E||Z|| = sqrt(2 s) Gamma((k+1)/2) / Gamma(k/2) exactly. Other
    covariances have no closed form; the expectation is then one-dimensional
    quadrature of the chi-square mixture's Laplace transform.

    Examples
    --------
    >>> round(expected_gaussian_norm(np.eye(1)), 6)   # sqrt(2 / pi)
    0.797885
    """
    from scipy import integrate, special

    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    k = cov.shape[0]
    lam = np.clip(np.linalg.eigvalsh(cov), 0.0, None)
    if lam.max(initial=0.0) == 0.0:
        return 0.0
    # Directions with no noise add nothing: dropping them keeps the integrand
    # from carrying factors of exactly 1 (and the isotropic case exact).
    lam = lam[lam > 1e-15 * lam.max()]
    k = lam.size
    if np.allclose(lam, lam[0], rtol=1e-12, atol=0.0):
        return float(math.sqrt(2 * lam[0]) * math.exp(
            special.gammaln((k + 1) / 2) - special.gammaln(k / 2)))
    # sqrt(q) = 1 / (2 sqrt(pi)) * integral_0^inf (1 - e^(-t q)) t^(-3/2) dt, and
    # E e^(-t Q) = prod (1 + 2 lam t)^(-1/2) for Q = sum lam_i chi2_1. The
    # eigenvalues are scaled to at most 1 so the quadrature sees one scale
    # whatever the noise's size: E||Z|| = sqrt(lam_max) E||Z / sqrt(lam_max)||.
    # With t = u^2 the integrand becomes smooth at 0 and decays as u^-2, which
    # quad integrates on (0, inf) without the slow convergence (and the
    # IntegrationWarning) that t^(-3/2) near 0 gives on a log-spread spectrum.
    top = float(lam.max())
    unit = lam / top

    def integrand(u):
        t = u * u
        return 2.0 * -np.expm1(-0.5 * np.sum(np.log1p(2.0 * unit * t))) / t

    head, _ = integrate.quad(integrand, 0, 1, limit=200)
    tail, _ = integrate.quad(integrand, 1, np.inf, limit=200)
    return float(math.sqrt(top) * (head + tail) / (2 * math.sqrt(math.pi)))


def expected_weighted_laplace_norm(scale: float, lengths) -> float:
    """Return E sqrt(sum_j l_j^2 y_j^2) for y of i.i.d. Laplace(0, scale).

    As :func:`expected_laplace_norm`, with E e^(-t l^2 y^2) for each length l.

    Examples
    --------
    >>> round(expected_weighted_laplace_norm(1.0, [3.0, 0.0]), 12)
    3.0
    """
    from scipy import integrate, special

    lengths = np.asarray(lengths, dtype=float)
    lengths = lengths[lengths > 0]
    if scale <= 0 or lengths.size == 0:
        return 0.0
    if lengths.size == 1:
        return float(scale * lengths[0])

    def integrand(u):
        t = u * u
        ul = u * lengths
        one = np.sqrt(math.pi / (4 * ul * ul)) * special.erfcx(1 / (2 * ul))
        return (1.0 - float(np.prod(one))) * t**-1.5 * 2 * u

    value, _ = integrate.quad(integrand, 0, np.inf, limit=400)
    return float(scale * value / (2 * math.sqrt(math.pi)))


def expected_laplace_norm(scale: float, d: int) -> float:
    """Return E ||y||_2 for y of d i.i.d. Laplace(0, scale) components.

    For d = 1 it is the scale. Otherwise it follows from
    sqrt(q) = 1 / (2 sqrt(pi)) integral (1 - e^(-t q)) t^(-3/2) dt with
    E e^(-t y^2) = sqrt(pi / (4 t)) erfcx(1 / (2 scale sqrt(t))) / scale, by
    one-dimensional quadrature.

    Examples
    --------
    >>> expected_laplace_norm(2.0, 1)
    2.0
    """
    from scipy import integrate, special

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

    Examples
    --------
    >>> round(gaussian_accuracy(1.0, 1, 0.05), 4)
    1.96
    """
    from scipy import stats

    if variance <= 0:
        return 0.0
    return float(math.sqrt(variance * stats.chi2.isf(beta, k)))


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _frozen(array) -> np.ndarray:
    out = np.array(array, dtype=float)
    out.setflags(write=False)
    return out


class NoiseLaw(ABC):
    """The law of the noise a mechanism adds to k statistics.

    Subclasses answer every question a release asks of its noise; a mechanism
    returns one from its calibration and never branches on the kind.
    """

    #: Short name of the kind of noise ("gaussian", "laplace", ...).
    kind: str = ""

    @property
    @abstractmethod
    def covariance(self) -> np.ndarray:
        """Covariance (k, k) of the noise."""

    @abstractmethod
    def sample(self, random_state=None, size: int | None = None) -> np.ndarray:
        """Draw one noise vector of shape (k,), or ``size`` of them as (size, k).

        ``random_state=None`` reads the operating system's entropy (see
        :mod:`skattr._random`); a seed or generator is for experiments only.
        ``size=None`` (one draw) is what a release uses; a batch is for
        audits (:mod:`skattr.audit`), and a batch's first row is not the
        single draw of the same seed.
        """

    def perturb(self, values, random_state=None) -> np.ndarray:
        """Return the statistic ``values`` plus one draw of the noise.

        The one place a release adds its noise; exact sampling on a grid
        (:class:`~skattr.noise.DiscreteLaplaceNoise`) rounds the values too.
        """
        return values + self.sample(random_state)

    @abstractmethod
    def expected_norm(self) -> float:
        """E ||noise||_2, exact or closely computed."""

    @abstractmethod
    def alpha(self, beta: float = 0.05) -> float:
        """Return alpha with P(||noise||_2 > alpha) <= beta."""

    @abstractmethod
    def describe(self, names=None) -> str:
        """One line saying what the noise is."""

    @property
    def k(self) -> int:
        """Number of statistics the noise is added to."""
        return self.covariance.shape[0]

    @property
    def is_zero(self) -> bool:
        """True when the law adds no noise at all."""
        return not np.any(self.covariance)

    @abstractmethod
    def marginals(self) -> tuple[np.ndarray, np.ndarray]:
        """Return each statistic's noise as N(0, v_i) + sum_j w_ij L_j.

        Returns
        -------
        variances : ndarray of shape (k,)
        weights : ndarray of shape (k, m)
            Non-negative; L_j i.i.d. Laplace(0, 1), independent of the
            Gaussian part.
        """

    def __add__(self, other: NoiseLaw) -> SumOfNoises:
        """Independent noises added together."""
        mine = self.parts if isinstance(self, SumOfNoises) else (self,)
        theirs = other.parts if isinstance(other, SumOfNoises) else (other,)
        return SumOfNoises(mine + theirs)


@persistable
@dataclass(frozen=True, eq=False)
class GaussianNoise(NoiseLaw):
    """N(0, covariance) on k statistics.

    Parameters
    ----------
    covariance : array-like of shape (k, k)
        Positive semidefinite; zeros for no noise.

    Examples
    --------
    >>> import numpy as np
    >>> law = GaussianNoise(4.0 * np.eye(2))
    >>> round(law.expected_norm(), 4)     # sqrt(8) Gamma(3/2) / Gamma(1)
    2.5066
    >>> law.describe()
    'N(0, 4 I)'
    """

    _covariance: np.ndarray

    kind = "gaussian"

    def __post_init__(self):
        covariance = np.atleast_2d(self._covariance)
        if (covariance.ndim != 2 or covariance.shape[0] != covariance.shape[1]
                or covariance.dtype.kind not in "iuf"):
            raise InvalidParameterError(
                "GaussianNoise needs a square covariance matrix of numbers; got "
                f"shape {covariance.shape} of dtype {covariance.dtype}.")
        object.__setattr__(self, "_covariance", _frozen(covariance))

    @property
    def covariance(self) -> np.ndarray:
        """Covariance (k, k) of the noise."""
        return self._covariance

    def __repr__(self) -> str:
        return f"GaussianNoise(covariance={self._covariance.tolist()!r})"

    def sample(self, random_state=None, size: int | None = None) -> np.ndarray:
        """Draw one vector (see :func:`skattr._random.gaussian_noise`), or a batch."""
        if size is not None:
            if self.is_zero:
                return np.zeros((int(size), self.k))
            lam, vecs = np.linalg.eigh(self._covariance)
            standard = check_random_state(random_state).standard_normal(
                (int(size), self.k))
            return (standard * np.sqrt(np.clip(lam, 0.0, None))) @ vecs.T
        if self.is_zero:
            return np.zeros(self.k)
        return gaussian_noise(self._covariance, random_state)

    def expected_norm(self) -> float:
        """E ||Z||_2 (:func:`expected_gaussian_norm`)."""
        return expected_gaussian_norm(self._covariance)

    def marginals(self) -> tuple[np.ndarray, np.ndarray]:
        """Return each statistic's variance (the diagonal) and no Laplace part."""
        return (np.clip(np.diagonal(self._covariance), 0, None).copy(),
                np.zeros((self.k, 0)))

    def alpha(self, beta: float = 0.05) -> float:
        """Alpha of (alpha, beta)-accuracy.

        Exact for isotropic noise (Zhang et al. Thm 2 for one statistic);
        otherwise an upper bound, taking the largest variance in every
        direction of the noise's support.
        """
        lam = np.linalg.eigvalsh(self._covariance)
        if lam.max() <= 0:
            return 0.0
        rank = int(np.sum(lam > 1e-15 * lam.max()))
        return gaussian_accuracy(float(lam.max()), rank, beta)

    def describe(self, names=None) -> str:
        """'N(0, s I)', or the rank and each statistic's standard deviation."""
        if self.is_zero:
            return "none: the data's own variance covers the sensitivity"
        cov = self._covariance
        if np.allclose(cov, cov[0, 0] * np.eye(self.k)):
            return f"N(0, {_fmt(float(cov[0, 0]))} I)"
        sd = ", ".join(_fmt(float(v)) for v in np.sqrt(np.diagonal(cov)))
        return (f"N(0, Sigma), rank {np.linalg.matrix_rank(cov)}; sd per "
                f"statistic {sd}")


@persistable
@dataclass(frozen=True, eq=False)
class LaplaceNoise(NoiseLaw):
    """``basis @ y`` with y_i i.i.d. Laplace(0, scale), one per basis column.

    Parameters
    ----------
    scale : float
        The Laplace scale b (>= 0; 0 adds no noise).
    basis : array-like of shape (k, d)
        Orthogonal columns: the identity for noise on each statistic, the
        directions a directional mechanism adds noise along (orthonormal),
        or a diagonal of each statistic's scale over ``scale``
        (:meth:`per_statistic`).

    Examples
    --------
    >>> import numpy as np
    >>> law = LaplaceNoise(2.0, np.eye(1))
    >>> law.expected_norm(), law.covariance.tolist()
    (2.0, [[8.0]])
    """

    scale: float
    basis: np.ndarray = field(default=None)

    kind = "laplace"

    def __post_init__(self):
        object.__setattr__(self, "scale", float(self.scale))
        if not self.scale >= 0:
            raise InvalidParameterError(
                f"LaplaceNoise needs a scale >= 0; got {self.scale!r}.")
        basis = np.atleast_2d(np.asarray(self.basis, dtype=float))
        if not _orthogonal_columns(basis):
            raise InvalidParameterError(
                "LaplaceNoise needs a basis with orthogonal columns (the "
                "norm of its noise is computed from their lengths).")
        object.__setattr__(self, "basis", _frozen(basis))

    @classmethod
    def on_each(cls, scale: float, k: int) -> LaplaceNoise:
        """Laplace(scale) on each of k statistics."""
        return cls(scale, np.eye(k))

    @classmethod
    def per_statistic(cls, scales) -> LaplaceNoise:
        """Laplace(scales[i]) on statistic i, independently.

        Examples
        --------
        >>> law = LaplaceNoise.per_statistic([2.0, 0.5])
        >>> law.covariance.tolist(), law.scales.tolist()
        ([[8.0, 0.0], [0.0, 0.5]], [2.0, 0.5])
        """
        scales = np.asarray(scales, dtype=float).ravel()
        top = float(np.max(scales, initial=0.0))
        if top == 0.0:
            return cls.on_each(0.0, scales.size)
        return cls(top, np.diag(scales / top))

    @property
    def lengths(self) -> np.ndarray:
        """The basis columns' lengths (1 for orthonormal directions)."""
        return np.linalg.norm(self.basis, axis=0)

    @property
    def scales(self) -> np.ndarray:
        """Each basis direction's Laplace scale: ``scale`` times its length."""
        return self.scale * self.lengths

    @property
    def orthonormal(self) -> bool:
        """Whether every direction has the common scale (unit columns)."""
        return bool(np.allclose(self.lengths, 1.0, rtol=1e-12, atol=0.0))

    @property
    def covariance(self) -> np.ndarray:
        """2 b^2 B B^T (infinite where it overflows)."""
        with np.errstate(over="ignore"):
            variance = 2.0 * np.float64(self.scale) ** 2
        return _frozen(variance * self.basis @ self.basis.T)

    @property
    def k(self) -> int:
        """Number of statistics the noise is added to."""
        return self.basis.shape[0]

    @property
    def is_zero(self) -> bool:
        """True when the scale is 0 or there is no direction (of any length)."""
        return self.scale == 0.0 or not np.any(self.basis)

    def sample(self, random_state=None, size: int | None = None) -> np.ndarray:
        """Draw one vector (see :func:`skattr._random.laplace_noise`), or a batch."""
        if size is not None:
            if self.is_zero:
                return np.zeros((int(size), self.k))
            y = check_random_state(random_state).laplace(
                0.0, 1.0, (int(size), self.basis.shape[1]))
            return (self.scale * y) @ self.basis.T
        if self.is_zero:
            return np.zeros(self.k)
        return laplace_noise(self.scale, self.basis, random_state)

    def expected_norm(self) -> float:
        """E ||basis y||_2 (orthogonal columns): :func:`expected_laplace_norm`."""
        if self.orthonormal:
            return expected_laplace_norm(self.scale, self.basis.shape[1])
        return expected_weighted_laplace_norm(self.scale, self.lengths)

    def marginals(self) -> tuple[np.ndarray, np.ndarray]:
        """Return no Gaussian part; statistic i gets sum_j basis_ij b L_j."""
        return np.zeros(self.k), np.abs(self.basis) * self.scale

    def alpha(self, beta: float = 0.05) -> float:
        """Alpha of (alpha, beta)-accuracy: ||y||_2 <= ||y||_1 ~ Gamma(d, b).

        Exact for one direction; with directions of several scales b_j,
        the least of three bounds: ``||basis y||_2 <= sum_j b_j |y_j| / b``,
        whose tail is bounded by the largest scale's Gamma bound and by
        Chernoff's, min over 0 < lam < 1 / max b_j of e^(-lam t) / prod_j
        (1 - lam b_j); and the union bound: each ``|b_j y_j / b| <= b_j
        ln(d / beta)`` but with chance beta / d, so the norm is at most
        ln(d / beta) sqrt(sum_j b_j^2) but with chance beta.
        """
        from scipy import stats

        if self.is_zero:
            return 0.0
        d = self.basis.shape[1]
        if self.orthonormal:
            return float(self.scale * stats.gamma.isf(beta, d))
        from scipy.optimize import minimize_scalar

        scales = self.scales[self.scales > 0]
        top = float(scales.max())
        gamma = top * float(stats.gamma.isf(beta, d))

        def chernoff(x):   # the t whose bound at lam = x / top equals beta
            lam = x / top
            return (-float(np.sum(np.log1p(-lam * scales)))
                    - math.log(beta)) / lam

        found = minimize_scalar(chernoff, bounds=(1e-6, 1 - 1e-9),
                                method="bounded")
        union = math.log(d / beta) * float(np.sqrt(np.sum(scales ** 2)))
        return float(min(gamma, found.fun, union))

    def describe(self, names=None) -> str:
        """'Laplace(0, b) on each statistic' or on d direction(s)."""
        if self.is_zero:
            return ("none: the laws of the statistic given the two secrets "
                    "coincide (up to the disregarded mass)")
        d = self.basis.shape[1]
        diagonal = d == self.k and np.array_equal(
            self.basis, np.diag(np.diag(self.basis)))
        if diagonal and not self.orthonormal:
            labels = (list(names) if names is not None and len(names) == d
                      else [f"statistic {i + 1}" for i in range(d)])
            return "Laplace(0, b) on each statistic, its own b: " + ", ".join(
                f"{label} {_fmt(b)}" for label, b in zip(labels, self.scales,
                                                         strict=True))
        where = ("each statistic" if d == self.k
                 and np.allclose(self.basis, np.eye(d)) else f"{d} direction(s)")
        return f"Laplace(0, {_fmt(self.scale)}) on {where}"


@persistable
@dataclass(frozen=True, eq=False)
class SumOfNoises(NoiseLaw):
    """Independent noises added to the same statistics (e.g. Chen Thm 4.7).

    Examples
    --------
    >>> import numpy as np
    >>> law = GaussianNoise(np.eye(2)) + LaplaceNoise.on_each(1.0, 2)
    >>> law.kind, law.covariance.tolist()
    ('gaussian+laplace', [[3.0, 0.0], [0.0, 3.0]])
    """

    parts: tuple

    def __post_init__(self):
        if len({p.k for p in self.parts}) != 1:
            raise InvalidParameterError(
                "The noises of a sum must have the same dimension; got "
                f"{sorted({p.k for p in self.parts})}.")

    @property
    def kind(self) -> str:
        """The parts' kinds joined by '+'."""
        return "+".join(p.kind for p in self.parts)

    @property
    def covariance(self) -> np.ndarray:
        """The sum of the parts' covariances (they are independent)."""
        return _frozen(sum(p.covariance for p in self.parts))

    def sample(self, random_state=None, size: int | None = None) -> np.ndarray:
        """One draw (or batch) of each part, added (in the parts' order)."""
        if size is None:
            return sum(p.sample(random_state) for p in self.parts)
        return sum(p.sample(random_state, size=size) for p in self.parts)

    def expected_norm(self) -> float:
        """sqrt(E ||noise||^2) = sqrt(tr covariance), an upper bound (Jensen)."""
        return math.sqrt(float(np.trace(self.covariance)))

    def marginals(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the parts' variances added and their Laplace weights side by side."""
        found = [p.marginals() for p in self.parts]
        return (sum(v for v, _ in found),
                np.hstack([w for _, w in found]))

    def alpha(self, beta: float = 0.05) -> float:
        """Union bound: each part exceeds its alpha at beta / (number of parts)."""
        share = beta / len(self.parts)
        return float(sum(p.alpha(share) for p in self.parts))

    def describe(self, names=None) -> str:
        """Join the parts' descriptions with ' + '."""
        return " + ".join(p.describe(names) for p in self.parts)


def _orthogonal_columns(basis: np.ndarray) -> bool:
    """Whether the columns are orthogonal.

    At most one entry a row and column is checked in one pass; other bases
    (a directional mechanism's few directions) by their Gram matrix.
    """
    rows, cols = np.nonzero(basis)
    if np.unique(rows).size == rows.size and np.unique(cols).size == cols.size:
        return True
    gram = basis.T @ basis
    off = gram - np.diag(np.diag(gram))
    top = max(float(np.max(np.diag(gram), initial=0.0)), 1e-300)
    return not np.any(np.abs(off) > 1e-9 * top)


def _tail(t: float, variance: float, weights: np.ndarray) -> float:
    """P(|X| > t) for X = N(0, variance) + sum_j w_j L_j, by Gil-Pelaez.

    The law is symmetric and continuous, with real characteristic function
    phi(u) = exp(-variance u^2 / 2) prod_j 1 / (1 + w_j^2 u^2), so
    P(|X| <= t) = (2 / pi) int_0^inf sin(u t) phi(u) / u du. The first
    half-period is integrated directly (sin(u t) / u = t sinc(u t / pi) is
    smooth at 0) and the rest as a Fourier integral (QUADPACK's QAWF).
    """
    from scipy import integrate

    def phi(u):
        return np.exp(-variance * u * u / 2) / np.prod(1 + np.multiply.outer(
            np.atleast_1d(u) ** 2, weights ** 2), axis=-1)

    split = math.pi / t
    head, _ = integrate.quad(lambda u: t * np.sinc(u * t / math.pi) * phi(u)[0],
                             0, split, epsabs=1e-13, epsrel=1e-11, limit=200)
    rest, _ = integrate.quad(lambda u: phi(u)[0] / u, split, np.inf,
                             weight="sin", wvar=t, epsabs=1e-13, limlst=200)
    return 1.0 - 2.0 / math.pi * (head + rest)


def marginal_half_widths(law: NoiseLaw, alpha: float) -> np.ndarray:
    """Return t_i with P(``|noise_i| > t_i``) = alpha, for each statistic.

    Exact in closed form for Gaussian noise (t = z_{1 - alpha/2} sd, any
    covariance, rank-deficient included) and for one Laplace component
    (t = w ln(1 / alpha)); otherwise (a directional Laplace noise along
    several directions, or a sum of Gaussian and Laplace noises) the tail is
    computed from the characteristic function (:func:`_tail`, to about
    1e-10) and inverted by Brent's method. A statistic with no noise gets 0.

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.noise import GaussianNoise, LaplaceNoise, marginal_half_widths
    >>> marginal_half_widths(GaussianNoise(np.diag([4.0, 0.0])), 0.05).round(4)
    array([3.9199, 0.    ])
    >>> marginal_half_widths(LaplaceNoise.on_each(2.0, 1), 0.05).round(4)
    array([5.9915])
    """
    from scipy import optimize, stats

    variances, weights = law.marginals()
    out = np.zeros(variances.size)
    for i, (variance, row) in enumerate(zip(variances, weights, strict=True)):
        row = row[row > 0]
        if row.size == 0:
            out[i] = (math.sqrt(variance) * stats.norm.isf(alpha / 2)
                      if variance > 0 else 0.0)
        elif variance == 0 and row.size == 1:
            out[i] = row[0] * math.log(1 / alpha)
        else:
            # Chebyshev: P(|X| > t) <= Var / t^2, so the root is below hi.
            total = variance + 2 * float(np.sum(row**2))
            hi = math.sqrt(total / alpha) * 1.01
            out[i] = optimize.brentq(
                lambda t, v=variance, w=row: _tail(t, v, w) - alpha,
                1e-12 * hi, hi, xtol=1e-12 * hi)
    return out
