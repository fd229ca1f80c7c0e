"""Fast estimates of the exact two-Gaussian profile, many laws at once.

The certified profile (:mod:`skattr.calibration._quadratic_loss`) integrates
one law at a time with QUADPACK, which is exact but costs milliseconds a call.
Searches for a noise covariance (bisections, frontiers of a family) need the
profile of hundreds of candidates; they use this batched estimate instead, the
same Gil-Pelaez integral on a fixed Gauss-Legendre grid, and every candidate
they return is then certified by the exact profile. An estimate here never
certifies anything.
"""

from __future__ import annotations

import numpy as np

__all__ = ["batched_loss_laws", "estimate_pairs_delta"]

# Gauss-Legendre nodes on a panel, and the grid in t = u * sd(L): the
# integrand has unit scale there, and decays like a normal density for the
# laws met in practice (a linear part dominating the chi-square terms).
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(8)
_PANELS = 1500
#: The spans (in t) a law's integral may stop at.
_SPANS = np.array([6.0, 9.0, 14.0, 24.0, 48.0, 100.0, 200.0])
#: Envelope |phi| below which the rest of the integral is dropped.
_NEGLIGIBLE = 1e-10
#: Time an integrand entry takes at the least (it takes about ten times as
#: long): an optimistic rate, so that only a search certain to overrun is
#: refused before it is timed.
_SECONDS_PER_ENTRY = 1e-8
#: Complex entries of the integrand held at once (64 MiB at 16 bytes each).
_BLOCK_ELEMENTS = 1 << 22


def batched_loss_laws(diff: np.ndarray, cov_p: np.ndarray, cov_q: np.ndarray,
                      sign: np.ndarray) -> tuple[np.ndarray, ...]:
    """Return the laws of sign * log p/q under P for a batch of Gaussian pairs.

    P = N(diff, cov_p), Q = N(0, cov_q), of shapes (c, k) and (c, k, k), and
    ``sign`` (c,) of +-1; the decomposition of :func:`skattr.calibration.
    _quadratic_loss.loss_laws`, batched: weights and linear coefficients
    (c, k) and constants (c,) of sum_j (a_j Z_j^2 + beta_j Z_j) + const.
    """
    lam_p, vec_p = np.linalg.eigh(cov_p)
    root = (vec_p * np.sqrt(np.clip(lam_p, 0.0, None))[:, None, :]) @ np.swapaxes(
        vec_p, 1, 2)
    prec_q = np.linalg.inv(cov_q)
    m = np.swapaxes(root, 1, 2) @ prec_q @ root
    m = 0.5 * (m + np.swapaxes(m, 1, 2))
    b = np.einsum("cij,cjk,ck->ci", root, prec_q, diff)
    logdet_p = np.linalg.slogdet(cov_p)[1]
    logdet_q = np.linalg.slogdet(cov_q)[1]
    const = 0.5 * (logdet_q - logdet_p) + 0.5 * np.einsum(
        "ci,cij,cj->c", diff, prec_q, diff)
    lam, vecs = np.linalg.eigh(m - np.eye(m.shape[1]))
    beta = np.einsum("cij,ci->cj", vecs, b)
    sign = np.asarray(sign, dtype=float)
    return sign[:, None] * lam / 2, sign[:, None] * beta, sign * const


