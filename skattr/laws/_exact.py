"""Exact laws of a count or an integer sum given a secret, under a finite Theta.

A record is counted (or takes one of finitely many integer values)
independently of the others, with a probability that depends only on
whether it belongs to the secret's group: the count is a convolution of two
binomials (:mod:`skattr.laws._counts`), the sum one of two multinomial powers
(:mod:`skattr.laws._sums`). :class:`ExactLaw` holds those probabilities for
every theta of a finite Theta; :class:`BoxLaw` a continuous box of count
probabilities, whose W is certified by branch and bound
(:mod:`skattr.laws._count_sensitivity`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from skattr._certificate import Assumption, MethodStep
from skattr._persistence import persistable
from skattr.exceptions import NotCertifiableError
from skattr.laws._base import Bound, StatisticLaw, secret_pairs, widest_pairs
from skattr.laws._count_sensitivity import count_sensitivity, count_sensitivity_box
from skattr.laws._distances import (
    CoupledDistances,
    count_coupled_distances,
    least_certified,
)
from skattr.laws._gaussian import GaussianLaw, PairLaws
from skattr.laws._sums import SumLaws, pair_pmfs, sum_sensitivity
from skattr.wasserstein import wd_closeness

__all__ = ["MAX_EXACT_ATOMS", "BoxLaw", "ExactLaw", "lattice_width"]

#: Most atoms of an exact law of F the Gaussian calibrations compute a privacy
#: profile for (n times the column's lattice width).
MAX_EXACT_ATOMS = 10_000


def lattice_width(values: np.ndarray) -> float:
    """Count the steps between the smallest and largest of sorted integer values.

    The step is the values' greatest common difference, the spacing of the
    lattice their sums live on.
    """
    if values.size < 2:
        return 1.0
    step = int(np.gcd.reduce(np.diff(values).astype(np.int64)))
    return float((values[-1] - values[0]) / max(step, 1))


def _independence(theta, privacy: str) -> Assumption:
    reads = "values" if isinstance(theta, SumLaws) else "counts"
    return Assumption.of("records.independent", reads=reads, privacy=privacy)


#: The laws the exact W bounds read.
_EXACT_COUNTS = MethodStep.of("laws.exact-counts")


@persistable
@dataclass(frozen=True, eq=False)
class ExactLaw(StatisticLaw):
    """The exact law of a count or an integer sum under a finite Theta.

    Attributes
    ----------
    thetas : tuple
        Per secret: rows ``[P(counted | out), P(counted | in)]`` of count
        probabilities (an (m, 2) array), or a :class:`~skattr.theta.SumLaws`
        of an integer column's value frequencies, one row per theta.
    secrets : tuple of Secret
    query : Query
        The released count, proportion, sum or mean (its weight w(n)).
    moments : GaussianLaw or None
        The same Theta's moments of F, for the Gaussian calibrations, which
        start from them and certify on the exact pmfs; None when not asked
        for.
    """

    kind: ClassVar[str] = "exact"
    # The law models the records as independent draws from their group.
    records_iid: ClassVar[bool] = True

    thetas: tuple
    secrets: tuple
    query: object
    moments: GaussianLaw | None = None
    description: str = ""
    assumptions: tuple = ()
    reads_reference: bool = True
    states_law: bool = False
    reference_sizes: tuple | None = None
    source: object = field(default=None, repr=False, compare=False)

    @property
    def statement(self) -> Assumption:
        """What the exact law assumes, as a Gaussian calibration records it."""
        return Assumption.of("law.exact")

    def pair_laws(self, n: int) -> list[PairLaws]:
        """Return the moments' Gaussian pair laws (:meth:`GaussianLaw.pair_laws`)."""
        if self.moments is None:
            raise NotCertifiableError(
                "This exact law was fitted without its moments; fit it for a "
                "Gaussian calibration.")
        return self.moments.pair_laws(n)

    def per_theta(self, laws: PairLaws, required: np.ndarray,
                  what: str) -> np.ndarray:
        """Reduce a per-pair requirement to one per theta (no grid to check)."""
        return self.moments.per_theta(laws, required, what)

    def exact_pairs(self, n: int) -> list[tuple]:
        """Return the weighted laws (x_a, p_a, x_b, p_b) of F on both sides of pairs.

        Dataset privacy: the pairs on the grid k / n (a stated pair off it as
        every grid pair around it: :meth:`~skattr.Secret.grid_pairs`).
        """
        weight = self.query.weight(n)
        first = self.thetas[0]
        # A count's lattice is 0..n; a sum's is n times its values' width.
        width = (lattice_width(np.asarray(first.values, dtype=float))
                 if isinstance(first, SumLaws) else 1.0)
        if n * width > MAX_EXACT_ATOMS:
            raise NotCertifiableError(
                f"The exact law of this statistic on {n} records has about "
                f"{n * width:.0f} values, more than the {MAX_EXACT_ATOMS} skattr "
                "computes a privacy profile for. Use mechanism='wasserstein' or "
                "'approx-wasserstein', or pass law='gaussian'.")
        out = []
        for s, theta in zip(self.secrets, self.thetas, strict=True):
            pairs = s.grid_pairs(n)
            for (xa, pa), (xb, pb) in pair_pmfs(theta, pairs, n):
                out.append((xa * weight, pa, xb * weight, pb))
        return out

    def _pairs(self, secret, n, privacy):
        return secret_pairs(secret, n, privacy)

    def w_infinity(self, n: int, privacy: str) -> Bound:
        worst = 0.0
        for s, theta in zip(self.secrets, self.thetas, strict=True):
            pairs = self._pairs(s, n, privacy)
            if isinstance(theta, SumLaws):
                worst = max(worst, sum_sensitivity(pairs, n, theta.probs,
                                                   theta.values,
                                                   privacy=privacy))
            else:
                worst = max(worst, count_sensitivity(pairs, n, theta,
                                                     privacy=privacy))
        return Bound(worst * self.query.weight(n),
                     MethodStep.of("w-inf.largest", laws=_EXACT_COUNTS),
                     (_independence(self.thetas[0], privacy),))

    def closeness(self, n: int, privacy: str, delta: float, *,
                  progress=False, label: str = "") -> Bound:
        worst = 0.0
        for s, theta in zip(self.secrets, self.thetas, strict=True):
            pairs = self._pairs(s, n, privacy)
            for (xa, u), (xb, v) in pair_pmfs(theta, pairs, n, privacy=privacy):
                worst = max(worst, wd_closeness(xa, xb, delta, u, v))
        return Bound(worst * self.query.weight(n),
                     MethodStep.of("closeness.exact", laws=_EXACT_COUNTS),
                     (_independence(self.thetas[0], privacy),))


