"""The statistic F released on a private dataset: what to compute on which columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from skattr._base_query import LinearQuery, as_tuple
from skattr._kinds import kind_of, kinds
from skattr._persistence import persistable
from skattr._statistic import Statistic
from skattr._validation import as_frame, check_columns, column_sums, numeric_block
from skattr.exceptions import (
    DataTypeError,
    DataValidationError,
    InvalidParameterError,
)

__all__ = ["Query", "StackedQuery"]

def check_present(col: pd.Series, column, *, what: str) -> None:
    """Raise if a column holds missing values, or infinities when numeric."""
    if pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(
            col.dtype):
        values = col.to_numpy(dtype=np.float64, na_value=np.nan)
        with np.errstate(over="ignore", invalid="ignore"):
            clean = np.isfinite(np.add.reduce(values))
        if clean or np.isfinite(values).all():
            return
    elif not col.isna().any():
        return
    raise DataValidationError(
        f"Column {column!r} of {what} holds missing (NaN) or infinite values; drop "
        "or fill them before using it."
    )


def indicator(frame: pd.DataFrame, column, value, *, what: str) -> np.ndarray:
    """1.0 where a record matches ``value`` (a category or a predicate), else 0.0.

    A callable ``value`` receives the column (a pandas Series) and returns a
    boolean mask, e.g. ``lambda income: income > 50_000``. With ``value=None`` the
    column itself must be boolean or 0/1.
    """
    check_columns(frame, [column], what=what)
    col = frame[column]
    # Checked before a predicate runs, so it never sees (or hides) a missing value;
    # value=None reads the column as numbers, which checks it itself.
    if value is not None:
        check_present(col, column, what=what)
    if callable(value):
        try:
            mask = np.asarray(value(col))
        except Exception as exc:    # the caller's function, on their column
            # Values of a type the function cannot read: a TypeError too.
            error = (DataTypeError if isinstance(exc, TypeError)
                     else InvalidParameterError)
            raise error(
                f"The predicate for column {column!r} raised "
                f"{type(exc).__name__} ({exc}) on the column (dtype "
                f"{col.dtype}); pass a function of that column that returns "
                "one boolean per record, or a category value.") from exc
        if mask.shape != (len(col),):
            raise InvalidParameterError(
                f"The predicate for column {column!r} must return one boolean per "
                f"record; it returned shape {mask.shape}."
            )
        if mask.dtype != bool:
            raise InvalidParameterError(
                f"The predicate for column {column!r} must return booleans; it "
                f"returned dtype {mask.dtype}."
            )
        return mask.astype(np.float64)
    if value is None:
        values = numeric_block(frame, [column], what=what)[:, 0]
        if not np.all((values == 0) | (values == 1)):
            raise InvalidParameterError(
                f"Column {column!r} is not boolean or 0/1; say which records count "
                "with value=<category> or a predicate such as value=lambda s: s > 0."
            )
        return values
    if isinstance(value, str) and (
        col.dtype == object or getattr(col.dtype, "storage", None) == "python"
    ):
        # Strings held as Python objects (object dtype, or pandas' string dtype
        # stored in Python) compare about three times faster through NumPy's
        # elementwise equal than through pandas' object comparison; no value is
        # missing here, so the two agree.
        return np.equal(col.to_numpy(), value).astype(np.float64)
    return (col == value).to_numpy(dtype=np.float64)


@persistable
@dataclass(frozen=True)
class Query(LinearQuery):
    """A linear statistic F of named columns: mean, sum, count or proportion.

    F(X) = w(n) * sum_j h(x_j), with a per-record contribution h (the column
    values, or the indicator of a value) and a weight w(n) = 1/n for means and
    proportions, 1 for sums and counts. Because F is linear in h, its conditional
    mean and covariance given a secret follow in closed form from per-group
    moments of h (see :mod:`skattr.theta`).

    Parameters
    ----------
    statistic : {"mean", "sum", "count", "proportion"}
        What to compute.
    columns : tuple of column labels, or None
        The columns released (one statistic each). None means every column but the
        secret's (resolved at ``fit``).
    value : object, callable or None
        For count and proportion: the category counted, or a predicate (a
        callable taking a column, returning a boolean mask). None counts a
        boolean or 0/1 column.

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr import Query
    >>> df = pd.DataFrame({"age": [30, 40, 50], "smoker": [1, 0, 1]})
    >>> Query.mean(["age"]).evaluate(df)
    age    40.0
    Name: mean, dtype: float64
    >>> Query.proportion("smoker").evaluate(df).round(3)
    smoker    0.667
    Name: proportion, dtype: float64
    """

    statistic: str
    columns: tuple | None = None
    value: Any = None

    def __post_init__(self):
        kind = kind_of(self.statistic)
        if kind is None or not kind.linear:
            names = tuple(k.name for k in kinds(linear=True))
            raise InvalidParameterError(
                f"The 'statistic' of a Query must be one of {names}. "
                f"Got {self.statistic!r} instead."
            )
        object.__setattr__(self, "columns", as_tuple(self.columns))
        if self.value is not None and not kind.takes_value():
            raise InvalidParameterError(
                f"A {self.statistic} query takes no 'value'; use Query.count or "
                "Query.proportion to count records matching a value."
            )

    @classmethod
    def mean(cls, columns=None) -> Query:
        """Mean of each column."""
        return cls("mean", columns)

    @classmethod
    def sum(cls, columns=None) -> Query:
        """Sum of each column (bounds are not needed: Theta models the data)."""
        return cls("sum", columns)

    @classmethod
    def count(cls, columns=None, value: Any | Callable | None = None) -> Query:
        """Count the records whose column equals ``value`` (or passes it)."""
        return cls("count", columns, value)

    @classmethod
    def proportion(cls, columns=None, value: Any | Callable | None = None) -> Query:
        """Fraction of records whose column equals ``value`` (or passes it)."""
        return cls("proportion", columns, value)

    @property
    def kind(self):
        """The kind of statistic (:mod:`skattr._kinds`), named by ``statistic``."""
        return kind_of(self.statistic)

    # The non-linear statistics are Statistic's; these constructors reach them
    # from Query too.

    @classmethod
    def median(cls, columns=None) -> Statistic:
        """Median of each column: a :class:`Statistic` (see Statistic.median).

        Examples
        --------
        >>> import pandas as pd
        >>> from skattr import Query
        >>> Query.median("age").evaluate(pd.DataFrame({"age": [30, 40, 90]}))
        age    40.0
        Name: median, dtype: float64
        """
        return Statistic.median(columns)

    @classmethod
    def quantile(cls, columns=None, q: float | list[float] = 0.5) -> Statistic:
        """Quantiles of each column: a :class:`Statistic` (see Statistic.quantile)."""
        return Statistic.quantile(columns, q=q)

    @classmethod
    def std(cls, columns=None, ddof: int = 1) -> Statistic:
        """Each column's standard deviation: a :class:`Statistic` (see its std)."""
        return Statistic.std(columns, ddof=ddof)

    @classmethod
    def trimmed_mean(cls, columns=None, proportiontocut: float = 0.1) -> Statistic:
        """Trimmed mean of each column: a :class:`Statistic` (see its trimmed_mean)."""
        return Statistic.trimmed_mean(columns, proportiontocut=proportiontocut)

    @classmethod
    def ols(cls, y, X, add_constant: bool = True) -> Statistic:
        """OLS coefficients of y on X: a :class:`Statistic` (see Statistic.ols)."""
        return Statistic.ols(y, X, add_constant=add_constant)

    @classmethod
    def function(cls, func: Callable[[pd.DataFrame], Any], names=None,
                 columns=None) -> Statistic:
        """Any callable DataFrame -> vector: a :class:`Statistic` (see its function)."""
        return Statistic.function(func, names=names, columns=columns)

    def resolve_columns(self, frame: pd.DataFrame, exclude=()) -> tuple:
        """Return the released columns: the named ones, or all but ``exclude``."""
        if self.columns is not None:
            check_columns(frame, self.columns, what="the data")
            return self.columns
        columns = tuple(c for c in frame.columns if c not in set(exclude))
        if not columns:
            raise InvalidParameterError(
                "The query has no columns to release: name them with "
                "Query.mean([...]) (every column of the data is a secret's)."
            )
        return columns

    def weight(self, n: int) -> float:
        """w(n): 1/n for means and proportions, 1 for sums and counts."""
        return self.kind.weight(n)

    def contributions(self, frame: pd.DataFrame, columns, *, what="X") -> np.ndarray:
        """Per-record contributions h(x_j), an (n, k) float array."""
        if not self.kind.counts:
            return numeric_block(frame, columns, what=what)
        # Indicators are 0/1 by construction, so they need no finite check.
        return np.column_stack(
            [indicator(frame, c, self.value, what=what) for c in columns]
        )

    def totals(self, frame: pd.DataFrame, columns, *, what="X") -> np.ndarray:
        """Sum of the contributions over the records, without an (n, k) copy."""
        if not self.kind.counts:
            return column_sums(frame, columns, what=what)
        return np.array([indicator(frame, c, self.value, what=what).sum()
                         for c in columns])

    def names(self, columns) -> list[str]:
        """Labels of the released statistics, one per column.

        Means and sums are labelled by their column; counts and proportions of a
        value also name the value, e.g. ``sex=Female``.
        """
        if not self.kind.counts or self.value is None:
            return [str(c) for c in columns]
        if callable(self.value):
            name = getattr(self.value, "__name__", "predicate")
            return [f"{c}:{name}" for c in columns]
        return [f"{c}={self.value}" for c in columns]

    def output_ranges(self, columns, n: int, ranges: dict):
        """Return each statistic's range of values (see the base class).

        0 to n for a count, 0 to 1 for a proportion, the clipping range (n
        times it for a sum) for a mean; unbounded without one.
        """
        low, high = [], []
        for c in columns:
            lo, hi = self.kind.output_range(
                self, *(float(v) for v in ranges.get(c, (-np.inf, np.inf))), n)
            low.append(lo)
            high.append(hi)
        return np.array(low), np.array(high)

    def n_outputs(self, columns) -> int:
        """Length d of the statistic on ``columns``: one per column."""
        return len(columns)

    def with_columns(self, columns) -> Query:
        """Return the same statistic on resolved columns."""
        return Query(self.statistic, tuple(columns), self.value)

    def __add__(self, other) -> StackedQuery:
        """Stack two queries into one vector-valued release: ``mean + count``."""
        return StackedQuery.of(self, other)

    def evaluate(self, frame: pd.DataFrame, columns=None) -> pd.Series:
        """Compute the exact (noiseless) statistic; never a release."""
        frame = as_frame(frame, what="the data")
        columns = self.resolve_columns(frame) if columns is None else columns
        h = self.contributions(frame, columns, what="the data")
        values = h.sum(axis=0) * self.weight(h.shape[0])
        return pd.Series(values, index=self.names(columns), name=self.statistic)


