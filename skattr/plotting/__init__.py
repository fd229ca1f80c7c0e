"""Plots of releases, of error against epsilon, of attacks and of synthetic tables.

Importing this package does not import matplotlib; each function does, and
raises :class:`~skattr.exceptions.MissingDependencyError` without it
(``pip install "skattr[plot]"``).
"""

from skattr.plotting._attack import plot_attack_accuracy
from skattr.plotting._release import plot_release
from skattr.plotting._synthetic import plot_synthetic
from skattr.plotting._tradeoff import plot_tradeoff
from skattr.utils._public import public_dir

__all__ = ["plot_attack_accuracy", "plot_release", "plot_synthetic",
           "plot_tradeoff"]

__dir__ = public_dir(__all__)
