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
"""

from __future__ import annotations

import math

import numpy as np

from skattr.laws._band import BandLaw, pair_moves

__all__ = ["difference_quantile", "largest_move", "sum_bound"]

#: Most atoms of the FFT'd law of a statistic's summed differences.
_ATOMS = 400_000
#: Most atoms an FFT'd law may have at all (its least grid, 16 steps a record).
_FFT_ATOMS = 2_000_000
#: Grid steps over a column's clipping range, at most and least.
_MOST_STEPS, _LEAST_STEPS = 2_000, 16
#: Relative slack on a tail compared with eta (sums of many small floats).
_ROUNDING = 1e-9


def _envelope(band, lo: float, hi: float, upper: bool):
    """Return the law of Q_hi(U) (``upper``) or Q_lo(U): (values, probabilities)."""
    q_lo, q_hi, lengths = band.cells(lo, hi)
    return (q_hi if upper else q_lo), lengths


def _fft_quantile(big, small, copies: int, move: float, lo: float, hi: float,
                  eta: float) -> float:
    """Upper eta-quantile of sum of ``copies`` B (X - Y), rounded outward.

    X has the law ``big`` (values, probs), Y the law ``small``, independent;
    B is Bernoulli(move) (1 under dataset privacy).
    """
    span = hi - lo
    steps = int(np.clip(_ATOMS // max(2 * copies, 1), _LEAST_STEPS, _MOST_STEPS))
    step = span / steps
    up = np.clip(np.ceil((big[0] - lo) / step), 0, steps)
    down = np.clip(np.floor((small[0] - lo) / step), 0, steps)
    x = np.bincount(up.astype(np.int64), weights=big[1], minlength=steps + 1)
    y = np.bincount(down.astype(np.int64), weights=small[1],
                    minlength=steps + 1)
    # One record's difference, index i meaning (i - steps) steps.
    one = np.convolve(x, y[::-1]) * move
    one[steps] += 1.0 - move
    size = copies * 2 * steps + 1
    fft = 1 << int(math.ceil(math.log2(size)))
    law = np.fft.irfft(np.fft.rfft(one, fft) ** copies, fft)[:size]
    law = np.clip(law, 0.0, None)
    # The FFT's error (ten times size x (copies + log2 of the transform)
    # ulps over all atoms, as in summed_distances), counted against every tail.
    slack = 10.0 * size * (copies + math.log2(fft)) * 2.0 ** -52 + 1e-12
    law = law / law.sum()
    tail = np.cumsum(law[::-1])[::-1] + slack
    # tail[i] = P(sum >= i); the quantile is the least i with P(sum > i) <= eta.
    above = np.concatenate([tail[1:], [0.0]])
    ok = np.flatnonzero(above * (1 + _ROUNDING) <= eta)
    if ok.size == 0:
        return copies * span
    return (int(ok[0]) - copies * steps) * step


def _chernoff_quantile(big, small, copies: int, move: float,
                       eta: float) -> float:
    """Chernoff's bound on the upper eta-quantile of sum of copies B (X - Y).

    P(S > t) <= exp(copies L(lam) - lam t) for every lam > 0, L the log
    moment generating function of one B (X - Y); so the quantile is at most
    min over lam of (copies L(lam) - log eta) / lam.
    """
    from scipy.optimize import minimize_scalar
    from scipy.special import logsumexp

    xv, xp = big
    yv, yp = small
    keep_x, keep_y = xp > 0, yp > 0
    xv, xp, yv, yp = xv[keep_x], xp[keep_x], yv[keep_y], yp[keep_y]
    scale = max(float(np.max(np.abs(xv), initial=0.0)),
                float(np.max(np.abs(yv), initial=0.0)), 1e-300)

    def bound(log_lam: float) -> float:
        lam = math.exp(log_lam) / scale
        one = (logsumexp(lam * xv, b=xp) + logsumexp(-lam * yv, b=yp))
        if move < 1.0:
            one = float(np.logaddexp(math.log1p(-move), math.log(move) + one))
        return (copies * one - math.log(eta)) / lam

    found = minimize_scalar(bound, bounds=(-12.0, 8.0), method="bounded",
                            options={"xatol": 1e-6})
    # Any lam gives a valid bound: take the smaller of the search's and its end.
    return float(min(found.fun, bound(8.0)))


def difference_quantile(big, small, copies: int, move: float, lo: float,
                        hi: float, eta: float) -> float:
    """Return t with P(sum of ``copies`` B (X - Y) > t) <= eta, valid.

    The smaller of the FFT's (rounded outward) and Chernoff's bound, and
    never more than every record moving by the whole range.

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
    fft = (_fft_quantile(big, small, copies, move, lo, hi, eta)
           if copies * 2 * _LEAST_STEPS <= _FFT_ATOMS else math.inf)
    chernoff = _chernoff_quantile(big, small, copies, move, eta)
    return float(min(fft, chernoff, copies * (hi - lo)))


def sum_bound(out, inside, lo: float, hi: float, secret, n: int, privacy: str,
              eta: float, weight: float) -> float:
    """Return W: a sum's move exceeds W with chance at most 2 eta, every pair.

    The sum (times ``weight``) of a bounded column's values over n records,
    under the independent coupling of the moved records; each side's tail at
    eta, worst case over the secret's pairs. Every pair's moved records: a
    sum of signed differences need not grow with them (one more record can
    lower its upper quantile), so the pair with the most is not enough.
    """
    laws = {(band, upper): _envelope(band, lo, hi, upper)
            for band in (out, inside) for upper in (False, True)}
    worst = 0.0
    for copies, move in pair_moves(secret, n, privacy):
        up = difference_quantile(laws[inside, True], laws[out, False], copies,
                                 move, lo, hi, eta)
        down = difference_quantile(laws[out, True], laws[inside, False],
                                   copies, move, lo, hi, eta)
        worst = max(worst, abs(weight) * max(up, down, 0.0))
    return worst


def largest_move(secrets, n: int, privacy: str) -> int:
    """Return the most records any pair of the secrets moves."""
    return max((c if move > 0 else 0 for c, move in (
        BandLaw._worst(s, n, privacy) for s in secrets)), default=0)
