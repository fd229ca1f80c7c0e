"""Noise laws: what a mechanism adds to a statistic, and what it costs.

A mechanism's calibration returns a :class:`NoiseLaw`; the release draws it,
reports its expected error and accuracy, and describes it, by asking the law.
"""

from skattr.noise._discrete import DiscreteLaplaceNoise
from skattr.noise._laws import (
    GaussianNoise,
    LaplaceNoise,
    NoiseLaw,
    SumOfNoises,
    expected_gaussian_norm,
    expected_laplace_norm,
    gaussian_accuracy,
    marginal_half_widths,
)
from skattr.utils._public import public_dir

__all__ = [
    "DiscreteLaplaceNoise",
    "GaussianNoise",
    "LaplaceNoise",
    "NoiseLaw",
    "SumOfNoises",
    "expected_gaussian_norm",
    "expected_laplace_norm",
    "gaussian_accuracy",
    "marginal_half_widths",
]

__dir__ = public_dir(__all__)
