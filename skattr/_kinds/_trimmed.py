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
    bounded_as: ClassVar[str] = "trimmed mean"
    kernel: ClassVar[VectorisedKernel] = VectorisedKernel(_trimmed_means)

    def outputs_per_column(self, stat) -> int:
        """Return 1."""
        return 1

    def output_range(self, stat, low: float, high: float, n: int):
        """Return the column's clipping range."""
        return low, high

    def record_weight(self, stat, n: int) -> float:
        """Return 1 / (n - 2g), g = int(proportiontocut * n) cut from each end.

        One record's value moving by d moves every order statistic the same
        way, by 0 to d, and all of them by d in total (their sum is the
        records'); so the n - 2g kept ones move by d at most in total, and
        their mean by d / (n - 2g).
        """
        return 1.0 / (n - 2 * int(stat.proportiontocut * n))

    def band_coordinates(self, stat, columns: int) -> list:
        """Return a monotone coordinate per column, weighted 1 / (n - 2g).

        The trimmed mean is nondecreasing in each record and one record's
        move by d moves it by at most d / (n - 2g)
        (:meth:`record_weight`): its move is at most the weight times the
        positive parts of the records' moves, each way
        (:mod:`skattr.laws._joint_band`).
        """
        return [(c, "monotone", stat) for c in range(columns)]

    def band_summed(self) -> bool:
        """Return True: its coordinates are weighted sums (of positive parts)."""
        return True
