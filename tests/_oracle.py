"""Independent numerical integration of a release's privacy profile (test oracle).

The library certifies delta with its own algorithms; these functions compute the
hockey-stick divergence of the released value's two laws by brute-force
quadrature on a fine grid, sharing no code with the library, so that a test can
assert ``certified delta >= exact delta``.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import signal, stats


def _grid(lo: float, hi: float, step: float) -> np.ndarray:
    return np.arange(lo, hi + step, step)


def _noise_density(y: np.ndarray, noise: str, scale: float) -> np.ndarray:
    if noise == "gaussian":
        return stats.norm.pdf(y, scale=scale)
    return stats.laplace.pdf(y, scale=scale)


def mixture_density(y, support, pmf, noise: str, scale: float) -> np.ndarray:
    """Density on ``y`` of X + Z, X discrete (support, pmf), Z the noise."""
    out = np.zeros_like(y)
    for x, p in zip(support, pmf, strict=True):
        if p > 0:
            out += p * _noise_density(y - x, noise, scale)
    return out


def hockey_stick(p: np.ndarray, q: np.ndarray, epsilon: float, step: float
                 ) -> float:
    """Integral of (p - e^eps q)_+ on a uniform grid (trapezoid rule)."""
    return float(np.trapezoid(np.maximum(p - np.exp(epsilon) * q, 0.0), dx=step))


def discrete_release_delta(law_a, law_b, noise: str, scale: float,
                           epsilon: float) -> float:
    """Max over both orders of delta(epsilon) of X + Z for two discrete laws.

    ``noise`` is "gaussian" (scale = sd) or "laplace" (scale = b); scale 0 is
    the raw statistic, compared atom by atom.
    """
    (xa, pa), (xb, pb) = law_a, law_b
    if scale == 0:
        atoms = np.union1d(xa, xb)
        ma = np.zeros(atoms.size)
        mb = np.zeros(atoms.size)
        np.add.at(ma, np.searchsorted(atoms, xa), pa)
        np.add.at(mb, np.searchsorted(atoms, xb), pb)
        e = np.exp(epsilon)
        return float(max(np.maximum(ma - e * mb, 0).sum(),
                         np.maximum(mb - e * ma, 0).sum()))
    lo = min(np.min(xa), np.min(xb)) - 40 * scale
    hi = max(np.max(xa), np.max(xb)) + 40 * scale
    step = min(scale / 200, (hi - lo) / 2e5)
    y = _grid(lo, hi, step)
    p = mixture_density(y, xa, pa, noise, scale)
    q = mixture_density(y, xb, pb, noise, scale)
    return max(hockey_stick(p, q, epsilon, step), hockey_stick(q, p, epsilon, step))


def shape_mean_density(y: np.ndarray, step: float, n: int, k: int, *,
                       in_mean: float, in_sd: float, shift: float,
                       gamma_scale: float) -> np.ndarray:
    """Density on the uniform grid ``y`` of the mean of n independent records:
    k from N(in_mean, in_sd^2), n - k from shift + gamma_scale * Exp(1)."""
    ds = n * step
    sums = n * y
    if k == 0:
        return stats.gamma.pdf(sums - shift * n, a=n, scale=gamma_scale) * n
    if k == n:
        return stats.norm.pdf(sums, k * in_mean, in_sd * np.sqrt(k)) * n
    # Tabulate the gamma part from its support's start and the normal part from
    # sums[0] less that start, both on the step ds: conv[m] is then the density
    # of the sum at sums[m].
    start = shift * (n - k)
    normal = stats.norm.pdf(sums - start, k * in_mean, in_sd * np.sqrt(k))
    gamma = stats.gamma.pdf(np.arange(y.size) * ds, a=n - k, scale=gamma_scale)
    return signal.fftconvolve(normal, gamma)[: y.size] * ds * n


def laplace_smooth(density: np.ndarray, step: float, scale: float) -> np.ndarray:
    """Convolve a density on a uniform grid with Laplace(0, scale)."""
    half = int(np.ceil(40 * scale / step))
    kernel = stats.laplace.pdf(np.arange(-half, half + 1) * step, scale=scale)
    return signal.fftconvolve(density, kernel, mode="same") * step


def noise_smooth(density: np.ndarray, step: float, noise: str,
                 scale: float) -> np.ndarray:
    """Convolve a density on a uniform grid with the noise, on a wider grid.

    The grid is padded by 40 Laplace scales or 12 standard deviations on
    each side first, so no mass of the release leaves it (the result is
    longer than ``density``; two densities padded alike stay aligned).
    """
    half = int(np.ceil((40 if noise == "laplace" else 12) * scale / step))
    kernel = _noise_density(np.arange(-half, half + 1) * step, noise, scale)
    return signal.fftconvolve(np.pad(density, half), kernel, mode="same") * step


def gaussian_hockey_stick(mean_a, var_a, mean_b, var_b, epsilon) -> float:
    """delta(epsilon) of N(mean_a, var_a) vs N(mean_b, var_b), by quadrature."""
    sd = np.sqrt(max(var_a, var_b))
    lo = min(mean_a, mean_b) - 40 * sd
    hi = max(mean_a, mean_b) + 40 * sd
    step = sd / 400
    y = _grid(lo, hi, step)
    p = stats.norm.pdf(y, mean_a, np.sqrt(var_a))
    q = stats.norm.pdf(y, mean_b, np.sqrt(var_b))
    return hockey_stick(p, q, epsilon, step)


__all__ = ["discrete_release_delta", "gaussian_hockey_stick", "hockey_stick",
           "laplace_smooth", "mixture_density", "shape_mean_density"]


def order_statistic_cdf(x, k: int, n: int, r: int, cdf_in, cdf_out
                        ) -> np.ndarray:
    """P(the r-th smallest (from 0) of n records is <= x), on ``x``.

    k records have distribution function ``cdf_in``, n - k ``cdf_out``, all
    independent: at least r + 1 of them are at most x, a sum of two
    binomials (scipy), in chunks of x.
    """
    j = np.arange(k + 1)
    out = np.empty(x.size)
    for start in range(0, x.size, 4096):
        part = slice(start, start + 4096)
        p, q = cdf_in(x[part])[:, None], cdf_out(x[part])[:, None]
        out[part] = np.sum(stats.binom.pmf(j, k, p)
                           * stats.binom.sf(r - j, n - k, q), axis=1)
    return out


def compositions(total: int, parts: int) -> np.ndarray:
    """Every vector of ``parts`` counts summing to ``total`` (rows)."""
    cuts = np.array(list(itertools.combinations(range(total + parts - 1),
                                                parts - 1)), dtype=int)
    cuts = cuts.reshape(len(cuts), parts - 1)
    edges = np.column_stack([np.full(len(cuts), -1), cuts,
                             np.full(len(cuts), total + parts - 1)])
    return np.diff(edges, axis=1) - 1
