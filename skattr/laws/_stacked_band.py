"""The bound on a sum's move over the reference's confidence bands.

One coordinate of :class:`~skattr.laws._joint_band.JointBandLaw` (several
sums, means and counts at once, or with quantiles and stds in a ledger).

F = (w_1 sum_i h_1(x_i), ..., w_K sum_i h_K(x_i)): each statistic j the sum
or mean of a bounded column (h_j(x) in its clipping range [lo_j, hi_j]) or a
count or proportion of a value (h_j in {0, 1}). Under two secrets the
records whose group differs (the moved records) are the only ones whose law
differs; the others are shared. Couple the two datasets by keeping the shared
records and drawing each moved record's two values *independently* (one
from the group's law, one from the complement's): one coupling of the
records' joint laws, whatever the dependence between the columns, which the
marginal bands say nothing about. Then statistic j moves by
D_j = w_j sum_moved (X_in,j - X_out,j), a sum of independent differences,
and with X = Q(U) and the band's envelopes Q_lo <= Q <= Q_hi
(:class:`~skattr.laws._band.GroupBand`), D_j / w_j is stochastically at
most sum (Q_hi,in(U) - Q_lo,out(V)) and at least sum (Q_lo,in(U) -
Q_hi,out(V)), U and V independent uniforms, whatever laws in the bands.

Each side's tail at eta = delta / 2K is bounded twice and the smaller taken:
by the exact law of the sum (each difference rounded outward to a grid,
the K-fold power by FFT) and by Chernoff's bound on the unrounded step laws'
moment generating function. With probability at least 1 - delta every
|D_j| <= W_j at once (a union bound over the 2K tails), and Laplace noise of
scale K W_j / epsilon on statistic j keeps the privacy loss
sum_j |D_j| / b_j <= epsilon there: (epsilon, delta)-closeness in the
noises' metric (Chen and Ohrimenko, Thm 3.2), each statistic in its own
units. ``docs/population.md`` proves it and measures what it costs.

A sum of signed differences need not grow with the records moved, so a
window's every move is bounded, but cheaply
(:func:`largest_difference_quantile`): the widest move exactly, the others
screened by Chernoff's bound (all at once on a grid of lam) and, under
dataset privacy, from the widest move's exact law; the exact bound only
where a screen exceeds the largest found.
"""

from __future__ import annotations

import math

import numpy as np

from skattr.laws._band import BandLaw, pair_moves, power
from skattr.laws._distances import CoupledDistances, survival_law

__all__ = ["difference_quantile", "largest_difference_quantile",
           "largest_move", "largest_over_tasks",
           "least_over_lam", "log_mgf", "sum_bound", "sum_move_law"]

#: Most atoms of the FFT'd law of a statistic's summed differences.
_ATOMS = 400_000
#: Most atoms an FFT'd law may have at all (its least grid, 16 steps a record).
_FFT_ATOMS = 2_000_000
#: Grid steps over a column's clipping range, at most and least.
_MOST_STEPS, _LEAST_STEPS = 2_000, 16
#: Relative slack on a tail compared with eta (sums of many small floats).
_ROUNDING = 1e-9
#: The grid of log(lam scale) the screen's Chernoff bounds are read on (any
#: lam gives a valid bound).
_SCREEN_LAMS = np.linspace(-12.0, 8.0, 121)
#: The grid of log(lam scale) a Chernoff bound's search starts from.
_CHERNOFF_LAMS = np.linspace(-12.0, 8.0, 41)
#: The chance the anchored screen allows the records between two moves to
#: fall short (:func:`_anchor_screen`).
_ANCHOR_EPS = 0.1
#: Points a move's tail law is read at (:func:`sum_move_law`: twice, over
#: the whole range and then up to where the tail falls below the floor).
_TAIL_POINTS = 2048
#: A tail below which the rest of a move's law sits at its largest move.
_TAIL_FLOOR = 1e-15
#: Most moves of a window whose tails are computed each; beyond, the caller
#: reads the quantiles on a ladder of chances.
_TAIL_MOVES = 32
#: The FFT's tail below which Chernoff's bound is read too, on the finest
#: grid (the FFT's slack is about 1e-12; well above it, on that grid,
#: Chernoff's bound does not win).
_CHERNOFF_FROM = 1e-6