def _tail(weights, linear, const, x: float, guard=None) -> np.ndarray:
    """Estimate P(X > x) for each law of the batch (Gil-Pelaez on a grid).

    ``guard`` (a :class:`~skattr.utils._work.TimeGuard` counting rounds of a
    search, or None) is told the integrand's entries before they are
    evaluated, and refuses when the search's remaining rounds of that size
    would overrun at an optimistic rate.
    """
    sd = np.sqrt(np.sum(2 * weights**2 + linear**2, axis=1))
    sd = np.maximum(sd, 1e-300)
    shift = const - x
    # Each law is integrated up to where its envelope |phi| is negligible (the
    # envelope decreases and does not oscillate, so a coarse look finds the
    # place); laws are grouped by that span, and each group's panels are
    # narrow enough for its fastest oscillation.
    coarse = _SPANS[None, :, None] / sd[:, None, None]
    z = 1.0 - 2j * weights[:, None, :] * coarse
    envelope = (-0.5 * np.log(np.abs(z)) - (linear[:, None, :] ** 2 * coarse**2
                                            / (2 * z)).real).sum(axis=2)
    reach = np.argmax(np.concatenate(
        [envelope < np.log(_NEGLIGIBLE), np.ones((sd.size, 1), bool)], axis=1),
        axis=1)
    reach = np.minimum(reach, _SPANS.size - 1)
    out = np.empty(sd.size)
    # Laws are grouped by span and by their oscillation (omega = |shift| /
    # sd, within a factor of two in a group): a group's panels are as narrow
    # as its fastest law needs, not as the batch's fastest.
    rate = np.abs(shift / sd)
    octave = np.ceil(np.log2(np.maximum(rate, 1.0))).astype(np.int64)
    groups = reach * 2048 + np.minimum(octave, 2047)
    plan = []
    for group in np.unique(groups):
        rows = np.flatnonzero(groups == group)
        level = int(group // 2048)
        omega = float(rate[rows].max())
        # At most _PANELS panels: an estimate, so a fast oscillation over a
        # long span (a large covariance gap) is resolved coarsely rather than
        # at any cost.
        width = max(min(1.0, 2.0 / max(omega, 1e-9)), _SPANS[level] / _PANELS)
        plan.append((rows, level, width))
    if guard is not None:
        entries = sum(rows.size * (_SPANS[level] / width + 1) * _NODES.size
                      for rows, level, width in plan) * weights.shape[1]
        guard.expect(entries * _SECONDS_PER_ENTRY * max(guard.remaining, 1),
                     f"{entries:,.0f} integrand entries a round, "
                     f"{max(guard.remaining, 1)} rounds to go, at a few "
                     "nanoseconds each")
    for rows, level, width in plan:
        edges = np.arange(0.0, _SPANS[level] + width, width)
        t = ((edges[:-1, None] + edges[1:, None]) / 2
             + (width / 2) * _NODES[None, :]).ravel()
        w = np.tile(_WEIGHTS * (width / 2), edges.size - 1)
        # The grid is evaluated a block of laws at a time: a batch of
        # millions of laws (a window secret's pairs times the candidates of
        # a search) would otherwise need one array of hundreds of GiB.
        step = max(1, _BLOCK_ELEMENTS // (t.size * weights.shape[1]))
        for start in range(0, rows.size, step):
            part = rows[start:start + step]
            u = t[None, :, None] / sd[part, None, None]
            z = 1.0 - 2j * weights[part, None, :] * u
            log_cf = (-0.5 * np.log(z) - linear[part, None, :] ** 2 * u**2
                      / (2 * z)).sum(axis=2) + 1j * shift[part, None] * u[..., 0]
            out[part] = 0.5 + (np.exp(log_cf).imag / t[None, :]) @ w / np.pi
    return np.clip(out, 0.0, 1.0)


def estimate_pairs_delta(diff: np.ndarray, cov_a: np.ndarray, cov_b: np.ndarray,
                         epsilon: float, *, guard=None) -> np.ndarray:
    """Estimate delta(epsilon) between N(diff, cov_a) and N(0, cov_b), both orders.

    Parameters
    ----------
    diff : ndarray of shape (c, k)
    cov_a, cov_b : ndarray of shape (c, k, k)
        Positive definite.
    epsilon : float
    guard : TimeGuard or None, default=None
        Told the work before it is done (see :func:`_tail`).

    Returns
    -------
    ndarray of shape (c,)
        The estimate for each law of the batch (not certified: see the module).
    """
    diff = np.asarray(diff, dtype=float)
    c = diff.shape[0]
    # The four laws of one pair in one batch: for each order (P, Q) the loss
    # log p/q under P, and under Q (as -log q/p).
    laws = batched_loss_laws(
        np.concatenate([diff, -diff, -diff, diff]),
        np.concatenate([cov_a, cov_b, cov_b, cov_a]),
        np.concatenate([cov_b, cov_a, cov_a, cov_b]),
        np.repeat([1.0, -1.0, 1.0, -1.0], c))
    tails = _tail(*laws, epsilon, guard).reshape(4, c)
    # e^epsilon would overflow beyond 709 (inf * 0 = NaN steers the searches
    # to noise a smaller epsilon does not need); e^700 makes a tail of 0 or
    # more than 1e-300 decide the same way.
    scale = np.exp(min(epsilon, 700.0))
    first = tails[0] - scale * tails[1]
    second = tails[2] - scale * tails[3]
    return np.clip(np.maximum(first, second), 0.0, 1.0)
