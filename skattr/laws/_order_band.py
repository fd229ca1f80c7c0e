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

When the bands also bound the reference's spacings (an interval holding N
of a group's reference records has mass at least the floor of lag N - 1,
:meth:`GroupBand.mass_floor`), a second search rounds x and y to a grid of
the reference's values and adds g2 - g1 >= those floors: it excludes the
populations that are nearly flat over many records, where the two laws are
far apart. Both bounds hold; the smaller is taken, the first only where the
values have ties (``docs/population.md``).

A window of pairs (every two shares within w in a support) is searched
through its widest pairs only (:func:`widest_gap`): phi_k(p, q) is monotone
in the group's k at every (p, q), so every pair inside a widest pair (x, y)
is feasible only where the ends' largest phi (for g1) and least (for g2)
are, and one search on those two functions bounds them all. A window 0.2
wide over a support 0.2 wide is one search at any n, where its pairs are
(w n)^2 / 2.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from skattr._certificate import MethodStep
from skattr._kinds import OrderKind, register_law
from skattr._persistence import persistable
from skattr.exceptions import NotCertifiableError
from skattr.laws._band import BandsLaw, GroupBand, over_widest
from skattr.laws._base import Bound, secret_pairs
from skattr.laws._order import order_bracket

__all__ = ["GapSearch", "OrderBandLaw", "check_order_records", "count_phi",
           "order_band_closeness", "order_band_law", "order_phi", "widest_gap"]

#: Cells of the grid of [0, 1] each group's probability is rounded to.
_CELLS = 400
#: Levels of the grid of [delta / 2, 1 - delta / 2] the coupling is read at
#: (evenly spaced in the normal scale).
_LEVELS = 100
#: Records from which an order statistic's law is computed in a window of
#: its binomials' means (below, exactly as (cells x records) matrices), and
#: the most it is computed for.
WINDOWED_RECORDS, MAX_RECORDS = 20_000, 10_000_000
#: Standard deviations (of n / 4) each binomial is followed for, windowed.
_REACH = 12.0
#: Below this share of distinct values among the reference's records, the
#: grid of [0, 1]^2 is searched too (ties make the value grid coarse).
_DISTINCT = 0.9
#: Most points of the grid of values x and y are rounded to (with spacings).
_GRID = 600
#: Allowance for the float error of phi: feasibility is tested loosely.
_SLACK = 1e-9


def _dataset_phi(k: int, n: int, r: int, grid: np.ndarray) -> np.ndarray:
    """phi(p, q) = P(Bin(k, p) + Bin(n - k, q) > r) on grid x grid."""
    from scipy import stats

    j = np.arange(k + 1)
    pmf = stats.binom.pmf(j[None, :], k, grid[:, None])
    tail = stats.binom.sf((r - j)[:, None], n - k, grid[None, :])
    return pmf @ tail


def _windowed_phi(k: int, n: int, r: int, grid: np.ndarray) -> np.ndarray:
    """phi(p, q) on grid x grid for many records, within a proven error.

    Away from the strip |k p + (n - k) q - r| <= t, t = _REACH sqrt(n) / 2 +
    2, phi is 0 or 1 within Bernstein's exp(-t^2 / (2 (n / 4 + t / 3)));
    inside it, the sum over Bin(k, p)'s values within t of its mean (the
    rest, bounded alike, is dropped) of its pmf times Bin(n - k, q)'s
    survival function, read from a table per q over the values within t of
    that law's mean (1 below, 0 above, bounded alike). The bounds are below
    1e-20 for every n this is used for; ``_SLACK`` covers them.
    """
    from scipy import stats

    reach = _REACH * math.sqrt(n) / 2 + 2
    out = (k * grid[:, None] + (n - k) * grid[None, :] > r).astype(float)
    rest = n - k
    # Per q: Bin(n - k, q)'s survival function P(> t) on its window.
    starts = np.clip(np.floor(rest * grid - reach), 0, rest).astype(np.int64)
    width = int(2 * reach) + 3
    offsets = np.arange(width)
    values = np.minimum(starts[:, None] + offsets[None, :], rest)
    # P(Bin > t) = sf(t); below the window 1, above it 0. From the sf just
    # below the window, less the pmf's running sum (float error ~1e-16 a
    # term).
    below = stats.binom.sf(starts - 1, rest, grid)
    table = below[:, None] - np.cumsum(stats.binom.pmf(values, rest,
                                                       grid[:, None]), axis=1)
    table = np.clip(table, 0.0, 1.0)
    for i, p in enumerate(grid):
        lo_q = np.searchsorted(k * p + rest * grid, r - reach, side="left")
        hi_q = np.searchsorted(k * p + rest * grid, r + reach, side="right")
        if hi_q <= lo_q:
            continue
        first = int(max(0, math.floor(k * p - reach)))
        last = int(min(k, math.ceil(k * p + reach)))
        j = np.arange(first, last + 1)
        pmf = stats.binom.pmf(j, k, p)
        t = r - j                                    # P(Bin(n - k, q) > r - j)
        cols = np.arange(lo_q, hi_q)
        index = t[None, :] - starts[cols][:, None]
        inside = (index >= 0) & (index < width)
        tail = np.where(index < 0, 1.0, 0.0)
        tail[inside] = table[cols[:, None].repeat(j.size, 1)[inside],
                             index[inside]]
        out[i, cols] = tail @ pmf
    return out