@persistable
@dataclass(frozen=True, eq=False)
class BoxLaw(StatisticLaw):
    """Exact count laws for every counting probability in a box.

    Attributes
    ----------
    box : ProbabilityBox
        ``low`` and ``high`` of P(counted | out) and P(counted | in).
    branch_and_bound : bool
        W_inf by branch and bound over the box (capped by the swap
        coupling), or by the cap alone.
    secrets : tuple of Secret
    query : Query
        The released count or proportion.
    """

    kind: ClassVar[str] = "box"
    coupled: ClassVar[bool] = True

    box: object
    secrets: tuple
    query: object
    description: str = ""
    assumptions: tuple = ()
    reads_reference: bool = False
    states_law: bool = False
    reference_sizes: tuple | None = None
    source: object = field(default=None, repr=False, compare=False)
    #: Whether W_inf is the branch and bound's supremum (tighter, seconds to
    #: minutes when the box reaches a probability of 0 or 1) or the swap
    #: coupling's cap alone (the records moved: instant; the default Theta's).
    branch_and_bound: bool = True

    @property
    def statement(self) -> Assumption:
        """What the box law assumes, as a Gaussian calibration records it."""
        return _independence(None, "dataset")

    def coupled_distances(self, n: int, privacy: str, *,
                          delta: float | None = None) -> list[tuple]:
        """Return, per pair, the distance laws of couplings valid over the box.

        See :func:`~skattr.laws._distances.count_coupled_distances`: the swap
        coupling (the records moved between the groups are the only ones
        counted differently, each with probability at most the box's widest
        gap) and the quantile coupling bounded at the box's corners (not
        computed when it cannot win at ``delta``).
        """
        pairs = [pair for s in self.secrets
                 for pair in secret_pairs(s, n, privacy)]
        return count_coupled_distances(pairs, n, self.box.low, self.box.high,
                                       privacy, self.query.weight(n),
                                       delta=delta)

    def coupling_step(self, per_pair) -> MethodStep:
        """How a Gaussian calibration through the couplings is recorded."""
        moved = self.worst_swap(per_pair)
        return MethodStep.of("coupling.gaussian-noise", records=moved.records,
                             gap=moved.gap)

    @staticmethod
    def worst_swap(per_pair) -> CoupledDistances:
        """Return the swap coupling's law of the pair that moves the most records."""
        return max((laws[0] for laws in per_pair),
                   key=lambda law: (law.records * law.gap, law.records))

    def _upper(self, n: int, privacy: str) -> float:
        worst = 0.0
        for s in self.secrets:
            pairs = secret_pairs(s, n, privacy)
            if all(np.ndim(v) == 0 for pair in pairs for v in pair):
                # For every p in the box a count's law is stochastically
                # monotone in the group's share (one record moved trades a
                # Bernoulli(p_out) for a Bernoulli(p_in)), so the quantile
                # functions of a pair inside (x, y) lie between x's and y's:
                # W_inf = sup |Q_a - Q_b| is largest at the widest pairs.
                widest = widest_pairs(pairs)
                pairs = list(zip(widest.low.tolist(), widest.high.tolist(),
                                 strict=True))
            bound = count_sensitivity_box(pairs, n, self.box.low, self.box.high,
                                          privacy=privacy)
            worst = max(worst, bound.upper)
        return worst * self.query.weight(n)

    def _assumptions(self, privacy: str) -> tuple:
        return (_independence(None, privacy), *self.assumptions)

    def w_infinity(self, n: int, privacy: str) -> Bound:
        # A coupling valid over the box moves F by at most its almost-sure
        # bound (the swap coupling: the records moved, times F's weight; the
        # quantile envelope, read from float CDFs, has none): a cap on the
        # branch and bound, which gives up on cells that reach a probability
        # of 0 or 1.
        per_pair = self.coupled_distances(n, privacy, delta=0.0)
        cap = max((min(law.largest for law in laws) for laws in per_pair),
                  default=0.0)
        if self.branch_and_bound:
            upper = self._upper(n, privacy)
            if upper <= cap:
                return Bound(upper,
                             MethodStep.of("w-inf.largest", laws=_EXACT_COUNTS),
                             self._assumptions(privacy))
        return Bound(cap, MethodStep.of("w-inf.swap",
                                        records=self.worst_swap(per_pair).records),
                     self._assumptions(privacy))

    def closeness(self, n: int, privacy: str, delta: float, *,
                  progress=False, label: str = "") -> Bound:
        per_pair = self.coupled_distances(n, privacy, delta=delta)
        w = max((least_certified(laws, lambda law: law.closeness(delta))
                 for laws in per_pair), default=0.0)
        moved = self.worst_swap(per_pair)
        if self.branch_and_bound:
            # W_inf bounds (W, delta)-closeness too; the smaller one holds.
            upper = self._upper(n, privacy)
            if upper <= w:
                return Bound(upper, MethodStep.of("closeness.box"),
                             self._assumptions(privacy))
        return Bound(w, MethodStep.of("closeness.coupled",
                                      records=moved.records, gap=moved.gap),
                     self._assumptions(privacy))
