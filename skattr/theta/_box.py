"""Theta as a box of counting probabilities, for the exact count laws."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skattr._persistence import persistable
from skattr.exceptions import InvalidParameterError
from skattr.laws import BoxLaw
from skattr.theta._request import check_exact_request

__all__ = ["ProbabilityBox"]


@persistable
@dataclass(frozen=True)
class ProbabilityBox:
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
