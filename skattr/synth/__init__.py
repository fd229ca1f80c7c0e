"""Synthetic data that hides a group's share: the interface, and RAP (Aydore 2021).

:class:`Synthesizer` is what skattr asks of a synthesiser (``fit``,
``sample``, its certificates, parameters and command-line options);
:func:`synthesize` runs the one ``method=`` names in :data:`SYNTHESIZERS`
(add one with :func:`register_synthesizer`). :class:`RAPBase` is Relaxed
Adaptive Projection's machinery: :class:`DPRAP` is the differentially
private RAP of the slides (the baseline); :class:`AttributePrivateRAP`
(``method="rap"``) hides a group's share (attribute privacy), fitting each
group's own marginals.
"""

from skattr.dp import epsilon_of_rho, rho_of_epsilon
from skattr.synth._ap_rap import AttributePrivateRAP
from skattr.synth._base import (
    Option,
    Parameter,
    ReleasedCells,
    Synthesizer,
    certificate_lines,
)
from skattr.synth._dp_rap import DPRAP, marginal_errors
from skattr.synth._rap import (
    OneHotDomain,
    answer,
    bin_columns,
    marginal_workload,
    report_noisy_max,
    select_marginals,
)
from skattr.synth._rap_base import RAPBase
from skattr.synth._registry import (
    SYNTHESIZERS,
    SynthesizerRegistry,
    register_synthesizer,
)
from skattr.synth._synthesize import SyntheticData, resolve_domain, synthesize
from skattr.utils._public import public_dir

__all__ = [
    "DPRAP",
    "SYNTHESIZERS",
    "AttributePrivateRAP",
    "OneHotDomain",
    "Option",
    "Parameter",
    "RAPBase",
    "ReleasedCells",
    "Synthesizer",
    "SynthesizerRegistry",
    "answer",
    "bin_columns",
    "certificate_lines",
    "epsilon_of_rho",
    "marginal_errors",
    "marginal_workload",
    "register_synthesizer",
    "report_noisy_max",
    "SyntheticData",
    "resolve_domain",
    "rho_of_epsilon",
    "select_marginals",
    "synthesize",
]

__dir__ = public_dir(__all__)
