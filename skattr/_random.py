"""Noise sampling: secure by default, seeded only for reproducible experiments."""

from __future__ import annotations

import random

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["gaussian_noise", "laplace_noise"]

_SYSTEM = random.SystemRandom()


def gaussian_noise(cov: np.ndarray, random_state=None) -> np.ndarray:
    """Draw one vector from N(0, cov).

    With ``random_state=None`` every standard normal is drawn from the operating
    system's entropy (``random.SystemRandom``), so the noise cannot be predicted
    from any seed. An int, ``Generator`` or ``RandomState`` makes the draw
    reproducible, which is what experiments want and what a real release must
    not use: anyone who knows the seed can subtract the noise.
    """
    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    k = cov.shape[0]
    if random_state is None:
        standard = np.array([_SYSTEM.gauss(0.0, 1.0) for _ in range(k)])
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
    Randomness as in :func:`gaussian_noise` (each Laplace draw is the difference of
    two exponentials). Like every floating-point Laplace sampler it does not
    address the least-significant-bit attacks on floating-point noise (Mironov,
    CCS 2012).
    """
    basis = np.atleast_2d(np.asarray(basis, dtype=float))
    d = basis.shape[1]
    if random_state is None:
        y = np.array([_SYSTEM.expovariate(1.0) - _SYSTEM.expovariate(1.0)
                      for _ in range(d)])
    elif isinstance(random_state, np.random.Generator):
        y = random_state.laplace(0.0, 1.0, d)
    else:
        y = check_random_state(random_state).laplace(0.0, 1.0, d)
    return basis @ (scale * y)
