"""The order statistics: the median and quantiles of each column.

Computed as ``numpy.median`` and ``numpy.quantile`` (method "linear") do,
from the one or two order statistics around each level.
"""

from __future__ import annotations

import numbers
from typing import ClassVar

import numpy as np

from skattr._kinds._base import StatisticKind, register_kind
from skattr._kinds._kernels import VectorisedKernel, numpy_lerp, quantile_position
from skattr.exceptions import InvalidParameterError
from skattr.utils._param_validation import Interval, validate_parameter_constraints

__all__ = ["Median", "OrderKind", "Quantile"]


class OrderKind(StatisticKind):
    """A kind released from order statistics of each column, at levels."""

    lazy_exact: ClassVar[str | None] = "order"
    bounded_as: ClassVar[str] = "quantile"
    #: The default Theta takes its band law for every mechanism (``apgm``
    #: calibrates it; the others are told so, or take the Gaussian model).
    default_band_for: ClassVar[tuple[str, ...] | None] = None

    def outputs_per_column(self, stat) -> int:
        """Return one value per level."""
        return len(self.levels(stat))

    def output_range(self, stat, low: float, high: float, n: int):
        """Return the column's clipping range."""
        return low, high

    def band_coordinates(self, stat, columns: int) -> list:
        """Return a quantile coordinate per column and level."""
        return [(c, "order", float(q)) for c in range(columns)
                for q in self.levels(stat)]

    def band_spacings(self) -> bool:
        """Return True: an order statistic's bands bound the spacings too."""
        return True

    def order_plan(self, stat, n: int) -> list:
        """Return (below, above, t) per level (:func:`quantile_position`)."""
        return [quantile_position(n, level) for level in self.levels(stat)]

    def interpolate(self, below, above, t):
        """Return :func:`numpy_lerp` of the two order statistics."""
        return numpy_lerp(below, above, t)


@register_kind
class Median(OrderKind):
    """The median of each column: halfway between the two middles (``numpy.median``)."""

    name: ClassVar[str] = "median"
    verb: ClassVar[bool] = True
    aggregation: ClassVar[bool] = True
    order: ClassVar[int] = 10
    kernel: ClassVar[VectorisedKernel] = VectorisedKernel(
        lambda stat, block: np.median(block, axis=1))

    def levels(self, stat) -> tuple:
        """Return (0.5,)."""
        return (0.5,)

    def order_plan(self, stat, n: int) -> list:
        """Return the two middle order statistics (one when n is odd: t = 0)."""
        return [((n - 1) // 2, n // 2, 0.0 if n % 2 else 0.5)]

    def interpolate(self, below, above, t):
        """Return the middle (t = 0), or the mean of the two, as ``numpy.median``."""
        return below if t == 0 else (below + above) / 2


def _check_levels(stat, caller: str) -> None:
    levels = (stat.q,) if isinstance(stat.q, numbers.Real) else tuple(stat.q)
    if not levels:
        raise InvalidParameterError(
            "The 'q' parameter of Statistic.quantile needs at least one "
            "level in [0, 1]; got none.")
    for level in levels:
        validate_parameter_constraints(
            {"q": [Interval("real", 0, 1)]}, {"q": level}, caller)
    object.__setattr__(stat, "q", tuple(float(level) for level in levels))


def _quantiles(stat, block: np.ndarray) -> np.ndarray:
    # (levels, m, k) -> (m, k, levels): the levels of a column side by side.
    values = np.quantile(block, stat.q, axis=1)
    return np.moveaxis(values, 0, -1).reshape(block.shape[0], -1)


@register_kind
class Quantile(OrderKind):
    """Quantiles of each column at levels ``q``, interpolated linearly."""

    name: ClassVar[str] = "quantile"
    verb: ClassVar[bool] = True
    order: ClassVar[int] = 11
    fields: ClassVar[tuple] = ("q",)
    kernel: ClassVar[VectorisedKernel] = VectorisedKernel(
        _quantiles,
        names=lambda stat, columns: [f"{c}:q{level:.15g}" for c in columns
                                     for level in stat.q],
        validate=_check_levels)

    def levels(self, stat) -> tuple:
        """Return the levels ``q``."""
        return tuple(stat.q)
