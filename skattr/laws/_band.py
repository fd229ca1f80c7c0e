"""Sums and means of a bounded column over the reference's confidence bands.

A group's m reference records are X_(i) = Q(V_(i)), Q the population's
quantile function (clipped to [lo, hi]) and V_(1) <= ... <= V_(m) the order
statistics of m uniforms, whatever the law (continuous or not). With
probability at least 1 - alpha every V_(i) lies in [a_i, b_i] at once
(:class:`GroupBand`): the Dvoretzky-Kiefer-Wolfowitz band of the uniforms
(Massart's constant, at alpha / 2), i/m - eps <= V_(i) <= (i - 1)/m + eps,
intersected with each V_(i)'s Beta(i, m - i + 1) interval at alpha / 4m on
each side (Bonferroni over the m ranks, at alpha / 2): the first is the
narrower in the middle, the second in the tails. Then, Q being
nondecreasing, Q(u) >= X_(i) whenever u >= b_i and Q(u) <= X_(i) whenever
u <= a_i: every group law the band allows has its quantile function between
Q_lo(u) = the largest X_(i) with b_i <= u (lo if none) and Q_hi(u) = the
smallest X_(i) with a_i >= u (hi if none).

Under the swap coupling the records whose group differs between two
secrets are the only ones whose values may differ; a moved record's two
values, coupled by one uniform u (its quantile in each group), differ by at
most U(u) = max(Q_hi,in(u) - Q_lo,out(u), Q_hi,out(u) - Q_lo,in(u), 0),
whatever laws in the bands. So the sum moves by at most the sum of the moved
records' U, a law computed here (rounded up to a grid, convolved by FFT):
a :class:`~skattr.laws._distances.CoupledDistances` the coupled
calibrations read (``docs/population.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from skattr._certificate import Assumption, MethodStep
from skattr._kinds import Mean, Sum, register_law
from skattr._persistence import persistable
from skattr.exceptions import NotCertifiableError
from skattr.laws._base import Bound, StatisticLaw, secret_pairs, widest_pairs
from skattr.laws._distances import CoupledDistances, least_certified
from skattr.utils._progress import progress_bar
from skattr.utils._work import TimeGuard, work_seconds

__all__ = ["BandLaw", "BandsLaw", "GroupBand", "band_law", "dkw_radius",
           "inner_moves",
           "over_widest", "pair_moves", "power", "record_distance",
           "summed_distances"]

#: Seconds before a loop over a secret's widest pairs shows a progress bar.
_BAR_DELAY = 3.0

#: Most atoms of the law of the moved records' summed distance (the grid's
#: steps per record shrink as more records move).
_ATOMS = 200_000
#: Mass of each record's distance its float break points may misplace.
_MISPLACED = 1e-11
#: Steps of the grid a record's distance is rounded up to, at most and least.
_MOST_STEPS, _LEAST_STEPS = 2_000, 16
#: Ranks whose Beta intervals are computed exactly at each end of a group;
#: between them, on a geometric grid of about as many, each rank takes its
#: grid neighbours' (the wider: the intervals move monotonically with the rank).
_EXACT_RANKS = 400
#: Lags of the spacings' lower bounds (a geometric grid from 1 to m - 1).
_SPACING_LAGS = 48
#: Relative excess over the statistic's range width a summed distance may
#: have before the width is certified instead (the float error of a grid's
#: steps summed back to the width).
_CAP_SLACK = 1e-9


def dkw_radius(records: int, alpha: float) -> float:
    """Return eps with P(sup |F_m - G| > eps) <= alpha (Massart's constant).

    Examples
    --------
    >>> from skattr.laws._band import dkw_radius
    >>> round(dkw_radius(1000, 5e-4), 4)
    0.0644
    """
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * records))


def _rank_grid(m: int) -> np.ndarray:
    """Ranks 1..m whose Beta intervals are computed: every one near the ends."""
    if m <= 4 * _EXACT_RANKS:
        return np.arange(1, m + 1)
    ends = np.arange(1, _EXACT_RANKS + 1)
    middle = np.geomspace(_EXACT_RANKS, m / 2, _EXACT_RANKS)
    half = np.unique(np.concatenate([ends, np.round(middle)])).astype(np.int64)
    return np.unique(np.concatenate([half, m + 1 - half, [m // 2, m // 2 + 1]]))


@persistable
@dataclass(frozen=True, eq=False)
class GroupBand:
    """One group's confidence band: bounds on its records' uniform ranks.

    Attributes
    ----------
    values : ndarray
        The group's (clipped) reference values, sorted.
    below, above : ndarray
        a_i and b_i: with the band's confidence, every V_(i) in [a_i, b_i].
    radius : float
        The Dvoretzky-Kiefer-Wolfowitz half of it (the band's width in the
        middle).
    """

    values: np.ndarray
    below: np.ndarray
    above: np.ndarray
    radius: float
    lags: np.ndarray | None = None
    floors: np.ndarray | None = None

    @classmethod
    def of(cls, values, alpha: float, *, spacings: bool = False) -> GroupBand:
        """Return the band that holds with probability at least 1 - alpha.

        Examples
        --------
        >>> import numpy as np
        >>> from skattr.laws._band import GroupBand
        >>> band = GroupBand.of(np.arange(1000.0), 1e-3)
        >>> round(band.radius, 4)   # the DKW half, at alpha / 2
        0.0644
        >>> bool(band.above[0] < 0.02)   # far narrower at the ends
        True
        """
        from scipy.special import betaincinv

        values = np.sort(np.asarray(values, dtype=float))
        m = values.size
        lags = floors = None
        if spacings and m > 2:
            # Half of alpha for the spacings: V_(i+s) - V_(i) ~ Beta(s, m - s
            # + 1) for each of the m - s pairs at lag s, Bonferroni over
            # pairs and over a geometric grid of lags.
            alpha = alpha / 2
            lags = np.unique(np.round(np.geomspace(
                1, m - 1, _SPACING_LAGS)).astype(np.int64))
            share = alpha / (lags.size * (m - lags))
            floors = betaincinv(lags, m - lags + 1, share) * (1 - 1e-9)
        radius = dkw_radius(m, alpha / 2)
        ranks = np.arange(1, m + 1)
        below = ranks / m - radius
        above = (ranks - 1) / m + radius
        grid = _rank_grid(m)
        tail = alpha / (4 * m)
        low = betaincinv(grid, m - grid + 1, tail)
        high = betaincinv(grid, m - grid + 1, 1 - tail)
        # A rank between grid points takes the previous point's lower bound
        # and the next one's upper bound (both grow with the rank), and the
        # inverse's float error is allowed for.
        low = low[np.searchsorted(grid, ranks, side="right") - 1] * (1 - 1e-9)
        high = high[np.searchsorted(grid, ranks, side="left")] * (1 + 1e-9)
        below = np.clip(np.maximum(below, low), 0.0, 1.0)
        above = np.clip(np.minimum(above, high), 0.0, 1.0)
        return cls(values=values, below=below, above=above, radius=radius,
                   lags=lags, floors=floors)

    def cdf_bounds(self, x) -> tuple[np.ndarray, np.ndarray]:
        """Return bounds on G(x) for every law in the band (step functions).

        G(x) >= V_(N) >= a_N with N the records at most x, and G(x) <=
        V_(N+1) <= b_N+1 (X_(N+1) > x is Q(V_(N+1))).
        """
        m = self.values.size
        count = np.searchsorted(self.values, x, side="right")
        lower = np.where(count == 0, 0.0, self.below[np.clip(count - 1, 0,
                                                             m - 1)])
        upper = np.where(count >= m, 1.0, self.above[np.clip(count, 0, m - 1)])
        return lower, upper

    def mass_floor(self, records) -> np.ndarray:
        """Return a lower bound on G's mass over an interval holding ``records``.

        The interval runs from the first of them to the last, so its mass is
        at least V_(i+s) - V_(i) with s = records - 1: the spacing bound of
        the largest lag on the grid at most s (0 without spacings).
        """
        records = np.asarray(records)
        if self.lags is None:
            return np.zeros(records.shape)
        at = np.searchsorted(self.lags, records - 1, side="right") - 1
        return np.where(at >= 0, self.floors[np.clip(at, 0, None)], 0.0)

    def quantiles(self, levels, lo: float, hi: float):
        """Return Q_lo(u) and Q_hi(u): every law in the band lies between them."""
        m = self.values.size
        k = np.searchsorted(self.above, levels, side="right")
        q_lo = np.where(k == 0, lo, self.values[np.clip(k, 1, m) - 1])
        j = np.searchsorted(self.below, levels, side="left")
        q_hi = np.where(j >= m, hi, self.values[np.clip(j, 0, m - 1)])
        return q_lo, q_hi


    def cells(self, lo: float, hi: float):
        """Return the u-cells the envelopes are constant on: (Q_lo, Q_hi, length).

        The envelopes change only at the band's a_i and b_i.
        """
        cuts = np.unique(np.clip(np.concatenate(
            [[0.0, 1.0], self.below, self.above]), 0.0, 1.0))
        lengths = np.diff(cuts)
        keep = lengths > 0
        q_lo, q_hi = self.quantiles(0.5 * (cuts[:-1] + cuts[1:])[keep], lo, hi)
        return q_lo, q_hi, lengths[keep]

    def upper_after(self, levels, hi: float) -> np.ndarray:
        """Return Q_hi(u+), the right limit: the least X_(i) with a_i > u."""
        m = self.values.size
        j = np.searchsorted(self.below, levels, side="right")
        return np.where(j >= m, hi, self.values[np.clip(j, 0, m - 1)])


def pair_moves(secret, n: int, privacy: str) -> list[tuple[int, float]]:
    """Return each distinct (records that may move, each one's chance) of the pairs.

    Dataset privacy: ceil(|a - b| n) records change group, surely;
    distributional: each of the n records, with chance |a - b|.
    """
    found = set()
    for a, b in secret_pairs(secret, n, privacy):
        moved = abs(float(a) - float(b))
        found.add((math.ceil(moved * n - 1e-9), 1.0) if privacy == "dataset"
                  else (n, moved))
    return sorted(found)


def over_widest(pairs, *, what: str, progress=False, label: str = ""):
    """Yield each widest pair of ``pairs`` (low, high, inner), watched.

    :func:`~skattr.laws._base.widest_pairs`; a progress bar appears once the
    loop has taken a few seconds (``progress``, under ``label``), and the
    loop is refused (:class:`~skattr.exceptions.WorkLimitError`) as soon as
    its first pairs project it past ``SKATTR_MAX_SECONDS`` (300 s by default).
    """
    widest = widest_pairs(pairs)
    total = int(widest.low.size)
    guard = TimeGuard(
        total, work_seconds(),
        what=f"bounding {what} over {total:,} widest pairs of the secret",
        cheaper=("state a window that spans more of its support (fewer "
                 "widest pairs), fewer pairs, or raise the limit "
                 "(SKATTR_MAX_SECONDS, 'none' for no limit)"))
    with progress_bar(progress, total=total, desc=label or what, unit="pair",
                      delay=_BAR_DELAY) as bar:
        for low, high, inner in zip(widest.low.tolist(), widest.high.tolist(),
                                    widest.inner.tolist(), strict=True):
            yield low, high, inner
            bar.update(1)
            guard.advance(1)


def inner_moves(pairs, low: float, high: float, n: int, privacy: str, *,
                starts: tuple[float, float] | None = None
                ) -> list[tuple[int, float]]:
    """Return the distinct (records moved, each one's chance) of pairs in [low, high].

    As :func:`pair_moves` counts them, for the pairs (either way) whose two
    shares lie in [low, high] (and whose lower share lies in ``starts``).
    """
    ends = np.sort(np.asarray(list(pairs), dtype=float).reshape(-1, 2), axis=1)
    inside = (ends[:, 0] >= low) & (ends[:, 1] <= high)
    if starts is not None:
        inside &= (ends[:, 0] >= starts[0]) & (ends[:, 0] <= starts[1])
    gaps = np.unique(ends[inside, 1] - ends[inside, 0])
    gaps = gaps[gaps > 0]
    if privacy == "dataset":
        return sorted({(math.ceil(g * n - 1e-9), 1.0) for g in gaps.tolist()})
    return [(n, g) for g in gaps.tolist()]


def record_distance(out: GroupBand, inside: GroupBand, lo, hi):
    """Return the law of U(u), u uniform: (distances, probabilities).

    The envelopes change only at the bands' a_i and b_i: between those break
    points they are constant.
    """
    cuts = np.unique(np.clip(np.concatenate(
        [[0.0, 1.0], out.below, out.above, inside.below, inside.above]),
        0.0, 1.0))
    lengths = np.diff(cuts)
    keep = lengths > 0
    mids = 0.5 * (cuts[:-1] + cuts[1:])[keep]
    out_lo, out_hi = out.quantiles(mids, lo, hi)
    in_lo, in_hi = inside.quantiles(mids, lo, hi)
    gap = np.maximum(np.maximum(in_hi - out_lo, out_hi - in_lo), 0.0)
    return gap, lengths[keep]


def _chernoff_dominating(gap, probs, copies: int, move: float, span: float,
                         weight: float) -> CoupledDistances:
    """Return a law stochastically larger than the sum of ``copies`` distances.

    For every t and lam > 0, P(S >= t) <= exp(copies K(lam) - lam t)
    (Chernoff), K the log moment generating function of one record's
    distance (0 with chance 1 - ``move``). T(t), the least of these over a
    grid of lam, is a valid bound and falls with t. The law S' with
    P(S' >= t_j) = T(t_(j-1)) on a grid t_0 < ... < t_K = the largest sum
    then has P(S' > x) >= P(S > x) for every x, so it bounds every
    increasing function of the distance (a W, a Gaussian delta). The grid
    is geometric above the mean, where the tail lies. As for the FFT's law,
    1e-11 of each record's mass (what its float break points may misplace)
    is put at the largest distance, ``span``; the sum is computed in units
    of ``span``.
    """
    from scipy.special import logsumexp

    keep = probs > 0
    gap = np.asarray(gap, dtype=float)[keep]
    probs = np.asarray(probs, dtype=float)[keep]
    if span <= 0.0 or move == 0.0 or copies == 0 or not np.any(gap > 0):
        return CoupledDistances(distances=np.zeros(1), probs=np.ones(1),
                                records=int(copies), gap=float(move),
                                coupling="swap", largest=0.0)
    if np.any(gap > span * (1 + 1e-12)):
        # A record's distance lies in the clipping range (fail closed).
        raise NotCertifiableError(
            "A record's coupled distance exceeds its clipping range; nothing "
            "is certified.")
    unit = np.append(np.minimum(gap / span, 1.0), 1.0)
    mass = np.append(probs * (1.0 - _MISPLACED), _MISPLACED)
    mass = mass / mass.sum()
    first = move * float(unit @ mass)
    second = move * float(unit ** 2 @ mass)
    mean = copies * first
    sd = math.sqrt(max(copies * (second - first ** 2), 0.0))
    largest = float(copies)                      # every record at span
    lams = np.geomspace(1e-7, 1e3, 1_200)
    one = logsumexp(lams[:, None] * unit[None, :], b=mass[None, :], axis=1)
    if move < 1.0:
        one = np.logaddexp(math.log1p(-move), math.log(move) + one)
    start = max(1e-3 * sd, 1e-9 * largest)
    grid = mean + np.geomspace(start, max(largest - mean, 2 * start), 3_000)
    grid = np.minimum(grid, largest)
    tail = np.ones(grid.size)
    for chunk in range(0, grid.size, 500):
        t = grid[chunk:chunk + 500, None]
        tail[chunk:chunk + 500] = np.exp(np.minimum(
            0.0, np.min(copies * one[None, :] - lams[None, :] * t, axis=1)))
    tail = np.minimum.accumulate(tail)
    at_least = np.concatenate([[1.0], tail[:-1]])      # P(S' >= t_j)
    law = at_least - np.concatenate([at_least[1:], [0.0]])
    keep = law > 1e-300
    return CoupledDistances(distances=weight * span * grid[keep],
                            probs=law[keep], records=int(copies),
                            gap=float(move), coupling="swap",
                            largest=float(weight * span * largest))


def summed_distances(gap, probs, copies: int, move: float, span: float,
                     weight: float) -> tuple[CoupledDistances, ...]:
    """Return laws of the sum of ``copies`` records' distances: alternatives.

    Each record moves with probability ``move`` (1 under dataset privacy)
    and then its distance has the law (gap, probs). The FFT's law: distances
    rounded up to a grid of ``span / steps``, the sum's law an FFT power,
    and the mass its float error may misplace counted as infinite (while that
    mass is below 1e-4). Chernoff's law bounds the sum from above
    (:func:`_chernoff_dominating`); it is given too wherever the FFT's
    infinite mass exceeds 1e-7 (about a thousand moved records), so that a
    delta below that mass still finds a finite W (a smaller delta with fewer
    records falls back on the pure-epsilon bound: more noise, never less).
    Every bound takes the least of the alternatives.
    """
    steps = int(np.clip(_ATOMS // max(copies, 1), _LEAST_STEPS, _MOST_STEPS))
    step = span / steps if span > 0 else 1.0
    size = copies * steps + 1
    fft = 1 << int(math.ceil(math.log2(size)))
    # The power's relative error grows with the exponent, the transforms'
    # with their length: ten times that, on every atom; and the mass of u a
    # record's float break points may misplace (1e-11 a record).
    slack = (10.0 * size * (copies + math.log2(fft)) * 2.0 ** -52
             + copies * _MISPLACED + 1e-12)
    laws = ()
    if slack > 1e-7:
        laws += (_chernoff_dominating(gap, probs, copies, move, span, weight),)
    if slack >= 1e-4:
        return laws
    cells = np.minimum(np.ceil(gap / step), steps).astype(np.int64)
    one = np.bincount(cells, weights=probs, minlength=steps + 1)
    one = one * move
    one[0] += 1.0 - move
    law = np.fft.irfft(power(np.fft.rfft(one, fft), copies), fft)[:size]
    law = np.clip(law, 0.0, None)
    law = law / law.sum() * (1.0 - slack)
    # Atoms below 1e-20 (the FFT's float noise, mostly) join the mass counted
    # at infinite distance: a larger bound, and far fewer atoms to calibrate.
    keep = law > 1e-20
    # Every record's distance is at most its largest cell, whatever the FFT.
    largest = weight * step * copies * int(cells.max(initial=0)) if move else 0.0
    return (CoupledDistances(distances=weight * step * np.flatnonzero(keep),
                             probs=law[keep], records=int(copies),
                             gap=float(move), coupling="swap",
                             largest=float(largest)), *laws)


def power(z: np.ndarray, exponent: int) -> np.ndarray:
    """Return ``z ** exponent`` by squaring (a few products, not exp and log).

    NumPy raises a complex array to an integer power above 100 or so through
    its logarithm: 40 ms on 2^18 values at 150, against 8 ms for the eight
    squarings and products here, which agree to 1e-14.
    """
    result, base = None, z
    while exponent:
        if exponent & 1:
            result = base.copy() if result is None else result * base
        exponent >>= 1
        if exponent:
            base = base * base
    return np.ones_like(z) if result is None else result


@persistable
@dataclass(frozen=True, eq=False)
class BandsLaw(StatisticLaw):
    """What the laws over the groups' confidence bands share.

    Attributes
    ----------
    bands : tuple
        Per secret, ``(out, inside)``: the :class:`GroupBand` of its group's
        complement and of its group.
    low, high : float
        The clipping range: every released value lies in it.
    secrets : tuple of Secret
    query : Query or Statistic
    """

    kind: ClassVar[str] = "box"

    bands: tuple
    low: float
    high: float
    secrets: tuple
    query: object
    description: str = ""
    assumptions: tuple = ()
    reads_reference: bool = True
    states_law: bool = False
    reference_sizes: tuple | None = None
    source: object = field(default=None, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False,
                         compare=False)

    def __post_init__(self):
        if len(self.bands) != len(self.secrets):
            raise ValueError(f"{type(self).__name__} needs one band per secret.")

    def _assumptions(self, privacy: str) -> tuple:
        return (Assumption.of("records.independent", reads="population",
                              privacy=privacy), *self.assumptions)


@persistable
@dataclass(frozen=True, eq=False)
class BandLaw(BandsLaw):
    """The sum or mean of a bounded column, for every group law in the bands.

    Or any statistic of one column whose kind gives its weight c(n)
    (:meth:`~skattr._kinds.StatisticKind.record_weight`): one record's
    value moving by d moves it by c(n) d at most, whatever the others, so
    the moved records' distances, summed and weighted c(n), bound its move
    under the swap coupling as they bound a mean's (w(n) = 1 / n).

    Notes
    -----
    The summed distances are capped at the width of the statistic's range
    (its kind's ``output_range`` on n records of the clipping range: high -
    low for a mean or a trimmed mean, n (high - low) for a sum). The two
    coupled values of the statistic are its values on two datasets of n
    records in the clipping range, so both lie in that range and their
    distance is at most its width, whatever the coupling: min(S, width) is
    stochastically larger than the distance whenever S is, and it bounds
    W-infinity and (W, delta)-closeness (the least w with P(min(S, width)
    > w) <= delta is the least of S's and the width). A mean's or a sum's S
    never exceeds the width (at most n records move, each by at most high -
    low, weighted 1 / n or 1); a trimmed mean's may (its weight 1 / (n -
    2g) exceeds 1 / n), and there the width is certified
    (``"w-inf.range"``). A kind without a range (None, or not finite) is
    not capped. The Gaussian calibration through the coupling
    (:meth:`coupled_distances`) reads the uncapped law: valid, if wider. A
    delta below what the laws of S resolve (about 1e-12) is still refused,
    as a mean's is, though the width would certify it.
    """

    coupled: ClassVar[bool] = True

    @property
    def statement(self) -> Assumption:
        """What the band law assumes, as a Gaussian calibration records it."""
        return Assumption.of("records.independent", reads="population",
                             privacy="dataset")

    @staticmethod
    def _worst(secret, n: int, privacy: str) -> tuple[int, float]:
        """Return the records that may move and each one's chance (worst pair).

        The most moving records are the worst for summed distances, which
        are never negative.
        """
        return max(pair_moves(secret, n, privacy), key=lambda c: c[0] * c[1],
                   default=(0, 0.0))

    def coupled_distances(self, n: int, privacy: str, *,
                          delta: float | None = None) -> list[tuple]:
        """Return, per secret, the swap coupling's distance law (worst pair).

        ``delta`` is accepted for the box law's signature (one law here).
        """
        key = (int(n), privacy)
        if key not in self._cache:
            laws = []
            for secret, (out, inside) in zip(self.secrets, self.bands,
                                             strict=True):
                copies, move = self._worst(secret, n, privacy)
                gap, probs = record_distance(out, inside, self.low, self.high)
                laws.append(summed_distances(gap, probs, copies, move,
                                             self.high - self.low,
                                             self._weight(n)))
            self._cache[key] = laws
        return self._cache[key]

    def _weight(self, n: int) -> float:
        """Return c(n), the statistic's weight of a moved record's distance."""
        weight = self.query.kind.record_weight(self.query, n)
        if weight is None or not 0 < weight < math.inf:
            raise NotCertifiableError(
                f"The {self.query.statistic} gives no weight of a record's "
                f"move on {n} records, so the band law bounds no move of it.")
        return weight

    def _cap(self, n: int) -> float:
        """Return the width of the statistic's range on n records (inf if none).

        Its kind's ``output_range`` of the clipping range: every value of
        the statistic on n clipped records lies in it.
        """
        found = self.query.kind.output_range(self.query, self.low, self.high, n)
        if found is None:
            return math.inf
        width = float(found[1]) - float(found[0])
        return width if 0.0 <= width < math.inf else math.inf

    def _capped(self, value: float, n: int, step: MethodStep,
                privacy: str) -> Bound:
        """Return the bound ``value`` (made by ``step``), or the range's width.

        The width where it is smaller (beyond the float error of the grid's
        steps, so that a mean's or a sum's bound, at most the width, stays
        as computed).
        """
        cap = self._cap(n)
        if value > cap * (1 + _CAP_SLACK):
            return Bound(cap, MethodStep.of("w-inf.range"),
                         self._assumptions(privacy))
        return Bound(value, step, self._assumptions(privacy))

    def _summed(self, n: int) -> dict:
        """Return the weight a band step records: none for a mean's or a sum's.

        A mean weighs a record's gap 1 / n, a sum 1; another kind's weight
        (a trimmed mean's 1 / (n - 2g)) is recorded with the step.
        """
        weight = self._weight(n)
        return {} if weight in (1.0, 1.0 / n) else {"weight": float(weight)}

    @staticmethod
    def _widest(per_pair) -> CoupledDistances:
        return max((law for laws in per_pair for law in laws),
                   key=lambda law: (law.records * law.gap, law.records))

    def coupling_step(self, per_pair) -> MethodStep:
        """How a Gaussian calibration through the coupling is recorded."""
        return MethodStep.of("coupling.gaussian-noise.band",
                             records=self._widest(per_pair).records)

    def w_infinity(self, n: int, privacy: str) -> Bound:
        """Return the moved records' largest summed distance, capped (Notes)."""
        per_pair = self.coupled_distances(n, privacy)
        weighted = self._summed(n)
        step = (MethodStep.of("w-inf.band.weighted", **weighted) if weighted
                else MethodStep.of("w-inf.band"))
        return self._capped(
            max(min(law.largest for law in laws) for laws in per_pair), n,
            step, privacy)

    def closeness(self, n: int, privacy: str, delta: float, *,
                  progress=False, label: str = "") -> Bound:
        """Return the summed distance's upper delta-quantile, capped (Notes)."""
        per_pair = self.coupled_distances(n, privacy)
        records = self._widest(per_pair).records
        weighted = self._summed(n)
        step = (MethodStep.of("closeness.band.weighted", records=records,
                              **weighted) if weighted
                else MethodStep.of("closeness.band", records=records))
        return self._capped(
            max(least_certified(laws, lambda law: law.closeness(delta))
                for laws in per_pair), n, step, privacy)


@register_law("band", Sum, Mean)
def band_law(stat, fields: dict) -> BandLaw:
    """Return the band law of one sum or mean (``fields``: a band law's)."""
    return BandLaw(**fields)
