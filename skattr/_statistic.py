"""Non-linear statistics F of a DataFrame, computed on the data or many row subsets.

A :class:`~skattr.Query` is linear in the records, so its law given a secret follows
from per-group moments. The statistics here (quantiles, standard deviations,
trimmed means, regression coefficients, any callable) are not; a mechanism learns
their law by evaluating them on many subsets of reference rows, which
:meth:`Statistic.evaluate_rows` does for all subsets at once. Each kind of
statistic is one kernel in the table ``_KERNELS`` at the end of the module.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np
import pandas as pd

from skattr._base_query import BaseQuery, as_tuple
from skattr._persistence import persistable
from skattr._validation import as_frame, check_columns, numeric_block
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.utils._param_validation import Interval, validate_parameter_constraints

__all__ = ["Statistic"]

# Values gathered at once by evaluate_rows (32 MB of float64): m subsets of n rows
# of k columns would otherwise be one m * n * k copy.
_CHUNK = 2**22


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
        if self.statistic not in _STATISTICS:
            raise InvalidParameterError(
                f"The 'statistic' of a Statistic must be one of {_STATISTICS}. "
                f"Got {self.statistic!r} instead."
            )
        if self.statistic == "ols":
            # In the regression's words before the labels' own check, which
            # would call a response among the regressors a column named twice.
            _check_regression_labels(self.columns)
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
    def _kernel(self) -> _VectorisedKernel | _CallableKernel:
        return _KERNELS[self.statistic]

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
        _check_regression_labels((y, *X) if isinstance(X, (list, tuple))
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
        per = {"median": 1, "trimmed-mean": 1, "std": 1,
               "quantile": len(np.atleast_1d(self.q))}.get(self.statistic)
        if per is None:
            return None
        low, high = [], []
        for c in columns:
            lo, hi = (float(v) for v in ranges.get(c, (-np.inf, np.inf)))
            if self.statistic == "std":
                lo, hi = 0.0, (largest_std(lo, hi, n, self.ddof)
                               if n > self.ddof else np.inf)
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


# ------------------------------------------------------------------- the kernels
# Each kind of statistic is one kernel: how its fields are checked, how many
# outputs it has and their labels, the fewest rows it needs, and the computation
# on many subsets of rows (on_rows) and on the whole data (exact). Statistic reads
# the table and never compares its kind's name; a new kind is one more entry.


def _one_per_column(stat: Statistic, columns) -> int:
    return len(columns)


def _column_labels(stat: Statistic, columns) -> list[str]:
    return [str(c) for c in columns]


def _one_row(stat: Statistic, columns) -> int:
    return 1


@dataclass(frozen=True)
class _VectorisedKernel:
    """A built-in kind: a NumPy function of a block of row subsets.

    ``compute(stat, block)`` maps an (m, n, k) float64 block (m subsets of n rows
    of the k columns) to the (m, d) statistics. The whole data is the stack of
    one subset, so the exact value and the resampled laws are one computation.
    """

    compute: Callable[[Statistic, np.ndarray], np.ndarray]
    n_outputs: Callable[[Statistic, Any], int] = _one_per_column
    names: Callable[[Statistic, Any], list[str]] = _column_labels
    min_rows: Callable[[Statistic, Any], int] = _one_row
    validate: Callable[[Statistic, str], None] | None = None

    reads_whole_frame: ClassVar[bool] = False

    def check(self, stat: Statistic, caller: str) -> None:
        """Validate (and normalise) the kind's fields; named columns' labels."""
        if self.validate is not None:
            self.validate(stat, caller)
        if stat.columns is not None:
            stat.names(stat.columns)  # raises on duplicate labels

    def prepare(self, stat: Statistic, frame: pd.DataFrame, columns, *,
                what: str) -> np.ndarray:
        """Return the columns as a checked float64 (n, k) block."""
        block = numeric_block(frame, columns, what=what)
        need = self.min_rows(stat, columns)
        if len(block) < need:
            raise DataValidationError(
                f"{what} has {len(block)} row(s); the {stat.statistic} of "
                f"{list(columns)} needs at least {need}. Pass more rows.")
        return block

    def on_rows(self, stat: Statistic, block: np.ndarray,
                index: np.ndarray) -> np.ndarray:
        """Compute the statistic on the rows ``index[i]`` of ``block``, chunked."""
        need = self.min_rows(stat, range(block.shape[1]))
        if index.shape[1] < need:
            raise DataValidationError(
                f"Each subset has {index.shape[1]} row(s); the {stat.statistic} "
                f"needs at least {need}. Draw larger subsets.")
        step = max(1, _CHUNK // (index.shape[1] * block.shape[1]))
        values = np.concatenate([self._on_subsets(stat, block[index[i:i + step]])
                                 for i in range(0, len(index), step)])
        self._check_finite(stat, values, what="a subset of rows")
        return values

    def exact(self, stat: Statistic, block: np.ndarray, columns, *,
              what: str) -> tuple[np.ndarray, list[str]]:
        """Compute the statistic on the whole block, with its labels."""
        # The whole data is a stack of one subset: one code path for both.
        values = self._on_subsets(stat, block[np.newaxis])[0]
        self._check_finite(stat, values, what=what)
        return values, stat.names(columns)

    def _on_subsets(self, stat: Statistic, block: np.ndarray) -> np.ndarray:
        # An overflow is reported by _check_finite, with what to do about it.
        with np.errstate(over="ignore", invalid="ignore"):
            return self.compute(stat, block)

    @staticmethod
    def _check_finite(stat: Statistic, values: np.ndarray, *, what: str) -> None:
        # The columns were checked finite, so only the arithmetic can overflow.
        if not np.all(np.isfinite(values)):
            raise DataValidationError(
                f"The {stat.statistic} overflows float64 on {what}; rescale the "
                "columns (e.g. to thousands).")


@dataclass(frozen=True)
class _CallableKernel:
    """The function kind: a user's callable of DataFrames, once per subset.

    An arbitrary callable cannot be vectorised, so m subsets cost m calls; its
    output's labels are known once it runs, unless named.
    """

    reads_whole_frame: ClassVar[bool] = True

    def check(self, stat: Statistic, caller: str) -> None:
        """Validate ``func``; normalise the labels and refuse duplicates."""
        validate_parameter_constraints(
            {"func": ["callable"]}, {"func": stat.func}, caller)
        if stat.labels is not None:
            labels = (stat.labels,) if isinstance(stat.labels, str) else tuple(
                str(name) for name in stat.labels)
            object.__setattr__(stat, "labels", labels)
            stat.names(stat.columns)  # raises on duplicate labels

    def n_outputs(self, stat: Statistic, columns) -> int | None:
        """Return the number of labels; None for an unnamed function."""
        return None if stat.labels is None else len(stat.labels)

    def names(self, stat: Statistic, columns) -> list[str]:
        """Return the labels, or raise while they are unknown."""
        if stat.labels is None:
            raise InvalidParameterError(
                "The labels of a function's outputs are known once it runs: "
                "pass names=[...] to Statistic.function, or fix them with "
                "stat.with_names(stat.evaluate(frame).index).")
        return list(stat.labels)

    def min_rows(self, stat: Statistic, columns) -> int:
        """Return 1: what a function needs is its own affair."""
        return 1

    def prepare(self, stat: Statistic, frame: pd.DataFrame, columns, *,
                what: str) -> pd.DataFrame:
        """Return the frame restricted to ``columns``, with a fresh index."""
        check_columns(frame, columns, what=what)
        # A fresh index: a function reads positions, never the labels of the
        # reference (or private) rows.
        return frame[list(columns)].reset_index(drop=True)

    def on_rows(self, stat: Statistic, frame: pd.DataFrame,
                index: np.ndarray) -> np.ndarray:
        """Call the function on the rows ``index[i]`` of ``frame``, one by one."""
        outputs = [
            self._output(stat, stat.func(frame.take(row).reset_index(drop=True)))[0]
            for row in index]
        lengths = sorted({len(v) for v in outputs})
        if len(lengths) > 1:
            raise InvalidParameterError(
                f"The function returned vectors of varying lengths {lengths} on "
                "different subsets of rows; it must return the same number of "
                "values on every frame.")
        return np.vstack(outputs)

    def exact(self, stat: Statistic, frame: pd.DataFrame, columns, *,
              what: str) -> tuple[np.ndarray, list[str]]:
        """Call the function on the whole frame; label its output."""
        return self._output(stat, stat.func(frame), what=what)

    @staticmethod
    def _output(stat: Statistic, output, *, what: str = "a subset of rows"):
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
        elif stat.labels is not None:
            names = list(stat.labels)
        else:
            names = [f"f{i}" for i in range(len(values))]
        if stat.labels is not None and len(values) != len(stat.labels):
            raise InvalidParameterError(
                f"The function returned {len(values)} value(s) but is named with "
                f"{len(stat.labels)} label(s) {list(stat.labels)}; make them "
                "agree.")
        if not np.all(np.isfinite(values)):
            raise DataValidationError(
                f"The function returned NaN or infinite values on {what}; make it "
                "return finite numbers on every frame (e.g. guard empty groups).")
        return values, names


def largest_std(low: float, high: float, n: int, ddof: int) -> float:
    """Return a bound on the std of n values in [low, high] (n > ddof).

    (high - low) / 2 sqrt(n / (n - ddof)): half of the values at each end.
    """
    return 0.5 * (high - low) * float(np.sqrt(n / (n - ddof)))


def _trimmed_means(stat, block):
    from scipy import stats

    return stats.trim_mean(block, stat.proportiontocut, axis=1)


def _check_levels(stat: Statistic, caller: str) -> None:
    levels = (stat.q,) if isinstance(stat.q, numbers.Real) else tuple(stat.q)
    if not levels:
        raise InvalidParameterError(
            "The 'q' parameter of Statistic.quantile needs at least one "
            "level in [0, 1]; got none.")
    for level in levels:
        validate_parameter_constraints(
            {"q": [Interval("real", 0, 1)]}, {"q": level}, caller)
    object.__setattr__(stat, "q", tuple(float(level) for level in levels))


def quantile_position(n: int, q: float) -> tuple[int, int, float]:
    """Return where NumPy's q-quantile of n sorted values lies: (below, above, t).

    ``numpy.quantile`` (method "linear") takes the virtual index h = (n - 1) q
    in floating point and returns :func:`numpy_lerp` of the ``below`` =
    floor(h)-th and ``above`` = next smallest values (from 0) at t = h -
    floor(h); at t = 0 that is the ``below``-th value exactly.

    Examples
    --------
    >>> from skattr._statistic import quantile_position
    >>> quantile_position(5, 0.5), quantile_position(6, 0.5)
    ((2, 3, 0.0), (2, 3, 0.5))
    """
    virtual = np.float64(n - 1) * np.float64(q)
    before = int(np.floor(virtual))
    below = min(max(before, 0), n - 1)
    return below, min(below + 1, n - 1), float(virtual - before)


def numpy_lerp(a, b, t: float):
    """Interpolate as ``numpy.quantile`` does, to the last bit (arrays or floats)."""
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


def _quantiles(stat: Statistic, block: np.ndarray) -> np.ndarray:
    # (levels, m, k) -> (m, k, levels): the levels of a column side by side.
    values = np.quantile(block, stat.q, axis=1)
    return np.moveaxis(values, 0, -1).reshape(block.shape[0], -1)


def _check_regression_labels(columns) -> None:
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


def _check_regression(stat: Statistic, caller: str) -> None:
    if stat.columns is None or len(stat.columns) < 2:
        raise InvalidParameterError(
            "An OLS statistic needs a response and at least one regressor, "
            "e.g. Statistic.ols('income', ['age', 'hours']).")
    y, regressors = stat.columns[0], stat.columns[1:]
    if y in regressors:
        raise InvalidParameterError(
            f"The response {y!r} is also a regressor; remove it from X.")
    if len(set(regressors)) != len(regressors):
        raise InvalidParameterError(
            f"The regressors {list(regressors)} repeat a column; name each once.")


def _ols_coefficients(stat: Statistic, block: np.ndarray) -> np.ndarray:
    y, design = block[:, :, :1], block[:, :, 1:]
    if stat.add_constant:
        design = np.concatenate([np.ones_like(y), design], axis=2)
    # statsmodels' default: the pseudo-inverse, cutting singular values below
    # 1e-15 times the largest (NumPy's default rcond).
    return (np.linalg.pinv(design) @ y)[:, :, 0]


def _coefficient_labels(stat: Statistic, columns) -> list[str]:
    return (["ols:const"] if stat.add_constant else []) + [
        f"ols:{c}" for c in columns[1:]]


_KERNELS: dict[str, _VectorisedKernel | _CallableKernel] = {
    "median": _VectorisedKernel(lambda stat, block: np.median(block, axis=1)),
    "quantile": _VectorisedKernel(
        _quantiles,
        n_outputs=lambda stat, columns: len(columns) * len(stat.q),
        names=lambda stat, columns: [f"{c}:q{level:.15g}" for c in columns
                                     for level in stat.q],
        validate=_check_levels),
    "std": _VectorisedKernel(
        lambda stat, block: np.std(block, axis=1, ddof=stat.ddof),
        min_rows=lambda stat, columns: stat.ddof + 1),
    "trimmed-mean": _VectorisedKernel(_trimmed_means),
    "ols": _VectorisedKernel(
        _ols_coefficients,
        n_outputs=lambda stat, columns: len(columns) - 1 + stat.add_constant,
        names=_coefficient_labels,
        # As many rows as coefficients: fewer leave the fit undetermined.
        min_rows=lambda stat, columns: stat.n_outputs(columns),
        validate=_check_regression),
    "function": _CallableKernel(),
}

_STATISTICS = tuple(_KERNELS)
