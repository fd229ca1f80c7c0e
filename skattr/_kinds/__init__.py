"""The kinds of statistic: one small class each, and the laws registered for them.

A statistic stores its kind's name (``"mean"``, ``"quantile"``, ...);
:func:`kind_of` returns the kind, which answers what the library asks of
it: its fields, its values' range, whether it is linear, what a backend
computes exactly, which laws can be built for it (:func:`law_builder`, the
builders registered by kind with :func:`register_law`). Every module of
this package is imported here, so a kind defined in a new module of it is
registered with the others.
"""

import importlib
import pkgutil

from skattr._kinds._base import (
    StatisticKind,
    counts_records,
    kind_of,
    kinds,
    law_builder,
    query_kind,
    register_kind,
    register_law,
)
from skattr._kinds._function import Function
from skattr._kinds._kernels import (
    CallableKernel,
    VectorisedKernel,
    largest_std,
    numpy_lerp,
    quantile_position,
)
from skattr._kinds._linear import Count, LinearKind, Mean, Proportion, Sum
from skattr._kinds._ols import Ols, check_regression_labels
from skattr._kinds._order import Median, OrderKind, Quantile
from skattr._kinds._std import Std
from skattr._kinds._trimmed import TrimmedMean

__all__ = [
    "CallableKernel",
    "Count",
    "Function",
    "LinearKind",
    "Mean",
    "Median",
    "Ols",
    "OrderKind",
    "Proportion",
    "Quantile",
    "StatisticKind",
    "Std",
    "Sum",
    "TrimmedMean",
    "VectorisedKernel",
    "check_regression_labels",
    "counts_records",
    "kind_of",
    "kinds",
    "largest_std",
    "law_builder",
    "numpy_lerp",
    "quantile_position",
    "query_kind",
    "register_kind",
    "register_law",
]

# A kind in a module of its own registers itself on import: every module of
# the package is imported, so adding a kind touches no other file.
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
