"""Log-space pmfs on integer lattices: convolutions, tails and the W_inf shift."""

from __future__ import annotations

import numpy as np
from scipy import special

# Entries of the largest intermediate array, to keep memory bounded.
_CHUNK = 1 << 22
# Relative rounding allowance of computed log-probabilities, per unit of the
# magnitude of the terms they are computed from (n log n and themselves).
_RTOL = 1e-12


def _log_binomial_pmf(size: int, p: np.ndarray) -> np.ndarray:
    """Return log P(Binomial(size, p) = j), j = 0..size, for a column of p.

    From log-gamma terms, so tiny probabilities keep their relative accuracy
    (no underflow); the error is a few ulps of the terms, of order
    size log(size) plus the result's own magnitude.
    """
    j = np.arange(size + 1)
    return (special.gammaln(size + 1) - special.gammaln(j + 1)
            - special.gammaln(size - j + 1) + special.xlogy(j, p)
            + special.xlog1py(size - j, -p))


def _log_convolve_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Convolve each row of exp(a) with the same row of exp(b), in logs.

    Output s of a row is log sum_i exp(a[i] + b[s - i]): a log-sum-exp of
    non-negative terms, accurate relative to its value, every row at once.
    """
    if a.shape[1] > b.shape[1]:
        a, b = b, a
    la, lb = a.shape[1], b.shape[1]
    padded = np.pad(b, ((0, 0), (la - 1, la - 1)), constant_values=-np.inf)
    # padded[:, la - 1 + s - i] is b[:, s - i], or log 0 outside b.
    shift = (la - 1) + np.arange(la + lb - 1) - np.arange(la)[:, None]
    step = max(1, _CHUNK // shift.size)
    return np.concatenate([
        special.logsumexp(a[start:start + step, :, None]
                          + padded[start:start + step][:, shift], axis=1)
        for start in range(0, a.shape[0], step)
    ])


def _log_tails(log_pmf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return log P(F <= t) and log P(F > t), t = 0..n, from log pmfs on 0..n.

    Both tails are sums of probabilities, so each keeps its relative accuracy
    however small it is (1 - P(F <= t) would not). Exact values are set where
    known (P(F <= n) = 1, P(F > n) = 0), and rounding is kept from breaking
    monotonicity.
    """
    log_cdf = np.logaddexp.accumulate(log_pmf, axis=-1)
    log_sf = np.full_like(log_cdf, -np.inf)
    log_sf[..., :-1] = np.logaddexp.accumulate(log_pmf[..., :0:-1], axis=-1)[..., ::-1]
    log_cdf[..., -1] = 0.0
    log_cdf = np.maximum.accumulate(np.minimum(log_cdf, 0.0), axis=-1)
    return log_cdf, np.minimum.accumulate(np.minimum(log_sf, 0.0), axis=-1)


def _count_at_most(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``#{j : rows[..., j] <= values[..., t]}`` for each t, rows sorted.

    A batched ``searchsorted(side="right")`` through one stable sort per row,
    which puts each entry of ``rows`` before the values equal to it.
    """
    size = rows.shape[-1]
    order = np.argsort(np.concatenate((rows, values), axis=-1), axis=-1,
                       kind="stable")
    counts = np.empty(order.shape, dtype=np.intp)
    np.put_along_axis(counts, order, np.cumsum(order < size, axis=-1), axis=-1)
    return counts[..., size:]


def _least_shift(mu: tuple, nu: tuple, *, certain: bool) -> np.ndarray:
    """Least integer w >= 0 such that F_mu(t) >= F_nu(t - w) for every t.

    ``mu`` and ``nu`` are the pairs of :func:`_log_tails` (last axis t = 0..n).
    F_mu(t) < F_nu(j), equivalently P_mu(F > t) > P_nu(F > j), is decided on
    both tails with the relative tolerance of ``_RTOL``: ``certain=False``
    counts it unless either tail rules it out beyond rounding (an upper bound
    on the least w), ``certain=True`` only if either tail proves it beyond
    rounding (a lower bound; equal laws are at shift 0). Both tails are
    monotone in j, so the j where it holds form a range j >= J(t), and
    F_nu(t - w) exceeds F_mu(t) iff w <= t - J(t): the least w is
    max(0, max_t t - J(t) + 1). From t = n on F_mu(t) = 1 exactly, which
    nothing exceeds, so t < n.
    """
    (cdf_mu, sf_mu), (cdf_nu, sf_nu) = mu, nu
    n = cdf_mu.shape[-1] - 1
    terms = 1 + n * np.log(n + 2)

    # log_p -/+ _RTOL (terms + |log_p|), as log_p <= 0; -inf stays -inf.
    def lowered(log_p):
        return log_p * (1 + _RTOL) - _RTOL * terms

    def raised(log_p):
        return log_p * (1 - _RTOL) + _RTOL * terms

    cdf_mu, sf_mu = cdf_mu[..., :-1], sf_mu[..., :-1]
    if certain:
        # F_nu(j) > raised F_mu(t), or P_nu(F > j) < lowered P_mu(F > t).
        first = np.minimum(_count_at_most(cdf_nu, raised(cdf_mu)),
                           _count_at_most(-sf_nu, -lowered(sf_mu)))
    else:
        # F_nu(j) > lowered F_mu(t), and P_nu(F > j) < raised P_mu(F > t).
        first = np.maximum(_count_at_most(cdf_nu, lowered(cdf_mu)),
                           _count_at_most(-sf_nu, -raised(sf_mu)))
    t = np.arange(n)
    return np.max(t + 1 - first, axis=-1, initial=0)