def _envelope(band, lo: float, hi: float, upper: bool):
    """Return the law of Q_hi(U) (``upper``) or Q_lo(U): (values, probabilities)."""
    q_lo, q_hi, lengths = band.cells(lo, hi)
    return (q_hi if upper else q_lo), lengths


def _fft_quantile(big, small, copies: int, move: float, lo: float, hi: float,
                  eta: float, positive: bool = False) -> float:
    """Upper eta-quantile of sum of ``copies`` B (X - Y), rounded outward.

    X has the law ``big`` (values, probs), Y the law ``small``, independent;
    B is Bernoulli(move) (1 under dataset privacy). ``positive``: of the
    positive parts B (X - Y)+.
    """
    return _transform(big, small, copies, move, lo, hi,
                      positive).quantiles(copies, (eta,))[0]


class _Transform:
    """One record's rounded difference on a grid, Fourier-transformed.

    Made for ``copies`` records (the grid's steps and the transform's length
    fit them): :meth:`quantiles` reads the sum of any number of records up
    to that many from it, each power one transform back. The grid is the
    one the most records take (its steps no finer for fewer), so a sum of
    fewer records rounded on it is rounded outward, as on its own grid.
    """

    def __init__(self, one: np.ndarray, copies: int, steps: int, step: float):
        self.steps, self.step, self.copies = steps, step, copies
        self.length = 1 << int(math.ceil(math.log2(copies * 2 * steps + 1)))
        self.spectrum = np.fft.rfft(one, self.length)

    def tail(self, copies: int) -> np.ndarray:
        """Return P(sum of ``copies`` > (i - copies steps) step) at each i.

        Of the rounded sum (each record's difference rounded outward), so
        of the sum too; from 0 to ``2 copies steps``, the FFT's slack added
        to each but the last (the sum never exceeds the top).
        """
        size = copies * 2 * self.steps + 1
        law = np.fft.irfft(power(self.spectrum, copies), self.length)[:size]
        law = np.clip(law, 0.0, None)
        # The FFT's error (ten times size x (copies + log2 of the transform)
        # ulps over all atoms, as in summed_distances), counted against
        # every tail.
        slack = (10.0 * size * (copies + math.log2(self.length)) * 2.0 ** -52
                 + 1e-12)
        law = law / law.sum()
        tail = np.cumsum(law[::-1])[::-1] + slack
        # tail[i] = P(sum >= i), so P(sum > i) is tail[i + 1].
        return np.concatenate([tail[1:], [0.0]])

    def quantiles(self, copies: int, etas) -> list[float]:
        """Return the upper quantile at each eta of the sum of ``copies``."""
        steps, step = self.steps, self.step
        # The quantile is the least i with P(sum > i) <= eta.
        above = self.tail(copies)
        found = []
        for eta in etas:
            ok = np.flatnonzero(above * (1 + _ROUNDING) <= eta)
            found.append(copies * steps * step if ok.size == 0
                         else (int(ok[0]) - copies * steps) * step)
        return found


def _transform(big, small, copies: int, move: float, lo: float,
               hi: float, positive: bool = False) -> _Transform:
    """Return one record's B (X - Y), rounded outward, for up to ``copies``.

    ``positive``: its positive part, the mass below 0 put at 0 (rounding
    outward and then taking the positive part rounds outward: it is
    nondecreasing).
    """
    steps, step = _grid(copies, hi - lo)
    up = np.clip(np.ceil((big[0] - lo) / step), 0, steps)
    down = np.clip(np.floor((small[0] - lo) / step), 0, steps)
    x = np.bincount(up.astype(np.int64), weights=big[1], minlength=steps + 1)
    y = np.bincount(down.astype(np.int64), weights=small[1],
                    minlength=steps + 1)
    # One record's difference, index i meaning (i - steps) steps.
    one = np.convolve(x, y[::-1]) * move
    one[steps] += 1.0 - move
    if positive:
        one[steps] += one[:steps].sum()
        one[:steps] = 0.0
    return _Transform(one, copies, steps, step)


