"""Gaussian calibration: classic and analytic constants, exact privacy profiles.

The public face of skattr's calibration mathematics, for checking a certificate by
hand or calibrating noise outside a mechanism.

Examples
--------
>>> from skattr.calibration import (analytic_mu, classic_constant,
...                                 epsilon_for_mahalanobis, gaussian_delta)
>>> round(classic_constant(1e-3), 4)            # c = sqrt(2 ln(1.25 / delta))
3.7765
>>> mu = analytic_mu(1.0, 1e-3)                 # largest certified distance
>>> round(mu, 4), round(1.0 / classic_constant(1e-3), 4)  # analytic vs classic
(0.3884, 0.2648)
>>> bool(abs(gaussian_delta(mu, 1.0) - 1e-3) < 1e-12)
True
>>> round(epsilon_for_mahalanobis(mu, 1e-3), 6)  # and back
1.0
"""

from skattr.calibration._gaussian import (
    analytic_mu,
    classic_constant,
    classic_mu,
    epsilon_for_mahalanobis,
    gaussian_delta,
    gaussian_pair_delta,
    gaussian_pair_epsilon,
    max_mahalanobis,
    renyi_gaussian_delta,
)
from skattr.calibration._quadratic_loss import (
    multivariate_gaussian_pair_delta,
    multivariate_gaussian_pair_epsilon,
)
from skattr.utils._public import public_dir

__all__ = [
    "analytic_mu",
    "classic_constant",
    "classic_mu",
    "epsilon_for_mahalanobis",
    "gaussian_delta",
    "gaussian_pair_delta",
    "gaussian_pair_epsilon",
    "max_mahalanobis",
    "multivariate_gaussian_pair_delta",
    "multivariate_gaussian_pair_epsilon",
    "renyi_gaussian_delta",
]

__dir__ = public_dir(__all__)
