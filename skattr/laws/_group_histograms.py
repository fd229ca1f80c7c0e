"""How far the groups' histograms move between two secrets: a law for any Theta.

The statistic is, for each group of the secret (inside it and outside it)
and each of K marginals, the group's histogram over the marginal's cells:
the share of the group's records in each cell. A marginal of the whole
table moves with the group's share, which is the secret; a group's own
histogram does not: under both secrets its records are drawn from the same
group law, so only their number changes.

Couple the two datasets of a pair a < b as every skattr coupling does:
A = a n records inside the group under both secrets, C = n - b n outside
under both, and m = B - A records (B = b n) drawn from the outside law
under a and, independently, from the inside law under b. Release each
group's histograms with Gaussian noise of sd ``sd[g]`` on every cell, and
write phi_g(x) for a record's one-hot cells over the K marginals divided by
that sd (||phi_g||^2 = K / sd[g]^2 = s_g^2, and two records' phi differ by
at most sqrt(2) s_g). The whitened move is

    D_in  = (sum_shared + sum_moved) / B - sum_shared / A,
    D_out = sum_stayed / C - (sum_moved' + sum_stayed) / (n - A),

sums of phi over independent records, each of mean zero (both sides are
averages of draws from one law). So Z = ||(D_in, D_out)|| has

    E Z <= sqrt(E Z^2) <= sqrt(V),
    V = s_in^2 m / (A B) + s_out^2 m / ((n - A) C),

and Z changes by at most |c_j| sqrt(2) s_g when record j changes (c_j its
coefficient above), whose squares add up to 2 V: McDiarmid's inequality
gives P(Z > sqrt(V) (1 + t)) <= exp(-t^2), and always
Z <= sqrt(2) (m / B) s_in (+) sqrt(2) (m / (n - A)) s_out. This holds for
every pair of group laws, so the certificate needs no reference data and
no confidence level: Theta is every law of the records, independent given
their group.

Under distributional privacy each record's group is drawn (inside with
chance a, or b), and the one uniform draw per record that decides both
makes A, m and C the cells of a multinomial; V grows with m and falls with
A and C, so their binomial quantiles bound it but with a stated chance,
counted as an infinite distance.

The noisy histograms are then certified by the expected Gaussian delta of
Z (:mod:`skattr.calibration._coupled`, joint convexity of the hockey-stick
divergence), from the law of Z's bound built here: a law stochastically
larger than Z, whose atoms sit on a grid of sqrt(V) (1 + t).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from skattr.exceptions import NotCertifiableError
from skattr.laws._distances import CoupledDistances

__all__ = ["GroupSizes", "group_histogram_distances", "group_sizes",
           "histogram_units"]

#: Atoms of the dominating law between t = 0 and where exp(-t^2) underflows.
_ATOMS = 4000
#: Where the tail bound exp(-t^2) is below any delta that matters.
_T_END = 27.0


@dataclass(frozen=True, eq=False)
class GroupSizes:
    """The group sizes of each pair's coupling (bounds under distributional privacy).

    Attributes
    ----------
    inside : ndarray of int
        A per pair, the records inside the group under both secrets (a
        lower bound).
    moved : ndarray of int
        m per pair, the records whose group differs (an upper bound).
    outside : ndarray of int
        C per pair, the records outside the group under both secrets (a
        lower bound).
    failure : float
        The chance that the bounds fail (0 under dataset privacy).
    pairs : ndarray of shape (pairs, 2)
        The pairs (a, b), a < b.
    """

    inside: np.ndarray
    moved: np.ndarray
    outside: np.ndarray
    failure: float
    pairs: np.ndarray

    def rates(self) -> tuple[np.ndarray, np.ndarray]:
        """Return (m / (A B), m / ((n - A) C)) per pair: each group's V per s_g^2."""
        a, m, c = (x.astype(float) for x in (self.inside, self.moved,
                                             self.outside))
        return m / (a * (a + m)), m / ((c + m) * c)

    def spans(self) -> tuple[np.ndarray, np.ndarray]:
        """Return (m / B, m / (n - A)) per pair: how much of each histogram moves."""
        a, m, c = (x.astype(float) for x in (self.inside, self.moved,
                                             self.outside))
        return m / (a + m), m / (c + m)


