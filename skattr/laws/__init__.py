"""The law of a released statistic F(X) given each value of a secret, under Theta.

A Theta spec (:mod:`skattr.theta`, or a :class:`skattr.bayes.NetworkTheta`)
fitted for a query and a secret produces one of these laws; the mechanisms
calibrate their noise to it. The mathematics of the laws lives here: Gaussian
pair laws, exact pmfs of counts and sums, W of count laws, the exact laws of
order statistics, moment bounds, and the datasets the resampling model draws.
"""

from skattr.laws._counts import count_pmf
from skattr.laws._sums import SumLaws, sum_pmf
from skattr.utils._public import public_dir

__all__ = ["SumLaws", "count_pmf", "sum_pmf"]

__dir__ = public_dir(__all__)
