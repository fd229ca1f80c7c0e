"""Non-linear statistics F of a DataFrame, computed on the data or many row subsets.

A :class:`~skattr.Query` is linear in the records, so its law given a secret follows
from per-group moments. The statistics here (quantiles, standard deviations,
trimmed means, regression coefficients, any callable) are not; a mechanism learns
their law by evaluating them on many subsets of reference rows, which
:meth:`Statistic.evaluate_rows` does for all subsets at once. Each kind of
statistic is a class of :mod:`skattr._kinds`, holding its kernel.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from skattr._base_query import BaseQuery, as_tuple
from skattr._kinds import (
    CallableKernel,
    VectorisedKernel,
    check_regression_labels,
    kind_of,
    kinds,
    largest_std,
    numpy_lerp,
    quantile_position,
)
from skattr._persistence import persistable
from skattr._validation import as_frame, check_columns
from skattr.exceptions import InvalidParameterError
from skattr.utils._param_validation import Interval, validate_parameter_constraints

# largest_std, numpy_lerp and quantile_position live with the kinds
# (skattr._kinds); they are importable from here too.
__all__ = ["Statistic", "largest_std", "numpy_lerp", "quantile_position"]


@persistable
@dataclass(frozen=True)
class Statistic(BaseQuery):
    """A statistic F of named columns that is not linear in the records.

    Median, quantiles, standard deviation, trimmed mean, the coefficients of an
    ordinary least squares regression, or any callable from a DataFrame to a
    vector. Build one with a constructor (:meth:`median`, :meth:`quantile`,
    :meth:`std`, :meth:`trimmed_mean`, :meth:`ols`, :meth:`function`; also
    reachable as ``Query.median`` and so on) rather than from the fields.

    Parameters
    ----------
    statistic : {"median", "quantile", "std", "trimmed-mean", "ols", "function"}
        What to compute; also the name of the released Series.
    columns : tuple of column labels, or None
        The columns read. For the median, quantiles, standard deviation and
        trimmed mean, one statistic (one per level for quantiles) per column, and
        None means every column but the secret's. For OLS, the response followed
        by the regressors. For a function, the columns it sees; None means the
        whole frame.
    q : tuple of float
        Quantile levels in [0, 1] (quantile only).
    ddof : int
        Delta degrees of freedom: the divisor is n - ddof (std only).
    proportiontocut : float
        Share of records cut from each end, in [0, 0.5) (trimmed mean only).
    add_constant : bool
        Whether the regression has an intercept, labelled ``const`` (OLS only).
    func : callable or None
        DataFrame -> scalar, 1-d array or Series (function only).
    labels : tuple of str or None
        Names of a function's outputs when it does not return a Series.

    See Also
    --------
    skattr.Query : Linear statistics (mean, sum, count, proportion).

    Notes
    -----
    Every statistic is computed by one code path, on a stack of row subsets
    (:meth:`evaluate_rows`); the whole data is the stack of one subset
    (:meth:`values`). So the exact release and the subsets a mechanism learns
    its law from can never disagree by more than rounding.

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr import Statistic
    >>> df = pd.DataFrame({"age": [30, 40, 50, 60], "hours": [20, 40, 40, 60]})
    >>> Statistic.median("age").evaluate(df)
    age    45.0
    Name: median, dtype: float64
    >>> Statistic.quantile(["age", "hours"], q=[0.25, 0.75]).evaluate(df)
    age:q0.25      37.5
    age:q0.75      52.5
    hours:q0.25    35.0
    hours:q0.75    45.0
    Name: quantile, dtype: float64
    >>> Statistic.ols("hours", "age").evaluate(df).round(3)
    ols:const   -14.0
    ols:age       1.2
    Name: ols, dtype: float64
    """

    statistic: str
    columns: tuple | None = None
    q: tuple = (0.5,)
    ddof: int = 1
    proportiontocut: float = 0.1
    add_constant: bool = True
    func: Callable | None = None
    labels: tuple | None = None

    def __post_init__(self):
        kind = kind_of(self.statistic)
        if kind is None or kind.linear:
            names = tuple(k.name for k in kinds(linear=False))
            raise InvalidParameterError(
                f"The 'statistic' of a Statistic must be one of {names}. "
                f"Got {self.statistic!r} instead."
            )
        # In the kind's words before the labels' own check (a regression's
        # response among its regressors is no column named twice).
        kind.check_labels(self.columns)
        object.__setattr__(self, "columns", as_tuple(self.columns))
        caller = f"Statistic.{self.statistic.replace('-', '_')}"
        validate_parameter_constraints(
            {"ddof": [Interval("integral", 0, None)],
             "proportiontocut": [Interval("real", 0, 0.5, closed="left")],
             "add_constant": [bool]},
            {"ddof": self.ddof, "proportiontocut": self.proportiontocut,
             "add_constant": self.add_constant},
            caller)
        self._kernel.check(self, caller)

    @property
    def kind(self):
        """The kind of statistic (:mod:`skattr._kinds`), named by ``statistic``."""
        return kind_of(self.statistic)

    @property
    def _kernel(self) -> VectorisedKernel | CallableKernel:
        return self.kind.kernel

    @property
    def is_linear(self) -> bool:
        """False: F is no weighted sum of per-record contributions."""
        return False

    @classmethod
    def median(cls, columns=None) -> Statistic:
        """Median of each column (``numpy.median``; halfway between two middles).

        Parameters
        ----------
        columns : column label, list of them, or None
            The columns; None means every column but the secret's.

        Returns
        -------
        Statistic
            One statistic per column, labelled by the column.
        """
        return cls("median", columns)

    @classmethod
    def quantile(cls, columns=None, q: float | list[float] = 0.5) -> Statistic:
        """Quantiles of each column, with linear interpolation (pandas' default).

        Parameters
        ----------
        columns : column label, list of them, or None
            The columns; None means every column but the secret's.
        q : float or list of float, default=0.5
            Levels in [0, 1].

        Returns
        -------
        Statistic
            One statistic per column and level, column by column, labelled
            ``<column>:q<level>`` (e.g. ``age:q0.25``).

        Examples
        --------
        >>> import pandas as pd
        >>> from skattr import Statistic
        >>> df = pd.DataFrame({"age": [30, 40, 50, 60, 70]})
        >>> Statistic.quantile("age", q=[0.1, 0.9]).evaluate(df)
        age:q0.1    34.0
        age:q0.9    66.0
        Name: quantile, dtype: float64
        """
        return cls("quantile", columns, q=q)

    @classmethod
    def std(cls, columns=None, ddof: int = 1) -> Statistic:
        """Compute each column's sqrt(sum (x - mean)^2 / (n - ddof)).

        Parameters
        ----------
        columns : column label, list of them, or None
            The columns; None means every column but the secret's.
        ddof : int, default=1
            Delta degrees of freedom; 1 (pandas' default) is the sample standard
            deviation, 0 the population one. The data needs more than ddof rows.

        Returns
        -------
        Statistic
            One statistic per column, labelled by the column.
        """
        return cls("std", columns, ddof=ddof)

    @classmethod
    def trimmed_mean(cls, columns=None, proportiontocut: float = 0.1) -> Statistic:
        """Mean of each column once a share of records is cut from each end.

        As ``scipy.stats.trim_mean``: int(proportiontocut * n) records are cut
        from each end of the sorted column.

        Parameters
        ----------
        columns : column label, list of them, or None
            The columns; None means every column but the secret's.
        proportiontocut : float, default=0.1
            Share cut from each end, in [0, 0.5); 0 is the mean.

        Returns
        -------
        Statistic
            One statistic per column, labelled by the column.
        """
        return cls("trimmed-mean", columns, proportiontocut=proportiontocut)

    @classmethod
    def ols(cls, y, X, add_constant: bool = True) -> Statistic:
        """Coefficients of the least squares regression of column y on columns X.

        Those of statsmodels' ``OLS(y, add_constant(X)).fit().params`` (its
        default pseudo-inverse method), so a rank-deficient design gets the
        minimum-norm coefficients rather than an error.

        Parameters
        ----------
        y : column label
            The response.
        X : column label or list of them
            The regressors.
        add_constant : bool, default=True
            Add an intercept, labelled ``ols:const``. It is always added, even
            when a regressor happens to be constant on the rows (where statsmodels
            would skip it), so every subset of rows has the same coefficients.

        Returns
        -------
        Statistic
            One statistic per coefficient, labelled ``ols:const``,
            ``ols:<regressor>``.
        """
        # X's labels in the regression's words first (a repeat, the response).
        check_regression_labels((y, *X) if isinstance(X, (list, tuple))
                                else (y, X))
        return cls("ols", (y, *as_tuple(X)), add_constant=add_constant)

    @classmethod
    def function(cls, func: Callable[[pd.DataFrame], Any], names=None,
                 columns=None) -> Statistic:
        """Any statistic: a callable from a DataFrame to a scalar or a vector.

        Parameters
        ----------
        func : callable
            Takes a DataFrame and returns a scalar, a 1-d array or a Series of
            finite numbers, of the same length on every frame.
        names : list of str or None
            Labels of the outputs when ``func`` returns no Series (a Series is
            labelled by its index); None labels them ``f0, f1, ...``.
        columns : column label, list of them, or None
            The only columns ``func`` sees; None shows it the whole frame,
            secret's columns included.

        Notes
        -----
        ``func`` sees a frame with a fresh index 0..n-1. The Wasserstein
        mechanisms' resampling Theta draws each dataset's records in a random
        order, so a function that depends on the order of the records (the
        first row, differences between rows) is certified for randomly
        ordered data only: shuffle the private data before releasing it, or
        use a function of the records as a set.

        Returns
        -------
        Statistic
            The statistic ``func`` computes.

        Examples
        --------
        >>> import pandas as pd
        >>> from skattr import Statistic
        >>> df = pd.DataFrame({"age": [30, 40, 50, 60]})
        >>> spread = Statistic.function(lambda f: f.age.max() - f.age.min(),
        ...                             names=["range"])
        >>> spread.evaluate(df)
        range    30.0
        Name: function, dtype: float64
        """
        return cls("function", columns, func=func, labels=names)

    def resolve_columns(self, frame: pd.DataFrame, exclude=()) -> tuple:
        """Return the columns read: the named ones, or all but ``exclude``.

        A function without columns sees every column, ``exclude`` included: what
        it reads is the caller's choice.
        """
        if self.columns is not None:
            check_columns(frame, self.columns, what="the data")
            return self.columns
        if self._kernel.reads_whole_frame:
            return tuple(frame.columns)
        columns = tuple(c for c in frame.columns if c not in set(exclude))
        if not columns:
            raise InvalidParameterError(
                f"The {self.statistic} has no columns to release: name them, e.g. "
                f"Statistic.{self.statistic.replace('-', '_')}(['age']) (every "
                "column of the data is a secret's).")
        return columns

    def with_columns(self, columns) -> Statistic:
        """Return the same statistic on resolved columns."""
        return dataclasses.replace(self, columns=tuple(columns))

    def with_names(self, names) -> Statistic:
        """Return the same statistic with its outputs' labels fixed.

        A function's labels are otherwise known only once it runs:
        ``stat.with_names(stat.evaluate(reference).index)`` fixes them for
        :meth:`names`.
        """
        return dataclasses.replace(self, labels=tuple(str(n) for n in names))

    def output_ranges(self, columns, n: int, ranges: dict):
        """Return each statistic's range of values (see the base class).

        A median's, quantile's or trimmed mean's: its column's clipping range;
        a std's: 0 to the largest the range allows; another's: None.
        """
        kind = self.kind
        per = kind.outputs_per_column(self)
        if per is None:
            return None
        low, high = [], []
        for c in columns:
            lo, hi = kind.output_range(
                self, *(float(v) for v in ranges.get(c, (-np.inf, np.inf))), n)
            low += [lo] * per
            high += [hi] * per
        return np.array(low), np.array(high)

    def n_outputs(self, columns) -> int | None:
        """Length d of the statistic on ``columns``; None for an unnamed function."""
        return self._kernel.n_outputs(self, columns)

    def names(self, columns) -> list[str]:
        """Labels of the released statistics.

        Raises
        ------
        InvalidParameterError
            For a function whose labels are not known yet (see
            :meth:`with_names`), or when two statistics share a label.
        """
        names = self._kernel.names(self, columns)
        if len(set(names)) != len(names):
            raise InvalidParameterError(
                f"The {self.statistic} releases duplicate statistics {names}; "
                "each label must appear once.")
        return names

    def min_rows(self, columns) -> int:
        """Fewest rows the statistic is defined on (in the data and each subset)."""
        return self._kernel.min_rows(self, columns)

    def prepare(self, frame: pd.DataFrame, columns, *, what: str = "the data"):
        """Validate ``frame`` once and keep what :meth:`evaluate_rows` reads.

        Returns
        -------
        ndarray of shape (n, k) or DataFrame
            The columns as float64 (checked numeric and finite) for the built-in
            statistics; the frame restricted to ``columns`` for a function.
        """
        frame = as_frame(frame, what=what)
        return self._kernel.prepare(self, frame, columns, what=what)

    def evaluate_rows(self, prepared, index) -> np.ndarray:
        """Compute the statistic on m subsets of rows at once.

        Parameters
        ----------
        prepared : ndarray or DataFrame
            What :meth:`prepare` returned.
        index : array-like of int, shape (m, n)
            Row positions in ``prepared``, one subset per row (repeats allowed,
            as in a bootstrap).

        Returns
        -------
        ndarray of shape (m, d)
            Row i equals :meth:`values` on the rows ``index[i]``.

        Notes
        -----
        The built-in statistics are vectorised over the subsets with NumPy
        (OLS through a stacked pseudo-inverse of the (m, n, p) designs), in
        chunks that bound the memory used. A function is called once per
        subset on ``prepared.take(index[i])``: an arbitrary callable cannot be
        vectorised, so it costs m calls.
        """
        index = np.asarray(index)
        if (index.ndim != 2 or 0 in index.shape
                or not np.issubdtype(index.dtype, np.integer)):
            raise InvalidParameterError(
                "The index must be a non-empty (m, n) array of integer row "
                f"positions, one subset per row; got shape {index.shape} and dtype "
                f"{index.dtype}.")
        if index.min() < 0 or index.max() >= len(prepared):
            raise InvalidParameterError(
                f"The index holds row positions outside [0, {len(prepared)}); "
                "positions count from 0 in the prepared rows.")
        return self._kernel.on_rows(self, prepared, index)

    def values(self, frame: pd.DataFrame, columns, *,
               what: str = "the data") -> np.ndarray:
        """Compute the exact statistic on ``frame``: a float array of shape (d,).

        ``frame`` is checked as :meth:`prepare` does, and a function's output
        must be finite.
        """
        return self._values_and_names(frame, columns, what=what)[0]

    def evaluate(self, frame: pd.DataFrame, columns=None) -> pd.Series:
        """Compute the exact (noiseless) statistic; never a release."""
        frame = as_frame(frame, what="the data")
        columns = self.resolve_columns(frame) if columns is None else columns
        values, names = self._values_and_names(frame, columns, what="the data")
        return pd.Series(values, index=names, name=self.statistic)

    def _values_and_names(self, frame, columns, *, what: str):
        prepared = self.prepare(frame, columns, what=what)
        return self._kernel.exact(self, prepared, columns, what=what)
