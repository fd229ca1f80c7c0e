"""Theta as a box of counting probabilities, for the exact count laws."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skattr._certificate import Assumption
from skattr._persistence import persistable
from skattr.exceptions import InvalidParameterError
from skattr.laws import BoxLaw
from skattr.theta._protocol import ThetaSpec
from skattr.theta._request import check_exact_request

__all__ = ["ConfidenceBox", "ProbabilityBox", "ReferenceConfidence"]


@persistable
@dataclass(frozen=True)
class ProbabilityBox(ThetaSpec):
    """Every p with ``low <= p <= high``: a continuous Theta for count laws.

    ``p[c]`` is the probability that a record whose sensitive attribute is in
    category c is counted (for a binary attribute, ``(P(counted | not in the
    group), P(counted | in it))``, as in :func:`~skattr.theta.count_pmf`). The
    Wasserstein mechanisms take the supremum over the whole box, certified by
    branch and bound rather than read off a grid
    (:func:`~skattr.laws._count_sensitivity.count_sensitivity_box`).

    Parameters
    ----------
    low, high : array-like of shape (k,)
        Corners of the box, in [0, 1], ``low <= high``.

    Examples
    --------
    Zhang et al.'s Example 2: p1 and p2 anywhere in [0.4, 0.6].

    >>> from skattr.theta import ProbabilityBox
    >>> ProbabilityBox(low=(0.4, 0.4), high=(0.6, 0.6))
    ProbabilityBox(low=(0.4, 0.4), high=(0.6, 0.6))
    """

    low: tuple
    high: tuple

    law_kinds = ("box",)
    states_law = False
    reads_reference = False
    assumptions = ()

    def fit_law(self, request):
        """Return the count laws over the box (certified by branch and bound)."""
        if "box" not in request.kinds:
            request.refuse("ProbabilityBox", "count laws over a box")
        check_exact_request(request, sums=False)
        return BoxLaw(box=self, secrets=tuple(request.secrets),
                      query=request.query,
                      description=f"p anywhere in [{self.low}, {self.high}]")

    def __post_init__(self):
        try:
            low = np.atleast_1d(np.asarray(self.low, dtype=float))
            high = np.atleast_1d(np.asarray(self.high, dtype=float))
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"ProbabilityBox needs numeric corners; got low={self.low!r}, "
                f"high={self.high!r} ({exc}).") from exc
        if (low.ndim != 1 or low.shape != high.shape or low.size < 2
                or not np.all((low >= 0) & (high <= 1) & (low <= high))):
            raise InvalidParameterError(
                "ProbabilityBox needs corners of the same length (one entry per "
                "category, at least 2) with 0 <= low <= high <= 1; got "
                f"low={self.low!r}, high={self.high!r}.")
        object.__setattr__(self, "low", tuple(low.tolist()))
        object.__setattr__(self, "high", tuple(high.tolist()))


class ReferenceConfidence(ThetaSpec):
    """What the Thetas of a reference taken as a sample share: ``confidence``.

    Subclasses are frozen dataclasses with a ``confidence`` field; this
    checks it, and reads the one secret's two groups from the reference.
    """

    states_law = False
    reads_reference = True
    assumptions = ()

    @property
    def band_confidence(self) -> float:
        """Theta protocol: the laws lie in the reference's bands at this confidence."""
        return self.confidence

    def __post_init__(self):
        try:
            confidence = float(self.confidence)
        except (TypeError, ValueError):
            confidence = float("nan")
        if not 0 < confidence < 1:
            raise InvalidParameterError(
                f"{type(self).__name__}(confidence=...) must be a probability "
                f"in (0, 1), such as 0.999; got {self.confidence!r}.")
        object.__setattr__(self, "confidence", confidence)

    def groups(self, request) -> tuple:
        """Return the reference and, per secret, which records are in its group."""
        reference = request.reference()
        insides = []
        for secret in request.secrets:
            inside = reference.groups(secret) == 1
            if inside.all() or not inside.any():
                raise InvalidParameterError(
                    f"The reference data hold no records on one side of "
                    f"{secret.label}; {type(self).__name__} needs both groups.")
            insides.append(inside)
        return reference, insides


