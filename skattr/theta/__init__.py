"""Theta models: what ``fit`` learns (or an expert states) about the data's law."""

from skattr.theta._box import ProbabilityBox
from skattr.theta._count_sensitivity import (
    BoxSensitivity,
    count_sensitivity,
    count_sensitivity_box,
)
from skattr.theta._counts import count_pmf
from skattr.theta._expert import ExpertTheta
from skattr.theta._fit import fit_group_moments, fit_joint_gaussian
from skattr.theta._models import GroupMoments, JointGaussian
from skattr.theta._resample import (
    Resample,
    ResampledLaws,
    draw_subsets,
    quantile_bounds,
    tail_bounds,
)
from skattr.theta._sampled import Bootstrap, MonteCarlo, MonteCarloMoments
from skattr.theta._sums import (
    SumLaws,
    bootstrap_exact_law,
    fit_exact_law,
    pair_pmfs,
    sum_pmf,
    sum_sensitivity,
)

__all__ = [
    "Bootstrap",
    "bootstrap_exact_law",
    "BoxSensitivity",
    "ExpertTheta",
    "GroupMoments",
    "JointGaussian",
    "MonteCarlo",
    "MonteCarloMoments",
    "ProbabilityBox",
    "Resample",
    "ResampledLaws",
    "SumLaws",
    "count_pmf",
    "count_sensitivity",
    "count_sensitivity_box",
    "draw_subsets",
    "fit_exact_law",
    "fit_group_moments",
    "fit_joint_gaussian",
    "pair_pmfs",
    "quantile_bounds",
    "sum_pmf",
    "sum_sensitivity",
    "tail_bounds",
]
