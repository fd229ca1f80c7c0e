"""Exact discrete Laplace noise on a power-of-two grid: ``secure=True``.

Floating-point noise samplers leak. A double drawn as ``-b * log(U)`` takes only
some of the doubles near each value, and which ones depends on where the noise
lands; the set of doubles ``F(X) + noise`` can reach therefore depends on the
true F(X), and one release can rule out values of F(X) its neighbours would
give: an unbounded privacy loss from the low-order bits (Mironov, "On
significance of the least significant bits for differential privacy", CCS
2012). skattr's default samplers read the operating system's entropy and invert
the CDF at 127-bit tail probabilities (:mod:`skattr._random`), which removes the
cut-off of a 53-bit uniform but not this effect.

``secure=True`` draws no floating-point noise at all. For Laplace noise of scale
b on each of k statistics it

1. picks the grid g = 2**(floor(log2 b) - 40), so that t = b / g lies in
   [2**40, 2**41) (with each statistic its own scale b_j, under the least
   of them: every t_j = b_j / g is at least 2**40, and eta below is the
   largest of the statistics');
2. rounds each statistic exactly to the grid: c = floor(F / g + 1/2), an
   integer computed with Python's exact rationals;
3. adds Z, drawn *exactly* from the discrete Laplace law P(Z = z) proportional
   to exp(-|z| / t) by Canonne, Kamath and Steinke's rejection sampler (2020,
   Algorithms 1 and 2: only uniform integers and Bernoulli trials of rational
   probability, no floating point);
4. returns the double nearest to (c + Z) g, a function of the exact output and
   so post-processing.

What it certifies. Let M be the mechanism with continuous noise, certified
(epsilon, delta), and M'' its output rounded to the grid, certified the same
(post-processing). For every value f of the statistic and every grid point,
the probabilities of M'(f) (steps 2 and 3) and of M''(f) are within a factor
e**eta of each other on each statistic, with eta = 1/t + 1/(6 t**2): the
interval of Laplace noise that rounds to z g has density within e**(+-1/t) of
exp(-|z|/t) / (2t) over its length 1 (|u - z| <= 1 in grid units), and the
discrete law's normaliser tanh(1/(2t)) is within e**(-1/(6t**2)) of 1/(2t).
The bound holds for every f, hence for every mixture of f's that a secret
induces, so for every event S and pair of secrets

    P(M'(X) in S | a) <= e**(k eta) (e**epsilon P(M''(X) in S | b) + delta)
                      <= e**(epsilon + 2 k eta) P(M'(X) in S | b) + e**(k eta) delta.

A secure plan certifies (epsilon + 2 k eta, delta e**(k eta)), both rounded up:
with t >= 2**40, an increase of at most 2 k * 9.1e-13 in epsilon. The argument
uses only the certified (epsilon, delta) of the continuous mechanism, so it
holds whatever proved it (a coupling, an exact profile, a Markov quilt).
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from skattr._persistence import persistable
from skattr._random import OSEntropy, check_random_state
from skattr.exceptions import DataValidationError, NotCertifiableError
from skattr.noise._laws import LaplaceNoise, _fmt

__all__ = [
    "GRID_BITS",
    "DiscreteLaplaceNoise",
    "bernoulli_exp",
    "discrete_laplace",
    "secure_grid",
]

#: log2 of b / g, the grid's fineness relative to the Laplace scale b.
GRID_BITS = 40


def _uniform_below(n: int, source) -> int:
    """Draw an integer exactly uniform on {0, ..., n - 1}.

    The operating system's entropy through :func:`secrets.randbelow`; a numpy
    Generator (seeded experiments) through 32-bit words and rejection, so any
    n, however large, is exact.
    """
    if n == 1:
        return 0
    if isinstance(source, OSEntropy):
        return secrets.randbelow(n)
    bits = (n - 1).bit_length()
    words = -(-bits // 32)
    while True:
        drawn = source.integers(0, 2**32, size=words, dtype=np.uint64)
        value = 0
        for word in drawn.tolist():
            value = (value << 32) | word
        value >>= 32 * words - bits
        if value < n:
            return value


def _bernoulli(num: int, den: int, source) -> bool:
    """Return True with probability num / den exactly."""
    return _uniform_below(den, source) < num


def _bernoulli_exp_at_most_one(num: int, den: int, source) -> bool:
    """Return True with probability exp(-num / den), for 0 <= num <= den.

    Canonne, Kamath and Steinke (2020), Algorithm 1: the index K of the first
    failure of Bernoulli(gamma / K) trials is odd with probability exp(-gamma).
    """
    k = 1
    while _bernoulli(num, den * k, source):
        k += 1
    return k % 2 == 1


def bernoulli_exp(gamma: Fraction, source) -> bool:
    """Return True with probability exp(-gamma) exactly, for rational gamma >= 0.

    Parameters
    ----------
    gamma : Fraction
        Non-negative.
    source : numpy.random.Generator or OSEntropy
        From :func:`skattr._random.check_random_state`.

    Returns
    -------
    bool

    Examples
    --------
    >>> from fractions import Fraction
    >>> from skattr._random import check_random_state
    >>> rng = check_random_state(0)
    >>> draws = [bernoulli_exp(Fraction(1, 2), rng) for _ in range(2000)]
    >>> abs(sum(draws) / 2000 - 0.6065) < 0.03
    True
    """
    gamma = Fraction(gamma)
    num, den = gamma.numerator, gamma.denominator
    # exp(-gamma) = exp(-1) ** floor(gamma) * exp(-(gamma - floor(gamma))).
    while num > den:
        if not _bernoulli_exp_at_most_one(1, 1, source):
            return False
        num -= den
    return _bernoulli_exp_at_most_one(num, den, source)


def discrete_laplace(t: Fraction, source) -> int:
    """Draw Z with P(Z = z) proportional to exp(-abs(z) / t), exactly.

    Canonne, Kamath and Steinke (2020), Algorithm 2, with t = p / q in lowest
    terms: a uniform remainder U < p kept with probability exp(-U / p), a
    geometric count V of exp(-1) successes, then Z = +-floor((U + p V) / q)
    with a fair sign (a negative zero rejected).

    Parameters
    ----------
    t : Fraction
        The scale, positive.
    source : numpy.random.Generator or OSEntropy

    Returns
    -------
    int

    Examples
    --------
    >>> from fractions import Fraction
    >>> from skattr._random import check_random_state
    >>> rng = check_random_state(0)
    >>> draws = [discrete_laplace(Fraction(3), rng) for _ in range(4000)]
    >>> abs(sum(abs(z) for z in draws) / 4000 - 2.945) < 0.2  # E|Z|
    True
    """
    t = Fraction(t)
    p, q = t.numerator, t.denominator
    while True:
        u = _uniform_below(p, source)
        if not _bernoulli_exp_at_most_one(u, p, source):
            continue
        v = 0
        while _bernoulli_exp_at_most_one(1, 1, source):
            v += 1
        y = (u + p * v) // q
        negative = _uniform_below(2, source) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def secure_grid(scale: float) -> float:
    """Return the grid 2**(floor(log2 scale) - GRID_BITS) for Laplace scale b.

    Examples
    --------
    >>> secure_grid(1.0) == 2.0**-40, secure_grid(3.0) == 2.0**-39
    (True, True)
    """
    mantissa_exponent = math.frexp(scale)[1]  # scale = m 2**e, m in [0.5, 1)
    grid = math.ldexp(1.0, mantissa_exponent - 1 - GRID_BITS)
    if not (scale > 0 and math.isfinite(scale)) or grid < np.finfo(float).tiny:
        raise NotCertifiableError(
            f"secure=True cannot place a grid under the Laplace scale {scale!r}: "
            "it must be a positive double above 2**-980. Use secure=False.")
    return grid


def _round_up(value: Fraction) -> float:
    """Return the least double >= value."""
    out = float(value)
    if Fraction(out) < value:
        out = math.nextafter(out, math.inf)
    return out


@persistable
@dataclass(frozen=True, eq=False)
class DiscreteLaplaceNoise(LaplaceNoise):
    """Discrete Laplace noise on the grid g, exactly sampled, on each statistic.

    The noise of ``secure=True``: statistic i is rounded exactly to a multiple
    of g and an exact draw of g Z_i added, P(Z_i = z) proportional to
    exp(-abs(z) g / b) (see :mod:`skattr.noise._discrete` for the argument and
    the certificate). Its covariance, expected norm and accuracy are those of
    continuous Laplace(b) noise: with b / g >= 2**40 they differ by a relative
    1e-24, below the precision of a double.

    Parameters
    ----------
    scale : float
        The Laplace scale b (> 0).
    basis : array-like of shape (k, k)
        The identity: the noise is added to each statistic.
    grid : float or None, default=None
        The grid g, a power of two; None takes :func:`secure_grid` of b.

    Examples
    --------
    >>> import numpy as np
    >>> law = DiscreteLaplaceNoise(1.0, np.eye(2))
    >>> law.grid == 2.0**-40
    True
    >>> out = law.perturb(np.array([0.3, 10.0]), random_state=0)
    >>> all((Fraction(v) / Fraction(law.grid)).denominator == 1 for v in out)
    True
    """

    grid: float = field(default=None)

    kind = "laplace"

    def __post_init__(self):
        super().__post_init__()
        basis = self.basis
        if basis.shape[0] != basis.shape[1] or not np.array_equal(
                basis, np.diag(np.diag(basis))) or np.any(np.diag(basis) < 0):
            raise NotCertifiableError(
                "secure=True draws discrete Laplace noise on each statistic; "
                "noise along other directions (DirM's) would be rotated in "
                "floating point. Use mechanism='expm-laplace' or secure=False.")
        # One grid for every statistic, under the least positive scale: each
        # statistic's t = b_j / g is then at least 2**40.
        positive = self.scales[self.scales > 0]
        least = float(positive.min()) if positive.size else self.scale
        grid = secure_grid(least) if self.grid is None else float(self.grid)
        if math.frexp(grid)[0] != 0.5:
            raise NotCertifiableError(
                f"The grid of secure noise must be a power of two; got {grid!r}.")
        object.__setattr__(self, "grid", grid)

    @property
    def ratios(self) -> list[Fraction]:
        """Each statistic's ratio t_j = b_j / g, exactly (0: no noise)."""
        grid = Fraction(self.grid)
        return [Fraction(float(b)) / grid for b in self.scales]

    @property
    def ratio(self) -> Fraction:
        """The least positive ratio t = b / g, exactly."""
        return min((t for t in self.ratios if t > 0),
                   default=Fraction(self.scale) / Fraction(self.grid))

    @property
    def eta(self) -> Fraction:
        """The per-statistic factor bound 1/t + 1/(6 t**2), exactly.

        At the least ratio: the largest over the statistics (a statistic
        with no noise is rounded to the grid alone, a factor 1).
        """
        t = self.ratio
        return 1 / t + 1 / (6 * t * t)

    def certify(self, epsilon: float, delta: float) -> tuple[float, float]:
        """Return the guarantee of this noise given the continuous one's.

        (epsilon + 2 k eta, delta e**(k eta)), each rounded up to a double; e**x
        is bounded by 1 + x + x**2 (x <= 1).
        """
        x = self.k * self.eta
        eps = _round_up(Fraction(epsilon) + 2 * x)
        dlt = 0.0 if delta == 0 else min(
            1.0, _round_up(Fraction(delta) * (1 + x + x * x)))
        return eps, dlt

    def _draw(self, random_state, count: int | None = None) -> list[int]:
        source = check_random_state(random_state, owner="DiscreteLaplaceNoise")
        ratios = self.ratios
        # Row by row: draw i is statistic i % k's.
        return [discrete_laplace(t, source) if t > 0 else 0
                for _ in range(1 if count is None else count) for t in ratios]

    def sample(self, random_state=None, size: int | None = None) -> np.ndarray:
        """Draw one noise vector g Z (exact multiples of g, as doubles).

        ``size=m`` draws m of them, shape (m, k), each exactly (about 0.1 ms a
        value: the sampler works with Python integers, not in batches).
        """
        grid = Fraction(self.grid)
        draws = np.array([float(z * grid) for z in self._draw(random_state, size)])
        return draws if size is None else draws.reshape(int(size), self.k)

    def perturb(self, values, random_state=None) -> np.ndarray:
        """Return the statistics rounded to the grid plus exact noise, as doubles.

        Parameters
        ----------
        values : array-like of shape (k,)
            The exact statistic; finite.
        random_state : None, int or Generator
            None reads the operating system's entropy.

        Returns
        -------
        ndarray of shape (k,)
            The double nearest to (floor(F / g + 1/2) + Z) g, per statistic.
        """
        values = np.asarray(values, dtype=float)
        if not np.all(np.isfinite(values)):
            raise DataValidationError(
                "The statistic is not finite, so it cannot be rounded to the "
                "secure grid; clean the data (see bounds=) before releasing.")
        grid = Fraction(self.grid)
        out = []
        for value, z in zip(values.tolist(), self._draw(random_state),
                            strict=True):
            cell = math.floor(Fraction(value) / grid + Fraction(1, 2))
            try:
                out.append(float((cell + z) * grid))
            except OverflowError as exc:
                raise DataValidationError(
                    "The noisy statistic overflows a double; clip the data "
                    "(bounds=) before releasing.") from exc
        return np.array(out)

    def describe(self, names=None) -> str:
        """'discrete Laplace(0, b) on the grid 2**j on each statistic, exact'."""
        power = math.frexp(self.grid)[1] - 1
        if self.orthonormal:
            return (f"discrete Laplace(0, {_fmt(self.scale)}) on the grid "
                    f"2^{power} on each statistic, sampled exactly")
        labels = (list(names) if names is not None and len(names) == self.k
                  else [f"statistic {i + 1}" for i in range(self.k)])
        return (f"discrete Laplace(0, b) on the grid 2^{power} on each "
                "statistic, its own b, sampled exactly: " + ", ".join(
                    f"{label} {_fmt(b)}" for label, b in zip(
                        labels, self.scales, strict=True)))