@persistable
@dataclass(frozen=True)
class StackedQuery(LinearQuery):
    """Several linear statistics released as one vector, e.g. means and counts.

    Build one with ``Query.mean([...]) + Query.count("sex", "Female")``. Each part
    keeps its own weight w(n), so F_j = w_j(n) sum_i h_j(x_i) and the mixture
    formulas still apply statistic by statistic.

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr import Query
    >>> df = pd.DataFrame({"age": [30, 40, 50], "sex": ["F", "M", "F"]})
    >>> (Query.mean("age") + Query.count("sex", "F")).evaluate(df)
    age      40.0
    sex=F     2.0
    Name: stacked, dtype: float64
    """

    parts: tuple

    statistic = "stacked"
    value = None
    #: No one kind: each part has its own.
    kind = None

    def __post_init__(self):
        parts = tuple(self.parts)
        for part in parts:
            if not isinstance(part, Query):
                raise InvalidParameterError(
                    f"A stacked query is made of Query objects; got {part!r}.")
            if part.columns is None:
                raise InvalidParameterError(
                    "Each part of a stacked query must name its columns, e.g. "
                    "Query.mean(['age']) + Query.count('sex', 'Female').")
        object.__setattr__(self, "parts", parts)

    @classmethod
    def of(cls, *queries) -> StackedQuery:
        """Stack queries (stacked ones are flattened)."""
        parts = []
        for q in queries:
            parts.extend(q.parts if isinstance(q, StackedQuery) else [q])
        return cls(tuple(parts))

    def __add__(self, other) -> StackedQuery:
        """Stack one more query."""
        return StackedQuery.of(self, other)

    @property
    def columns(self) -> tuple:
        """Every part's columns, in order."""
        return tuple(c for p in self.parts for c in p.columns)

    def resolve_columns(self, frame: pd.DataFrame, exclude=()) -> tuple:
        """Check every part's columns exist and return them all."""
        for part in self.parts:
            part.resolve_columns(frame, exclude)
        return self.columns

    def with_columns(self, columns) -> StackedQuery:
        """Return the query itself: its columns are fixed by its parts."""
        return self

    def weight(self, n: int) -> np.ndarray:
        """Return w_j(n) for each released statistic."""
        return np.concatenate([np.full(len(p.columns), p.weight(n))
                               for p in self.parts])

    def contributions(self, frame: pd.DataFrame, columns=None, *,
                      what="X") -> np.ndarray:
        """Return every part's per-record contributions, side by side."""
        return np.column_stack([p.contributions(frame, p.columns, what=what)
                                for p in self.parts])

    def totals(self, frame: pd.DataFrame, columns=None, *, what="X") -> np.ndarray:
        """Sum every part's contributions."""
        return np.concatenate([p.totals(frame, p.columns, what=what)
                               for p in self.parts])

    def output_ranges(self, columns, n: int, ranges: dict):
        """Every part's ranges, side by side."""
        found = [p.output_ranges(p.columns, n, ranges) for p in self.parts]
        return (np.concatenate([lo for lo, _ in found]),
                np.concatenate([hi for _, hi in found]))

    def n_outputs(self, columns=None) -> int:
        """Length d of the stacked statistic: one per column of each part."""
        return len(self.columns)

    def names(self, columns=None) -> list[str]:
        """Return the labels of the released statistics."""
        names = [name for p in self.parts for name in p.names(p.columns)]
        if len(set(names)) != len(names):
            raise InvalidParameterError(
                f"The stacked query releases duplicate statistics {names}; each "
                "statistic must appear once.")
        return names

    def evaluate(self, frame: pd.DataFrame, columns=None) -> pd.Series:
        """Compute the exact (noiseless) statistics; never a release."""
        frame = as_frame(frame, what="the data")
        values = self.totals(frame, what="the data") * self.weight(len(frame))
        return pd.Series(values, index=self.names(), name=self.statistic)


