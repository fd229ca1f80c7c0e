"""Any statistic: a user's callable from a DataFrame to a vector."""

from __future__ import annotations

from typing import ClassVar

from skattr._kinds._base import StatisticKind, register_kind
from skattr._kinds._kernels import CallableKernel

__all__ = ["Function"]


@register_kind
class Function(StatisticKind):
    """A callable: opaque (it may read the records' order), called once a subset."""

    name: ClassVar[str] = "function"
    order: ClassVar[int] = 15
    fields: ClassVar[tuple] = ("func", "labels")
    opaque: ClassVar[bool] = True
    # A Python callable runs once per dataset; vectorised statistics afford
    # more draws, which bring the bounds closer to the truth.
    default_draws: ClassVar[int] = 10_000
    kernel: ClassVar[CallableKernel] = CallableKernel()
