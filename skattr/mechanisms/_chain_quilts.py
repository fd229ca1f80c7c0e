"""Song, Wang and Chaudhuri's quilt search on a Markov chain, in bounded work.

On a chain X_0 -> ... -> X_{T-1} the quilts worth trying for X_i are the
nearest quilt node on each side (farther ones only add influence): Q =
{X_{i-a}, X_{i+b}}, either side possibly absent, leaving ``a + b - 1``
entries near (the whole prefix or suffix when a side is absent). Given X_i
the past and the future are independent, so the max-influence of the pair is
the max over (x, x') of the sum of the two sides' log-ratio matrices.

A quilt leaving s entries near scores at least s / epsilon, so once a quilt
scoring b is known, no quilt leaving more than ``b * epsilon`` entries can do
better. The search therefore looks at quilt nodes within a radius G of X_i
(and one-sided quilts leaving at most G entries): the least score found is
exact when it is at most G / epsilon, and otherwise the radius is doubled.
Work is about T G k^3 rather than T^2 k^3.

On a homogeneous chain (one transition matrix), an entry's score depends on
its own law, on which states the entries before it can take, and on its
distance to either end up to G; once the entries' laws settle (to the bit),
every entry far from both ends has the same score, which is computed once.
"""

from __future__ import annotations

import math

import numpy as np

from skattr.exceptions import WorkLimitError

__all__ = ["CHAIN_WORK_LIMIT", "chain_scales"]

#: First search radius (quilt nodes within this many steps of the entry).
_FIRST_RADIUS = 32
#: Matrix products (of k x k matrices) the search may take before it refuses
#: (about a minute on a laptop for k = 2; the message gives the estimate).
CHAIN_WORK_LIMIT = 50_000_000


