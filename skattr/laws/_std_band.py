"""The standard deviation of a bounded column, over the reference's confidence bands.

Write V = (1/n) sum x^2 - xbar^2 (the std is sqrt(n V / (n - ddof))). Under
two secrets a < b, keep the records whose group is the same under both and
draw each moved record's two values independently (the out-group value x_a
under a, the group's x_b under b). With c = xbar_a and
B = xbar_b - xbar_a = (1/n) sum_moved (x_b - x_a), exactly

    V_b - V_a = T(c) - B^2,   T(c) = (1/n) sum_moved [(x_b - c)^2 - (x_a - c)^2],

and T is linear in c. So if xbar_a lies in [L, U], |V_b - V_a| is at most
max(|T(L)|, |T(U)|) + B^2. Each of T(L), T(U) and B is a sum of independent
differences of one record's values, bounded as several statistics' are
(:func:`~skattr.laws._stacked_band.difference_quantile`), with X = Q(U)
and Q between the band's envelopes: (x - c)^2 is at most the larger of its
values at Q_lo(u) and Q_hi(u), and at least the smaller (0 when c lies
between). [L, U] bounds the mean of dataset a (Chernoff over its records'
envelopes), and V_a is at least V_lo (Chernoff's lower tail of (1/n)
sum (x - c0)^2, less the most (xbar - c0)^2 can be for c0 the middle of
[L, U]). Then, the std s = sqrt(V') with V' = n V / (n - ddof),

    |s_b - s_a| = |V'_b - V'_a| / (s_a + s_b)
               <= min(sqrt(W), W / (sqrt(V'_lo) + sqrt(max(V'_lo - W, 0)))),

W the bound on |V'_b - V'_a|; V_lo of dataset b bounds s_b too. Twelve
tails, each at delta / 12: W is (W, delta)-close for the approximate
Wasserstein mechanism.

A window of pairs is bounded through its widest pairs
(:func:`_window_bound`): the bounds on a dataset's mean and variance hold
for every share of a block of shares (at each lam Chernoff's bound is
largest at a block's ends), T(c) is linear in c, and B and T are bounded at
every pair's moves with Chernoff's bound screening all but a few
(:func:`~skattr.laws._stacked_band.largest_over_tasks`). The column is
mapped onto [0, 1] first and the bound scaled back (the std is
scale-equivariant), so no square of the range over- or underflows.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from skattr._certificate import MethodStep
from skattr._kinds import Std, largest_std, register_law
from skattr._persistence import persistable
from skattr.exceptions import DataValidationError, NotCertifiableError
from skattr.laws._band import BandsLaw, inner_moves, over_widest
from skattr.laws._base import Bound, secret_pairs
from skattr.laws._stacked_band import (
    difference_quantile,
    largest_difference_quantile,
    largest_over_tasks,
    least_over_lam,
    log_mgf,
)

__all__ = ["StdBandLaw", "std_band_law", "std_band_closeness"]

#: The tails a std's bound takes at once (each at delta / 12).
_TAILS = 12
#: Blocks of a window's shares its mean and variance are bounded over.
_BLOCKS = 8


def _squares(cells, c: float):
    """Return the laws of upper and lower bounds on (X - c)^2 over the cells."""
    q_lo, q_hi, p = cells
    at_lo, at_hi = (q_lo - c) ** 2, (q_hi - c) ** 2
    upper = np.maximum(at_lo, at_hi)
    lower = np.where((q_lo <= c) & (c <= q_hi), 0.0, np.minimum(at_lo, at_hi))
    return (upper, p), (lower, p)


def _chernoff_total(alternatives, eta: float) -> float:
    """Return t with P(sum > t) <= eta for each of ``alternatives``.

    Each alternative is ((values, probs, count), ...): the sum of ``count``
    independent draws from each law. Chernoff's bound: for every lam > 0,
    P(sum > t) <= eta at t = (sum count log E e^(lam X) - log eta) / lam;
    the least over lam of the largest of these over the alternatives holds
    for each (one alternative: Chernoff's bound itself), never more than
    every draw at its largest value. The least is found on a grid of log
    lam (every law's moment generating function at once), then refined
    between the grid's neighbours of the best point: any lam gives a valid
    bound, the search only makes it tight.
    """
    alternatives = [[(v[p > 0], p[p > 0], k) for v, p, k in laws if k > 0]
                    for laws in alternatives]
    alternatives = [laws for laws in alternatives if laws]
    if not alternatives:
        return 0.0
    top = max(sum(k * float(v.max()) for v, _, k in laws)
              for laws in alternatives)
    scale = max(max(float(np.max(np.abs(v))) for v, _, _ in laws)
                for laws in alternatives)
    scale = max(scale, 1e-300)
    log_eta = math.log(eta)

    def bounds(log_lams: np.ndarray) -> np.ndarray:
        lam = np.exp(log_lams) / scale
        return np.max([(sum(k * log_mgf(v, p, lam) for v, p, k in laws)
                        - log_eta) / lam for laws in alternatives], axis=0)

    return float(min(least_over_lam(bounds), top))


def _dataset_laws(cells_in, cells_out, n: int, share: float, privacy: str,
                  pick) -> list:
    """Return a dataset's records as Chernoff laws: ``pick`` maps cells to values.

    Dataset privacy: round(share n) records from the group, the rest outside;
    distributional: n records, each from the group with chance ``share``.
    """
    if privacy == "dataset":
        n_in = int(round(share * n))
        return [(pick(cells_in), cells_in[2], n_in),
                (pick(cells_out), cells_out[2], n - n_in)]
    return [(np.concatenate([pick(cells_in), pick(cells_out)]),
             np.concatenate([share * cells_in[2], (1 - share) * cells_out[2]]),
             n)]


def _dataset_bounds(cells_in, cells_out, lo, hi, n, shares, privacy, eta):
    """Return [L, U] for the dataset's mean and V_lo below its variance V.

    Three tails at eta: the mean's two (Chernoff over the records' upper and
    lower envelopes) and the lower tail of (1/n) sum (x - c0)^2, c0 the
    middle of [L, U]; then V = (1/n) sum (x - c0)^2 - (xbar - c0)^2 is at
    least that less ((U - L) / 2)^2. With two ``shares`` (a window's widest
    pair), the bounds hold for a dataset of any share between them: at each
    lam, Chernoff's bound is linear in the group's records (dataset privacy)
    or the log of a function linear in the share (distributional), so its
    largest over the shares between is at one of the two
    (:func:`_chernoff_total` takes the larger at each lam).
    """
    def total(pick, sign):
        alternatives = [[(sign * v, p, k) for v, p, k in _dataset_laws(
            cells_in, cells_out, n, share, privacy, pick)] for share in shares]
        return sign * _chernoff_total(alternatives, eta) / n

    low = max(lo, total(lambda c: c[0], -1.0))
    high = min(hi, total(lambda c: c[1], 1.0))
    if low > high:
        low = high = 0.5 * (low + high)
    c0 = 0.5 * (low + high)
    floor = total(lambda c: _squares(c, c0)[1][0], -1.0)
    return low, high, max(0.0, floor - (0.5 * (high - low)) ** 2)


def _std_of(w_t: float, w_b: float, v_low: float, v_low_b: float, n: int,
            ddof: int) -> float:
    """Return the std's bound from |T| <= w_t, |B| <= w_b and V floors.

    Increasing in w_t and w_b, decreasing in the floors.
    """
    factor = n / (n - ddof)
    w_v = (w_t + w_b ** 2) * factor
    v_low, v_low_b = v_low * factor, v_low_b * factor
    # s_a + s_b, bounded below: each std's own floor, or s_b^2 >= V_a - W.
    divisor = max(math.sqrt(v_low) + math.sqrt(v_low_b),
                  math.sqrt(v_low) + math.sqrt(max(v_low - w_v, 0.0)))
    bound = math.sqrt(w_v)
    if divisor > 0:
        bound = min(bound, w_v / divisor)
    return bound


def _moved_sums(cells_in, cells_out, lo, hi, centres):
    """Return the sums B and T(c) bound, as largest_difference_quantile reads them.

    B's two directions (the envelopes of X) and, per centre c, T(c)'s two
    (the envelopes of (X - c)^2).
    """
    in_hi, in_lo = (cells_in[1], cells_in[2]), (cells_in[0], cells_in[2])
    out_hi, out_lo = (cells_out[1], cells_out[2]), (cells_out[0], cells_out[2])
    mean = [(in_hi, out_lo, lo, hi), (out_hi, in_lo, lo, hi)]
    squares = []
    for c in centres:
        top = max((lo - c) ** 2, (hi - c) ** 2)
        up_in, low_in = _squares(cells_in, c)
        up_out, low_out = _squares(cells_out, c)
        squares += [(up_in, low_out, 0.0, top), (up_out, low_in, 0.0, top)]
    return mean, squares


def _pair_bound(out, inside, lo, hi, n, a, b, privacy, delta, ddof) -> float:
    """Return the std's bound for one pair of property values a < b."""
    eta = delta / _TAILS
    cells_out, cells_in = out.cells(lo, hi), inside.cells(lo, hi)
    if privacy == "dataset":
        # ceil((b - a) n) of dataset a's outside records move into the group.
        copies, move = math.ceil((b - a) * n - 1e-9), 1.0
    else:
        # Each record moved with chance b - a.
        copies, move = n, b - a
    low_mean, high_mean, v_low = _dataset_bounds(
        cells_in, cells_out, lo, hi, n, (a,), privacy, eta)
    v_low_b = _dataset_bounds(cells_in, cells_out, lo, hi, n, (b,), privacy,
                              eta)[2]
    # B: the moved records' mean difference (envelopes of X itself).
    mean, squares = _moved_sums(cells_in, cells_out, lo, hi,
                                (low_mean, high_mean))
    w_b = max(max(difference_quantile(big, small, copies, move, low, high,
                                      eta) for big, small, low, high in mean),
              0.0) / n
    w_t = max(difference_quantile(big, small, copies, move, low, high, eta)
              for big, small, low, high in squares) / n
    return _std_of(max(w_t, 0.0), w_b, v_low, v_low_b, n, ddof)


def _window_bound(out, inside, lo, hi, n, a, b, pairs, privacy, delta,
                  ddof) -> float:
    """Return the std's bound for every pair in [a, b] of ``pairs`` at once.

    The bounds on the mean and the variance's floor of a dataset hold for
    every share of a block of shares (:func:`_dataset_bounds`). The pairs
    are grouped by their lower share into blocks of [a, b]: a block's [L,
    U] holds each of its pairs' c (the mean of the dataset with fewer group
    records), T is linear in c, so T(L) and T(U) bound it at each of the
    block's pairs' moves; B is bounded at every pair's moves; the variance's
    floor is the least over the blocks (for each pair's two datasets).
    Each is bounded for every move it is read at (:func:`~skattr.laws.
    _stacked_band.largest_over_tasks`: exactly at the widest, Chernoff's
    bound screening the rest), and the std's bound, increasing in w_t and
    w_b and decreasing in the floors, taken at the largest and the least:
    at least every pair's own, with its tails at delta / 12 as each pair's
    are.
    """
    eta = delta / _TAILS
    cells_out, cells_in = out.cells(lo, hi), inside.cells(lo, hi)
    edges = np.linspace(a, b, _BLOCKS + 1).tolist()
    blocks = list(zip(edges[:-1], edges[1:], strict=True))
    v_low, tasks, mean = math.inf, [], None
    for block in blocks:
        low_mean, high_mean, floor = _dataset_bounds(
            cells_in, cells_out, lo, hi, n, block, privacy, eta)
        v_low = min(v_low, floor)
        mean, squares = _moved_sums(cells_in, cells_out, lo, hi,
                                    (low_mean, high_mean))
        moves = inner_moves(pairs, a, b, n, privacy, starts=block)
        if moves:
            tasks.append((squares, moves))
    w_b = max(largest_difference_quantile(
        mean, inner_moves(pairs, a, b, n, privacy), eta), 0.0) / n
    w_t = max(largest_over_tasks(tasks, eta), 0.0) / n
    return _std_of(w_t, w_b, v_low, v_low, n, ddof)


def std_band_closeness(out, inside, lo: float, hi: float, n: int, pairs,
                       privacy: str, delta: float, ddof: int, *,
                       progress=False, label: str = "") -> float:
    """Return W: the std moves by more than W with chance at most delta.

    Worst case over the pairs (both orders: the bound is symmetric in the
    coupling, computed from the dataset with fewer group records). A widest
    pair with pairs inside bounds them all at once (:func:`_window_bound`):
    a window costs about what its widest pairs do.
    """
    span = float(hi) - float(lo)
    if not math.isfinite(span):
        raise NotCertifiableError(
            f"The std's clipping range [{lo:g}, {hi:g}] is wider than floating "
            "point holds. Clip the column to a plausible range with "
            "bounds={column: (low, high)}.")
    if span <= 0:
        # Every value clipped to one point: the std is 0 on every dataset.
        return 0.0
    # The std is scale-equivariant: bound it on the column mapped onto
    # [0, 1] and scale back, so that no square of the range over- or
    # underflows (a range of 1e300 or 1e-300).
    out, inside = _unit(out, lo, span), _unit(inside, lo, span)
    pairs = [(float(a), float(b)) for a, b in pairs if a != b]
    worst = 0.0
    lo, hi = 0.0, 1.0
    for a, b, inner in over_widest(pairs, what="a std's distance",
                                   progress=progress, label=label):
        if inner:
            bound = _window_bound(out, inside, lo, hi, n, a, b, pairs,
                                  privacy, delta, ddof)
        else:
            bound = _pair_bound(out, inside, lo, hi, n, a, b, privacy, delta,
                                ddof)
        worst = max(worst, bound)
    worst *= span
    if not math.isfinite(worst):
        raise NotCertifiableError(
            "The std's bound over the confidence bands is not finite; nothing "
            "can be certified. Clip the column to a plausible range with "
            "bounds={column: (low, high)}.")
    return worst


def _unit(band, lo: float, span: float):
    """Return ``band`` with its values mapped by x -> (x - lo) / span."""
    return dataclasses.replace(
        band, values=np.clip((band.values - lo) / span, 0.0, 1.0))


@persistable
@dataclass(frozen=True, eq=False)
class StdBandLaw(BandsLaw):
    """The standard deviation of a column, for every group law in the bands.

    Attributes
    ----------
    ddof : int
        Delta degrees of freedom (the divisor is n - ddof).

    The other attributes are :class:`~skattr.laws._band.BandsLaw`'s.
    """

    ddof: int = 1

    def _check_rows(self, n: int) -> None:
        if n <= self.ddof:
            raise DataValidationError(
                f"The data has {n} row(s); the std with ddof={self.ddof} needs "
                f"at least {self.ddof + 1}. Pass more rows.")

    def w_infinity(self, n: int, privacy: str) -> Bound:
        # Every std of values in [lo, hi] lies in [0, (hi - lo) / 2 sqrt(n /
        # (n - ddof))].
        self._check_rows(n)
        return Bound(largest_std(self.low, self.high, n, self.ddof),
                     MethodStep.of("w-inf.range"), self._assumptions(privacy))

    def closeness(self, n: int, privacy: str, delta: float, *,
                  progress=False, label: str = "") -> Bound:
        self._check_rows(n)
        key = (int(n), privacy, float(delta))
        if key not in self._cache:
            self._cache[key] = max(
                std_band_closeness(
                    out, inside, self.low, self.high, n,
                    secret_pairs(secret, n, privacy,
                                 alternative="use privacy='distributional'"),
                    privacy, delta, self.ddof, progress=progress, label=label)
                for secret, (out, inside) in zip(self.secrets, self.bands,
                                                 strict=True))
        return Bound(self._cache[key], MethodStep.of("closeness.std-band"),
                     self._assumptions(privacy))


@register_law("band", Std)
def std_band_law(stat, fields: dict) -> StdBandLaw:
    """Return the band law of one column's std, with its ddof."""
    return StdBandLaw(ddof=int(stat.ddof), **fields)
