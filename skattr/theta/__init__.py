"""Theta models: what ``fit`` learns (or an expert states) about the data's law."""

from skattr.theta._counts import count_pmf, count_sensitivity
from skattr.theta._expert import ExpertTheta
from skattr.theta._fit import fit_group_moments, fit_joint_gaussian
from skattr.theta._models import GroupMoments, JointGaussian
from skattr.theta._sampled import Bootstrap, MonteCarlo, MonteCarloMoments

__all__ = [
    "Bootstrap",
    "ExpertTheta",
    "GroupMoments",
    "JointGaussian",
    "MonteCarlo",
    "MonteCarloMoments",
    "count_pmf",
    "count_sensitivity",
    "fit_group_moments",
    "fit_joint_gaussian",
]
