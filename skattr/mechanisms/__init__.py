"""The mechanisms, one scikit-learn estimator each."""

from skattr.mechanisms._apgm import AttributePrivateGaussian
from skattr.mechanisms._base import BaseMechanism

__all__ = ["AttributePrivateGaussian", "BaseMechanism"]

#: ``mechanism=`` names of the estimators available in this release.
MECHANISMS = {"apgm": AttributePrivateGaussian}