def count_phi(k: int, total: int, r: int, grid: np.ndarray) -> np.ndarray:
    """phi(p, q) = P(Bin(k, p) + Bin(total - k, q) > r) on grid x grid."""
    if r < 0:
        return np.ones((grid.size, grid.size))
    if r >= total:
        return np.zeros((grid.size, grid.size))
    return _shared_phi(k, total, r, grid.tobytes())


@functools.lru_cache(maxsize=16)
def _shared_phi(k: int, total: int, r: int, grid: bytes) -> np.ndarray:
    """count_phi, computed once per process for its arguments (read-only).

    phi depends on (k, n, r) and the grid alone, not on the reference: every
    fit of a median of n records (each reference a test or a user draws, each
    refit) reads the same few, each ~0.1 s to compute.
    """
    cells = np.frombuffer(grid)
    phi_of = _dataset_phi if total <= WINDOWED_RECORDS else _windowed_phi
    out = phi_of(k, total, r, cells)
    out.flags.writeable = False
    return out


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


def _spaced_tables(inside: GroupBand, out: GroupBand, grid_x: np.ndarray):
    """Return what the spacings' search reads of the bands on ``grid_x``.

    Each group's distribution function bounds at the grid's values and the
    mass floors ``floors[c][i, j]`` of group c's records in (z_i+1, z_j] (0
    for j <= i, or one record at most), for every i and j at once: the same
    for every search of one column's bands (kept by :class:`GapSearch`).
    """
    bounds = [band.cdf_bounds(grid_x) for band in (inside, out)]
    counts = [np.searchsorted(band.values, grid_x, side="right")
              for band in (inside, out)]
    floors = []
    for c, band in ((0, inside), (1, out)):
        held = counts[c][None, :] - np.r_[counts[c][1:], 0][:, None]
        floors.append(np.where(held > 1, band.mass_floor(held), 0.0))
    return bounds, floors


def _largest_gap_spaced(phi_a, phi_b, inside: GroupBand, out: GroupBand,
                        grid_x: np.ndarray, levels, tables=None) -> float:
    """Return the largest Q_a(v') - Q_b(v), with the spacings' mass floors.

    x = Q_b(v) in a cell [z_i, z_i+1] of ``grid_x`` and y = x + d in [z_j,
    z_j+1]: then g1 in [l(z_i), u(z_i+1)], g2 >= l(z_j) and, the interval
    (z_i+1, z_j] lying in (x, y], g2 - g1 >= the mass floor of the group's
    reference records in it. Dropping g2 <= u(y) (a relaxation), every
    constraint tightens as j grows, so the largest feasible j is found by
    bisection; d <= z_j+1 - z_i. ``tables``: :func:`_spaced_tables` of the
    bands on ``grid_x``, when already computed.
    """
    cells = phi_a.shape[0] - 1
    reach = phi_b[1:, 1:] + _SLACK          # g1's cell: its upper corner
    level = np.searchsorted(levels, reach, side="right") - 1
    starts = level >= 0
    # The largest bracket [v_l, v_l+1] g1's cell reaches.
    ceiling = levels[np.clip(level, 0, levels.size - 2) + 1]
    below_a = phi_a - _SLACK                # g2: rounded down to a corner
    bounds, floors = tables or _spaced_tables(inside, out, grid_x)
    corners = np.arange(cells) / cells
    worst = -math.inf
    last = grid_x.size - 2

    def cells_of(c, i):
        low, up = bounds[c][0][i], bounds[c][1][i + 1]
        first = min(int(math.floor(low * cells)), cells - 1)
        return np.arange(first, max(first, min(int(math.floor(up * cells)),
                                               cells - 1)) + 1)

    for i in range(last + 1):
        if grid_x[-1] - grid_x[i] <= worst:
            break
        k_in, k_out = cells_of(0, i), cells_of(1, i)
        ok = starts[np.ix_(k_in, k_out)]
        if not ok.any():
            continue
        top = ceiling[np.ix_(k_in, k_out)]

        def feasible(j, i=i, k_in=k_in, k_out=k_out, ok=ok, top=top):
            index = []
            for c, k in ((0, k_in), (1, k_out)):
                need = np.maximum(bounds[c][0][j], corners[k] + floors[c][i, j])
                index.append(np.clip(np.floor(need * cells).astype(np.int64),
                                     0, cells))
            value = below_a[np.ix_(index[0], index[1])]
            return bool(np.any(ok & (value < top)))

        # Only a j whose d bound exceeds the largest found can change it:
        # start at the first such j (feasibility only falls as j grows).
        wider = np.flatnonzero(grid_x[i + 1:] - grid_x[i] > worst)
        if not wider.size:
            continue
        lo_j = i + int(wider[0])
        if not feasible(lo_j):
            continue
        hi_j = last
        if not feasible(hi_j):
            while hi_j - lo_j > 1:
                mid = (lo_j + hi_j) // 2
                if feasible(mid):
                    lo_j = mid
                else:
                    hi_j = mid
            hi_j = lo_j
        worst = max(worst, float(grid_x[hi_j + 1] - grid_x[i]))
    return worst


