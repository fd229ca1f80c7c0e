"""Several counts at once: the exact law of the count vector over a box of cells.

A release of J counts (or proportions) of 0/1 indicators, say "never
married" and "female", counts each record in one of the 2^J *cells*, the
joint values of its indicators; the statistic is the vector C of the J
column totals, a sum of the records' cells read as points of {0, 1}^J.
Records are independent given their group (inside or outside the secret's
group), each group's records drawn from its cell law q_g.

Theta (the box). From the reference taken as a sample of the population,
each group's cell probabilities are bounded below, cell by cell, by the
one-sided exact Clopper-Pearson bound at level alpha / (2^J * 2 * secrets),
alpha = 1 - confidence (Bonferroni over cells, both groups and every
secret): with probability at least ``confidence`` over the reference,
``q_g >= low_g`` in every cell of every group at once. That event is the
Theta certified: every q with q >= low cellwise (and summing to 1). Exact
coverage, no normal approximation (Sison and Glaz's simultaneous intervals
rest on an Edgeworth expansion and are not used).

The pair. On n records, the secret's pair (k_L, k_H), k_L < k_H records in
the group, keeps k_L records inside and n - k_H outside on both sides (the
*shared* records) and moves m = k_H - k_L records: outside the group on the
side L, inside it on the side H. So C_L = S + M_out and C_H = S + M_in with S
the shared records' sum (the same law on both sides), M_out a sum of m draws
of q_out and M_in of m draws of q_in.

The floor trick. Since q >= low cellwise, lam = sum(low) <= 1 and
q = lam * (low / lam) + (1 - lam) * r with r = (q - low) / (1 - lam) a law:
each record is, with probability lam (a coin it carries), a draw from the
*known* law low / lam, and otherwise from the unknown r. Condition on every
record's coin and every unknown draw, coupled as follows: the shared
records' coins and unknown draws are the same on both sides; each moved
record's coins and unknown draws (one for its outside row, one for its
inside row) are drawn independently. The known draws are *not* coupled:
they stay inside each side's law. The hockey-stick divergence is jointly
convex, so for either direction

    H_eps(P_L * N || P_H * N) <= E H_eps((T_R + K_out) * N + x || (T_R + K_in) * N + y),

where T_R is the sum of the R_in + R_out shared records whose coin came up
(R_g ~ Bin(shared_g, lam_g); R_in draws of low_in / lam_in and R_out of
low_out / lam_out: a known lattice law), K_out the sum of the moved records'
known outside rows (m - a_out draws of low_out / lam_out, a_out ~
Bin(m, 1 - lam_out) unknown) and K_in of their known inside rows (m - a_in
draws, a_in ~ Bin(m, 1 - lam_in)); x and y are what the unknown draws add.
The shared records' unknown draws add the same vector to both sides and
cancel (shift invariance); the moved records' add u = y - x in the integer
box [-a_out, a_in]^J. Bounding the expectation over u by its largest value,

    delta <= E_{R, a} max_{u in [-a_out, a_in]^J}
                 H_eps((T_R + K_out) * N || (T_R + K_in) * N + u),

a bound in which every law is known: the supremum over the box is gone, not
approximated, and every known draw keeps its own variance (the moved
records' included: their rows are not coupled). The term is nonincreasing
in each R_g (T_{R+1} is T_R plus an independent record on both sides, a
post-processing), so R is read on a few levels at or below it. What is paid
is the (1 - lam) share of each moved record at its worst: with a reference
of 45,000 records lam is about 0.96, and with ten moved records a quarter of
the bound's weight has one unknown row, shifted by one whole unit.

The computation of each term (two lattice laws plus Gaussian noise, the
hockey-stick bounded outward cube by cube) is
:mod:`skattr.calibration._count_lattice`'s. Distributional privacy is not
covered (the numbers of group records are then binomial, not fixed).
``docs/population.md`` ("Several counts at once: the exact law") has the
proof in full.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from skattr.exceptions import InvalidParameterError, NotCertifiableError

__all__ = ["CellPair", "cell_floors", "cell_pairs", "record_powers",
           "shared_levels"]

#: Lower quantiles of each shared binomial R_g at which h_R is evaluated;
#: the mass below the least is counted as delta 1.
LEVEL_PROBS = (0.05, 1e-4, 1e-9)


def cell_floors(counts, confidence: float, tests: int) -> np.ndarray:
    """Return each cell's one-sided Clopper-Pearson lower bound.

    Parameters
    ----------
    counts : array-like of shape (groups, cells)
        How many reference records of each group fall in each cell.
    confidence : float
        The probability, over the reference, that every bound of every
        group of every secret holds at once.
    tests : int
        How many bounds share that confidence (Bonferroni): cells times
        groups times secrets.

    Returns
    -------
    ndarray of shape (groups, cells)
        ``Beta(alpha / tests; x, size - x + 1)``'s quantile, 0 where x = 0.

    Examples
    --------
    >>> from skattr.laws._count_cells import cell_floors
    >>> cell_floors([[30, 70], [0, 100]], 0.999, 4).round(4)
    array([[0.1573, 0.5237],
           [0.    , 0.9204]])
    """
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2 or np.any(counts < 0) or np.any(counts.sum(1) <= 0):
        raise InvalidParameterError(
            "The cells' counts need one row per group, each with at least one "
            f"record and no negative count; got {counts.tolist()!r}.")
    if not 0 < confidence < 1:
        raise InvalidParameterError(
            f"The cells' confidence must lie in (0, 1); got {confidence!r}.")
    alpha = (1.0 - confidence) / tests
    size = counts.sum(1, keepdims=True)
    low = stats.beta.ppf(alpha, np.maximum(counts, 1e-300),
                         size - counts + 1)
    low = np.where(counts > 0, low, 0.0)
    # Round down (a floor may only be lower) and keep the sum below 1.
    return np.clip(np.nextafter(low, 0.0) * (1 - 1e-12), 0.0, 1.0)


def record_powers(law: np.ndarray, copies) -> dict:
    """Return the lattice law of sums of i.i.d. records, for each copies.

    ``law`` is one record's law over the 2^J cells, cell c counted by
    indicator j when bit J - 1 - j of c is set (C order of shape (2,)*J).
    The law of the sum of k records is an array of shape (k + 1,)*J, the
    entry at x the probability that the sum is x: built by adding one record
    at a time (exact sums of nonnegative terms; no FFT).
    """
    law = np.asarray(law, dtype=float)
    dims = int(round(np.log2(law.size)))
    one = law.reshape((2,) * dims)
    wanted = {int(k) for k in copies}
    top = max(wanted, default=0)
    found = {}
    current = np.ones((1,) * dims)
    for k in range(top + 1):
        if k in wanted:
            found[k] = current
        if k < top:
            grown = np.zeros(tuple(s + 1 for s in current.shape))
            for b in np.ndindex(*one.shape):
                where = tuple(slice(i, i + s)
                              for i, s in zip(b, current.shape, strict=True))
                grown[where] += one[b] * current
            current = grown
    return found


def shared_levels(size: int, lam: float, probs=LEVEL_PROBS):
    """Return the levels of R ~ Bin(size, lam) and their weights, and the rest.

    Level l_i gets the mass P(l_i <= R < l_{i+1}) (the top one all above
    it); the mass below the least level is returned apart (counted as delta
    1). ``probs="all"`` takes every value of R.
    """
    if size == 0:
        return [0], [1.0], 0.0
    binom = stats.binom(size, lam)
    if isinstance(probs, str):
        levels = list(range(size + 1))
    else:
        # The least x with P(R <= x) >= p: P(R < x) < p.
        levels = sorted({int(binom.ppf(p)) for p in probs})
    cdf_below = [float(binom.cdf(x - 1)) if x > 0 else 0.0 for x in levels]
    weights = [hi - lo for lo, hi in zip(cdf_below, cdf_below[1:] + [1.0],
                                         strict=True)]
    # Round the weights up (each is an upper bound on its level's mass).
    weights = [min(1.0, w * (1 + 1e-12) + 1e-16) for w in weights]
    return levels, weights, cdf_below[0] * (1 + 1e-12)


@dataclass(frozen=True)
class CellPair:
    """One pair of a secret on n records, with each group's known floor.

    ``shared_in`` and ``shared_out`` records are kept, ``moved`` records
    move from outside the group (side L) to inside it (side H). ``law_in``
    and ``law_out`` are the floors' known laws low / lam over the cells,
    ``lam_in`` and ``lam_out`` their masses.
    """

    shared_in: int
    shared_out: int
    moved: int
    law_in: np.ndarray
    law_out: np.ndarray
    lam_in: float
    lam_out: float

    @property
    def dims(self) -> int:
        """J, the number of counts."""
        return int(round(np.log2(self.law_in.size)))

    def moved_terms(self):
        """Yield (weight, a_in, a_out, law of K_in, law of K_out).

        a_g of the moved records' rows of group g are unknown (binomial with
        1 - lam_g, independent); K_in is the sum of the moved - a_in known
        inside rows, K_out of the moved - a_out known outside rows, their
        laws arrays from 0 (:func:`record_powers`).
        """
        m = self.moved
        ins = record_powers(self.law_in, range(m + 1))
        outs = record_powers(self.law_out, range(m + 1))
        p_in = stats.binom.pmf(np.arange(m + 1), m, 1.0 - self.lam_in)
        p_out = stats.binom.pmf(np.arange(m + 1), m, 1.0 - self.lam_out)
        for a_in in range(m + 1):
            for a_out in range(m + 1):
                weight = p_in[a_in] * p_out[a_out] * (1 + 1e-12)
                if weight > 0:
                    yield weight, a_in, a_out, ins[m - a_in], outs[m - a_out]


def cell_pairs(floors, secrets_pairs, n: int,
               privacy: str = "dataset") -> list[CellPair]:
    """Return the CellPairs of every secret's pairs of group counts on n records.

    Parameters
    ----------
    floors : sequence of (low_in, low_out)
        Per secret, the floors of its two groups' cell laws.
    secrets_pairs : sequence of sequences of (k_a, k_b)
        Per secret, its pairs as counts of group records out of n.
    n : int
        The number of private records.
    privacy : {"dataset"}
        Only dataset privacy: under distributional privacy the numbers of
        group records are binomial, and this law is refused.
    """
    if privacy != "dataset":
        raise NotCertifiableError(
            "The exact law of several counts covers dataset privacy only (a "
            "fixed number of group records); under distributional privacy "
            "release the counts with the default per-statistic law, or pass "
            "privacy='dataset'.")
    found = []
    for (low_in, low_out), pairs in zip(floors, secrets_pairs, strict=True):
        low_in = np.asarray(low_in, dtype=float)
        low_out = np.asarray(low_out, dtype=float)
        lam_in, lam_out = float(low_in.sum()), float(low_out.sum())
        if not (0 < lam_in <= 1 and 0 < lam_out <= 1):
            raise InvalidParameterError(
                "Each group's cell floors must have a positive sum of at most "
                f"1; got {lam_in!r} and {lam_out!r}.")
        for k_a, k_b in pairs:
            low, high = sorted((int(k_a), int(k_b)))
            if not 0 <= low <= high <= n:
                raise InvalidParameterError(
                    f"A pair of group counts must lie in [0, n={n}]; got "
                    f"({k_a}, {k_b}).")
            if low == high:
                continue
            found.append(CellPair(
                shared_in=low, shared_out=n - high, moved=high - low,
                law_in=low_in / lam_in, law_out=low_out / lam_out,
                lam_in=lam_in, lam_out=lam_out))
    return found
