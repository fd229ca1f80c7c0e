"""The law of the distance between coupled values of F under two secrets.

A coupling pi of the laws of F given secrets a and b puts the two values
side by side; the law of their distance D = |x - y| (or of any variable
stochastically larger) is what the coupled calibrations read:
(W, delta)-closeness is the least w with P(D > w) <= delta (Chen and
Ohrimenko, Def. 3.2), and Gaussian noise is certified by the expected
Gaussian delta of D (:mod:`skattr.calibration._coupled`, by joint
convexity of the hockey-stick divergence).

For counts the swap coupling gives D in closed form: the records whose group
differs between a and b are the only ones that may be counted differently;
with one uniform draw deciding both, a record moved from group c to c' is
counted differently with probability |p_c - p_c'|, at most ``r``, the
widest gap between the groups' counting probabilities over Theta's box. So
D is at most Binomial(m, r), m the records moved (dataset privacy), or
Binomial(n, t r), t the total variation between the two laws of a record's
group (distributional privacy: each record's group is drawn, and coupled,
independently). The quantile coupling, bounded over the box by its corners
(:func:`quantile_envelope`), is the other: its distance is about the shift of
the two laws' means, and wins when the box is narrow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from skattr.exceptions import NotCertifiableError
from skattr.laws._base import widest_pairs
from skattr.laws._counts import _as_shares, _record_counts, count_pmf

__all__ = ["LADDER", "CoupledDistances", "count_coupled_distances",
           "ladder_distances", "least_certified", "least_survival",
           "quantile_envelope", "survival_law"]

# Relative slack on a tail compared with delta (the tails are sums of a few
# thousand non-negative floats).
_ROUNDING = 1e-9


@dataclass(frozen=True, eq=False)
class CoupledDistances:
    """The law of a coupled distance D: values and their probabilities.

    Attributes
    ----------
    distances : ndarray
        The values of D (in F's units), increasing.
    probs : ndarray
        Their probabilities (summing to at most 1; missing mass counts as an
        infinite distance).
    records : int
        The trials of the binomial behind D (records moved), for the record.
    gap : float
        The largest probability that a moved record is counted differently
        (for the quantile envelope: the box's widest side).
    coupling : {"swap", "quantile"}
        The coupling D is the distance under.
    largest : float
        A bound D never exceeds (what a pure-epsilon W_inf may use); ``inf``
        when the law is known only up to mass counted as infinite (a float
        CDF cannot see tails below its resolution).
    """

    distances: np.ndarray
    probs: np.ndarray
    records: int = 0
    gap: float = 0.0
    coupling: str = "swap"
    largest: float = math.inf

    def __post_init__(self):
        d = np.asarray(self.distances, dtype=float)
        p = np.asarray(self.probs, dtype=float)
        # Fail closed: a law that is not a law certifies nothing.
        if (d.shape != p.shape or d.ndim != 1 or d.size == 0
                or not np.all(np.isfinite(d)) or not np.all(np.isfinite(p))
                or np.any(d < 0) or np.any(p < 0) or p.sum() > 1 + 1e-9
                or np.any(np.diff(d) < 0)):
            raise NotCertifiableError(
                "A coupled distance law needs finite, non-negative, increasing "
                "distances and probabilities of the same length summing to at "
                "most 1; this one is not.")
        object.__setattr__(self, "distances", d)
        object.__setattr__(self, "probs", p)

    @property
    def missing(self) -> float:
        """The mass counted at infinite distance (1 minus the probabilities)."""
        return max(0.0, 1.0 - float(self.probs.sum()))

    def closeness(self, delta: float) -> float:
        """Return the least w with P(D > w) <= delta, the coupling's W.

        Examples
        --------
        >>> import numpy as np
        >>> from skattr.laws._distances import CoupledDistances
        >>> CoupledDistances(np.arange(4.0),
        ...                  np.array([0.5, 0.3, 0.15, 0.05])).closeness(0.1)
        2.0
        """
        d, p = self.distances, self.probs
        # tail[i] = P(D > d[i]), summed from the top so small tails stay exact.
        tail = (np.concatenate([np.cumsum(p[::-1])[::-1][1:], [0.0]])
                + self.missing)
        ok = np.flatnonzero(tail * (1 + _ROUNDING) <= delta)
        if ok.size == 0 or not math.isfinite(d[ok[0]]):
            raise NotCertifiableError(
                "The coupled distance exceeds every bound with probability "
                f"more than delta={delta:g}: no W is (W, delta)-close.")
        return float(d[ok[0]])

    @classmethod
    def binomial(cls, trials: int, gap: float, weight: float
                 ) -> CoupledDistances:
        """Return ``weight`` times Binomial(trials, gap)."""
        k = np.arange(trials + 1)
        probs = stats.binom.pmf(k, trials, min(max(gap, 0.0), 1.0))
        # The top atoms may underflow to 0; D still never exceeds the trials.
        return cls(distances=weight * k.astype(float), probs=probs,
                   records=int(trials), gap=float(gap),
                   largest=weight * trials if gap > 0 else 0.0)


#: The chances a coordinate's (W, eta)-bound is read at to build its law
#: (:func:`ladder_distances`): 2^-1 down to 2^-23 (1.2e-7), fixed before any
#: data is read.
LADDER = 2.0 ** -np.arange(1, 24)


def ladder_distances(w_of_eta, etas, largest: float) -> CoupledDistances:
    """Return a law dominating |D| from bounds W(eta) on a ladder of chances.

    Parameters
    ----------
    w_of_eta : callable or array-like
        W(eta) with P(|D| > W(eta)) <= eta, as a function of eta or its
        values at each of ``etas``.
    etas : array-like
        The chances, decreasing, in (0, 1] (fixed before any data is read,
        e.g. :data:`LADDER`).
    largest : float
        A bound |D| never exceeds (finite).

    Returns
    -------
    CoupledDistances
        Mass 1 - eta_1 at W_1, eta_i - eta_i+1 at W_i+1, and eta_m (the
        last) at ``largest``; W_i the largest of W(eta_1..eta_i), at most
        ``largest``.

    Notes
    -----
    The law L dominates |D|: P(L > t) >= P(|D| > t) for every t >= 0. Below
    W_1, P(L > t) = 1. On [W_i, W_i+1), P(L > t) = eta_i, and
    P(|D| > t) <= P(|D| > W_i) <= eta_i: W_i is at least W(eta_i) (a running
    maximum, so that the staircase rises), and P(|D| > W) only falls as W
    grows. On [W_m, largest), P(L > t) = eta_m >= P(|D| > W_m). From
    ``largest`` on, P(|D| > t) = 0. Capping W_i at ``largest`` keeps each
    step valid for the same reason. A bound that is not finite refuses.

    Examples
    --------
    A coin's move, |D| in {0, 1}, P(|D| = 1) = 1/8: W(eta) = 0 for eta >=
    1/8, else 1.

    >>> import numpy as np
    >>> from skattr.laws._distances import ladder_distances
    >>> law = ladder_distances(lambda eta: 0.0 if eta >= 0.125 else 1.0,
    ...                        2.0 ** -np.arange(1, 5), 1.0)
    >>> law.distances.tolist(), law.probs.tolist()
    ([0.0, 0.0, 0.0, 1.0, 1.0], [0.5, 0.25, 0.125, 0.0625, 0.0625])
    """
    etas = np.asarray(etas, dtype=float)
    largest = float(largest)
    if (etas.ndim != 1 or etas.size == 0 or not np.all(np.diff(etas) < 0)
            or etas[0] > 1 or etas[-1] <= 0):
        raise ValueError("The ladder's chances must decrease within (0, 1].")
    if not (math.isfinite(largest) and largest >= 0):
        raise NotCertifiableError(
            "A coordinate with no finite largest move has no law from its "
            "bounds on a ladder of chances; declare a clipping range with "
            "bounds=.")
    widths = (np.array([w_of_eta(float(eta)) for eta in etas], dtype=float)
              if callable(w_of_eta) else np.asarray(w_of_eta, dtype=float))
    if widths.shape != etas.shape or np.any(np.isnan(widths)):
        raise NotCertifiableError(
            "A coordinate's bound on the ladder of chances is not a number; "
            "nothing can be certified.")
    widths = np.minimum(np.maximum.accumulate(np.maximum(widths, 0.0)),
                        largest)
    probs = np.concatenate([[1.0 - etas[0]], -np.diff(etas), [etas[-1]]])
    return CoupledDistances(distances=np.append(widths, largest),
                            probs=probs, largest=largest)


def survival_law(points, tails, largest: float) -> CoupledDistances:
    """Return a law L with P(L > t) = tails[k] on [points[k], points[k+1]).

    Parameters
    ----------
    points : array-like
        Increasing distances, from 0 or above.
    tails : array-like
        At each point, a bound on P(|D| > points[k]) (taken at most 1; a
        rise is lowered to the least bound before it, which still holds).
    largest : float
        A bound |D| never exceeds: the mass above the last point sits there
        (``inf``: counted as an infinite distance, the law's missing mass).

    Notes
    -----
    P(|D| > t) <= P(|D| > points[k]) <= tails[k] for t in [points[k],
    points[k+1]), so L dominates |D| (below the first point P(L > t) = 1).
    Distances above ``largest`` are lowered to it: P(|D| > t) = 0 there.

    Examples
    --------
    >>> from skattr.laws._distances import survival_law
    >>> law = survival_law([0.0, 1.0, 2.0], [0.5, 0.1, 0.0], 5.0)
    >>> law.distances.tolist(), law.probs.tolist()
    ([0.0, 1.0, 2.0], [0.5, 0.4, 0.1])
    """
    points = np.asarray(points, dtype=float)
    tails = np.asarray(tails, dtype=float)
    if (points.ndim != 1 or points.shape != tails.shape or points.size == 0
            or np.any(np.isnan(points)) or np.any(np.isnan(tails))
            or np.any(np.diff(points) <= 0) or points[0] < 0):
        raise NotCertifiableError(
            "A tail staircase needs increasing distances from 0 and a bound "
            "at each; this one is not.")
    tails = np.minimum.accumulate(np.clip(tails, 0.0, 1.0))
    largest = float(largest)
    points = np.minimum(points, largest)
    probs = np.concatenate([[1.0 - tails[0]], -np.diff(tails)])
    if tails[-1] > 0 and math.isfinite(largest):
        points, probs = np.append(points, largest), np.append(probs, tails[-1])
    return CoupledDistances(distances=points, probs=probs, largest=largest)


def least_survival(laws) -> CoupledDistances:
    """Return the law whose P(L > t) is the least of the laws', every t.

    Each law dominates the same |D|, so the least of their tails bounds
    P(|D| > t) at every t too (:func:`survival_law`).
    """
    laws = list(laws)
    points = np.unique(np.concatenate([[0.0]] + [law.distances
                                                 for law in laws]))
    tails = np.full(points.size, np.inf)
    for law in laws:
        # P(L > p): the mass above p, and the missing mass.
        above = np.concatenate([np.cumsum(law.probs[::-1])[::-1], [0.0]])
        at = np.searchsorted(law.distances, points, side="right")
        tails = np.minimum(tails, above[at] + law.missing)
    return survival_law(points, tails, min(law.largest for law in laws))


def least_certified(laws, bound) -> float:
    """Return the least ``bound(law)`` over alternative laws of one distance.

    Every alternative bounds the same coupled distance, so the least of their
    bounds holds; one that certifies nothing (``NotCertifiableError``: too
    much mass counted as infinite for this delta) is skipped, and only when
    none certifies is the first refusal raised.
    """
    found, refusal = [], None
    for law in laws:
        try:
            found.append(bound(law))
        except NotCertifiableError as exc:
            refusal = refusal or exc
    if not found:
        raise refusal
    return min(found)


#: Per squared support point, the mass the quantile envelope counts as an
#: infinite distance: its CDFs (sums of at most n + 1 convolved binomial
#: masses) are each off by at most about (n + 1) 1e-16, so at most that much
#: mass of t lies on the wrong side of each of the 4 (n + 1) break points.
#: Ten times that, plus 1e-12.
_ENVELOPE_SLACK = 1e-15
#: Most pairs the quantile envelope is computed for (each costs four count
#: laws); beyond, the swap coupling alone.
_ENVELOPE_PAIRS = 20


def envelope_slack(n: int) -> float:
    """Return the mass :func:`quantile_envelope` counts as infinite on n records."""
    return 4.0 * (n + 1) ** 2 * _ENVELOPE_SLACK + 1e-12


def _count_cdf(counts, probs) -> np.ndarray:
    """CDF on 0..sum(counts) of a sum of independent Binomial(counts[c], probs[c])."""
    from scipy import signal

    pmf = np.ones(1)
    for size, p in zip(counts, probs, strict=True):
        if size:
            law = stats.binom.pmf(np.arange(size + 1), size,
                                  min(max(p, 0.0), 1.0))
            # Direct sums (error a few ulps an entry) while cheap, else FFT.
            pmf = (np.convolve(pmf, law) if pmf.size * law.size <= 4e7 else
                   signal.fftconvolve(pmf, law))
    return np.cumsum(np.clip(pmf, 0.0, None))


def _quantiles(cdf: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Return the least x with F(x) >= level (F on 0, 1, ...; the top past it)."""
    return np.minimum(np.searchsorted(cdf, levels, side="left"), cdf.size - 1)


def quantile_envelope(a, b, n: int, low, high, privacy: str,
                      weight: float) -> CoupledDistances:
    """Return the quantile coupling's distance, bounded over a box of probabilities.

    A count's law is stochastically increasing in every group's counting
    probability, so for every p in the box each quantile function lies
    between its values at the box's lowest and highest corners; the distance
    |Q_a(t) - Q_b(t)| of the quantile coupling (t uniform) is at most
    U(t) = max(Q_b(t; high) - Q_a(t; low), Q_a(t; high) - Q_b(t; low)). The
    law of U(t) is returned: every quantile function is constant between
    consecutive values of the four CDFs. Float CDFs cannot see the tails
    beyond their resolution, so the law bounds D only up to the mass it
    counts as infinite: it has no almost-sure ``largest``.
    """
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    sa, sb = _as_shares(a, low.size), _as_shares(b, low.size)
    if privacy == "dataset":
        ka, kb = _record_counts(sa, n), _record_counts(sb, n)
        cdfs = [_count_cdf(ka, low), _count_cdf(ka, high),
                _count_cdf(kb, low), _count_cdf(kb, high)]
    else:
        # Distributional privacy: Binomial(n, phi . p) (count_pmf's law).
        cdfs = [np.cumsum(count_pmf(share, n, p, privacy=privacy)[1])
                for share in (sa, sb) for p in (low, high)]
    slack = envelope_slack(n)
    cuts = np.unique(np.clip(np.concatenate([[0.0, 1.0], *cdfs]), 0.0, 1.0))
    lengths = np.diff(cuts)
    keep = lengths > 0
    mids = (0.5 * (cuts[:-1] + cuts[1:]))[keep]
    qa_lo, qa_hi, qb_lo, qb_hi = (_quantiles(c, mids) for c in cdfs)
    gap = np.maximum(np.maximum(qb_hi - qa_lo, qa_hi - qb_lo), 0)
    order = np.argsort(gap, kind="stable")
    return CoupledDistances(distances=weight * gap[order].astype(float),
                            probs=lengths[keep][order] * (1 - slack),
                            records=int(n), gap=float(np.max(high - low)),
                            coupling="quantile")


def count_coupled_distances(pairs, n: int, low, high, privacy: str,
                            weight: float, *, delta: float | None = None
                            ) -> list[tuple[CoupledDistances, ...]]:
    """Return, per pair, distance laws of couplings valid over a box of counts.

    Where the swap coupling is every pair's only law, only the pair that
    moves the most records is returned (its law is the stochastically
    largest). Each pair's laws are alternatives, each valid for every p in the box: the
    swap coupling's Binomial(moved records, widest gap) and, for at most
    ``_ENVELOPE_PAIRS`` pairs, the quantile coupling's envelope
    (:func:`quantile_envelope`), which wins when the box is narrow (a large
    reference). A calibration takes the least noise over a pair's
    alternatives and the most over pairs.

    Parameters
    ----------
    pairs : list of (a, b)
        The secrets' pairs, each a share (binary) or a vector of shares.
    n : int
        Records released.
    low, high : array-like of shape (k,)
        The box of counting probabilities, one per group.
    privacy : {"dataset", "distributional"}
    weight : float
        F's units per count (1 for a count, 1 / n for a proportion).
    delta : float or None, default=None
        The delta the laws will be read at, when known. The envelope counts a
        mass of about 4 (n + 1)^2 1e-15 as an infinite distance; when that is
        at least twice delta, every reading of it at delta is infinite (it
        cannot win), so it is not computed: four count laws on 0..n each, seconds
        per pair at n = 10^7. ``0`` for an almost-sure bound (W_inf), which
        the envelope never gives.

    Examples
    --------
    Shares 0.4 and 0.6 of 100 records: 20 move; counting probabilities in
    [0.0, 0.2] outside the group and [0.1, 0.3] inside it differ by at most
    0.3.

    >>> from skattr.laws._distances import count_coupled_distances
    >>> (swap, envelope), = count_coupled_distances(
    ...     [(0.4, 0.6)], 100, (0.0, 0.1), (0.2, 0.3), "dataset", 1.0)
    >>> swap.records, round(swap.gap, 10), swap.closeness(1e-3)
    (20, 0.3, 13.0)
    >>> envelope.coupling, envelope.closeness(1e-3) > swap.closeness(1e-3)
    ('quantile', True)
    """
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    k = low.size
    gaps = high[:, None] - low[None, :]
    gaps[np.diag_indices(k)] = 0.0
    gap = float(np.clip(gaps.max(), 0.0, 1.0))
    pairs = list(pairs)

    def swap(moved: float) -> CoupledDistances:
        if privacy == "dataset":
            return CoupledDistances.binomial(math.ceil(moved * n - 1e-9), gap,
                                             weight)
        return CoupledDistances.binomial(n, min(1.0, moved * gap), weight)

    # The envelope's missing mass is the slack, less the rounding of its
    # (at most 4 (n + 1)) lengths' sum, well under half the slack: at a
    # delta of at most half the slack it reads infinite.
    envelope = len(pairs) <= _ENVELOPE_PAIRS and (
        delta is None or envelope_slack(n) < 2 * delta)
    shares = pairs
    if not envelope and k == 2 and all(np.ndim(v) == 0 for pair in pairs
                                       for v in pair):
        # Two groups: the pair that moves the most is a widest one.
        widest = widest_pairs(pairs)
        shares = list(zip(widest.low.tolist(), widest.high.tolist(),
                          strict=True))
    moves = [0.5 * float(np.abs(_as_shares(a, k) - _as_shares(b, k)).sum())
             for a, b in shares]
    if not envelope:
        # The swap coupling alone: Binomial(moved records, gap), or
        # Binomial(n, moved share x gap), is stochastically larger for a
        # pair that moves more, so every calibration (of increasing
        # functions of the distance) asks most of the pair that moves the
        # most: one law, where a window's thousands of pairs each built one.
        return [(swap(max(moves)),)] if moves else []
    return [(swap(moved), quantile_envelope(a, b, n, low, high, privacy,
                                            weight))
            for (a, b), moved in zip(pairs, moves, strict=True)]
