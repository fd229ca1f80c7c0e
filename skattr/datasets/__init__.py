"""Generators for the papers' synthetic settings and loaders for real data."""

from skattr.datasets._adult import load_adult
from skattr.datasets._hospital import HOSPITAL_PAPER, hospital_theta, make_hospital

__all__ = ["HOSPITAL_PAPER", "hospital_theta", "load_adult", "make_hospital"]
