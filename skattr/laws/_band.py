"""Sums and means of a bounded column over the reference's confidence bands.

Each group's distribution function G_c lies, with probability at least
1 - alpha / 2 over its m_c reference records, within eps_c of their
empirical one (Dvoretzky-Kiefer-Wolfowitz with Massart's constant:
P(sup |F_m - G| > eps) <= 2 exp(-2 m eps^2)); the clipping range [lo, hi]
bounds every (clipped) value. For every G in the band its quantile function
lies between those of the band's two edges, Q_lo (the upper edge's, which
puts eps of mass at lo) and Q_hi (the lower edge's, eps at hi).

Under the swap coupling the records whose group differs between two
secrets are the only ones whose values may differ; a moved record's two
values, coupled by one uniform u (its quantile in each group), differ by at
most U(u) = max(Q_hi,in(u) - Q_lo,out(u), Q_hi,out(u) - Q_lo,in(u), 0),
whatever G in the bands. So the sum moves by at most the sum of the moved
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
from skattr._persistence import persistable
from skattr.exceptions import NotCertifiableError
from skattr.laws._base import Bound, StatisticLaw, secret_pairs
from skattr.laws._distances import CoupledDistances

__all__ = ["BandLaw", "dkw_radius", "record_distance", "summed_distance"]

#: Most atoms of the law of the moved records' summed distance (the grid's
#: steps per record shrink as more records move).
_ATOMS = 200_000
#: Steps of the grid a record's distance is rounded up to, at most and least.
_MOST_STEPS, _LEAST_STEPS = 2_000, 16


def dkw_radius(records: int, alpha: float) -> float:
    """Return eps with P(sup |F_m - G| > eps) <= alpha (Massart's constant).

    Examples
    --------
    >>> from skattr.laws._band import dkw_radius
    >>> round(dkw_radius(1000, 5e-4), 4)
    0.0644
    """
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * records))


def _envelope(values: np.ndarray, eps: float, lo: float, hi: float,
              levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return Q_lo(u) and Q_hi(u): the quantiles of the band's two edges."""
    m = values.size
    # Q_lo: the least x with min(1, F_m(x) + eps) >= u; lo below eps.
    rank = np.ceil(m * (levels - eps) - 1e-12).astype(np.int64)
    q_lo = np.where(rank <= 0, lo, values[np.clip(rank, 1, m) - 1])
    # Q_hi: the least x with F_m(x) - eps >= u; hi when that needs more than 1.
    # Rounded toward more distance: Q_lo down, Q_hi up.
    rank = np.ceil(m * (levels + eps) + 1e-12).astype(np.int64)
    q_hi = np.where(rank > m, hi, values[np.clip(rank, 1, m) - 1])
    return q_lo, q_hi


def record_distance(values_out, values_in, eps, lo, hi):
    """Return the law of U(u), u uniform: (distances, probabilities).

    The step functions change only where u = j / m +- eps for some group's
    rank j: between those break points they are constant.
    """
    cuts = [np.array([0.0, 1.0])]
    for values, e in zip((values_out, values_in), eps, strict=True):
        ranks = np.arange(values.size + 1) / values.size
        cuts += [ranks - e, ranks + e]
    cuts = np.unique(np.clip(np.concatenate(cuts), 0.0, 1.0))
    lengths = np.diff(cuts)
    keep = lengths > 0
    mids = 0.5 * (cuts[:-1] + cuts[1:])[keep]
    out_lo, out_hi = _envelope(values_out, eps[0], lo, hi, mids)
    in_lo, in_hi = _envelope(values_in, eps[1], lo, hi, mids)
    gap = np.maximum(np.maximum(in_hi - out_lo, out_hi - in_lo), 0.0)
    return gap, lengths[keep]


def summed_distance(gap, probs, copies: int, move: float, span: float,
                    weight: float) -> CoupledDistances:
    """Return the law of the sum of ``copies`` records' distances, rounded up.

    Each record moves with probability ``move`` (1 under dataset privacy)
    and then its distance has the law (gap, probs); distances are rounded up
    to a grid of ``span / steps`` and the sum's law is an FFT power. Mass
    the float error of the FFT may misplace is counted as infinite.
    """
    steps = int(np.clip(_ATOMS // max(copies, 1), _LEAST_STEPS, _MOST_STEPS))
    step = span / steps if span > 0 else 1.0
    cells = np.minimum(np.ceil(gap / step), steps).astype(np.int64)
    one = np.bincount(cells, weights=probs, minlength=steps + 1)
    one = one * move
    one[0] += 1.0 - move
    size = copies * steps + 1
    fft = 1 << int(math.ceil(math.log2(size)))
    law = np.fft.irfft(np.fft.rfft(one, fft) ** copies, fft)[:size]
    law = np.clip(law, 0.0, None)
    # The power's relative error grows with the exponent, the transforms'
    # with their length: ten times that, on every atom; and the mass of u a
    # record's float break points may misplace (1e-11 a record).
    slack = (10.0 * size * (copies + math.log2(fft)) * 2.0 ** -52
             + copies * 1e-11 + 1e-12)
    if slack >= 1e-4:
        raise NotCertifiableError(
            f"The law of {copies} records' summed distances is too large to "
            "compute exactly enough here; release fewer records or pass "
            "theta='auto'.")
    law = law / law.sum() * (1.0 - slack)
    # Atoms below 1e-20 (the FFT's float noise, mostly) join the mass counted
    # at infinite distance: a larger bound, and far fewer atoms to calibrate.
    keep = law > 1e-20
    # Every record's distance is at most its largest cell, whatever the FFT.
    largest = weight * step * copies * int(cells.max(initial=0)) if move else 0.0
    return CoupledDistances(distances=weight * step * np.flatnonzero(keep),
                            probs=law[keep], records=int(copies),
                            gap=float(move), coupling="swap",
                            largest=float(largest))


@persistable
@dataclass(frozen=True, eq=False)
class BandLaw(StatisticLaw):
    """The sum or mean of a bounded column, for every group law in a band.

    Attributes
    ----------
    values_out, values_in : ndarray
        The reference's (clipped) values out of and in the secret's group,
        sorted.
    eps : tuple of float
        The bands' radii (out, in).
    low, high : float
        The clipping range: every released value lies in it.
    secrets : tuple of Secret
    query : Query
    """

    kind: ClassVar[str] = "box"
    coupled: ClassVar[bool] = True

    values_out: np.ndarray
    values_in: np.ndarray
    eps: tuple
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

    @property
    def statement(self) -> Assumption:
        """What the band law assumes, as a Gaussian calibration records it."""
        return Assumption.of("records.independent", reads="values",
                             privacy="dataset")

    def _worst(self, n: int, privacy: str) -> tuple[int, float]:
        """Return the records that may move and each one's chance (worst pair)."""
        worst = (0, 0.0)
        for s in self.secrets:
            for a, b in secret_pairs(
                    s, n, privacy, alternative="use privacy='distributional'"):
                moved = abs(float(a) - float(b))
                candidate = ((math.ceil(moved * n - 1e-9), 1.0)
                             if privacy == "dataset" else (n, moved))
                worst = max(worst, candidate, key=lambda c: c[0] * c[1])
        return worst

    def coupled_distances(self, n: int, privacy: str) -> list[tuple]:
        """Return the swap coupling's distance law (the worst pair's)."""
        copies, move = self._worst(n, privacy)
        gap, probs = record_distance(self.values_out, self.values_in,
                                     self.eps, self.low, self.high)
        return [(summed_distance(gap, probs, copies, move,
                                 self.high - self.low,
                                 self.query.weight(n)),)]

    def coupling_step(self, per_pair) -> MethodStep:
        """How a Gaussian calibration through the coupling is recorded."""
        law = per_pair[0][0]
        return MethodStep.of("coupling.gaussian-noise.band",
                             records=law.records)

    def _assumptions(self, privacy: str) -> tuple:
        return (Assumption.of("records.independent", reads="values",
                              privacy=privacy), *self.assumptions)

    def w_infinity(self, n: int, privacy: str) -> Bound:
        law = self.coupled_distances(n, privacy)[0][0]
        return Bound(law.largest, MethodStep.of("w-inf.band"),
                     self._assumptions(privacy))

    def closeness(self, n: int, privacy: str, delta: float, *,
                  progress=False, label: str = "") -> Bound:
        law = self.coupled_distances(n, privacy)[0][0]
        return Bound(law.closeness(delta),
                     MethodStep.of("closeness.band", records=law.records),
                     self._assumptions(privacy))
