"""The coefficients of an ordinary least squares regression."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from skattr._kinds._base import StatisticKind, register_kind
from skattr._kinds._kernels import VectorisedKernel
from skattr.exceptions import InvalidParameterError

__all__ = ["Ols", "check_regression_labels"]


def check_regression_labels(columns) -> None:
    """Refuse a response among the regressors, or a regressor named twice."""
    if not isinstance(columns, (list, tuple)) or len(columns) < 2:
        return
    y, regressors = columns[0], list(columns[1:])
    try:
        if y in regressors:
            raise InvalidParameterError(
                f"The response {y!r} is also a regressor; remove it from X.")
        if len(set(regressors)) != len(regressors):
            raise InvalidParameterError(
                f"The regressors {regressors} repeat a column; name each once.")
    except TypeError:       # an unhashable label: column_labels says so
        return


def _check_regression(stat, caller: str) -> None:
    if stat.columns is None or len(stat.columns) < 2:
        raise InvalidParameterError(
            "An OLS statistic needs a response and at least one regressor, "
            "e.g. Statistic.ols('income', ['age', 'hours']).")
    check_regression_labels(list(stat.columns))


def _ols_coefficients(stat, block: np.ndarray) -> np.ndarray:
    y, design = block[:, :, :1], block[:, :, 1:]
    if stat.add_constant:
        design = np.concatenate([np.ones_like(y), design], axis=2)
    # statsmodels' default: the pseudo-inverse, cutting singular values below
    # 1e-15 times the largest (NumPy's default rcond).
    return (np.linalg.pinv(design) @ y)[:, :, 0]


def _coefficient_labels(stat, columns) -> list[str]:
    return (["ols:const"] if stat.add_constant else []) + [
        f"ols:{c}" for c in columns[1:]]


@register_kind
class Ols(StatisticKind):
    """The coefficients of y on X (the columns: the response, then X)."""

    name: ClassVar[str] = "ols"
    order: ClassVar[int] = 14
    fields: ClassVar[tuple] = ("add_constant",)
    kernel: ClassVar[VectorisedKernel] = VectorisedKernel(
        _ols_coefficients,
        names=_coefficient_labels,
        validate=_check_regression)

    def n_outputs(self, stat, columns) -> int:
        """Return the coefficients: one per regressor, and the constant's."""
        return len(columns) - 1 + stat.add_constant

    def min_rows(self, stat, columns=None) -> int:
        """Return the coefficients on ``columns`` (its own, else).

        As many rows as coefficients: fewer leave the fit undetermined.
        """
        return self.n_outputs(stat, stat.columns if columns is None
                              else columns)

    def check_labels(self, columns) -> None:
        """Refuse, in the regression's words, a response among the regressors."""
        check_regression_labels(columns)