def _check_value_type(col: pd.Series, column, value,
                      role: str = "counted value") -> None:
    """Refuse a value of a type no record of the column can equal."""
    numeric = (pd.api.types.is_numeric_dtype(col.dtype)
               or pd.api.types.is_bool_dtype(col.dtype))
    if numeric and isinstance(value, str):
        raise DataValidationError(
            f"Column {column!r} holds numbers, and the {role} {value!r} "
            f"is text, which equals no record: pass it as a number (e.g. "
            f"value={value.strip()}), not in quotes.")
    if (not numeric and pd.api.types.is_string_dtype(col.dtype)
            and isinstance(value, (int, float, np.number))
            and not isinstance(value, bool)
            and col.dropna().map(lambda v: isinstance(v, str)).all()):
        raise DataValidationError(
            f"Column {column!r} holds text, and the {role} {value!r} is "
            f"a number, which equals no record: pass it as text (e.g. "
            f"value={str(value)!r}).")


#: What ``check_value_occurs``'s frames are, in their order.
_FRAMES = ("the private data", "the reference")


def check_value_occurs(value, column, frames, *, role: str,
                       numbers_may_be_absent: bool, why: str) -> None:
    """Refuse a value of ``column`` that no record of ``frames`` holds.

    ``frames`` are the private data and the reference, in that order (those
    given as DataFrames are read); ``why`` says what an absent value would
    mean. With ``numbers_may_be_absent`` a number absent from a numeric
    column passes. A category that one frame holds and the other lacks while
    the other holds categories the first does not (``female``/``male``
    against ``F``/``M``, or ``Female`` against ``female``) is refused too:
    the two frames code the column differently (:func:`_check_same_coding`).
    """
    named = [(name, f[column]) for name, f in zip(_FRAMES, frames, strict=True)
             if isinstance(f, pd.DataFrame) and column in f.columns]
    held = [col for _, col in named]
    if not held:
        return
    _check_value_type(held[0], column, value, role)
    numeric = (pd.api.types.is_numeric_dtype(held[0].dtype)
               or pd.api.types.is_bool_dtype(held[0].dtype))
    if numeric and numbers_may_be_absent:
        return
    found = [bool((col == value).any()) for col in held]
    if any(found):
        if not numeric and not all(found):
            _check_same_coding(value, column, named, found, role)
        return
    seen = pd.concat(held).value_counts()
    listed = ", ".join(repr(v) for v in seen.index[:10].tolist())
    more = f" and {seen.size - 10} more" if seen.size > 10 else ""
    raise DataValidationError(
        f"The {role} {value!r} occurs in no record of column {column!r}, in "
        f"the private data or the reference, so {why}. The column holds "
        f"{listed}{more}; check the value's spelling and type"
        f"{_case_hint(value, seen.index, ': ')}.")


