"""A ledger's ``epsilon="remaining"``: the largest own epsilon the budget allows.

:class:`FitsToBudget` gives :class:`~skattr.Ledger` the search: the joint
epsilon grows with a release's own epsilon (less noise), so the release is
planned at epsilons bracketed, then narrowed in log scale by Brent's
method, and the largest planned whose joint epsilon was computed and is
within the budget is the one released.
"""

from __future__ import annotations

import math
import warnings

from skattr._ledger._joint import BUDGET_RTOL
from skattr.exceptions import (
    BudgetExceededError,
    NotCertifiableError,
    PrivacyLeakWarning,
)

__all__ = ["FitsToBudget"]

# The own epsilon is found to this relative precision; the largest tried
# (beyond it the release needs no noise in practice).
_FIT_RTOL = 1e-3
_MAX_FITTED_EPSILON = 1e4


class FitsToBudget:
    """The search of ``epsilon="remaining"`` (a mixin of :class:`~skattr.Ledger`).

    It asks the ledger for ``_planned(query, params)`` (a release planned at
    the own epsilon in ``params``), ``_joint_epsilon`` (its joint epsilon
    with the releases so far), ``budget``, ``remaining``, ``spent``,
    ``releases`` and ``_n``.
    """

    def _fitted_to_budget(self, query, params) -> tuple:
        """Plan the release with the largest own epsilon the budget allows.

        The joint epsilon grows with the release's own epsilon (less
        noise), so the largest own epsilon whose joint epsilon is within
        the budget is found by bracketing, then Brent's method
        (``scipy.optimize.brentq``) in log scale, to a relative 1e-3, from
        below: the plan returned is the largest epsilon planned whose joint
        epsilon was computed and is within the budget. A release that fits
        only below 1e-6 of the budget's epsilon (pure noise) is refused, as
        is one when nothing remains of the budget unless it costs nothing.
        """
        limit = self.budget[0] * (1 + BUDGET_RTOL)
        tried, caught, chosen = [], [], None
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                best, chosen = self._bisected(query, params, limit, tried)
        finally:
            # Said again, but not of an epsilon tried and left (a bracket
            # past epsilon 10 warns of an epsilon that is not released), nor
            # of the largest tried when it was taken: the release then needs
            # no noise at any epsilon (a constant column), and its guarantee
            # is the ledger's, within the budget.
            left = tuple(f"epsilon={e:g} " for e in tried
                         if e != chosen or e >= _MAX_FITTED_EPSILON)
            for w in caught:
                if not (issubclass(w.category, PrivacyLeakWarning)
                        and str(w.message).startswith(left)):
                    warnings.warn_explicit(w.message, w.category, w.filename,
                                           w.lineno)
        # A reused estimator was replanned at every epsilon tried: back to
        # the one chosen (the epsilon asked for; a plan's own may differ, a
        # relaxation's gap added), whose plan (cached) was certified.
        est, plan = best[0], best[1]
        est.set_params(epsilon=chosen)
        if est.plan(n=self._n) is not plan:
            raise NotCertifiableError(
                "The release's plan changed while its epsilon was fitted to "
                "the budget; nothing was released. Pass a number as epsilon.")
        return best

    def _exhausted(self) -> bool:
        """Whether nothing remains of the budget (releases made spent it)."""
        return bool(self.releases) and (
            self.remaining <= BUDGET_RTOL * self.budget[0])

    def _exhausted_error(self) -> BudgetExceededError:
        """Return the refusal of any release once nothing remains of the budget."""
        return BudgetExceededError(
            f"Refused before any noise was drawn: nothing remains of the "
            f"budget (spent epsilon = {self.spent[0]:.4g} of "
            f"{self.budget[0]:g}), so no release fits, at any epsilon, but "
            "one that costs nothing. The releases made stay spent; another "
            "ledger of the same data would not renew the budget.")

    def _bisected(self, query, params, limit: float, tried: list) -> tuple:
        """Bracket and bisect the own epsilon (see :meth:`_fitted_to_budget`).

        Returns the best attempt and the epsilon it was asked at; every
        epsilon tried is appended to ``tried``.
        """

        def attempt(epsilon):
            tried.append(epsilon)
            found = self._planned(query, dict(params, epsilon=epsilon))
            return (*found, self._joint_epsilon(found[0], *found[2:]))

        # Bracket: double while the release fits, halve while it does not
        # (by 16 after three halvings: the joint epsilon then nears what the
        # releases so far cost with this one, whatever its noise).
        low = high = best = None
        over = math.inf             # the joint epsilon at `high`
        epsilon = max(self.remaining, 1e-3 * self.budget[0])
        halved = 0
        if self._exhausted():
            # Nothing remains: only a release that costs nothing fits (a
            # constant column's mean), which one plan tells.
            if attempt(epsilon)[-1] > limit:
                raise self._exhausted_error()
        while low is None or high is None:
            trial = attempt(epsilon)
            if trial[-1] <= limit:
                low, best = epsilon, trial
                if high is None and epsilon >= _MAX_FITTED_EPSILON:
                    return best, low    # no noise needed up to that epsilon
                epsilon *= 2
            else:
                high, over = epsilon, trial[-1]
                epsilon /= 2 if halved < 3 else 16
                halved += 1
                if low is None and epsilon < 1e-6 * self.budget[0]:
                    raise BudgetExceededError(
                        f"Refused before any noise was drawn: no epsilon fits "
                        f"this release within the budget. Even at epsilon = "
                        f"{high:.3g} (about {1 / high:.3g} times the noise of "
                        f"epsilon 1) the joint guarantee of the "
                        f"{len(self.releases) + 1} releases would be epsilon "
                        f"= {over:.4g}, over the budget {self.budget[0]:g} "
                        f"(spent so far: {self.spent[0]:.4g}): certified "
                        "together under one coupling, the releases so far "
                        "cost more beside this one than alone. Release fewer "
                        "statistics, or plan them with a larger budget from "
                        "the first release (ledger.plan shows each release's "
                        "joint epsilon before it is made).")
        # Then Brent's method (scipy) on g = log joint - log limit over log
        # own epsilon, to the precision; each epsilon it asks is planned
        # once, and the largest planned within the budget is taken.
        from scipy.optimize import brentq  # heavy: imported when used

        # By log epsilon: (the epsilon planned, its joint, its attempt).
        planned = {math.log(low): (low, best[-1], best),
                   math.log(high): (high, over, None)}

        def gap(log_epsilon):
            if log_epsilon not in planned:
                epsilon = math.exp(log_epsilon)
                trial = attempt(epsilon)
                planned[log_epsilon] = (epsilon, trial[-1], trial)
            return _gap(planned[log_epsilon][1], limit)

        if high / low > 1 + _FIT_RTOL:
            brentq(gap, math.log(low), math.log(high),
                   xtol=math.log1p(_FIT_RTOL))
        epsilon, _, trial = max((p for p in planned.values() if p[1] <= limit),
                                key=lambda p: p[0])
        return trial, epsilon


def _gap(joint: float, limit: float) -> float:
    """Return log(joint / limit), within +/- 1e3: at most 0 within the budget."""
    if not joint > 0:
        return -1e3 if joint <= 0 else 1e3      # NaN: over
    return min(math.log(joint / limit), 1e3)
