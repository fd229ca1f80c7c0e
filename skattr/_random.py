"""Noise sampling: secure by default, seeded only for reproducible experiments.

Unseeded draws read ``os.urandom`` afresh in every call and keep no state between
calls, so threads may draw concurrently (``random.SystemRandom.gauss`` caches the
second value of each pair in the instance, and two threads sharing one instance
can both receive it).

Both samplers work in floating point and share its weakness: the set of doubles a
noisy value can take depends on the true value, so the low-order bits of a release
can reveal it (Mironov's least-significant-bit attack, CCS 2012). skattr's noise is
not protected against it, as snapping or discrete noise would be. Rounding a
release to a coarse grid, far above the spacing of doubles near it (Mironov's
snapping mechanism rounds to a power of two at least the noise scale), removes
those bits; it is post-processing, so the guarantee is kept.
"""

from __future__ import annotations

import os

import numpy as np
from scipy import special
from sklearn.utils import check_random_state

__all__ = ["gaussian_noise", "laplace_noise"]


def _signed_tail_probabilities(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Draw n random signs and n tail probabilities uniform on (0, 1/2].

    Each draw reads 128 bits of ``os.urandom``: the top bit is the sign, the other
    127 form the probability, so it reaches 2**-129 (a Gaussian 13.1 standard
    deviations out, a Laplace 89 scales out), where ``SystemRandom.gauss`` stopped
    at 8.6 standard deviations. A cut-off leaks: a value beyond it is impossible
    under one dataset and possible under a neighbour at distance mu, with
    probability Phi(mu - cut-off), 2e-14 at 8.6 for mu = 1 but below 1e-23
    at 13.1 for mu = 3.
    """
    high, low = np.frombuffer(os.urandom(16 * n), dtype=np.uint64).reshape(2, n)
    sign = np.where(high >> np.uint64(63), -1.0, 1.0)
    tail = (high & np.uint64(2**63 - 1)) * 2.0**-64 + (low + 0.5) * 2.0**-128
    return sign, tail


def gaussian_noise(cov: np.ndarray, random_state=None) -> np.ndarray:
    """Draw one vector from N(0, cov).

    With ``random_state=None`` every standard normal is drawn from the operating
    system's entropy (``os.urandom``, the source behind ``random.SystemRandom``)
    by inverting the normal CDF, with no state kept between calls: the noise
    cannot be predicted from any seed and concurrent calls from several threads
    are safe. An int, ``Generator`` or ``RandomState`` makes the draw
    reproducible, which is what experiments want and what a real release must
    not use: anyone who knows the seed can subtract the noise.

    The draw is made in floating point, so, like every floating-point sampler, it
    is exposed to the least-significant-bit attack (Mironov, CCS 2012): the set of
    doubles a noisy value can take depends on the true value, and the low-order
    bits of a release can reveal it. The noise is not protected against this
    (snapping or discrete noise would be). Round releases to a coarse grid, well
    above the noise's ulp and the spacing of doubles near the release, before
    publishing them: rounding is post-processing and keeps the guarantee.
    """
    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    k = cov.shape[0]
    if random_state is None:
        sign, tail = _signed_tail_probabilities(k)
        standard = sign * special.ndtri(tail)
    elif isinstance(random_state, np.random.Generator):
        standard = random_state.standard_normal(k)
    else:
        standard = check_random_state(random_state).standard_normal(k)
    lam, vecs = np.linalg.eigh(cov)
    return vecs @ (np.sqrt(np.clip(lam, 0.0, None)) * standard)


def laplace_noise(scale: float, basis: np.ndarray, random_state=None) -> np.ndarray:
    """Draw ``basis @ y`` with y_i i.i.d. Laplace(0, scale), one per basis column.

    ``basis`` is (k, d) with orthonormal columns: the identity for per-component
    noise, or the directions of the mean differences for a directional mechanism.
    Randomness as in :func:`gaussian_noise` (each Laplace draw inverts the Laplace
    CDF). Like every floating-point Laplace sampler it does not address the
    least-significant-bit attacks on floating-point noise (Mironov, CCS 2012);
    the remedy in :func:`gaussian_noise` applies.
    """
    basis = np.atleast_2d(np.asarray(basis, dtype=float))
    d = basis.shape[1]
    if random_state is None:
        sign, tail = _signed_tail_probabilities(d)
        y = sign * np.log(2.0 * tail)
    elif isinstance(random_state, np.random.Generator):
        y = random_state.laplace(0.0, 1.0, d)
    else:
        y = check_random_state(random_state).laplace(0.0, 1.0, d)
    return basis @ (scale * y)
