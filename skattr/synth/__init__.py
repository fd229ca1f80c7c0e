"""Synthetic data: Relaxed Adaptive Projection (Aydore et al. 2021).

:class:`DPRAP` is the differentially private RAP of the slides (the
baseline); :class:`AttributePrivateRAP` hides a group's share (attribute
privacy), fitting each group's own marginals.
"""

from skattr.dp import epsilon_of_rho, rho_of_epsilon
from skattr.synth._ap_rap import AttributePrivateRAP
from skattr.synth._dp_rap import DPRAP, marginal_errors
from skattr.synth._rap import (
    OneHotDomain,
    answer,
    bin_columns,
    marginal_workload,
    report_noisy_max,
    select_marginals,
)
from skattr.synth._synthesize import SyntheticData, resolve_domain, synthesize
from skattr.utils._public import public_dir

__all__ = [
    "DPRAP",
    "AttributePrivateRAP",
    "OneHotDomain",
    "answer",
    "bin_columns",
    "epsilon_of_rho",
    "marginal_errors",
    "marginal_workload",
    "report_noisy_max",
    "SyntheticData",
    "resolve_domain",
    "rho_of_epsilon",
    "select_marginals",
    "synthesize",
]

__dir__ = public_dir(__all__)
