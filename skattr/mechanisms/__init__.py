"""The mechanisms, one scikit-learn estimator each."""

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
from skattr.mechanisms._primitives import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    randomized_response,
    randomized_response_estimate,
    randomized_response_variance,
)
from skattr.mechanisms._wasserstein import (
    ApproximateWassersteinMechanism,
    WassersteinMechanism,
)

__all__ = [
    "MECHANISMS",
    "ApproximateWassersteinMechanism",
    "AttributePrivateGaussian",
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
    "OptimalGaussian",
    "WassersteinMechanism",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "randomized_response",
    "randomized_response_estimate",
    "randomized_response_variance",
]

#: ``mechanism=`` name -> estimator class (a read-only mapping, in the
#: registry's order; see :mod:`skattr.mechanisms._registry`).
MECHANISMS = _registry.MECHANISMS
