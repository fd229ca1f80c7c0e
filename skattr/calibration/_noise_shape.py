"""The least-error Gaussian noise that the exact profile certifies.

With unequal covariances the least noise is not a multiple of the
equal-covariance optimum: the pairs' mean difference wants noise along it, the
covariance gap wants noise everywhere. Two families of noise covariances are
searched, each along its certified frontier (the least noise of a shape that
certifies every pair, found by the batched estimate of the exact profile):

- rank-one-plus-isotropic, ``a u u^T + b I`` with u the principal direction of
  the mean differences: for each b the least a, on a grid of b refined twice
  around its best point, so the frontier's minimum is found to about 1%
  of b's range;
- eigen-aligned, ``V diag(s) V^T`` with V the eigenvectors of the pairs'
  average covariance: for each direction s/|s| on the simplex the least
  multiple, improved by a pattern search from the isotropic, the rank-one and
  the mean-difference shapes (a local search).

Each family's frontier is monotone (more noise is post-processing), so the
least multiple of a shape is a one-dimensional root. The winner is certified
by the exact profile by the caller.
"""

from __future__ import annotations

import numpy as np

from skattr.calibration._profile_estimate import estimate_pairs_delta
from skattr.laws._gaussian import PairLaws
from skattr.noise import expected_gaussian_norm
from skattr.utils._work import TimeGuard, work_seconds

__all__ = ["OBJECTIVES", "least_error_noise", "noise_objective"]

#: What "least noise" means: E||Z||_2 (the releases' expected error) or
#: tr(Sigma_Z) = E||Z||_2^2.
OBJECTIVES = ("expected-error", "trace")

_GRID = 17
_REFINE = 9
_ROOT_STEPS = 80
#: Rounds of the estimate a search of :func:`least_multiples` takes, about.
_TYPICAL_ROUNDS = 22
_PATTERN_ROUNDS = 3


def noise_objective(cov: np.ndarray, objective: str) -> float:
    """Return the size of N(0, cov) that ``objective`` minimises."""
    if objective == "trace":
        return float(np.trace(cov))
    return float(expected_gaussian_norm(cov))


def _estimates(laws: PairLaws, noise: np.ndarray, epsilon: float, *,
               paired: bool = False, guard=None) -> np.ndarray:
    """Estimated delta (J, m) of every pair under each noise covariance (J, k, k).

    With ``paired`` (J = m) pair i is judged under noise i only: shape (m,).
    A pair whose covariances are not positive definite with the noise gets 1.
    """
    m, k = laws.mean_diff.shape
    j = noise.shape[0]
    if paired:
        cov_a, cov_b, diff = laws.cov_a + noise, laws.cov_b + noise, laws.mean_diff
    else:
        cov_a = (laws.cov_a[None] + noise[:, None]).reshape(j * m, k, k)
        cov_b = (laws.cov_b[None] + noise[:, None]).reshape(j * m, k, k)
        diff = np.broadcast_to(laws.mean_diff, (j, m, k)).reshape(j * m, k)
    lam_a = np.linalg.eigvalsh(cov_a)
    lam_b = np.linalg.eigvalsh(cov_b)
    valid = ((lam_a[:, 0] > 1e-12 * np.abs(lam_a[:, -1]))
             & (lam_b[:, 0] > 1e-12 * np.abs(lam_b[:, -1])))
    out = np.ones(diff.shape[0])
    if valid.any():
        out[valid] = estimate_pairs_delta(diff[valid], cov_a[valid], cov_b[valid],
                                          epsilon, guard=guard)
    return out if paired else out.reshape(j, m)


