"""The mechanisms, one scikit-learn estimator each.

The classic record-level DP primitives (randomized response, the exponential
mechanism) are functions, not estimators: they live in :mod:`skattr.dp`.
"""

from skattr.mechanisms import _registry
from skattr.mechanisms._apgm import AttributePrivateGaussian
from skattr.mechanisms._base import BaseMechanism
from skattr.mechanisms._baselines import (
    DPGaussian,
    DPLaplace,
    GroupDPGaussian,
    GroupDPLaplace,
)
from skattr.mechanisms._expected_value import (
    DirectionalGaussian,
    DirectionalLaplace,
    DirectionalUncertaintyGaussian,
    EigenvectorGaussian,
    ExpectedValueGaussian,
    ExpectedValueLaplace,
    OptimalGaussian,
)
from skattr.mechanisms._markov_quilt import (
    AttributePrivateMarkovQuilt,
    MarkovQuiltMechanism,
)
from skattr.mechanisms._pipeline import split_pipeline
from skattr.mechanisms._relaxations import MaxDivergenceGap, WassersteinGap
from skattr.mechanisms._wasserstein import (
    ApproximateWassersteinMechanism,
    WassersteinMechanism,
)
from skattr.utils._public import public_dir

__all__ = [
    "MECHANISMS",
    "ApproximateWassersteinMechanism",
    "AttributePrivateGaussian",
    "AttributePrivateMarkovQuilt",
    "BaseMechanism",
    "DPGaussian",
    "DPLaplace",
    "DirectionalGaussian",
    "DirectionalLaplace",
    "DirectionalUncertaintyGaussian",
    "EigenvectorGaussian",
    "ExpectedValueGaussian",
    "ExpectedValueLaplace",
    "GroupDPGaussian",
    "GroupDPLaplace",
    "MarkovQuiltMechanism",
    "MaxDivergenceGap",
    "OptimalGaussian",
    "WassersteinGap",
    "WassersteinMechanism",
    "split_pipeline",
]

#: ``mechanism=`` name -> estimator class (a read-only mapping, in the
#: registry's order; see :mod:`skattr.mechanisms._registry`).
MECHANISMS = _registry.MECHANISMS

__dir__ = public_dir(__all__)