def group_sizes(n: int, pairs, privacy: str, failure: float) -> GroupSizes:
    """Return every pair's coupled group sizes on n records.

    Under dataset privacy a n and b n records are inside the group (the
    pairs are on the grid k / n); under distributional privacy the sizes are
    the multinomial's binomial quantiles, each failing with chance at most
    ``failure`` / 3.

    Examples
    --------
    >>> from skattr.laws._group_histograms import group_sizes
    >>> s = group_sizes(10, [(0.3, 0.5)], "dataset", 0.0)
    >>> s.inside, s.moved, s.outside
    (array([3]), array([2]), array([5]))
    >>> [float(r[0]) for r in s.rates()]
    [0.13333333333333333, 0.05714285714285714]
    """
    values = np.sort(np.asarray(pairs, dtype=float).reshape(-1, 2), axis=1)
    values = values[values[:, 0] < values[:, 1]]
    if values.size == 0:
        raise NotCertifiableError("The secret states no pair of distinct values "
                                  "to hide.")
    a, b = values.T
    if privacy == "dataset":
        inside = np.rint(a * n).astype(np.int64)
        stay_out = n - np.rint(b * n).astype(np.int64)
        moved, fails = n - inside - stay_out, 0.0
    else:
        third = failure / 3
        moved = stats.binom.ppf(1 - third, n, b - a).astype(np.int64)
        inside = stats.binom.ppf(third, n, a).astype(np.int64)
        stay_out = stats.binom.ppf(third, n, 1 - b).astype(np.int64)
        fails = float(failure)
    bad = np.flatnonzero((inside < 1) | (stay_out < 1))
    if bad.size:
        i = int(bad[0])
        fix = ("Hide pairs strictly inside (0, 1) (a window's support such "
               "as support=(0.1, 0.9)), or release on more records"
               if privacy == "dataset" else
               "Release on more records, allow a larger delta, or hide pairs "
               "further from 0 and 1")
        raise NotCertifiableError(
            f"The pair {a[i]:g} vs {b[i]:g} may leave a group without records "
            f"on {n} records (inside {inside[i]}, outside {stay_out[i]}): a "
            f"group's histograms are not defined there. {fix}.")
    return GroupSizes(inside, moved, stay_out, fails, values)


def histogram_units(sizes: GroupSizes, shares) -> np.ndarray:
    """Return each group's relative noise sd (inside, outside).

    Chosen to make the released histograms' error in the synthetic table
    least for the bound's V: a group weighing ``w_g`` in the table, whose V
    per unit of s_g^2 is ``rate_g``, gets sd^2 proportional to
    sqrt(rate_g) / w_g (Lagrange), read at the pair of largest total rate.
    """
    rates = np.column_stack(sizes.rates())
    worst = rates[np.argmax(rates.sum(axis=1))]
    weights = np.asarray(shares, dtype=float)
    return np.sqrt(np.sqrt(worst) / weights)


def group_histogram_distances(sizes: GroupSizes, marginals: int,
                              units) -> CoupledDistances:
    """Return a law stochastically larger than Z, with unit noise sd ``units``.

    Z is the whitened distance of every pair's coupling (the one of largest
    V, as the bound grows with V; a failure chance is counted as infinite
    distance). With noise sd ``tau * units[g]`` the distance is Z / tau, the
    ``sigma`` the coupled calibration divides by.

    Examples
    --------
    >>> from skattr.laws._group_histograms import (group_histogram_distances,
    ...                                            group_sizes)
    >>> sizes = group_sizes(1000, [(0.3, 0.4)], "dataset", 0.0)
    >>> law = group_histogram_distances(sizes, 4, [1.0, 1.0])
    >>> v = 4 * 100 * (1 / (300 * 400) + 1 / (700 * 600))
    >>> bool(abs(law.closeness(1e-6) / v ** 0.5 - (1 + 13.8155 ** 0.5)) < 0.01)
    True
    """
    u_in, u_out = (float(u) for u in units)
    if marginals < 1 or not (u_in > 0 and u_out > 0):
        raise ValueError("group_histogram_distances needs marginals >= 1 and "
                         "positive units.")
    s_in, s_out = marginals / u_in ** 2, marginals / u_out ** 2
    r_in, r_out = sizes.rates()
    v = s_in * r_in + s_out * r_out
    worst = int(np.argmax(v))
    scale = float(v[worst])
    span_in, span_out = sizes.spans()
    largest = float(np.sqrt(2 * (span_in ** 2 * s_in
                                 + span_out ** 2 * s_out)).max())
    failure = sizes.failure
    root = math.sqrt(scale)
    # Atoms at sqrt(V) (1 + t_i): P(Z > sqrt(V)(1 + t)) <= exp(-t^2), so the
    # mass exp(-t_(i-1)^2) - exp(-t_i^2) put at t_i gives a law above Z's.
    t = np.linspace(0.0, _T_END, _ATOMS + 1)
    tail = np.exp(-t ** 2)
    distances = root * (1.0 + t[1:])
    probs = tail[:-1] - tail[1:]
    cap = largest * (1 + 1e-12)
    if cap <= root:
        distances, probs = np.array([cap]), np.array([1.0])
    else:
        beyond = distances >= cap
        if beyond.any():
            # Z never exceeds the cap: the mass above it sits at the cap.
            first = int(np.argmax(beyond))
            probs = np.concatenate([probs[:first], [tail[first]]])
            distances = np.concatenate([distances[:first], [cap]])
    return CoupledDistances(distances=distances, probs=probs * (1 - failure),
                            records=int(sizes.moved[worst]), gap=1.0,
                            coupling="swap", largest=cap)
