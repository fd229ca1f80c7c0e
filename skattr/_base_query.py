"""What every query is: the interface the mechanisms call, linear or not."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import pandas as pd

from skattr._validation import as_frame, column_labels

__all__ = ["BaseQuery", "LinearQuery", "as_tuple"]


def as_tuple(columns) -> tuple | None:
    """Return a query's columns as a tuple: one label, several, or None for all.

    Raises
    ------
    InvalidParameterError
        For an empty list of columns (a query reads at least one), or
        columns not given as labels (:func:`skattr._validation.column_labels`).
    """
    return column_labels(columns)


class BaseQuery(ABC):
    """A statistic F of named columns: what a mechanism releases.

    The linear queries (:class:`~skattr.Query`, :class:`~skattr.StackedQuery`)
    derive from :class:`LinearQuery`; the others (:class:`~skattr.Statistic`)
    from this class directly. A mechanism asks :attr:`is_linear` which it holds,
    never the class: a linear statistic's law given a secret follows from
    per-group moments of its contributions, any other's from evaluating it on
    subsets of reference rows.

    Subclasses are frozen dataclasses: mechanisms store a query as a parameter,
    so its equality, hash and repr are those of its fields (scikit-learn's
    ``clone`` and the plan cache compare them).

    Attributes
    ----------
    statistic : str
        The kind of statistic; also the name of the released Series.
    columns : tuple of column labels, or None
        The columns read; None until resolved on a frame (see
        :meth:`resolve_columns`).
    """

    statistic: str
    columns: tuple | None

    @property
    @abstractmethod
    def is_linear(self) -> bool:
        """Whether F(X) = w(n) * sum_j h(x_j) for per-record contributions h."""

    @abstractmethod
    def resolve_columns(self, frame: pd.DataFrame, exclude=()) -> tuple:
        """Return the columns read: the named ones, or all but ``exclude``."""

    @abstractmethod
    def with_columns(self, columns) -> BaseQuery:
        """Return the same statistic on resolved columns."""

    @abstractmethod
    def names(self, columns) -> list[str]:
        """Labels of the released statistics on ``columns``, one per output."""

    @abstractmethod
    def n_outputs(self, columns) -> int | None:
        """Length d of the statistic on ``columns``; None while it is unknown."""

    def output_ranges(self, columns, n: int, ranges: dict):
        """Return (low, high) arrays: the values each released statistic can take.

        ``ranges`` maps a clipped column to its clipping range; None when
        nothing bounds the statistic (a released value is then not clamped).
        """
        return None

    @abstractmethod
    def values(self, frame: pd.DataFrame, columns, *,
               what: str = "the data") -> np.ndarray:
        """Compute the exact statistic on ``frame``: a float array of shape (d,)."""

    @abstractmethod
    def evaluate(self, frame: pd.DataFrame, columns=None) -> pd.Series:
        """Compute the exact (noiseless) statistic, labelled; never a release."""


class LinearQuery(BaseQuery):
    """A statistic F(X) = w(n) * sum_j h(x_j): weighted sums of contributions.

    Because F is linear in the per-record contributions h, its conditional mean
    and covariance given a secret follow in closed form from per-group moments
    of h (see :mod:`skattr.theta`), and a release needs only column totals.
    """

    @property
    def is_linear(self) -> bool:
        """True: F is a weighted sum of per-record contributions."""
        return True

    @abstractmethod
    def weight(self, n: int) -> float | np.ndarray:
        """w(n), one for all statistics or one per statistic."""

    @abstractmethod
    def contributions(self, frame: pd.DataFrame, columns, *,
                      what: str = "X") -> np.ndarray:
        """Per-record contributions h(x_j), an (n, d) float array."""

    @abstractmethod
    def totals(self, frame: pd.DataFrame, columns, *, what: str = "X") -> np.ndarray:
        """Sum of the contributions over the records, without an (n, d) copy."""

    def values(self, frame: pd.DataFrame, columns, *,
               what: str = "the data") -> np.ndarray:
        """Compute the exact statistic on ``frame``: totals times w(n), shape (d,).

        The release's computation: per-column totals, never an (n, d) copy.
        """
        frame = as_frame(frame, what=what)
        return self.totals(frame, columns, what=what) * self.weight(len(frame))
