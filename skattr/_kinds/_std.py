"""The standard deviation of each column."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from skattr._kinds._base import StatisticKind, register_kind
from skattr._kinds._kernels import VectorisedKernel, largest_std

__all__ = ["Std"]


@register_kind
class Std(StatisticKind):
    """Each column's sqrt(sum (x - mean)^2 / (n - ddof)): from 0 to the largest."""

    name: ClassVar[str] = "std"
    verb: ClassVar[bool] = True
    aggregation: ClassVar[bool] = True
    order: ClassVar[int] = 12
    fields: ClassVar[tuple] = ("ddof",)
    lazy_exact: ClassVar[str | None] = "moments"
    bounded_as: ClassVar[str] = "std"
    kernel: ClassVar[VectorisedKernel] = VectorisedKernel(
        lambda stat, block: np.std(block, axis=1, ddof=stat.ddof))

    def outputs_per_column(self, stat) -> int:
        """Return 1."""
        return 1

    def output_range(self, stat, low: float, high: float, n: int):
        """Return 0 to the largest std n values in [low, high] can have."""
        return 0.0, (largest_std(low, high, n, stat.ddof)
                     if n > stat.ddof else np.inf)

    def min_rows(self, stat, columns=None) -> int:
        """Return ddof + 1."""
        return stat.ddof + 1

    def band_coordinates(self, stat, columns: int) -> list:
        """Return a std coordinate per column, with its ddof."""
        return [(c, "spread", int(stat.ddof)) for c in range(columns)]
