"""Theta models: what ``fit`` learns (or an expert states) about the data's law."""

from skattr.theta._expert import ExpertTheta
from skattr.theta._fit import fit_group_moments, fit_joint_gaussian
from skattr.theta._models import GroupMoments, JointGaussian

__all__ = [
    "ExpertTheta",
    "GroupMoments",
    "JointGaussian",
    "fit_group_moments",
    "fit_joint_gaussian",
]
