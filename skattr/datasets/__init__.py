"""Synthetic settings and real data of the papers, and their experiments."""

from skattr.datasets._adult import load_adult
from skattr.datasets._experiments import (
    HOSPITAL_COLUMNS,
    hospital_experiment,
    hospital_mechanism,
    hospital_secret,
)
from skattr.datasets._hospital import HOSPITAL_PAPER, hospital_theta, make_hospital
from skattr.datasets._schools import make_schools, schools_network
from skattr.utils._public import public_dir

__all__ = [
    "HOSPITAL_COLUMNS",
    "HOSPITAL_PAPER",
    "hospital_experiment",
    "hospital_mechanism",
    "hospital_secret",
    "hospital_theta",
    "load_adult",
    "make_hospital",
    "make_schools",
    "schools_network",
]

__dir__ = public_dir(__all__)