def least_multiples(laws: PairLaws, base: np.ndarray, direction: np.ndarray,
                    epsilon: float, delta: float, start: np.ndarray, *,
                    per_pair: bool = False) -> np.ndarray:
    """Least t_j >= 0 with ``base_j + t_j direction_j`` certifying every pair.

    By the estimate, for J shapes at once (arrays (J, k, k), ``start`` (J,) a
    guess of the scale); ``inf`` where no multiple up to about 1e14 times the
    guess does. The values are on the estimate's certified side, within a
    relative 1e-4 of the frontier. With ``per_pair`` the one shape given
    (J = 1) is scaled for each pair on its own: t has one entry a pair.
    """
    # About 20 rounds of the estimate, each over every pair still searched:
    # a secret of thousands of pairs with unequal covariances takes minutes.
    m = laws.mean_diff.shape[0]
    guard = TimeGuard(
        _TYPICAL_ROUNDS, work_seconds(),
        what=f"the Gaussian noise search over {m:,} pairs of laws with "
             "unequal covariances",
        cheaper=("state fewer pairs (pairs=[(a, b), ...], or a narrower "
                 "window or support), take the covariances as equal "
                 "(law=AssumeGaussian(covariances='assume-equal'), an "
                 "assumption the release records), or raise the limit "
                 "(environment variable SKATTR_MAX_SECONDS)"))
    if per_pair:
        base = np.broadcast_to(base, (m, *base.shape[1:]))
        direction = np.broadcast_to(direction, (m, *direction.shape[1:]))
        start = np.broadcast_to(np.asarray(start, dtype=float), (m,))

        def judged(t, rows):
            est = _estimates(_subset(laws, rows), base[rows] + t[rows, None, None]
                             * direction[rows], epsilon, paired=True,
                             guard=guard)
            return est <= delta
    else:
        def judged(t, rows):
            est = _estimates(laws, base[rows] + t[rows, None, None]
                             * direction[rows], epsilon, guard=guard)
            return est.max(axis=1) <= delta

    def ok(t, rows):
        out = judged(t, rows)
        guard.advance(1)
        return out

    j = base.shape[0]
    everyone = np.arange(j)
    done = ok(np.zeros(j), everyone)
    hi = np.maximum(np.asarray(start, dtype=float), 1e-300)
    found = done.copy()
    for _ in range(12):
        rows = np.flatnonzero(~found)
        if rows.size == 0:
            break
        found[rows] = ok(hi, rows)
        hi = np.where(found, hi, hi * 16.0)
    hi = np.where(done, 0.0, np.where(found, hi, np.inf))
    lo = np.zeros(j)
    active = found & ~done
    for _ in range(_ROOT_STEPS):
        rows = np.flatnonzero(active)
        if rows.size == 0:
            break
        # Down by 16 until a point fails, then bisect geometrically.
        with np.errstate(invalid="ignore"):
            mid = np.where(lo > 0, np.sqrt(lo * hi), hi / 16.0)
        good = np.zeros(j, dtype=bool)
        good[rows] = ok(mid, rows)
        hi = np.where(active & good, mid, hi)
        lo = np.where(active & ~good, mid, lo)
        active &= (lo == 0) | (hi > lo * (1 + 1e-4))
    return hi


def _rank_one_plus_isotropic(laws, u, iso, epsilon, delta, objective):
    """Best ``a u u^T + b I`` on the estimated frontier, b in [0, iso]."""
    k = u.size
    eye, ray = np.eye(k), np.outer(u, u)

    def frontier(b):
        a = least_multiples(laws, b[:, None, None] * eye,
                            np.broadcast_to(ray, (b.size, k, k)), epsilon,
                            delta, np.full(b.size, max(iso, 1e-300) * k))
        return [(a_i * ray + b_i * eye) if np.isfinite(a_i) else None
                for a_i, b_i in zip(a, b, strict=True)]

    b = np.concatenate([[0.0], iso * np.geomspace(1e-4, 1.0, _GRID - 1)])
    best_cov, best = None, np.inf
    for level in range(3):
        covs = frontier(b)
        sizes = np.array([np.inf if c is None else noise_objective(c, objective)
                          for c in covs])
        i = int(np.argmin(sizes))
        if sizes[i] < best:
            best_cov, best = covs[i], sizes[i]
        if level == 2:
            break
        left, right = b[max(i - 1, 0)], b[min(i + 1, b.size - 1)]
        b = np.linspace(left, right, _REFINE)
    return best_cov


