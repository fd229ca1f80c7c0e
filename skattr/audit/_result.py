"""The result of an audit: the empirical lower bound beside the certificate."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from skattr.audit._testers import Event

__all__ = ["AuditResult"]


@dataclass(frozen=True)
class AuditResult:
    """An empirical epsilon lower bound set against a certified epsilon.

    Returned by :func:`skattr.audit.audit` and :func:`skattr.audit.audit_ledger`.

    Attributes
    ----------
    mechanism : str
        The mechanism's name (or the ledger's releases).
    pair : (float, float)
        The secret's two values the datasets were drawn with.
    n : int
        Records per dataset.
    epsilon, delta : float
        The certified guarantee of the plan audited.
    epsilon_lower_bound : float
        The largest lower bound of the testers (0: nothing detected). With
        probability at least ``confidence`` the mechanism's true epsilon at
        ``delta`` on these datasets is at least this.
    confidence : float
        The confidence of ``epsilon_lower_bound`` (Bonferroni over the
        testers).
    releases : int
        Releases drawn on each side (half chose the event, half tested it).
    event : Event or None
        The event behind ``epsilon_lower_bound``.
    testers : tuple of EventBound
        What each tester found.
    mode : str
        ``"vectorised"`` (statistics on all datasets at once, noise in one
        batch) or ``"release"`` (the mechanism's own ``release`` on each
        dataset).
    data : str
        Where the datasets came from.
    control : str
        Empty for an audit of the mechanism as it is; otherwise the
        deliberate change of a positive control (e.g. "noise x 0.5").
    """

    mechanism: str
    pair: tuple
    n: int
    epsilon: float
    delta: float
    epsilon_lower_bound: float
    confidence: float
    releases: int
    event: Event | None
    testers: tuple
    mode: str
    data: str
    control: str = ""

    @property
    def passed(self) -> bool:
        """True when the lower bound does not exceed the certified epsilon."""
        return self.epsilon_lower_bound <= self.epsilon

    @property
    def flagged(self) -> bool:
        """True when the lower bound exceeds the certified epsilon."""
        return not self.passed

    def __repr__(self) -> str:
        verdict = "passed" if self.passed else "FLAGGED"
        control = f", control={self.control!r}" if self.control else ""
        return (f"AuditResult({self.mechanism}, pair={self.pair}, n={self.n}, "
                f"certified=({self.epsilon:.4g}, {self.delta:.3g}), "
                f"epsilon_lower_bound={self.epsilon_lower_bound:.4g}, "
                f"{verdict} at {self.confidence:.0%}, "
                f"releases={self.releases}{control})")

    def summary(self) -> str:
        """Return a plain-text report of the audit."""
        verdict = ("passed: the lower bound is at or below the certified "
                   "epsilon" if self.passed else
                   "FLAGGED: the lower bound exceeds the certified epsilon")
        lines = [
            f"Audit of {self.mechanism}"
            + (f" (positive control: {self.control})" if self.control else ""),
            f"  pair of secret values   {self.pair[0]:g} vs {self.pair[1]:g}, "
            f"n = {self.n}",
            f"  datasets                {self.data}",
            f"  releases per side       {self.releases} ({self.mode}); half "
            "choose the event, half test it",
            f"  certified               epsilon = {self.epsilon:.6g}, delta = "
            f"{self.delta:.3g}",
            f"  empirical lower bound   epsilon >= "
            f"{self.epsilon_lower_bound:.4g} at {self.confidence:.0%} "
            "confidence",
            f"  verdict                 {verdict}",
        ]
        for found in self.testers:
            lines.append(f"  {found.tester + ' tester':<24}epsilon >= "
                         f"{found.epsilon_lower_bound:.4g} "
                         f"({found.count_top}/{found.total_top} vs "
                         f"{found.count_bottom}/{found.total_bottom})")
        if self.event is not None:
            lines.append(f"  best event              {self.event.describe()}")
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """Return one row per tester: its bound, event and counts."""
        rows = []
        for found in self.testers:
            rows.append({
                "mechanism": self.mechanism, "control": self.control,
                "epsilon": self.epsilon, "delta": self.delta,
                "tester": found.tester,
                "epsilon_lower_bound": found.epsilon_lower_bound,
                "passed": found.epsilon_lower_bound <= self.epsilon,
                "event": "" if found.event is None else found.event.describe(),
                "count_top": found.count_top, "total_top": found.total_top,
                "count_bottom": found.count_bottom,
                "total_bottom": found.total_bottom, "alpha": found.alpha,
            })
        return pd.DataFrame(rows)


