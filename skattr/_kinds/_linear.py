"""The linear kinds: mean, sum, count and proportion (:class:`~skattr.Query`'s).

F(X) = w(n) sum_j h(x_j): the column's values (mean, sum) or the indicator
of a value (count, proportion), weighted 1 / n (mean, proportion) or 1.
"""

from __future__ import annotations

from typing import ClassVar

from skattr._kinds._base import StatisticKind, register_kind

__all__ = ["Count", "LinearKind", "Mean", "Proportion", "Sum"]


class LinearKind(StatisticKind):
    """A kind linear in the records: one value per column, summed in one pass."""

    linear: ClassVar[bool] = True
    lazy_exact: ClassVar[str | None] = "sums"
    bounded_as: ClassVar[str] = "sum"
    #: The default Theta takes its band law for every mechanism (``apgm``
    #: calibrates it; the others are told so, or take the Gaussian model).
    default_band_for: ClassVar[tuple[str, ...] | None] = None

    def outputs_per_column(self, stat) -> int:
        """Return 1: one value per column."""
        return 1

    def output_range(self, stat, low: float, high: float, n: int):
        """Return the clipping range (a sum's: n times it)."""
        return low, high

    def record_weight(self, stat, n: int) -> float:
        """Return w(n): F moves by w(n) d when one record's value moves by d."""
        return self.weight(n)

    def band_coordinates(self, stat, columns: int) -> list:
        """Return a linear coordinate per column, weighted as the kind is."""
        return [(c, "linear", stat) for c in range(columns)]

    def band_summed(self) -> bool:
        """Return True: its coordinates are weighted sums."""
        return True


@register_kind
class Mean(LinearKind):
    """The mean of a column: its values, weighted 1 / n."""

    name: ClassVar[str] = "mean"
    verb: ClassVar[bool] = True
    aggregation: ClassVar[bool] = True
    order: ClassVar[int] = 0
    averaged: ClassVar[bool] = True


@register_kind
class Sum(LinearKind):
    """The sum of a column: its values, weighted 1."""

    name: ClassVar[str] = "sum"
    verb: ClassVar[bool] = True
    aggregation: ClassVar[bool] = True
    order: ClassVar[int] = 1

    def output_range(self, stat, low: float, high: float, n: int):
        """Return n times the clipping range."""
        return low * n, high * n


class CountingKind(LinearKind):
    """A kind counting the records that hold a value: each contributes 0 or 1."""

    fields: ClassVar[tuple] = ("value",)
    counts: ClassVar[bool] = True


@register_kind
class Count(CountingKind):
    """The number of records holding a value: from 0 to n."""

    name: ClassVar[str] = "count"
    verb: ClassVar[bool] = True
    order: ClassVar[int] = 2

    def output_range(self, stat, low: float, high: float, n: int):
        """Return 0 to n."""
        return 0.0, float(n)


@register_kind
class Proportion(CountingKind):
    """The share of records holding a value: from 0 to 1."""

    name: ClassVar[str] = "proportion"
    verb: ClassVar[bool] = True
    order: ClassVar[int] = 3
    averaged: ClassVar[bool] = True

    def output_range(self, stat, low: float, high: float, n: int):
        """Return 0 to 1."""
        return 0.0, 1.0