@persistable
@dataclass(frozen=True)
class ConfidenceBox(ReferenceConfidence):
    """Theta for a count: the probabilities the reference sample allows.

    The reference records are taken as a random sample of the population;
    each group's counting probability (``P(counted | not in the group)``,
    ``P(counted | in it)``) lies in its exact Clopper-Pearson interval, both
    at once with probability at least ``confidence`` over the reference
    sample (Bonferroni: each at 1 - (1 - confidence) / 2; with several
    secrets, every secret's box at once and the hull of them). ``apgm`` and the
    Wasserstein mechanisms certify the worst case over that box, through
    couplings valid at every point of it (``docs/population.md`` proves
    them), so the certificate holds for the population the reference came
    from, with that probability; the release records it. A value the
    reference never shows in a group is not a value of probability 0: its
    interval reaches up to what the sample cannot rule out. It is the
    default Theta of a count (``theta="auto"``, at 0.999); pass it to choose
    the confidence.

    Parameters
    ----------
    confidence : float, default=0.999
        The probability, over the reference sample, that the box holds the
        population's probabilities. It is not the certificate's delta: delta
        is a probability over the private data and the noise, for a fixed
        population; this one is over which reference was drawn.

    Examples
    --------
    >>> import numpy as np, pandas as pd, skattr
    >>> from skattr.theta import ConfidenceBox
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat([1, 0], 200)
    >>> ref = pd.DataFrame({"g": g, "sick": rng.random(400) < 0.1 + 0.1 * g})
    >>> mech = skattr.mechanisms.WassersteinMechanism(
    ...     query=skattr.Query.count("sick", True),
    ...     secret=skattr.Secret.proportion("g", 1, pairs=[(0.4, 0.6)]),
    ...     theta=ConfidenceBox()).fit(ref)
    >>> plan = mech.plan(n=100)
    >>> plan.assumes("reference.sample"), plan.delta
    (True, 0.0)
    """

    confidence: float = 0.999

    law_kinds = ("box",)

    def box(self, counted: np.ndarray, inside: np.ndarray, *,
            intervals: int = 2) -> ProbabilityBox:
        """Return the simultaneous Clopper-Pearson box of the two groups.

        Each interval is at 1 - (1 - confidence) / ``intervals``: all of the
        release's intervals (two a secret) hold at once (Bonferroni).
        """
        from statsmodels.stats.proportion import proportion_confint

        groups = (~inside, inside)
        # Exact (Clopper-Pearson: "beta") intervals.
        low, high = proportion_confint(
            np.array([counted[g].sum() for g in groups]),
            np.array([g.sum() for g in groups]),
            alpha=(1 - self.confidence) / intervals, method="beta")
        return ProbabilityBox(low=tuple(low), high=tuple(high))

    def fit_law(self, request):
        """Return the count laws over the reference's confidence box."""
        if "box" not in request.kinds:
            request.refuse("ConfidenceBox", "count laws over a box")
        check_exact_request(request, sums=False)
        reference, insides = self.groups(request)
        counted = reference.records()[:, 0] != 0
        # Several secrets (each its own groups): every secret's box, all at
        # once, and the smallest box holding them, over which each secret's
        # pairs are certified (its own box is inside it).
        boxes = [self.box(counted, inside, intervals=2 * len(insides))
                 for inside in insides]
        box = ProbabilityBox(low=tuple(np.min([b.low for b in boxes], axis=0)),
                             high=tuple(np.max([b.high for b in boxes], axis=0)))
        sizes = tuple((int((~inside).sum()), int(inside.sum()))
                      for inside in insides)
        return BoxLaw(
            box=box, secrets=tuple(request.secrets), query=request.query,
            description=(f"p in the reference's simultaneous "
                         f"{self.confidence:g} Clopper-Pearson box: "
                         f"outside the group [{box.low[0]:.4g}, "
                         f"{box.high[0]:.4g}], inside [{box.low[1]:.4g}, "
                         f"{box.high[1]:.4g}] ("
                         + "; ".join(f"{o} + {i} records" for o, i in sizes)
                         + (", the hull of the secrets' boxes" if len(sizes) > 1
                            else "") + ")"),
            assumptions=(Assumption.of("reference.sample",
                                       confidence=self.confidence),),
            reads_reference=True, branch_and_bound=False,
            reference_sizes=sizes)
