"""One distribution theta: the law of a linear statistic's sum given a secret value.

Each model gives, for values a of the protected property g and a dataset of n
records, the mean and covariance of S = sum_j h(x_j), the per-record contributions
summed (the query's weight w(n) is applied by the caller).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from skattr._persistence import persistable
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
)

__all__ = ["GroupMoments", "JointGaussian"]


def _as_vector(x, name: str) -> np.ndarray:
    v = np.atleast_1d(np.asarray(x, dtype=float))
    if v.ndim != 1 or not np.all(np.isfinite(v)):
        raise DataValidationError(f"{name} must be a finite vector; got {x!r}.")
    return v


def _as_cov(x, k: int, name: str) -> np.ndarray:
    c = np.asarray(x, dtype=float)
    if c.ndim == 0 or c.ndim == 1:
        c = np.diag(np.broadcast_to(c, (k,)))
    if c.shape != (k, k):
        raise DataValidationError(f"{name} must be a finite ({k}, {k}) matrix.")
    if not np.all(np.isfinite(c)):
        raise DataValidationError(
            f"{name} is not finite: a variance or covariance overflows (values "
            "beyond about 1e154 square to infinity). Rescale the columns (to "
            "thousands, say), or remove their extreme values.")
    if not np.allclose(c, c.T, rtol=1e-10, atol=1e-12):
        raise DataValidationError(f"{name} must be symmetric.")
    if np.linalg.eigvalsh(c).min() < -1e-9 * max(1.0, np.abs(c).max()):
        raise DataValidationError(f"{name} must be positive semi-definite.")
    return c


def _as_points(a) -> np.ndarray:
    """Return the values of g as a 1-d float array (a scalar is one value)."""
    points = np.asarray(a, dtype=float)
    if points.ndim > 1:
        raise InvalidParameterError(
            f"The values of the secret's property must be a number or a 1-d array; "
            f"got shape {points.shape}."
        )
    return np.atleast_1d(points)


def _as_size(size, name: str) -> int | None:
    if size is None:
        return None
    is_int = isinstance(size, (int, np.integer)) and not isinstance(size, bool)
    if not is_int or size < 0:
        raise DataValidationError(
            f"{name} must be a non-negative int (the group's population size) or "
            f"None; got {size!r}."
        )
    return int(size)


@persistable
@dataclass(frozen=True)
class GroupMoments:
    """theta as per-group moments: records with the secret's value vs the rest.

    A dataset with property value g = a holds a*n records of the "in" group and
    (1 - a)*n of the "out" group, drawn from each group's distribution. Then

        E[S | a]   = n (a m_in + (1 - a) m_out)
        Cov[S | a] = n a C_in f_in + n (1 - a) C_out f_out

    with the groups' means m and covariances C (population, ddof = 0). For
    sampling with replacement (i.i.d. records) f = 1; for sampling without
    replacement from a finite population of N_g records, f is the finite
    population correction (N_g - n_g) / (N_g - 1).

    Parameters
    ----------
    mean_in, mean_out : array-like of shape (k,)
        Mean of the per-record contribution h in each group.
    cov_in, cov_out : array-like of shape (k, k), (k,) or scalar
        Covariance of h in each group (a vector or scalar means diagonal).
    p : float
        Share of the "in" group in the population: under sampling with
        replacement g ~ Binomial(n, p) / n, the law the conditional-mean reading
        of set secrets mixes over.
    size_in, size_out : int or None
        Population sizes for sampling without replacement (both or neither);
        None for sampling with replacement. A dataset of n records drawn without
        replacement from the size_in + size_out records holds a hypergeometric
        number of "in" records, which the conditional-mean reading uses instead
        of p.
    columns : tuple
        Labels of the k statistics, checked against the query at fit.
    description : str
        Where the model came from.
    """

    mean_in: np.ndarray
    mean_out: np.ndarray
    cov_in: np.ndarray
    cov_out: np.ndarray
    p: float = 0.5
    size_in: int | None = None
    size_out: int | None = None
    columns: tuple = ()
    description: str = "stated by an expert"
    #: Theta protocol: the model conditions on a proportion's groups only, so
    #: it cannot describe F given the mean of the secret's attribute.
    conditions_on_mean = False

    def __post_init__(self):
        m_in = _as_vector(self.mean_in, "mean_in")
        k = m_in.size
        m_out = _as_vector(self.mean_out, "mean_out")
        if m_out.size != k:
            raise DataValidationError("mean_in and mean_out differ in length.")
        object.__setattr__(self, "mean_in", m_in)
        object.__setattr__(self, "mean_out", m_out)
        object.__setattr__(self, "cov_in", _as_cov(self.cov_in, k, "cov_in"))
        object.__setattr__(self, "cov_out", _as_cov(self.cov_out, k, "cov_out"))
        try:
            p = float(self.p)
        except (TypeError, ValueError):
            p = float("nan")
        if not 0 <= p <= 1:
            raise DataValidationError(f"p must lie in [0, 1]; got {self.p!r}.")
        object.__setattr__(self, "p", p)
        size_in = _as_size(self.size_in, "size_in")
        size_out = _as_size(self.size_out, "size_out")
        if (size_in is None) != (size_out is None):
            raise DataValidationError(
                "Give both size_in and size_out (sampling without replacement) or "
                "neither (sampling with replacement); got size_in="
                f"{self.size_in!r}, size_out={self.size_out!r}."
            )
        object.__setattr__(self, "size_in", size_in)
        object.__setattr__(self, "size_out", size_out)
        if not self.columns:
            object.__setattr__(self, "columns", tuple(range(k)))
        for v in (self.mean_in, self.mean_out, self.cov_in, self.cov_out):
            v.setflags(write=False)

    def marginal(self, columns) -> GroupMoments:
        """Return the model of a subset of its statistics (exact marginals)."""
        idx = [self.columns.index(c) for c in columns]
        return replace(self, mean_in=self.mean_in[idx], mean_out=self.mean_out[idx],
                       cov_in=self.cov_in[np.ix_(idx, idx)],
                       cov_out=self.cov_out[np.ix_(idx, idx)],
                       columns=tuple(columns))

    @property
    def sampling(self) -> str:
        """'without-replacement' when population sizes are known, else 'with-'."""
        if self.size_in is None:
            return "with-replacement"
        return "without-replacement"

    def _correction(self, drawn: np.ndarray, size: int | None) -> np.ndarray:
        if size is None:
            return np.ones_like(drawn)
        if np.any(drawn > size + 1e-9):
            raise NotCertifiableError(
                f"A dataset needs {int(np.ceil(drawn.max()))} records of one group, "
                f"but the reference holds only {size}: sampling without "
                "replacement cannot form it. Use more reference data or "
                "law=AssumeGaussian(sampling='with-replacement')."
            )
        if size <= 1:
            return np.zeros_like(drawn)
        return (size - drawn) / (size - 1)

    def sum_moments(self, a, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Mean (m, k) and covariance (m, k, k) of S given g = a, for each a."""
        a = _as_points(a)
        if not np.all((a >= 0) & (a <= 1)):
            raise InvalidParameterError(
                f"A proportion lies in [0, 1]; got {a[(a < 0) | (a > 1)]}."
            )
        a = a[:, None]
        mean = n * (a * self.mean_in + (1 - a) * self.mean_out)
        n_in = (a[:, 0] * n)
        n_out = n - n_in
        w_in = n_in * self._correction(n_in, self.size_in)
        w_out = n_out * self._correction(n_out, self.size_out)
        cov = (w_in[:, None, None] * self.cov_in + w_out[:, None, None] * self.cov_out)
        return mean, cov

    def moments_given_set(self, lo: float, hi: float, n: int):
        """P(g in [lo, hi]) and the mean and covariance of S given that event.

        g ~ Binomial(n, p) / n under sampling with replacement, and
        Hypergeometric(size_in + size_out, size_in, n) / n without; the moments
        mix the laws given each g = k/n in the set (law of total covariance).
        """
        k = np.arange(n + 1)
        g = k / n
        if self.size_in is None:
            law = stats.binom.pmf(k, n, self.p)
        else:
            population = self.size_in + self.size_out
            if n > population:
                raise NotCertifiableError(
                    f"A dataset of {n} records cannot be drawn without replacement "
                    f"from {population} reference records. Use more reference "
                    "data or law=AssumeGaussian(sampling='with-replacement')."
                )
            law = stats.hypergeom.pmf(k, population, self.size_in, n)
        pmf = law * ((g >= lo - 1e-12) & (g <= hi + 1e-12))
        prob = float(pmf.sum())
        if prob <= 0:
            return 0.0, None, None
        w = pmf[pmf > 0] / prob
        mean, cov = self.sum_moments(g[pmf > 0], n)
        centre = w @ mean
        dev = mean - centre
        total = np.einsum("m,mij->ij", w, cov) + np.einsum("m,mi,mj->ij", w, dev, dev)
        return prob, centre, total


