"""The joint certificate of Gaussian- and Laplace-noise releases on one dataset.

Also of Gaussian-noise releases alone in a ledger of the default law and
Theta, when they are of several statistics or of medians, quantiles or
stds (no exact joint law of theirs is computed): the rule below with no
Laplace value, eps_L = 0.

A ledger's Gaussian-noise releases are certified from their statistics'
joint law, its Laplace-noise ones through a coupling; neither model holds
the other's. When one dataset has both, every release is certified again
through the one coupling of the reference's band law
(:meth:`~skattr._ledger._joint.LaplaceJoint.band_law`), which bounds how far
every released value moves, whatever noise it carries.

The rule. Let pi be the band law's coupling of the datasets under the two
values of a pair, with every value j moving by |D_j| <= W_j(delta_c) on all
but delta_c of its mass (each W_j at delta_c / K, worst case over the bands'
laws and the pairs; ``docs/population.md``). Fix a coupled pair (x, y) in
that set. The Laplace-noise values, scales b, change density by at most
exp(eps_L), eps_L = sum_j W_j sum 1 / b: a pure bound. The Gaussian-noise
values Y_G = A F + N, N ~ N(0, Sigma_N) independent of the Laplace noise,
are two Gaussians at Mahalanobis distance mu(x, y) = ||Sigma_N^-1/2 A d||,
d the moves of their statistics; mu <= mu* = max of that norm over the box
|d_j| <= W_j. With q_L >= exp(-eps_L) p_L,

    H_{exp(eps_L + eps_G)}(P_L x P_G || Q_L x Q_G)
        <= H_{exp(eps_G)}(P_G || Q_G) <= delta_G(mu*, eps_G),

the Gaussian mechanism's profile at mu* (non-decreasing in mu). The
hockey-stick divergence is jointly convex, so over pi the joint release is
(eps_L + eps_G, delta_c + delta_G)-private; the budget's delta is split
between delta_c and delta_G, and the least epsilon over a few fixed splits
is taken (each split is a valid guarantee). It rests on the bands alone:
valid for the population with their confidence, without the Gaussian
model its Gaussian releases recorded.

Notes
-----
The composed bound, taken when lower. Under the same coupling pi, for a
fixed coupled pair the Laplace values and the Gaussian values are
independent mechanisms, so basic composition holds pair by pair and joint
convexity takes it to the population (:mod:`skattr._ledger._composed`). The
Gaussian values are one Gaussian at mu(x, y)^2 = d^T P d, P = A^T
Sigma_N^-1 A over the coordinates they touch; |d_i| |d_j| <= (d_i^2 +
d_j^2) / 2 gives d^T P d <= sum_i d_i^2 r_i, r_i = sum_j |P_ij| (exact for a
diagonal P), so with s_i = r_i^-1/2 the exact profile's expectation
E_pi g_eps(||d / s||) bounds the Gaussian part's delta, whatever the
dependence of the moves
(:func:`~skattr.calibration._joint_coupled.joint_gaussian_delta`). The
Laplace values are re-certified under pi one by one, and the least sum of
epsilons over fixed splits whose deltas fit is taken.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from skattr._ledger._composed import composed_epsilon
from skattr._ledger._joint import SPAN_RTOL, laplace_loss
from skattr.calibration._gaussian import gaussian_pair_epsilon
from skattr.exceptions import InvalidParameterError, NotCertifiableError

__all__ = ["SPLITS", "mixed_epsilon", "worst_mahalanobis"]

#: Shares of the budget's delta given to the coupling (the rest to the
#: Gaussian noise); fixed before any data is read.
SPLITS = (0.25, 0.5, 0.75)
# Up to this many coordinates, the worst move is found over every corner.
_MAX_CORNERS = 14


def worst_mahalanobis(precision: np.ndarray, bounds: np.ndarray) -> float:
    """Return max d^T P d over the box |d_j| <= W_j.

    A convex function peaks at a corner of the box: every corner is tried
    (up to sign) for up to 14 coordinates; beyond, the bound
    sum_ij |P_ij| W_i W_j, exact for a diagonal P.
    """
    scaled = precision * np.outer(bounds, bounds)
    m = scaled.shape[0]
    if m == 0:
        return 0.0
    if m > _MAX_CORNERS:
        return float(np.abs(scaled).sum())
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=m - 1)))
    corners = np.column_stack([np.ones(len(signs)), signs])
    return float(np.max(np.einsum("ci,ij,cj->c", corners, scaled, corners)))


def mixed_epsilon(band, laplace: list, gaussian: list) -> float:
    """Return the joint epsilon of Laplace- and Gaussian-noise releases.

    Parameters
    ----------
    band : LaplaceJoint
        The ledger's Laplace joint: its statistics' queries and band laws.
    laplace : list of dict
        The Laplace-noise releases (``LedgerEntry.laplace``).
    gaussian : list of (statistics, noise_cov, ranges)
        The Gaussian-noise releases: per value its base statistic and weight,
        the noise's covariance, and the clipping ranges the release used (a
        dict by column; None: the ledger's ``bounds`` resolved again).

    Raises
    ------
    NotCertifiableError
        A Laplace release hides the secret with distributional privacy (the
        Gaussian releases' laws condition on the dataset's share), or a
        statistic has no bound over the bands.
    """
    ledger = band.ledger
    # Gaussian releases alone hide the dataset's share (their own privacy).
    privacy = band.one_privacy(laplace) if laplace else "dataset"
    if privacy != "dataset":
        raise NotCertifiableError(
            "Gaussian-noise releases hide the dataset's own share (dataset "
            "privacy); a Laplace release with privacy='distributional' has "
            "no joint certificate with them. Keep privacy='dataset' (the "
            "default) in a ledger that mixes the two kinds of noise.")
    statistics = band.restated(laplace)
    laplace_keys = list(statistics)
    values = []                     # per Gaussian value: (its key, weight)
    for stats, _, ranges in gaussian:
        for base, weight in stats:
            key, column = f"gaussian | {base!r}", base.columns[0]
            values.append((key, weight))
            statistics.setdefault(key, (
                (base, [column]) if ranges is None or column not in ranges
                else (base, [column], {column: ranges[column]})))
    keys = list(statistics)
    try:
        law, slices = band.band_law(statistics)
    except InvalidParameterError as why:
        raise NotCertifiableError(
            f"The Gaussian-noise releases' clipping cannot be restated for "
            f"the bands' joint law ({why}); declare bounds as a dict by "
            "column (bounds={'column': (low, high)}).") from None
    n, delta = ledger._n, ledger.budget[1]
    # The Gaussian values: each the weight times one coordinate (a sum).
    coordinates = np.array([int(slices[keys.index(key)][0])
                            for key, _ in values], dtype=int)
    # A value that never moves (a constant column: a one-point range)
    # reveals nothing whatever its noise, so it is left out, its noise too
    # (its sd may be 0, or far below the others').
    moves = (law.largest(n, privacy)[coordinates] > 0 if coordinates.size
             else np.zeros(0, dtype=bool))
    weights = np.array([w for _, w in values], dtype=float)[moves]
    touched, column = np.unique(coordinates[moves], return_inverse=True)
    select = np.zeros((int(moves.sum()), touched.size))
    select[np.arange(select.shape[0]), column] = weights
    precision = _precision([cov for _, cov, _ in gaussian], select, moves)
    best = math.inf
    for share in SPLITS:
        bounds = law.per_statistic(n, privacy, share * delta)
        eps_l = laplace_loss(bounds, band.band_weights(
            laplace, laplace_keys, slices[:len(laplace_keys)], bounds.size))
        moved = bounds[touched]
        if precision is None:
            # A value released without noise: private only if it cannot move.
            eps_g = 0.0 if not np.any(moved > 0) else math.inf
        else:
            mu = math.sqrt(max(worst_mahalanobis(precision, moved), 0.0))
            eps_g = (0.0 if mu == 0 else
                     gaussian_pair_epsilon(0.0, 1.0, mu, 1.0,
                                           (1 - share) * delta))
        best = min(best, eps_l + eps_g)
    band.bound = "box"
    rows = None if precision is None else np.abs(precision).sum(axis=1)
    try:
        per_pair = law.coupled_distances(n, privacy)
    except NotCertifiableError:
        per_pair = None         # no law of some move: the box alone
    if (per_pair is not None and rows is not None and rows.size
            and np.all(rows > 0)):
        # The releases composed under the same coupling (the module's Notes).
        scales = 1.0 / np.sqrt(rows)
        composed, _ = composed_epsilon(
            per_pair,
            band.band_units(laplace, laplace_keys, slices[:len(laplace_keys)]),
            delta, gaussian=([int(c) for c in touched], scales,
                             float(len(gaussian))))
        if composed < best:
            best, band.bound = composed, "composed"
    return float(best)


def _precision(blocks: list, select: np.ndarray,
               kept: np.ndarray) -> np.ndarray | None:
    """Return A^T Sigma_N^-1 A, or None when some value carries no noise.

    Sigma_N is block-diagonal, a block per release, over the values
    ``kept`` (``select``'s rows, in the blocks' order; the others never
    move, and are left out only when their noise is independent of the
    kept values': else None). Each block is inverted (and judged singular)
    alone, so releases in very different units do not make one another's
    noise look like none; a diagonal block (independent noise on each
    value, apgm's) value by value, so that values of one release in very
    different units do not either: its inverse is exact, and singular only
    where an sd is 0.
    """
    precision = np.zeros((select.shape[1], select.shape[1]))
    start = row = 0
    for block in blocks:
        block = np.atleast_2d(np.asarray(block, dtype=float))
        end = start + block.shape[0]
        keep = np.asarray(kept[start:end], dtype=bool)
        start = end
        if not keep.any():
            continue
        if np.any(block[np.ix_(keep, ~keep)] != 0):
            # A value left out whose noise is correlated with a kept one's
            # would reveal part of that noise: the kept values' precision
            # is then not their block's inverse. Judged as the whole block.
            return None
        block = block[np.ix_(keep, keep)]
        rows = select[row:row + block.shape[0]]
        row += block.shape[0]
        if np.array_equal(block, np.diag(np.diag(block))):
            variances = np.diag(block)
            if not np.all(variances > 0):
                return None
            precision += rows.T @ (rows / variances[:, None])
            continue
        values = np.linalg.eigvalsh(block)
        # Singular as GaussianJoint judges it: outside the span.
        if values[0] <= SPAN_RTOL * max(values[-1], 1e-300):
            return None
        precision += rows.T @ np.linalg.solve(block, rows)
    return (precision + precision.T) / 2
