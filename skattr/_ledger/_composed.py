"""A ledger's Laplace-noise releases composed under the bands' one coupling.

Pufferfish privacy does not compose across couplings: two releases each
certified alone, each through its own coupling of the datasets under the two
values of a pair, can reveal the secret together. Under **one** coupling
they compose as ordinary mechanisms do.

The theorem. Let pi be one coupling of the datasets X ~ P_a and Y ~ P_b
under the two values (a, b) of a pair: the ledger's band law's, the shared
records kept and each moved record's two rows drawn independently, one from
each group's law (:meth:`~skattr.laws._joint_band.JointBandLaw.coupled_distances`).
Release k adds noise N_k, independent of everything else, to its statistics
G_k, and for a fixed pair of datasets (x, y) let delta_k(x, y; eps) be the
hockey-stick divergence H_{e^eps}(G_k(x) + N_k || G_k(y) + N_k). Suppose

    E_pi delta_k(X, Y; eps_k) <= delta_k  for every k.

Then the joint release M = (G_1 + N_1, ..., G_K + N_K) satisfies
H_{exp(sum eps_k)}(M(P_a) || M(P_b)) <= sum delta_k:

1. For fixed (x, y) the K noises are independent mechanisms on fixed
   inputs, so basic composition holds:
   H_{exp(sum eps_k)}(M(x) || M(y)) <= sum_k delta_k(x, y; eps_k).
2. M(P_a) = E_pi M(X) and M(P_b) = E_pi M(Y) (pi's margins are P_a and
   P_b), and the hockey-stick divergence is jointly convex, so
   H(M(P_a) || M(P_b)) <= E_pi H(M(X) || M(Y))
                        <= sum_k E_pi delta_k(X, Y; eps_k) <= sum_k delta_k.

The eps_k in step 1 need not be the releases' own: any split fixed before
the data are read (the same for every pair) is a valid one, and the ledger
takes the least sum over a fixed family of splits whose deltas add up to at
most the budget's. Each delta_k reads the law of one coordinate alone, so no
dependence between statistics is assumed (the expectation of a sum is the
sum of expectations, whatever the dependence). A release certified under
another coupling (a mean alone, under :class:`~skattr.laws._band.BandLaw`'s
one-column comonotone coupling) is **re-certified** here under pi: its
delta_k is computed again from pi's law of its statistic's move.

A Laplace release of scale b whose statistic moves by |d| is a pure
(|d| / b)-private mechanism with the exact profile

    delta(eps) = max(0, 1 - exp((eps - |d| / b) / 2)),

non-decreasing in |d|, so its expectation under any law that dominates |D|
(P(law > t) >= P(|D| > t) for every t) bounds E_pi delta_k; mass counted as
an infinite distance counts 1. A release of several values, each with its
own independent noise, is its values' releases composed (one delta_k each).
With the releases' own epsilons and deltas that sum to at most the budget's,
the joint epsilon is at most the sum of their epsilons: "do not add up"
means "at most the sum, once certified under one coupling; often less".

Releases planned under pi. A ledger over the default bands plans each
Laplace release of one sum, mean, median or quantile under pi from its
first release on (:func:`~skattr._ledger._joint.records_theta`:
``ConfidenceBand(coupling="records")``, the one-value
:class:`~skattr.laws._joint_band.JointBandLaw`): its scale is certified as
E_pi delta_k(X, Y; eps_k) <= delta_k from pi's law of its move, on the same
bands as the statistic alone (its column's, at the bands' confidence c, the
spacings' floors included for an order statistic). So the hypothesis above
holds with each release's own (eps_k, delta_k), and the joint release is
(sum eps_k, sum delta_k)-private whenever every release's bands hold: with
probability at least 1 - C (1 - c) over the reference for the C distinct
bands the releases read (a union bound; releases of one column on one
band share one event). The bound the ledger reports is computed over its
own law instead (every source's bands at once, with probability at least
c, each band at (1 - c) / 2S for S sources, so wider), each release's
delta_k re-certified there: it holds at confidence c, and at delta = sum
delta_k it is at most sum eps_k when those re-certified deltas fit (the
split of the releases' own epsilons is among those tried). The price is
the noise: under pi a moved record's two rows are independent, where one
column's coupling draws them from one uniform, so each release is noisier
than alone (``docs/many_releases.rst`` gives the figures). Releases of
other statistics (stds, several values at once) keep their own Theta and
are re-certified as before.
"""

from __future__ import annotations

import math

import numpy as np

from skattr.calibration._joint_coupled import (
    joint_gaussian_delta,
    joint_gaussian_epsilon,
)

__all__ = ["SPLIT_GRID", "composed_delta", "composed_epsilon",
           "laplace_profile"]

#: The epsilon of each value in a split, as multiples of its release's own
#: epsilon: fixed before any data is read.
SPLIT_GRID = np.concatenate([np.linspace(0.0, 0.1, 11)[1:],
                             np.geomspace(0.1, 8.0, 120)[1:]])
# The Lagrange multipliers tried (delta's price in epsilon).
_PRICES = np.geomspace(1e-2, 1e9, 221)
# Relative slack on a delta compared with the budget (sums of a few
# thousand non-negative floats).
_ROUNDING = 1e-9


def laplace_profile(epsilon, shift) -> np.ndarray:
    """Return the Laplace mechanism's exact delta at ``epsilon`` for a shift.

    ``shift`` is |d| / b, the move in units of the noise's scale (inf: the
    value is released without noise and moves).

    Examples
    --------
    >>> float(laplace_profile(1.0, 0.5))
    0.0
    >>> round(float(laplace_profile(0.0, 2.0)), 6)
    0.632121
    """
    with np.errstate(over="ignore", invalid="ignore"):
        gap = np.subtract(epsilon, shift)
        out = -np.expm1(np.minimum(gap, 0.0) / 2)
    return np.where(np.isinf(shift), 1.0, np.maximum(out, 0.0))


