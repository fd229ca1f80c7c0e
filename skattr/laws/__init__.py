"""The law of a released statistic F(X) given each value of a secret, under Theta.

A Theta spec (:mod:`skattr.theta`, or a :class:`skattr.bayes.NetworkTheta`)
fitted for a query and its secrets produces a :class:`StatisticLaw`; the
mechanisms calibrate their noise to it, each to the kinds it declares
(``calibrates``). The mathematics of the laws lives here: Gaussian pair laws,
exact pmfs of counts and sums and their Wasserstein distances, the exact
laws of order statistics, moment bounds, and the datasets the resampling
model draws.
"""

import importlib
import pkgutil

from skattr.laws._assume import AssumeGaussian
from skattr.laws._base import Bound, StatisticLaw
from skattr.laws._counts import count_pmf
from skattr.laws._coupling import ResamplingLaw
from skattr.laws._exact import BoxLaw, ExactLaw
from skattr.laws._gaussian import GaussianLaw, PairLaws
from skattr.laws._network import NetworkLaw
from skattr.laws._sums import SumLaws, sum_pmf
from skattr.utils._public import public_dir

__all__ = [
    "AssumeGaussian",
    "BoxLaw",
    "Bound",
    "ExactLaw",
    "GaussianLaw",
    "NetworkLaw",
    "PairLaws",
    "ResamplingLaw",
    "StatisticLaw",
    "SumLaws",
    "count_pmf",
    "sum_pmf",
]

__dir__ = public_dir(__all__)

# A law registers its builders by kind of statistic (skattr._kinds.register_law)
# when its module is imported: every module of the package is, so a law in a
# new module is found with no other file changed.
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