@persistable
@dataclass(frozen=True)
class JointGaussian:
    """theta as a joint Gaussian over the secret's z and the contributions h.

    Zhang et al. Sec. 4.2: records are i.i.d. N(mu, V) over (z, h). Given the
    mean of z equals a, the sum S of h over n records is Gaussian with

        E[S | a]   = n (mu_h + V_hz / V_zz (a - mu_z))
        Cov[S | a] = n (V_hh - V_hz V_zh / V_zz)

    (for k = 1 and a mean query: mean mu_j + V_ij / V_ii (a - mu_i) and variance
    (V_jj - V_ij^2 / V_ii) / n, as in the paper). The covariance does not depend
    on a, the setting in which Theorem 1 holds.

    Parameters
    ----------
    mean : array-like of shape (k + 1,)
        Means of (z, h_1, ..., h_k).
    cov : array-like of shape (k + 1, k + 1)
        Their covariance.
    columns : tuple
        Labels of the k statistics.
    description : str
        Where the model came from.
    """

    mean: np.ndarray
    cov: np.ndarray
    columns: tuple = ()
    description: str = "stated by an expert"
    #: Theta protocol: the model conditions on the secret attribute's mean.
    conditions_on_mean = True

    def __post_init__(self):
        mean = _as_vector(self.mean, "mean")
        if mean.size < 2:
            raise DataValidationError(
                "A joint Gaussian needs the secret's column and at least one "
                "released column."
            )
        cov = _as_cov(self.cov, mean.size, "cov")
        if cov[0, 0] <= 0:
            raise DataValidationError(
                "The secret's column has zero variance in the reference data, so "
                "the joint Gaussian model cannot condition on it; use reference "
                "data in which the sensitive attribute varies."
            )
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "cov", cov)
        if not self.columns:
            object.__setattr__(self, "columns", tuple(range(mean.size - 1)))
        mean.setflags(write=False)
        cov.setflags(write=False)

    def marginal(self, columns) -> JointGaussian:
        """Return the model of a subset of its statistics (exact marginals)."""
        idx = [0] + [1 + self.columns.index(c) for c in columns]
        return replace(self, mean=self.mean[idx], cov=self.cov[np.ix_(idx, idx)],
                       columns=tuple(columns))

    @property
    def sampling(self) -> str:
        """Records are i.i.d. under a Gaussian model."""
        return "i.i.d. Gaussian"

    @property
    def slope(self) -> np.ndarray:
        """V_hz / V_zz: how much E[h] moves per unit of g."""
        return self.cov[1:, 0] / self.cov[0, 0]

    @property
    def conditional_cov(self) -> np.ndarray:
        """V_hh - V_hz V_zh / V_zz, the per-record conditional covariance."""
        v = self.cov
        return v[1:, 1:] - np.outer(v[1:, 0], v[0, 1:]) / v[0, 0]

    def sum_moments(self, a, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Mean (m, k) and covariance (m, k, k) of S given g = a, for each a."""
        a = _as_points(a)[:, None]
        mean = n * (self.mean[1:] + self.slope * (a - self.mean[0]))
        cov = np.broadcast_to(n * self.conditional_cov, (a.shape[0],) +
                              self.conditional_cov.shape)
        return mean, cov

    def moments_given_set(self, lo: float, hi: float, n: int):
        """P(g in [lo, hi]) and the mean and covariance of S given that event.

        g ~ N(mu_z, V_zz / n) under this theta; given g in the set it is a
        truncated normal, and S's moments follow by the law of total covariance.
        """
        loc, scale = self.mean[0], np.sqrt(self.cov[0, 0] / n)
        # Differences of survival functions keep their precision in the upper
        # tail, where both cdf values round to 1.
        below = stats.norm.cdf(hi, loc, scale) - stats.norm.cdf(lo, loc, scale)
        above = stats.norm.sf(lo, loc, scale) - stats.norm.sf(hi, loc, scale)
        prob = float(max(below, above))
        if prob <= 0:
            return 0.0, None, None
        law = stats.truncnorm((lo - loc) / scale, (hi - loc) / scale, loc, scale)
        mean, cov = self.sum_moments(np.array([law.mean()]), n)
        step = n * self.slope
        return prob, mean[0], cov[0] + law.var() * np.outer(step, step)
