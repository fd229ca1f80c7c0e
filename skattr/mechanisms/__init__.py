"""The mechanisms, one scikit-learn estimator each."""

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

#: ``mechanism=`` names of the estimators available in this release.
MECHANISMS = {
    "apgm": AttributePrivateGaussian,
    "expm-laplace": ExpectedValueLaplace,
    "expm-gaussian": ExpectedValueGaussian,
    "dirm-laplace": DirectionalLaplace,
    "dirm-gaussian": DirectionalGaussian,
    "eigm": EigenvectorGaussian,
    "daum": DirectionalUncertaintyGaussian,
    "optimal": OptimalGaussian,
    "wasserstein": WassersteinMechanism,
    "approx-wasserstein": ApproximateWassersteinMechanism,
    "group-dp-laplace": GroupDPLaplace,
    "group-dp-gaussian": GroupDPGaussian,
    "dp-laplace": DPLaplace,
    "dp-gaussian": DPGaussian,
}