def _case_hint(value, values, lead: str = " (", end: str = "") -> str:
    """Say the values that differ from ``value`` only in case, if any."""
    if not isinstance(value, str):
        return ""
    same = [v for v in values if isinstance(v, str) and v != value
            and v.casefold() == value.casefold()]
    return (f"{lead}{', '.join(map(repr, same))} differs from {value!r} only "
            f"in case{end}" if same else "")


def _check_same_coding(value, column, named, found, role: str) -> None:
    """Refuse a category one frame holds when the other codes it otherwise.

    The frame lacking ``value`` may simply have none of that category (no
    woman among the patients): that passes, as long as its every category
    is one the other frame holds. When it holds categories the other does
    not, the two frames code the column differently, and the release would
    compare groups that do not correspond (0 records matching the secret in
    one of them).
    """
    (has, col_has), (lacks, col_lacks) = (
        named[found.index(True)], named[found.index(False)])
    own = pd.unique(col_lacks.dropna())
    other = set(pd.unique(col_has.dropna()))
    foreign = [v for v in own if v not in other]
    if not foreign:
        return

    def some(values) -> str:
        values = sorted(values, key=str)
        more = f" and {len(values) - 6} more" if len(values) > 6 else ""
        return ", ".join(map(repr, values[:6])) + more

    def spelt(v) -> str:
        # The other frame's value the same but for case, if there is one.
        same = [o for o in other if isinstance(v, str) and isinstance(o, str)
                and o.casefold() == v.casefold()]
        return repr(same[0]) if same else "..."

    target = "data" if lacks == "the private data" else "reference"
    recode = ", ".join(f"{v!r}: {spelt(v)}" for v in sorted(foreign, key=str)[:3])
    raise DataValidationError(
        f"The {role} {value!r} occurs in {has} but in no record of {lacks}: "
        f"the two frames code column {column!r} differently"
        f"{_case_hint(value, own, end=')')}. {has[0].upper()}{has[1:]} holds "
        f"{some(other)}; {lacks} holds {some(own)}. Recode one frame so that "
        f"both use the same values, e.g. {target}[{column!r}] = "
        f"{target}[{column!r}].replace({{{recode}}}), then release again.")


def check_counted_values(query, frames) -> None:
    """Refuse a counted category that no record can match, before any fit.

    A count or proportion of a value of the wrong type, or of a category
    that occurs in none of ``frames`` (the private data and the reference:
    a misspelt category, most likely), is 0 whatever the data: releasing it
    would certify a number that says nothing. A number absent from a
    numeric column is a count of 0 the data may give, and is released;
    predicates and 0/1 columns (``value=None``) are not checked.
    """
    parts = query.parts if isinstance(query, StackedQuery) else (query,)
    for part in parts:
        if (not isinstance(part, Query) or not part.kind.counts
                or part.value is None
                or callable(part.value)):
            continue
        for column in part.columns or ():
            # A number of a numeric column may be absent from both (no death
            # among the patients): a count of 0 the data gave.
            check_value_occurs(part.value, column, frames,
                               role="counted value", numbers_may_be_absent=True,
                               why="its count would be 0 whatever the data")