def _cell_objective(inside: GroupBand, out: GroupBand, grid, low, high):
    """Return x_min and y_max per cell of grid x grid (the first search's).

    x >= max_c Q_lo,c(g1_c) at g1's lower corner; y <= min_c Q_hi,c(g2_c+)
    at g2's upper corner.
    """
    x_min = np.maximum(inside.quantiles(grid[:-1], low, high)[0][:, None],
                       out.quantiles(grid[:-1], low, high)[0][None, :])
    y_max = np.minimum(inside.upper_after(grid[1:], high)[:, None],
                       out.upper_after(grid[1:], high)[None, :])
    return x_min, y_max


def _value_grid(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """Return the x grid: the distinct values (at most _GRID) and the range."""
    if values.size > _GRID:
        values = values[np.linspace(0, values.size - 1, _GRID).astype(np.int64)]
    return np.unique(np.concatenate([[low], values, [high]]))


class GapSearch:
    """The searches for the largest Q_A(v') - Q_B(v) over one secret's bands.

    A and B are variables whose distribution functions are phi_A(G_in(x),
    G_out(x)) and phi_B(...), nondecreasing in both; :meth:`gap` bounds the
    gap between their quantiles at each bracket of ``levels``, whatever
    shared laws in the bands, by the grid's search (where the values have
    ties, or the bands bound no spacings) and the spacings' (where they do):
    both hold, the smaller is taken.
    """

    def __init__(self, out: GroupBand, inside: GroupBand, low: float,
                 high: float):
        self.out, self.inside = out, inside
        self.grid = np.linspace(0.0, 1.0, _CELLS + 1)
        pooled = np.unique(np.concatenate([inside.values, out.values]))
        self.spaced = inside.lags is not None and out.lags is not None
        self.grid_x = _value_grid(pooled, low, high) if self.spaced else None
        # The bands' tables on grid_x, the same for every search (computed
        # at the first).
        self._tables = None
        # The grid of [0, 1]^2 pays off where the values have many ties (the
        # value grid then rounds y up by a whole step); on a column of nearly
        # distinct values the spacings' search is the smaller (measured), and
        # taking it alone is as valid.
        records = inside.values.size + out.values.size
        self.cornered = (not self.spaced
                         or pooled.size < _DISTINCT * records) and (
            _cell_objective(inside, out, self.grid, low, high))

    def gap(self, phi_a: np.ndarray, phi_b: np.ndarray, levels) -> float:
        """Return the largest Q_A(v_j+1) - Q_B(v_j) over the brackets."""
        gap = (_largest_gap(phi_a, phi_b, *self.cornered, levels)
               if self.cornered else math.inf)
        if self.spaced:
            if self._tables is None:
                self._tables = _spaced_tables(self.inside, self.out,
                                              self.grid_x)
            gap = min(gap, _largest_gap_spaced(phi_a, phi_b, self.inside,
                                               self.out, self.grid_x, levels,
                                               self._tables))
        return gap


def order_phi(n: int, privacy: str, grid: np.ndarray):
    """Return phi(share, r): the r-th order statistic's law as a function of G.

    On ``grid`` x ``grid`` (G_in, G_out), for a dataset of n records whose
    share in the group is ``share`` (the last few kept: a window's widest
    pairs each read their two ends).
    """
    @functools.lru_cache(maxsize=16)
    def phi(share, r):
        if privacy == "dataset":
            return count_phi(int(round(share * n)), n, r, grid)
        return _distributional_phi(share, n, r, grid)

    return phi


def widest_gap(search: GapSearch, phi, low: float, high: float, inner: bool,
               ranks: tuple[int, int], levels) -> float:
    """Return the gap of a widest pair and of every pair inside it.

    Without pairs inside (``inner`` False), the pair's own two gaps: its
    upper order statistic's law (``ranks[1]``) at one share against its
    lower one's (``ranks[0]``) at the other, each way. With pairs inside,
    one search bounds them all: phi_k(p, q) = P(Bin(k, p) + Bin(n - k, q) >
    r) is monotone in k for every (p, q) (moving one record into the group
    changes it by (p - q) P(the other n - 1 records have exactly r at most
    x), of the sign of p - q whatever k; under distributional privacy phi
    is increasing in the share a p + (1 - a) q, linear in a), so every share
    s between the ends has phi_s between the ends' least and largest, cell
    by cell. The search's g1 needs phi of the lower order statistic at least
    v, and its g2 phi of the upper one below v': every pair inside, either
    way, is feasible only where the ends' largest (for g1) and least (for
    g2) are, and one search on those two functions is the largest of the
    four searches over the ends' combinations, each pair inside taken
    either way (the combinations of an end with itself bound the pairs of
    nearby shares). The float error of phi is within the search's
    allowance for it either way.
    """
    below, above = ranks
    if not inner:
        return max(search.gap(phi(low, above), phi(high, below), levels),
                   search.gap(phi(high, above), phi(low, below), levels))
    return search.gap(np.minimum(phi(low, above), phi(high, above)),
                      np.maximum(phi(low, below), phi(high, below)), levels)


def check_order_records(n: int, privacy: str) -> None:
    """Refuse order statistics of more records than their laws are computed for."""
    if privacy == "dataset" and n > MAX_RECORDS:
        raise NotCertifiableError(
            f"The laws of an order statistic of {n} records over the "
            f"reference's confidence bands are computed for up to "
            f"{MAX_RECORDS:,} records; pass theta=skattr.theta.Resample() to "
            "take the reference's records as the population (recorded).")


def order_band_closeness(out: GroupBand, inside: GroupBand, low: float,
                         high: float, n: int, pairs, ranks: tuple[int, int],
                         privacy: str, delta: float, *, progress=False,
                         label: str = "") -> float:
    """Return W: the pairs' laws are (W, delta)-close for every law in the bands.

    ``ranks`` are the order statistics (from 0) the released quantile lies
    between (the same one twice when it is one); ``pairs`` the secret's
    property values (proportions in the group).

    Notes
    -----
    Only the widest pairs are searched (:func:`widest_gap`): a window of
    pairs costs about one pair per distinct widest pair, not one per pair
    (a window 0.2 wide over a support 0.2 wide is one search, where its
    ~11,000 pairs at n = 750 took hours).
    """
    check_order_records(n, privacy)
    search = GapSearch(out, inside, low, high)
    # Levels evenly spaced in the normal scale: an order statistic's law is
    # nearly normal, so each bracket [v_j, v_j+1] spans about as much of x.
    from scipy.special import ndtr, ndtri

    half = delta / 2
    levels = ndtr(np.linspace(ndtri(half), ndtri(1 - half), _LEVELS + 1))
    levels[0], levels[-1] = half, 1 - half
    phi = order_phi(n, privacy, search.grid)
    worst = 0.0
    for x, y, inner in over_widest(pairs, what="a quantile's distance",
                                   progress=progress, label=label):
        # Q_first(v') - Q_second(v): first's upper order statistic against
        # second's lower one. Both bounds hold; the smaller is taken.
        worst = max(worst, widest_gap(search, phi, x, y, inner, ranks,
                                      levels))
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
                    ranks, privacy, delta, progress=progress, label=label)
                for secret, (out, inside) in zip(self.secrets, self.bands,
                                                 strict=True))
        return Bound(self._cache[key],
                     MethodStep.of("closeness.order-band", level=self.level),
                     self._assumptions(privacy))


@register_law("band", OrderKind)
def order_band_law(stat, fields: dict) -> OrderBandLaw:
    """Return the band law of one median or quantile, at its one level."""
    (level,) = stat.kind.levels(stat)
    return OrderBandLaw(level=float(level), **fields)