def _grid(copies: int, span: float) -> tuple[int, float]:
    """Return the steps over the range and their width for ``copies`` records."""
    steps = int(np.clip(_ATOMS // max(2 * copies, 1), _LEAST_STEPS, _MOST_STEPS))
    return steps, span / steps


def _chernoff_quantile(big, small, copies: int, move: float,
                       eta: float, positive: bool = False) -> float:
    """Chernoff's bound on the upper eta-quantile of sum of copies B (X - Y).

    P(S > t) <= exp(copies L(lam) - lam t) for every lam > 0, L the log
    moment generating function of one B (X - Y); so the quantile is at most
    min over lam of (copies L(lam) - log eta) / lam. ``positive``: of the
    positive parts B (X - Y)+, with E e^(lam (X - Y)+) <= 1 + E e^(lam (X -
    Y)) (lam > 0) bounding their L (:func:`_positive_part`).
    """
    xv, xp = big
    yv, yp = small
    keep_x, keep_y = xp > 0, yp > 0
    xv, xp, yv, yp = xv[keep_x], xp[keep_x], yv[keep_y], yp[keep_y]
    scale = max(float(np.max(np.abs(xv), initial=0.0)),
                float(np.max(np.abs(yv), initial=0.0)), 1e-300)
    log_eta = math.log(eta)

    def bounds(log_lams: np.ndarray) -> np.ndarray:
        lam = np.exp(log_lams) / scale
        one = _positive_part(log_mgf(xv, xp, lam) + log_mgf(-yv, yp, lam),
                             positive)
        if move < 1.0:
            one = np.logaddexp(math.log1p(-move), math.log(move) + one)
        return (copies * one - log_eta) / lam

    return least_over_lam(bounds)


def _positive_part(one: np.ndarray, positive: bool) -> np.ndarray:
    """Return log E e^(lam D) or, ``positive``, a bound on log E e^(lam D+).

    e^(lam D+) <= 1 + e^(lam D) for lam > 0 (one term is e^0 = 1, the
    other the larger where D > 0).
    """
    return np.logaddexp(0.0, one) if positive else one


def least_over_lam(bounds) -> float:
    """Return the least of a Chernoff bound over log(lam scale) in [-12, 8].

    ``bounds`` maps an array of log lam to the bound at each (any lam gives
    a valid one): read on a grid first, every lam at once, then refined
    between the best point's neighbours, never above the grid's best or its
    last point.
    """
    from scipy.optimize import minimize_scalar

    on_grid = bounds(_CHERNOFF_LAMS)
    best = int(np.argmin(on_grid))
    found = minimize_scalar(
        lambda x: float(bounds(np.array([x]))[0]),
        bounds=(_CHERNOFF_LAMS[max(best - 1, 0)],
                _CHERNOFF_LAMS[min(best + 1, _CHERNOFF_LAMS.size - 1)]),
        method="bounded", options={"xatol": 1e-6})
    return float(min(found.fun, on_grid[best], on_grid[-1]))


def log_mgf(values: np.ndarray, probs: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Return log E e^(lam V) at each lam, V taking ``values`` w.p. ``probs``."""
    exponent = lam[:, None] * values[None, :]
    peak = exponent.max(axis=1)
    np.subtract(exponent, peak[:, None], out=exponent)
    np.exp(exponent, out=exponent)
    return peak + np.log(np.sum(exponent * probs, axis=1))


def difference_quantile(big, small, copies: int, move: float, lo: float,
                        hi: float, eta: float, positive: bool = False) -> float:
    """Return t with P(sum of ``copies`` B (X - Y) > t) <= eta, valid.

    The smaller of the FFT's (rounded outward) and Chernoff's bound, and
    never more than every record moving by the whole range. ``positive``:
    of the positive parts B (X - Y)+.

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.laws._stacked_band import difference_quantile
    >>> coin = (np.array([0.0, 1.0]), np.array([0.5, 0.5]))
    >>> difference_quantile(coin, coin, 1, 1.0, 0.0, 1.0, 0.3)   # P(X - Y = 1) = 1/4
    0.0
    """
    if copies == 0 or move == 0:
        return 0.0
    # The FFT's law has copies x 2 x (at least 16) atoms: beyond a few
    # million (over 60,000 moved records), Chernoff's bound alone.
    fft = (_fft_quantile(big, small, copies, move, lo, hi, eta, positive)
           if copies * 2 * _LEAST_STEPS <= _FFT_ATOMS else math.inf)
    chernoff = _chernoff_quantile(big, small, copies, move, eta, positive)
    return float(min(fft, chernoff, copies * (hi - lo)))


def _screen(big, small, moves, lo: float, hi: float, eta: float,
            positive: bool = False) -> np.ndarray:
    """Return Chernoff's bound on each move's upper eta-quantile, at once.

    ``moves`` holds (copies, move) rows; each bound is the least over a grid
    of lam of (copies L(lam) - log eta) / lam (each lam gives a valid one,
    :func:`_chernoff_quantile`), and never more than every record moving by
    the whole range.
    """
    lam, one = _record_mgf(big, small, positive)
    copies = np.array([c for c, _ in moves], dtype=float)[:, None]
    move = np.array([m for _, m in moves], dtype=float)[:, None]
    with np.errstate(divide="ignore"):
        mixed = np.where(move < 1.0, np.logaddexp(
            np.log1p(-np.minimum(move, 1.0)), np.log(move) + one[None, :]),
            one[None, :])
    bound = np.min((copies * mixed - math.log(eta)) / lam[None, :], axis=1)
    return np.minimum(bound, copies[:, 0] * (hi - lo))


def _anchored(big, small, copies: int, move: float, lo: float, hi: float,
              eta: float, positive: bool = False
              ) -> tuple[float, float, _Transform | None]:
    """Return the exact bound, the bound at eta (1 - eps), and their transform.

    The first is :func:`difference_quantile`'s; the transform is None
    beyond the FFT's size. From one FFT: the second is what
    :func:`_anchor_screen` builds on; the
    transform gives the exact bounds of fewer records
    (:func:`largest_over_tasks`).
    """
    if copies * 2 * _LEAST_STEPS > _FFT_ATOMS:
        return (difference_quantile(big, small, copies, move, lo, hi, eta,
                                    positive),
                difference_quantile(big, small, copies, move, lo, hi,
                                    eta * (1 - _ANCHOR_EPS), positive), None)
    cap = copies * (hi - lo)
    transform = _transform(big, small, copies, move, lo, hi, positive)
    fft = transform.quantiles(copies, (eta, eta * (1 - _ANCHOR_EPS)))
    exact, anchor = (
        float(min(f, _chernoff_quantile(big, small, copies, move, e, positive),
                  cap))
        for f, e in zip(fft, (eta, eta * (1 - _ANCHOR_EPS)), strict=True))
    return exact, anchor, transform


def _merged(law):
    """Return a law's distinct values and their summed probabilities."""
    values, probs = law
    keep = probs > 0
    values, index = np.unique(values[keep], return_inverse=True)
    return values, np.bincount(index, weights=probs[keep],
                               minlength=values.size)


def _anchor_screen(big, small, widest: int, anchor: float, copies,
                   lo: float, hi: float) -> np.ndarray:
    """Bound the eta-quantile of a sum of fewer records from the widest one's.

    Dataset privacy (each record moves): S_M = S_m + R, R the sum of the
    other j = M - m records, independent of S_m. If P(R <= -s) <= eps, then
    P(S_m > t) (1 - eps) <= P(S_M > t - s), so S_m's eta-quantile is at most
    S_M's at eta (1 - eps) (``anchor``) plus s, the eps-quantile of -R
    (Chernoff's bound, :func:`_screen` on the differences reversed).
    Tighter than Chernoff's own bound on S_m for m near M.
    """
    copies = np.asarray(copies, dtype=int)
    rest = [(int(widest - c), 1.0) for c in copies]
    out = np.full(copies.size, np.inf)
    fewer = copies < widest
    if fewer.any():
        out[fewer] = anchor + _screen(small, big, [r for r, f in zip(
            rest, fewer, strict=True) if f], lo, hi, _ANCHOR_EPS)
    return out


def largest_difference_quantile(sums, moves, eta: float) -> float:
    """Return the largest :func:`difference_quantile` over sums and moves.

    ``sums`` holds (big, small, lo, hi), each a sum of B (X - Y) as
    :func:`difference_quantile` reads it; ``moves`` the (copies, move) of
    each pair. A sum of signed differences need not grow with the records
    moved, so every move is bounded, but most cheaply: the widest move's
    exact bound first, then Chernoff's bound for every move at once
    (:func:`_screen`), and the exact bound only where Chernoff's exceeds the
    largest found so far, the largest first, until none does. Chernoff's
    bound holds for the move's sum (whatever lam), so a move it leaves out
    has its sum's eta-quantile below the largest found: the result holds for
    every move, at the cost of a few; and it is the largest of
    :func:`difference_quantile` over every move wherever that is at most
    Chernoff's on the screen's grid of lam (it takes the least of Chernoff's
    and the FFT's). 0 without moves.

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.laws._stacked_band import (difference_quantile,
    ...                                        largest_difference_quantile)
    >>> coin = (np.array([0.0, 1.0]), np.array([0.6, 0.4]))
    >>> moves = [(m, 1.0) for m in range(1, 41)]
    >>> largest = largest_difference_quantile([(coin, coin, 0.0, 1.0)],
    ...                                       moves, 1e-3)
    >>> largest == max(difference_quantile(coin, coin, m, 1.0, 0.0, 1.0, 1e-3)
    ...                for m in range(1, 41))
    True
    """
    return largest_over_tasks([(sums, moves)], eta)


def largest_over_tasks(tasks, eta: float, positive: bool = False) -> float:
    """:func:`largest_difference_quantile` over several (sums, moves) at once.

    Each task's sums are read at its own moves; one screen over all of them.
    The first task's sums are bounded exactly at their widest move, and
    under dataset privacy each one's fewer moves are screened from it too
    (:func:`_anchor_screen`: tighter than Chernoff's near the widest move).
    ``positive``: of the positive parts B (X - Y)+ (Chernoff's screen
    alone: the anchored screen's argument is the signed sums').
    """
    # The signed sums' calls as they were (tests replace these functions).
    flag = {"positive": True} if positive else {}
    entries = []
    for sums, moves in tasks:
        moves = sorted({(int(c), float(m)) for c, m in moves
                        if c > 0 and m > 0})
        entries += [(total, move) for total in sums for move in moves]
    if not entries:
        return 0.0
    exact, transforms = {}, {}

    def bound(i: int) -> float:
        if i not in exact:
            total, (copies, move) = entries[i]
            big, small, lo, hi = total
            shared = transforms.get(id(total))
            if shared is not None and move == 1.0 and copies <= shared.copies:
                # Fewer records of a sum bounded exactly at its widest move:
                # read from the same transform (one power and one inverse
                # transform, not a new grid).
                exact[i] = float(min(
                    shared.quantiles(copies, (eta,))[0],
                    _chernoff_quantile(big, small, copies, move, eta,
                                       **flag),
                    copies * (hi - lo)))
            else:
                exact[i] = difference_quantile(big, small, copies, move, lo,
                                               hi, eta, **flag)
        return exact[i]

    groups = {}
    for i, (total, _) in enumerate(entries):
        groups.setdefault(id(total), (total, []))[1].append(i)
    # The widest move of the first task's sums first (the pair's own bound).
    first = {id(total) for total in tasks[0][0]}
    anchors = {}
    for key, (total, members) in groups.items():
        if key not in first:
            continue
        i = max(members, key=lambda i: entries[i][1][0] * entries[i][1][1])
        copies, move = entries[i][1]
        exact[i], anchor, transform = _anchored(*total[:2], copies, move,
                                                *total[2:], eta, **flag)
        if move == 1.0:
            anchors[key] = (copies, anchor)
            if transform is not None:
                transforms[key] = transform
    best = max(exact.values())
    screens = np.empty(len(entries))
    for key, (total, members) in groups.items():
        big, small, lo, hi = total
        moves = [entries[i][1] for i in members]
        screen = _screen(big, small, moves, lo, hi, eta, **flag)
        if not positive and key in anchors and all(move == 1.0 for _, move in moves):
            screen = np.minimum(screen, _anchor_screen(
                big, small, *anchors[key], [c for c, _ in moves], lo, hi))
        screens[members] = screen
    for i in np.argsort(-screens, kind="stable").tolist():
        if screens[i] <= best:
            break
        best = max(best, bound(i))
    return float(best)


def sum_bound(out, inside, lo: float, hi: float, secret, n: int, privacy: str,
              eta: float, weight: float, positive: bool = False, *,
              moves=None) -> float:
    """Return W: a sum's move exceeds W with chance at most 2 eta, every pair.

    The sum (times ``weight``) of a bounded column's values over n records,
    under the independent coupling of the moved records; each side's tail at
    eta, worst case over the secret's pairs. Every pair's moved records: a
    sum of signed differences need not grow with them (one more record can
    lower its upper quantile), so the pair with the most is not enough; a
    window's many moves are screened (:func:`largest_difference_quantile`).

    ``positive``: each side's sum of the positive parts of the differences
    (X_in - X_out)+ and (X_out - X_in)+ instead, which bound the move of a
    statistic nondecreasing in each record, each record moving it by at
    most ``weight`` times its own move (a trimmed mean):
    F(x') - F(x) <= weight sum_i (x'_i - x_i)+, raising the records that
    rise one at a time and then lowering the others. (X - Y)+ is
    nondecreasing in X - Y, so the bands' envelopes bound its law as they
    bound the difference's.

    ``moves``: the (copies, move) of the pairs to bound, in place of every
    pair of ``secret`` (:func:`~skattr.laws._band.pair_moves`).

    A range of one point (a constant column, clipped) moves by 0: every
    record's value is that point.
    """
    if not float(hi) > float(lo):
        return 0.0
    laws = {(band, upper): _envelope(band, lo, hi, upper)
            for band in (out, inside) for upper in (False, True)}
    sums = [(laws[inside, True], laws[out, False], lo, hi),
            (laws[out, True], laws[inside, False], lo, hi)]
    if moves is None:
        moves = pair_moves(secret, n, privacy)
    found = (largest_over_tasks([(sums, moves)], eta, positive=True)
             if positive else largest_difference_quantile(sums, moves, eta))
    return abs(weight) * max(found, 0.0)


def largest_move(secrets, n: int, privacy: str) -> int:
    """Return the most records any pair of the secrets moves."""
    return max((c if move > 0 else 0 for c, move in (
        BandLaw._worst(s, n, privacy) for s in secrets)), default=0)


def _record_mgf(big, small, positive: bool = False):
    """Return (lam, L(lam)) on the screen's grid: a moved record's log mgf.

    L is that of X - Y (X from ``big``, Y from ``small``, independent), or
    of its positive part; lam is scaled to the laws' largest value.
    """
    (xv, xp), (yv, yp) = _merged(big), _merged(small)
    scale = max(float(np.max(np.abs(xv), initial=0.0)),
                float(np.max(np.abs(yv), initial=0.0)), 1e-300)
    lam = np.exp(_SCREEN_LAMS) / scale
    return lam, _positive_part(log_mgf(xv, xp, lam) + log_mgf(-yv, yp, lam),
                               positive)


def _one_mgf(big, small, move: float, positive: bool = False):
    """Return (lam, L(lam)) on the screen's grid: one record's log mgf."""
    lam, one = _record_mgf(big, small, positive)
    if move < 1.0:
        one = np.logaddexp(math.log1p(-move), math.log(move) + one)
    return lam, one


def _chernoff_tails(mgf, copies: int, points: np.ndarray) -> np.ndarray:
    """Return Chernoff's bound on P(sum of ``copies`` B (X - Y) > t), each t.

    exp(copies L(lam) - lam t) at the best lam of a grid (each lam gives a
    valid bound; :func:`_chernoff_quantile` reads the same bound at a
    chance), at most 1; ``mgf`` is :func:`_one_mgf`'s.
    """
    lam, one = mgf
    exponent = np.min(copies * one[:, None] - lam[:, None] * points[None, :],
                      axis=0)
    return np.exp(np.minimum(exponent, 0.0))


def sum_move_law(out, inside, lo: float, hi: float, moves, weight: float,
                 largest: float, positive: bool = False
                 ) -> CoupledDistances | None:
    """Return a law dominating a sum's move |D| under every one of ``moves``.

    D = weight sum_moved (X_in - X_out) under the independent coupling of
    the moved records (:func:`sum_bound`'s; ``positive``: each side's sum of
    the positive parts, a monotone statistic's). P(|D| > t) is at most the
    two sides' upper tails at t / |weight|, P(S_1 > t) + P(S_2 > t), S_1
    the sum of (Q_hi,in(U) - Q_lo,out(V)) and S_2 of (Q_hi,out(U) -
    Q_lo,in(V)). Each side's tail is the least of the FFT's law of its sum
    (rounded outward, its slack added: :meth:`_Transform.tail`, the law
    :func:`difference_quantile` reads) and Chernoff's bound, both valid at
    each t; the largest over the moves (a window's pairs) bounds each pair.
    Read on a grid of the FFT's steps (:func:`~skattr.laws._distances.
    survival_law`: between two points, the tail at the lower), up to where
    it falls below ``_TAIL_FLOOR``, the mass beyond at ``largest`` (a
    bound on every move). None when there are more than ``_TAIL_MOVES``
    moves (the caller reads the quantiles on a ladder instead).
    """
    moves = sorted({(int(c), float(m)) for c, m in moves if c > 0 and m > 0})
    span = float(hi) - float(lo)
    if not moves or span <= 0:
        return CoupledDistances(np.zeros(1), np.ones(1), largest=0.0)
    if len(moves) > _TAIL_MOVES:
        return None
    laws = {(band, upper): _envelope(band, lo, hi, upper)
            for band in (out, inside) for upper in (False, True)}
    sides = [(laws[inside, True], laws[out, False]),
             (laws[out, True], laws[inside, False])]
    widest = max(c for c, _ in moves)
    fft = widest * 2 * _LEAST_STEPS <= _FFT_ATOMS
    steps, step = (_grid(widest, span) if fft
                   else (_TAIL_POINTS, span / _TAIL_POINTS))
    transforms, read = {}, {}
    mgfs = {(side, move): _one_mgf(*sides[side], move, positive)
            for side in range(2) for _, move in moves}

    def fft_tail(side: int, copies: int, move: float) -> np.ndarray:
        if (side, copies, move) not in read:
            if (side, move) not in transforms:
                transforms[side, move] = _transform(*sides[side], widest, move,
                                                    lo, hi, positive)
            read[side, copies, move] = transforms[side, move].tail(copies)
        return read[side, copies, move]

    def tails(ks: np.ndarray) -> np.ndarray:
        # ks: grid steps of t; the largest over the moves of both sides' sum.
        points = ks * step
        worst = np.zeros(ks.size)
        for copies, move in moves:
            both = np.zeros(ks.size)
            for side in range(2):
                tail = np.ones(ks.size)
                if fft:
                    above = fft_tail(side, copies, move)
                    at = ks + copies * steps
                    tail = np.where(at < above.size,
                                    above[np.minimum(at, above.size - 1)], 0.0)
                # Chernoff's bound where it can win: far in the tail, below
                # the FFT's slack, or everywhere on a coarse grid (whose
                # outward rounding costs a step a record). Each bound
                # holds, so the least does wherever it is read.
                far = tail > 0
                if fft and steps >= _MOST_STEPS:
                    far &= tail <= _CHERNOFF_FROM
                tail[far] = np.minimum(tail[far], _chernoff_tails(
                    mgfs[side, move], copies, points[far]))
                # Never beyond every record moving by the whole range.
                both += np.where(points >= copies * span, 0.0, tail)
            worst = np.maximum(worst, both)
        return worst

    ks = _thinned(widest * steps, steps)
    first = tails(ks)
    low = np.flatnonzero(first <= _TAIL_FLOOR)
    if low.size:
        ks = _thinned(int(ks[low[0]]), steps)
        first = tails(ks)
    return survival_law(abs(weight) * ks * step, first, largest)


def _thinned(top: int, steps: int) -> np.ndarray:
    """Return at most about ``_TAIL_POINTS`` grid steps from 0 to ``top``.

    Evenly spaced, the spacing a divisor or a multiple of the range's
    ``steps`` (so that a count's whole values are points), the last at
    least ``top``.
    """
    stride = max(1, math.ceil(top / (_TAIL_POINTS - 1)))
    if stride < steps:
        stride = min(d for d in range(stride, steps + 1) if steps % d == 0)
    else:
        stride = steps * math.ceil(stride / steps)
    return np.arange(0, top + stride, stride, dtype=np.int64)
