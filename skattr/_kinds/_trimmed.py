"""The trimmed mean of each column (``scipy.stats.trim_mean``)."""

from __future__ import annotations

from typing import ClassVar

from skattr._kinds._base import StatisticKind, register_kind
from skattr._kinds._kernels import VectorisedKernel

__all__ = ["TrimmedMean"]


def _trimmed_means(stat, block):
    from scipy import stats

    return stats.trim_mean(block, stat.proportiontocut, axis=1)


@register_kind
class TrimmedMean(StatisticKind):
    """The mean once int(proportiontocut * n) records are cut from each end."""

    name: ClassVar[str] = "trimmed-mean"
    order: ClassVar[int] = 13
    fields: ClassVar[tuple] = ("proportiontocut",)
    kernel: ClassVar[VectorisedKernel] = VectorisedKernel(_trimmed_means)

    def outputs_per_column(self, stat) -> int:
        """Return 1."""
        return 1

    def output_range(self, stat, low: float, high: float, n: int):
        """Return the column's clipping range."""
        return low, high
