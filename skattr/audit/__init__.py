"""Empirical privacy audits: lower bounds on epsilon from many releases.

A certificate is only as true as the code and the model behind it. An audit
draws many datasets on each side of a pair of the secret's values, releases
each through the mechanism's plan, and looks for an event whose probabilities
under the two secrets are further apart than the certified (epsilon, delta)
allows; Clopper-Pearson bounds turn the counts into a lower bound on epsilon
at a stated confidence. See ``docs/audit.md``.
"""

from skattr.audit._audit import TESTERS, audit, audit_ledger, scaled_noise
from skattr.audit._bounds import clopper_pearson, epsilon_lower_bound
from skattr.audit._result import AuditResult
from skattr.audit._testers import (
    Event,
    EventBound,
    histogram_test,
    likelihood_ratio_test,
    threshold_test,
)
from skattr.utils._public import public_dir

__all__ = [
    "TESTERS",
    "AuditResult",
    "Event",
    "EventBound",
    "audit",
    "audit_ledger",
    "clopper_pearson",
    "epsilon_lower_bound",
    "histogram_test",
    "likelihood_ratio_test",
    "scaled_noise",
    "threshold_test",
]

__dir__ = public_dir(__all__)
