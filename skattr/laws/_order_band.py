"""Medians and quantiles of a column over the reference's confidence bands.

Given the secret's value, a dataset holds k records of the secret's group
and n - k others (dataset privacy), independent, with distribution
functions G_in and G_out. Its r-th smallest record (from 0) is at most x
exactly when at least r + 1 records are, so its distribution function is

    F(x) = phi(G_in(x), G_out(x)),  phi(p, q) = P(Bin(k, p) + Bin(n - k, q) > r)

(under distributional privacy every record is in the group with probability
a: phi(p, q) = P(Bin(n, a p + (1 - a) q) > r)), nondecreasing in both p and
q. Two secrets a and b of a pair share the population: the same G_in and
G_out, each within its :class:`~skattr.laws._band.GroupBand`.

The quantile coupling of the two laws moves level v from Q_b(v) to Q_a(v).
If Q_a(v') - Q_b(v) > d, then at x = Q_b(v) and y = x + d, F_b(x) >= v and
F_a(y) < v'; with g1 = (G_in(x), G_out(x)) <= g2 = (G_in(y), G_out(y)):
phi_b(g1) >= v, phi_a(g2) < v', and, every law in the bands having its
quantile function between Q_lo and Q_hi, x >= max_c Q_lo,c(g1_c) and
y <= min_c Q_hi,c(g2_c+). So

    Q_a(v') - Q_b(v) <= sup { min_c Q_hi,c(g2_c+) - max_c Q_lo,c(g1_c) :
                              g1 <= g2, phi_b(g1) >= v, phi_a(g2) < v' },

whatever laws in the bands: the shared g1 <= g2 is what ties the two
secrets to one population (bounding each secret's law separately would let
them come from two). skattr takes the supremum over the cells of a grid of
[0, 1]^2, rounded outward (a cell is feasible for g1 when phi_b at its upper
corner reaches v, its objective read at its lower corner; the reverse for
g2; g1 <= g2 as cells), by a suffix maximum. For the levels v_j of a grid of
[delta / 2, 1 - delta / 2], Q_a(v) - Q_b(v) <= Q_a(v_j+1) - Q_b(v_j) on
[v_j, v_j+1], so W bounds |Q_a - Q_b| on all but delta of the levels: the
laws are (W, delta)-close (Chen and Ohrimenko Def. 3.2), for every law in
the bands. NumPy's interpolated quantile lies between two adjacent order
statistics: side a is bounded by the upper one's law, side b by the lower's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from skattr._certificate import MethodStep
from skattr._persistence import persistable
from skattr.exceptions import NotCertifiableError
from skattr.laws._band import BandsLaw, GroupBand
from skattr.laws._base import Bound, secret_pairs
from skattr.laws._order import order_bracket

__all__ = ["OrderBandLaw", "order_band_closeness"]

#: Cells of the grid of [0, 1] each group's probability is rounded to.
_CELLS = 400
#: Levels of the grid of [delta / 2, 1 - delta / 2] the coupling is read at
#: (evenly spaced in the normal scale).
_LEVELS = 100
#: Most records whose order statistics' laws are computed here (each pair's
#: laws are (cells x records) matrices).
MAX_RECORDS = 20_000
#: Allowance for the float error of phi: feasibility is tested loosely.
_SLACK = 1e-9


def _dataset_phi(k: int, n: int, r: int, grid: np.ndarray) -> np.ndarray:
    """phi(p, q) = P(Bin(k, p) + Bin(n - k, q) > r) on grid x grid."""
    from scipy import stats

    j = np.arange(k + 1)
    pmf = stats.binom.pmf(j[None, :], k, grid[:, None])
    tail = stats.binom.sf((r - j)[:, None], n - k, grid[None, :])
    return pmf @ tail


def _distributional_phi(a: float, n: int, r: int, grid: np.ndarray
                        ) -> np.ndarray:
    """phi(p, q) = P(Bin(n, a p + (1 - a) q) > r) on grid x grid."""
    from scipy import stats

    share = np.clip(a * grid[:, None] + (1 - a) * grid[None, :], 0.0, 1.0)
    return stats.binom.sf(r, n, share)


def _suffix_max(values: np.ndarray) -> np.ndarray:
    """out[i, j] = max of values[i:, j:]."""
    out = np.maximum.accumulate(values[::-1], axis=0)[::-1]
    return np.maximum.accumulate(out[:, ::-1], axis=1)[:, ::-1]


def _largest_gap(phi_a, phi_b, x_min, y_max, levels) -> float:
    """Return the largest Q_a(v') - Q_b(v) over level brackets and cells.

    ``phi_a``/``phi_b`` are on the grid's (cells + 1)^2 corners; ``x_min``
    and ``y_max`` the objective's parts per cell (lower and upper corners).
    """
    reach_b = phi_b[1:, 1:] + _SLACK       # g1's cell: its upper corner
    below_a = phi_a[:-1, :-1] - _SLACK     # g2's cell: its lower corner
    worst = -math.inf
    for v, v_next in zip(levels[:-1], levels[1:], strict=True):
        ends = np.where(below_a < v_next, y_max, -np.inf)
        if not np.isfinite(ends).any():
            continue
        best = _suffix_max(ends)
        starts = reach_b >= v
        if starts.any():
            worst = max(worst, float(np.max((best - x_min)[starts])))
    return worst


def order_band_closeness(out: GroupBand, inside: GroupBand, low: float,
                         high: float, n: int, pairs, ranks: tuple[int, int],
                         privacy: str, delta: float) -> float:
    """Return W: the pairs' laws are (W, delta)-close for every law in the bands.

    ``ranks`` are the order statistics (from 0) the released quantile lies
    between (the same one twice when it is one); ``pairs`` the secret's
    property values (proportions in the group).
    """
    if privacy == "dataset" and n > MAX_RECORDS:
        raise NotCertifiableError(
            f"The laws of an order statistic of {n} records over the "
            f"reference's confidence bands are computed for up to "
            f"{MAX_RECORDS:,} records; pass theta=skattr.theta.Resample() to "
            "take the reference's records as the population (recorded).")
    grid = np.linspace(0.0, 1.0, _CELLS + 1)
    in_lo, _ = inside.quantiles(grid[:-1], low, high)
    out_lo, _ = out.quantiles(grid[:-1], low, high)
    in_hi = inside.upper_after(grid[1:], high)
    out_hi = out.upper_after(grid[1:], high)
    x_min = np.maximum(in_lo[:, None], out_lo[None, :])
    y_max = np.minimum(in_hi[:, None], out_hi[None, :])
    # Levels evenly spaced in the normal scale: an order statistic's law is
    # nearly normal, so each bracket [v_j, v_j+1] spans about as much of x.
    from scipy.special import ndtr, ndtri

    half = delta / 2
    levels = ndtr(np.linspace(ndtri(half), ndtri(1 - half), _LEVELS + 1))
    levels[0], levels[-1] = half, 1 - half
    below, above = ranks

    def phi(share, r):
        if privacy == "dataset":
            return _dataset_phi(int(round(share * n)), n, r, grid)
        return _distributional_phi(share, n, r, grid)

    worst = 0.0
    for a, b in pairs:
        for first, second in ((a, b), (b, a)):
            # Q_first(v') - Q_second(v): first's upper order statistic
            # against second's lower one.
            gap = _largest_gap(phi(first, above), phi(second, below), x_min,
                               y_max, levels)
            worst = max(worst, gap)
    if not math.isfinite(worst):
        raise NotCertifiableError(
            "The order statistic's distance over the confidence bands is not "
            "finite; declare a clipping range with bounds=.")
    return worst


@persistable
@dataclass(frozen=True, eq=False)
class OrderBandLaw(BandsLaw):
    """One median or quantile of a column, for every group law in the bands.

    Attributes
    ----------
    level : float
        The quantile's level (0.5: the median; NumPy's interpolation).

    The other attributes are :class:`~skattr.laws._band.BandsLaw`'s.
    """

    level: float = 0.5

    def w_infinity(self, n: int, privacy: str) -> Bound:
        # Every released value lies in the clipping range.
        if not math.isfinite(self.high - self.low):
            raise NotCertifiableError(
                "The quantile has no clipping range, so no almost-sure bound; "
                "declare bounds=.")
        return Bound(self.high - self.low, MethodStep.of("w-inf.range"),
                     self._assumptions(privacy))

    def closeness(self, n: int, privacy: str, delta: float, *,
                  progress=False, label: str = "") -> Bound:
        key = (int(n), privacy, float(delta))
        if key not in self._cache:
            ranks = order_bracket(n, self.level)
            self._cache[key] = max(
                order_band_closeness(
                    out, inside, self.low, self.high, n,
                    secret_pairs(secret, n, privacy,
                                 alternative="use privacy='distributional'"),
                    ranks, privacy, delta)
                for secret, (out, inside) in zip(self.secrets, self.bands,
                                                 strict=True))
        return Bound(self._cache[key],
                     MethodStep.of("closeness.order-band", level=self.level),
                     self._assumptions(privacy))
