"""Laws on the integers 0..10 for the population tests, shared by their oracles.

Each is a probability vector over ``SUPPORT``, computed with SciPy alone
(nothing from skattr): discretised lognormal and Pareto laws, two binomial
modes, two point masses.
"""

import numpy as np
from scipy import stats

SUPPORT = np.arange(11)


def normalised(weights):
    weights = np.asarray(weights, dtype=float)
    return weights / weights.sum()


def lognormal(mu, sigma):
    cdf = stats.lognorm.cdf(SUPPORT + 0.5, sigma, scale=np.exp(mu))
    return normalised(np.diff(np.concatenate([[0.0], cdf[:-1], [1.0]])))


def pareto(shape):
    cdf = stats.pareto.cdf(SUPPORT + 1.5, shape)
    return normalised(np.diff(np.concatenate([[0.0], cdf[:-1], [1.0]])))


def two_modes(low, high, weight):
    return normalised(weight * stats.binom.pmf(SUPPORT, 10, low)
                      + (1 - weight) * stats.binom.pmf(SUPPORT, 10, high))


def points(p, low=0, high=10):
    """Mass 1 - p at ``low`` and p at ``high``."""
    law = np.zeros(11)
    law[[low, high]] = [1 - p, p]
    return law
