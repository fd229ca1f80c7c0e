"""Synthetic data: Relaxed Adaptive Projection (Aydore et al. 2021).

:class:`DPRAP` is the differentially private RAP of the slides (the
baseline); a synthesiser that hides a global property builds on it.
"""

from skattr.synth._dp_rap import DPRAP, marginal_errors
from skattr.synth._rap import (
    OneHotDomain,
    answer,
    bin_columns,
    epsilon_of_rho,
    marginal_workload,
    report_noisy_max,
    rho_of_epsilon,
)
from skattr.utils._public import public_dir

__all__ = [
    "DPRAP",
    "OneHotDomain",
    "answer",
    "bin_columns",
    "epsilon_of_rho",
    "marginal_errors",
    "marginal_workload",
    "report_noisy_max",
    "rho_of_epsilon",
]

__dir__ = public_dir(__all__)
