"""Non-linear statistics F of a DataFrame, computed on the data or many row subsets.

A :class:`~skattr.Query` is linear in the records, so its law given a secret follows
from per-group moments. The statistics here (quantiles, standard deviations,
trimmed means, regression coefficients, any callable) are not; a mechanism learns
their law by evaluating them on many subsets of reference rows, which
:meth:`Statistic.evaluate_rows` does for all subsets at once.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd
from scipy import stats

from skattr._query import _as_tuple
from skattr._validation import as_frame, check_columns, numeric_block
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.utils._param_validation import Interval, validate_parameter_constraints

__all__ = ["Statistic"]

_STATISTICS = ("median", "quantile", "std", "trimmed-mean", "ols", "function")

# Values gathered at once by evaluate_rows (32 MB of float64): m subsets of n rows
# of k columns would otherwise be one m * n * k copy.
_CHUNK = 2**22


@dataclass(frozen=True)
class Statistic:
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
        if self.statistic not in _STATISTICS:
            raise InvalidParameterError(
                f"The 'statistic' of a Statistic must be one of {_STATISTICS}. "
                f"Got {self.statistic!r} instead."
            )
        object.__setattr__(self, "columns", _as_tuple(self.columns))
        caller = f"Statistic.{self.statistic.replace('-', '_')}"
        if self.statistic == "quantile":
            levels = (self.q,) if isinstance(self.q, numbers.Real) else tuple(self.q)
            if not levels:
                raise InvalidParameterError(
                    "The 'q' parameter of Statistic.quantile needs at least one "
                    "level in [0, 1]; got none.")
            for level in levels:
                validate_parameter_constraints(
                    {"q": [Interval("real", 0, 1)]}, {"q": level}, caller)
            object.__setattr__(self, "q", tuple(float(level) for level in levels))
        validate_parameter_constraints(
            {"ddof": [Interval("integral", 0, None)],
             "proportiontocut": [Interval("real", 0, 0.5, closed="left")],
             "add_constant": [bool]},
            {"ddof": self.ddof, "proportiontocut": self.proportiontocut,
             "add_constant": self.add_constant},
            caller)
        if self.statistic == "ols":
            self._check_regression()
        if self.statistic == "function":
            validate_parameter_constraints(
                {"func": ["callable"]}, {"func": self.func}, caller)
            if self.labels is not None:
                labels = (self.labels,) if isinstance(self.labels, str) else tuple(
                    str(name) for name in self.labels)
                object.__setattr__(self, "labels", labels)
        if (self.labels if self.statistic == "function" else self.columns) is not None:
            self.names(self.columns)  # raises on duplicate labels

    def _check_regression(self) -> None:
        if self.columns is None or len(self.columns) < 2:
            raise InvalidParameterError(
                "An OLS statistic needs a response and at least one regressor, "
                "e.g. Statistic.ols('income', ['age', 'hours']).")
        y, regressors = self.columns[0], self.columns[1:]
        if y in regressors:
            raise InvalidParameterError(
                f"The response {y!r} is also a regressor; remove it from X.")
        if len(set(regressors)) != len(regressors):
            raise InvalidParameterError(
                f"The regressors {list(regressors)} repeat a column; name each "
                "once.")

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
        return cls("ols", (y, *_as_tuple(X)), add_constant=add_constant)

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
        if self.statistic == "function":
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

    def n_outputs(self, columns) -> int | None:
        """Length d of the statistic on ``columns``; None for an unnamed function."""
        if self.statistic == "function":
            return None if self.labels is None else len(self.labels)
        if self.statistic == "quantile":
            return len(columns) * len(self.q)
        if self.statistic == "ols":
            return len(columns) - 1 + self.add_constant
        return len(columns)

    def names(self, columns) -> list[str]:
        """Labels of the released statistics.

        Raises
        ------
        InvalidParameterError
            For a function whose labels are not known yet (see
            :meth:`with_names`), or when two statistics share a label.
        """
        if self.statistic == "function":
            if self.labels is None:
                raise InvalidParameterError(
                    "The labels of a function's outputs are known once it runs: "
                    "pass names=[...] to Statistic.function, or fix them with "
                    "stat.with_names(stat.evaluate(frame).index).")
            names = list(self.labels)
        elif self.statistic == "quantile":
            names = [f"{c}:q{level:.15g}" for c in columns for level in self.q]
        elif self.statistic == "ols":
            names = ["ols:const"] if self.add_constant else []
            names += [f"ols:{c}" for c in columns[1:]]
        else:
            names = [str(c) for c in columns]
        if len(set(names)) != len(names):
            raise InvalidParameterError(
                f"The {self.statistic} releases duplicate statistics {names}; "
                "each label must appear once.")
        return names

    def min_rows(self, columns) -> int:
        """Fewest rows the statistic is defined on (in the data and each subset)."""
        if self.statistic == "std":
            return self.ddof + 1
        if self.statistic == "ols":
            return self.n_outputs(columns)
        return 1

    def prepare(self, frame: pd.DataFrame, columns, *, what: str = "the data"):
        """Validate ``frame`` once and keep what :meth:`evaluate_rows` reads.

        Returns
        -------
        ndarray of shape (n, k) or DataFrame
            The columns as float64 (checked numeric and finite) for the built-in
            statistics; the frame restricted to ``columns`` for a function.
        """
        frame = as_frame(frame, what=what)
        if self.statistic == "function":
            check_columns(frame, columns, what=what)
            # A fresh index: a function reads positions, never the labels of
            # the reference (or private) rows.
            return frame[list(columns)].reset_index(drop=True)
        block = numeric_block(frame, columns, what=what)
        need = self.min_rows(columns)
        if len(block) < need:
            raise DataValidationError(
                f"{what} has {len(block)} row(s); the {self.statistic} of "
                f"{list(columns)} needs at least {need}. Pass more rows.")
        return block

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
        if self.statistic == "function":
            return self._stack([
                self._output(self.func(prepared.take(row).reset_index(drop=True)))[0]
                for row in index])
        need = self.min_rows(range(prepared.shape[1]))
        if index.shape[1] < need:
            raise DataValidationError(
                f"Each subset has {index.shape[1]} row(s); the {self.statistic} "
                f"needs at least {need}. Draw larger subsets.")
        step = max(1, _CHUNK // (index.shape[1] * prepared.shape[1]))
        values = np.concatenate([self._on_subsets(prepared[index[i:i + step]])
                                 for i in range(0, len(index), step)])
        self._check_finite(values, what="a subset of rows")
        return values

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
        if self.statistic == "function":
            return self._output(self.func(prepared), what=what)
        # The whole data is a stack of one subset: one code path for both.
        values = self._on_subsets(prepared[np.newaxis])[0]
        self._check_finite(values, what=what)
        return values, self.names(columns)

    def _output(self, output, *, what: str = "a subset of rows"):
        """Check a function's output; return it as a float vector, with labels."""
        if isinstance(output, pd.DataFrame):
            raise InvalidParameterError(
                "The function must return a scalar, a 1-d array or a Series; it "
                f"returned a DataFrame of shape {output.shape}.")
        try:
            values = np.asarray(output, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                "The function must return numbers (a scalar, a 1-d array or a "
                f"Series); it returned {type(output).__name__}: {exc}") from exc
        values = values.reshape(-1) if values.ndim == 0 else values
        if values.ndim != 1 or values.size == 0:
            raise InvalidParameterError(
                "The function must return a scalar, a 1-d array or a Series; it "
                f"returned shape {values.shape}.")
        if isinstance(output, pd.Series):
            names = [str(name) for name in output.index]
        elif self.labels is not None:
            names = list(self.labels)
        else:
            names = [f"f{i}" for i in range(len(values))]
        if self.labels is not None and len(values) != len(self.labels):
            raise InvalidParameterError(
                f"The function returned {len(values)} value(s) but is named with "
                f"{len(self.labels)} label(s) {list(self.labels)}; make them "
                "agree.")
        self._check_finite(values, what=what)
        return values, names

    @staticmethod
    def _stack(outputs: list) -> np.ndarray:
        lengths = sorted({len(v) for v in outputs})
        if len(lengths) > 1:
            raise InvalidParameterError(
                f"The function returned vectors of varying lengths {lengths} on "
                "different subsets of rows; it must return the same number of "
                "values on every frame.")
        return np.vstack(outputs)

    def _check_finite(self, values: np.ndarray, *, what: str) -> None:
        if np.all(np.isfinite(values)):
            return
        if self.statistic == "function":
            raise DataValidationError(
                f"The function returned NaN or infinite values on {what}; make it "
                "return finite numbers on every frame (e.g. guard empty groups).")
        raise DataValidationError(
            f"The {self.statistic} overflows float64 on {what}; rescale the "
            "columns (e.g. to thousands).")

    def _on_subsets(self, block: np.ndarray) -> np.ndarray:
        """Compute the statistic of each (n, k) slice of an (m, n, k) block."""
        # An overflow is reported by _check_finite, with what to do about it.
        with np.errstate(over="ignore", invalid="ignore"):
            return self._compute(block)

    def _compute(self, block: np.ndarray) -> np.ndarray:
        m = block.shape[0]
        if self.statistic == "median":
            return np.median(block, axis=1)
        if self.statistic == "quantile":
            # (levels, m, k) -> (m, k, levels): the levels of a column side by side.
            values = np.quantile(block, self.q, axis=1)
            return np.moveaxis(values, 0, -1).reshape(m, -1)
        if self.statistic == "std":
            return np.std(block, axis=1, ddof=self.ddof)
        if self.statistic == "trimmed-mean":
            return stats.trim_mean(block, self.proportiontocut, axis=1)
        y, design = block[:, :, :1], block[:, :, 1:]
        if self.add_constant:
            design = np.concatenate([np.ones_like(y), design], axis=2)
        # statsmodels' default: the pseudo-inverse, cutting singular values below
        # 1e-15 times the largest (NumPy's default rcond).
        return (np.linalg.pinv(design) @ y)[:, :, 0]