def _expected(law, scale: float, epsilons: np.ndarray) -> np.ndarray:
    """Return E delta(eps) under ``law`` of |D|, at each of ``epsilons``."""
    d = np.asarray(law.distances, dtype=float)
    p = np.asarray(law.probs, dtype=float)
    missing = max(0.0, 1.0 - float(p.sum()))
    if scale <= 0:
        shift = np.where(d > 0, math.inf, 0.0)
    else:
        shift = d / scale
    profile = laplace_profile(epsilons[:, None], shift[None, :])
    return (profile @ p + missing) * (1 + _ROUNDING)


def _tables(per_pair, units, grids) -> np.ndarray:
    """Return E_pi delta per (pair, unit, grid point)."""
    out = np.zeros((len(per_pair), len(units), grids.shape[1]))
    for e, laws in enumerate(per_pair):
        for u, (j, scale, _) in enumerate(units):
            out[e, u] = _expected(laws[j], scale, grids[u])
    return out


def composed_delta(per_pair, units, epsilons) -> float:
    """Return the joint delta at sum(epsilons) of Laplace values under pi.

    Parameters
    ----------
    per_pair : sequence of sequence of CoupledDistances
        Per (secret, widest pair), per coordinate, a law dominating its
        move |D_j| under the one coupling pi.
    units : sequence of (int, float, float)
        Per released value: its coordinate j, its Laplace scale b and its
        release's own epsilon.
    epsilons : sequence of float
        The epsilon given to each value (a split).

    Returns
    -------
    float
        max over pairs of sum_k E_pi delta_k(eps_k): the release is
        (sum eps_k, this)-private (module docstring).
    """
    grids = np.asarray(epsilons, dtype=float)[:, None]
    return float(_tables(per_pair, units, grids).sum(axis=1).max(initial=0.0))


def _gaussian_table(per_pair, block, grid) -> np.ndarray:
    """Return per (pair, grid point) the Gaussian block's E_pi delta."""
    coords, scales, _ = block
    return np.array([[joint_gaussian_delta(
        [tuple(laws[j] for j in coords)], scales, float(eps)) for eps in grid]
        for laws in per_pair])


def composed_epsilon(per_pair, units, delta: float, *,
                     gaussian=None) -> tuple[float, float]:
    """Return the least joint epsilon found at ``delta`` and its delta.

    Parameters
    ----------
    per_pair, units
        As for :func:`composed_delta`.
    delta : float
        The joint delta to fit.
    gaussian : (coordinates, scales, epsilon) or None
        Gaussian-noise values as one more release: for a fixed coupled
        pair they are one Gaussian at distance mu <= ||D / scales|| over
        their ``coordinates`` (the caller's scales bound the noise's
        precision), and E_pi of its exact profile is bounded from the
        coordinates' laws whatever their dependence
        (:func:`~skattr.calibration._joint_coupled.joint_gaussian_delta`);
        ``epsilon`` (their own) sets the grid its split is read on.

    Notes
    -----
    The splits tried, all fixed before the data are read: the releases'
    own epsilons; each value's least epsilon on its grid (its release's
    own times :data:`SPLIT_GRID`) whose delta is at most ``delta`` over the
    number of values (so the result is never above the sum of the values'
    epsilons re-certified alone at that share); and for each price lambda
    each value's epsilon on its grid minimising eps + lambda E_pi
    delta(eps) (worst pair).
    Every split is evaluated exactly (worst pair of the sum), so each one
    that fits within ``delta`` is a valid certificate; the least epsilon is
    returned, or ``(inf, inf)`` when none fits.
    """
    own = np.array([eps for _, _, eps in units]
                   + ([gaussian[2]] if gaussian is not None else []),
                   dtype=float)
    if own.size == 0:
        return 0.0, 0.0
    if len(per_pair) == 0 or not np.all(np.isfinite(own)) or np.any(own <= 0):
        # Nothing to compose over, or no grid to read a split on: no bound.
        return math.inf, math.inf
    if not units:
        # The Gaussian values alone: no split, the least epsilon they fit
        # (to a relative 1e-4).
        coords, scales, _ = gaussian
        block = [tuple(laws[j] for j in coords) for laws in per_pair]
        epsilon = joint_gaussian_epsilon(block, scales, delta, rtol=1e-4)
        if not math.isfinite(epsilon):
            return math.inf, math.inf
        return epsilon, joint_gaussian_delta(block, scales, epsilon)
    grids = own[:, None] * SPLIT_GRID[None, :]
    grids = np.concatenate([grids, own[:, None]], axis=1)
    tables = _tables(per_pair, units, grids[:len(units)])  # pair x unit x grid
    if gaussian is not None:
        tables = np.concatenate([tables, _gaussian_table(
            per_pair, gaussian, grids[-1])[:, None, :]], axis=1)
    worst = tables.max(axis=0)                     # unit x grid
    best = (math.inf, math.inf)
    rows = np.arange(own.size)
    choices = [np.full(own.size, grids.shape[1] - 1)]
    # Each value's least epsilon at an equal share of delta: the sum of
    # their epsilons re-certified alone is always among the splits.
    fits = worst <= delta / own.size
    if np.all(fits.any(axis=1)):
        choices.append(np.argmin(np.where(fits, grids, np.inf), axis=1))
    for price in _PRICES:
        choices.append(np.argmin(grids + price * worst, axis=1))
    for chosen in choices:
        found = float(tables[:, rows, chosen].sum(axis=1).max())
        if found <= delta:
            epsilon = float(grids[rows, chosen].sum())
            if epsilon < best[0]:
                best = (epsilon, found)
    return best