def _eigen_aligned(laws, vecs, starts, epsilon, delta, objective):
    """Best ``V diag(s) V^T`` by a pattern search over the shape s / |s|."""
    k = vecs.shape[0]

    def scaled(weights):
        weights = np.maximum(weights, 0.0)
        direction = np.einsum("ik,jk,lk->jil", vecs, weights, vecs)
        t = least_multiples(laws, np.zeros_like(direction), direction, epsilon,
                            delta, np.ones(len(weights)))
        out = []
        for t_i, w in zip(t, weights, strict=True):
            out.append(None if not np.isfinite(t_i) else t_i * w)
        return out

    def size(s):
        return (np.inf if s is None else
                noise_objective((vecs * s) @ vecs.T, objective))

    candidates = [s for s in scaled(np.array(starts)) if s is not None]
    if not candidates:
        return None
    best = min(candidates, key=size)
    best_size = size(best)
    step = 4.0
    for _ in range(_PATTERN_ROUNDS):
        moves = []
        for i in range(k):
            for factor in (step, 1.0 / step, 0.0):
                w = best.copy()
                w[i] *= factor
                if w.any():
                    moves.append(w)
        if not moves:
            break
        for s in scaled(np.array(moves)):
            if size(s) < best_size:
                best, best_size = s, size(s)
        step = np.sqrt(step)
    return (vecs * best) @ vecs.T


def _subset(laws: PairLaws, rows: np.ndarray) -> PairLaws:
    return PairLaws(laws.mean_diff[rows], laws.cov_a[rows], laws.cov_b[rows],
                    laws.theta_index[rows], laws.n_theta, laws.assumptions)


def least_error_noise(laws: PairLaws, epsilon: float, delta: float,
                      objective: str = "expected-error",
                      extra: tuple = ()) -> list[np.ndarray]:
    """Return candidate noise covariances on the estimated certified frontier.

    The best of each family (see the module), and the shapes in ``extra``
    scaled to their least estimated multiple; the caller certifies each by the
    exact profile and keeps the least.

    Many pairs (a window secret, Theta's bootstrap replicates) are searched
    with an active set: the pairs that bind the isotropic noise first, then
    any pair a candidate leaves uncertified, until every pair is covered.
    """
    k = laws.mean_diff.shape[1]
    eye = np.eye(k)
    (iso,) = least_multiples(laws, np.zeros((1, k, k)), eye[None], epsilon,
                             delta, np.ones(1) * float(
                                 (laws.mean_diff**2).sum(axis=1).max()))
    if not np.isfinite(iso):
        return []
    if iso == 0.0:
        # No noise certifies (by the estimate): nothing is smaller.
        return [np.zeros((k, k))]
    out = [iso * eye]
    _, sing, vt = np.linalg.svd(laws.mean_diff, full_matrices=False)
    if sing[0] > 0:
        u = vt[0]
        covs = np.concatenate([laws.cov_a, laws.cov_b]).mean(axis=0)
        _, vecs = np.linalg.eigh(covs)
        along = (vecs.T @ u) ** 2
        starts = np.array([np.ones(k), along + 1e-3 * along.max(),
                           ((vecs.T @ laws.mean_diff.T) ** 2).max(axis=1)
                           + 1e-6])
        binding = _estimates(laws, iso * eye[None], epsilon)[0]
        first = np.argsort(-binding)[:3]
        for search in (
                lambda sub: _rank_one_plus_isotropic(sub, u, iso, epsilon,
                                                     delta, objective),
                lambda sub: _eigen_aligned(sub, vecs, starts, epsilon, delta,
                                           objective)):
            found = _on_active_set(laws, first, search, epsilon, delta)
            if found is not None:
                out.append(found)
    shapes = np.array([c for c in extra if np.any(c)]).reshape(-1, k, k)
    if shapes.size:
        t = least_multiples(laws, np.zeros_like(shapes), shapes, epsilon, delta,
                            np.ones(len(shapes)))
        out += [ti * c for ti, c in zip(t, shapes, strict=True)
                if np.isfinite(ti)]
    # On the estimate's certified side of the frontier; the caller's exact
    # check decides.
    return [0.5 * (c + c.T) for c in out]


def _on_active_set(laws: PairLaws, first: np.ndarray, search, epsilon: float,
                   delta: float):
    """Run ``search`` on a growing set of pairs until its answer covers all.

    Starts from the pairs ``first`` and adds the pairs the answer leaves
    uncertified (by the estimate), worst first; None if the search finds
    nothing.
    """
    m = laws.mean_diff.shape[0]
    active = set(first.tolist())
    while True:
        rows = np.array(sorted(active))
        found = search(_subset(laws, rows))
        if found is None or rows.size == m:
            return found
        est = _estimates(laws, found[None], epsilon)[0]
        missed = np.flatnonzero(est > delta)
        if missed.size == 0:
            return found
        active |= set(missed[np.argsort(-est[missed])][:4].tolist())