def _log_ratio(log_p: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """Max over y of ``log_p[..., x, y] - log_p[..., x', y]``, y usable under x.

    ``inf`` where some y is usable under x and impossible under x'.
    """
    with np.errstate(invalid="ignore"):
        ratio = log_p[..., :, None, :] - log_p[..., None, :, :]
    ratio = np.where(usable[..., :, None, :], ratio, -np.inf)
    return ratio.max(axis=-1)


class _Chain:
    """Laws of a chain's entries and the products of its transition matrices."""

    def __init__(self, initial: np.ndarray, kernels, length: int):
        self.T = int(length)
        self.initial = np.asarray(initial, dtype=np.float64)
        k = self.initial.size
        if isinstance(kernels, np.ndarray) and kernels.ndim == 2:
            self.homogeneous, self.kernel = True, kernels
        else:
            first = kernels[0] if len(kernels) else np.eye(k)
            self.homogeneous = all(K is first or np.array_equal(K, first)
                                   for K in kernels)
            self.kernel = first
        self.kernels = None if self.homogeneous else list(kernels)
        marg = np.empty((self.T, k))
        marg[0] = self.initial
        for t in range(self.T - 1):
            marg[t + 1] = marg[t] @ self.at(t)
            if self.homogeneous and np.array_equal(marg[t + 1], marg[t]):
                marg[t + 2:] = marg[t]          # settled: the same from here
                break
        self.marg = marg
        support = marg > 0
        _, self.support_id = np.unique(support, axis=0, return_inverse=True)
        self.support_id = self.support_id.ravel()
        change = np.flatnonzero(np.diff(self.support_id)) + 1
        # run_start[t]: where the run of equal supports holding t begins.
        starts = np.zeros(self.T, dtype=np.int64)
        starts[change] = change
        self.run_start = np.maximum.accumulate(starts)
        self._powers: dict = {}

    def at(self, t: int) -> np.ndarray:
        """Return the transition matrix from X_t to X_{t+1}."""
        return self.kernel if self.homogeneous else self.kernels[t]

    def powers(self, i: int, radius: int, forward: bool) -> np.ndarray:
        """P(X_{i+b} | X_i) (forward) or P(X_i | X_{i-a}) (rows X_{i-a}).

        Shape (m, k, k) for b (or a) = 1 .. m, m at most ``radius`` and the
        entries left before the end. Products in the order a direct chain
        product takes (left to right forward, right to left backward).
        """
        m = min(radius, self.T - 1 - i) if forward else min(radius, i)
        if self.homogeneous:
            key = (forward, m)
            if key not in self._powers:
                self._powers[key] = self._products(0, m, forward)
            return self._powers[key]
        return self._products(i, m, forward)

    def _products(self, i: int, m: int, forward: bool) -> np.ndarray:
        k = self.initial.size
        out = np.empty((m, k, k))
        P = np.eye(k)
        for s in range(m):
            if forward:
                P = P @ self.at(i + s)
            else:
                P = self.at(i - 1 - s) @ P
            out[s] = P
        return out

    def key(self, i: int, radius: int):
        """Return what entry i's score at ``radius`` depends on (homogeneous chain)."""
        nb = min(radius, i)
        window = ()
        if nb:
            if self.run_start[i - 1] <= i - nb:
                window = ("same", int(self.support_id[i - 1]))
            else:
                window = tuple(self.support_id[i - nb:i].tolist())
        return (radius, self.marg[i].tobytes(), min(i, radius),
                min(self.T - 1 - i, radius), window)

    def score(self, i: int, radius: int, epsilon: float) -> float:
        """Return entry i's least quilt score within ``radius`` (or T / epsilon)."""
        T = self.T
        j = T - 1 - i
        marg_i = self.marg[i]
        scores = [T / epsilon]          # the trivial quilt: N = everything
        fwd = self.powers(i, radius, True)
        F = _log_ratio(*_logs(fwd))                          # (b, x, x')
        eF = F.reshape(len(F), -1).max(axis=1) if len(F) else np.zeros(0)
        # One-sided quilts leave a whole end near: only those of at most
        # ``radius`` entries (the others score above radius / epsilon).
        if len(eF):
            sizes = i + np.arange(1, len(eF) + 1)
            ok = (eF < epsilon) & (sizes <= radius)
            scores += list(sizes[ok] / (epsilon - eF[ok]))
        bwd = self.powers(i, radius, False)
        if len(bwd):
            rows = marg_i > 0
            # P(X_{i-a} = y | X_i = x) = m_{i-a}(y) P^a(y, x) / m_i(x): the
            # ratio between two x cancels m_{i-a}(y), which only decides
            # which y can occur.
            trans = np.swapaxes(bwd, 1, 2)[:, rows]          # (a, x, y)
            earlier = self.marg[i - np.arange(1, len(bwd) + 1)] > 0  # (a, y)
            usable = (trans > 0) & earlier[:, None, :]
            with np.errstate(divide="ignore"):
                log_p = np.log(trans) - np.log(marg_i[rows])[None, :, None]
            B = _log_ratio(log_p, usable)                    # (a, x, x')
            eB = B.reshape(len(B), -1).max(axis=1)
            sizes = j + np.arange(1, len(B) + 1)
            ok = (eB < epsilon) & (sizes <= radius)
            scores += list(sizes[ok] / (epsilon - eB[ok]))
            if len(fwd) and rows.all():
                both = (B[:, None] + F[None, :]).reshape(len(B), len(F), -1)
                e = both.max(axis=2)
                sizes = (np.arange(1, len(B) + 1)[:, None]
                         + np.arange(1, len(F) + 1)[None, :] - 1)
                ok = e < epsilon
                scores += list(sizes[ok] / (epsilon - e[ok]))
        return float(min(scores))


def _logs(powers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Log P(y | x) and where it is finite, for a stack of conditionals."""
    with np.errstate(divide="ignore"):
        return np.log(powers), powers > 0


def chain_scales(initial, kernels, length: int, epsilon: float, *,
                 work_limit: int | None = None) -> np.ndarray:
    """b_i = min over quilts ``|N| / (epsilon - e)`` for each entry of a chain.

    Parameters
    ----------
    initial : array-like of shape (k,)
        The law of X_0.
    kernels : ndarray of shape (k, k), or sequence of length - 1 of them
        One transition matrix (a homogeneous chain), or the matrix from X_t
        to X_{t+1} for each t.
    length : int
        T, the number of entries.
    epsilon : float
    work_limit : int or None
        Matrix products the search may take (default
        :data:`CHAIN_WORK_LIMIT`); beyond it :class:`WorkLimitError`.

    Returns
    -------
    ndarray of shape (T,)
        b_i for each entry (at most T / epsilon, the trivial quilt's).

    Raises
    ------
    WorkLimitError
        The search would take more than ``work_limit`` matrix products; the
        message gives the estimate.
    """
    limit = CHAIN_WORK_LIMIT if work_limit is None else int(work_limit)
    chain = _Chain(initial, kernels, length)
    T = chain.T
    first = min(T, _FIRST_RADIUS)
    # Each entry computed afresh costs about 3 radius matrix products
    # (forward, backward, the log ratios); one computed once per law on a
    # homogeneous chain costs nothing more.
    estimate = 3 * first * (T if not chain.homogeneous else
                            min(T, 4 * first + len(np.unique(
                                chain.marg, axis=0))))
    if estimate > limit:
        raise WorkLimitError(_too_much(T, estimate, limit))
    b = np.empty(T)
    memo: dict = {}
    spent = 0
    for i in range(T):
        radius = first
        while True:
            key = chain.key(i, radius) if chain.homogeneous else None
            value = memo.get(key) if key is not None else None
            if value is None:
                spent += 3 * radius
                if spent > limit:
                    raise WorkLimitError(_too_much(
                        T, spent * T / (i + 1), limit))
                value = chain.score(i, radius, epsilon)
                if key is not None:
                    memo[key] = value
            # Exact when no quilt beyond the radius could score lower.
            if value <= radius / epsilon or radius >= T:
                break
            radius = min(2 * radius, T)
        b[i] = value
    return b


def _too_much(T: int, estimate: float, limit: int) -> str:
    return (f"The quilt search on this chain of {T:,} entries needs about "
            f"{estimate:,.0f} matrix products, more than the limit of "
            f"{limit:,} (about {math.ceil(estimate / limit)} times a minute's "
            "work). A homogeneous chain (one transition matrix, "
            "MarkovQuiltMechanism(transition=...)) is searched once per law "
            "of its entries; a larger epsilon finds short quilts sooner. "
            "To wait for it anyway, raise the limit: "
            "skattr.mechanisms.MarkovQuiltMechanism(..., max_work=...).")
