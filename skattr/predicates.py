"""Declarative predicates on a column: which records a secret or a count selects.

``Secret.proportion("income", Above(50_000), ...)`` selects the same records as
``Secret.proportion("income", lambda income: income > 50_000, ...)``, and so
does ``Query.count("income", Above(50_000))``; unlike a function, a predicate
is data: frozen, comparable, shown by its ``repr`` in labels (``Above(50000)``)
and saved by ``to_json`` (a function is code, which skattr never stores or
loads). Combine predicates with ``&``, ``|`` and ``~``.

Every predicate is vectorised: called on a pandas Series it returns one bool
per record, computed by the pandas operation its ``repr`` names (``>``,
``>=``, ``<``, ``<=``, ``between``, ``==``, ``isin``). A missing value (NaN,
None, ``pd.NA``) never matches, not even under ``~``, as a missing value
never equals a category. skattr's releases refuse missing values before any
predicate or category is applied, so within a release a predicate and the
matching function give identical results.

Examples
--------
>>> import pandas as pd
>>> from skattr.predicates import Above, Between, OneOf
>>> income = pd.Series([20_000, 55_000, 80_000, float("nan")])
>>> Above(50_000)(income).tolist()
[False, True, True, False]
>>> rich_or_poor = Above(70_000) | ~Between(30_000, 70_000)
>>> rich_or_poor
Above(70000) | ~Between(30000, 70000)
>>> rich_or_poor(income).tolist()
[True, False, True, False]
>>> OneOf(["a", "b"])(pd.Series(["a", "c", "b"])).tolist()
[True, False, True]
"""

from __future__ import annotations

import math
import numbers
import operator
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
import pandas as pd

from skattr._persistence import persistable
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.utils._public import public_dir

__all__ = [
    "Above",
    "And",
    "AtLeast",
    "AtMost",
    "Below",
    "Between",
    "Equals",
    "Not",
    "OneOf",
    "Or",
    "Predicate",
]

__dir__ = public_dir(__all__)

_CLOSED = ("both", "neither", "left", "right")


def _threshold(value, owner: str, name: str = "threshold"):
    """Return ``value`` as a Python number, or raise: a real number, not NaN."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or (
            math.isnan(value)):
        raise InvalidParameterError(
            f"The {name} of {owner} must be a number (not NaN or a bool); got "
            f"{value!r}. For other comparisons pass a function to the secret "
            "(it then cannot be saved).")
    return value


def _category(value, owner: str):
    """Return ``value`` as a plain scalar that can be matched and saved."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise InvalidParameterError(
            f"{owner} cannot match a missing value: no missing value matches a "
            "predicate, and releases refuse them. Drop or fill the missing "
            "values first.")
    if not isinstance(value, (str, bool, numbers.Real)):
        raise InvalidParameterError(
            f"{owner} matches strings, numbers and bools; got {value!r} "
            f"({type(value).__name__}).")
    return value


def _mask(result) -> np.ndarray:
    """Return a pandas comparison's result as bools, missing results False."""
    return pd.Series(result).to_numpy(dtype=bool, na_value=False)


@dataclass(frozen=True, repr=False)
class Predicate(ABC):
    """A condition on the values of one column (the base of every predicate).

    Call it on a pandas Series (or anything ``pd.Series`` accepts) for one
    bool per value; combine predicates with ``&``, ``|`` and ``~``.
    """

    def __call__(self, column) -> np.ndarray:
        """Return one bool per value of ``column``; missing values are False.

        Parameters
        ----------
        column : pandas Series or array-like
            The values, typically the secret's column.

        Returns
        -------
        ndarray of bool, shape (len(column),)
        """
        series = column if isinstance(column, pd.Series) else pd.Series(column)
        return self._match(series) & series.notna().to_numpy(dtype=bool)

    @abstractmethod
    def _match(self, series: pd.Series) -> np.ndarray:
        """Return the predicate on each value, whatever it says on missing ones."""

    @abstractmethod
    def __repr__(self) -> str:
        """Return the predicate as Python that rebuilds it."""

    @property
    def __name__(self) -> str:
        """Return the repr: labels name a predicate as they name a function."""
        return repr(self)

    def __and__(self, other):
        """Return the predicate that holds where both hold."""
        if not isinstance(other, Predicate):
            return NotImplemented
        return And(_parts(self, And) + _parts(other, And))

    def __or__(self, other):
        """Return the predicate that holds where either holds."""
        if not isinstance(other, Predicate):
            return NotImplemented
        return Or(_parts(self, Or) + _parts(other, Or))

    def __invert__(self):
        """Return the predicate that holds where this one does not."""
        return Not(self)


def _parts(predicate: Predicate, kind: type) -> tuple:
    return predicate.parts if isinstance(predicate, kind) else (predicate,)


def _compare(series: pd.Series, op, value, owner: Predicate) -> np.ndarray:
    try:
        return _mask(op(series, value))
    except TypeError as exc:
        raise DataValidationError(
            f"{owner!r} cannot compare the values of column {series.name!r} "
            f"(dtype {series.dtype}) with {value!r}: {exc}. Apply it to a "
            "numeric column, or convert the column first.") from exc


@dataclass(frozen=True, repr=False)
class _Comparison(Predicate):
    threshold: float

    _op = None

    def __post_init__(self):
        """Check and normalise the fields."""
        object.__setattr__(self, "threshold",
                           _threshold(self.threshold, type(self).__name__))

    def _match(self, series: pd.Series) -> np.ndarray:
        return _compare(series, type(self)._op, self.threshold, self)

    def __repr__(self) -> str:
        """Return the predicate as Python that rebuilds it."""
        return f"{type(self).__name__}({self.threshold!r})"


@persistable
@dataclass(frozen=True, repr=False)
class Above(_Comparison):
    """Values greater than ``threshold``: ``column > threshold``.

    Parameters
    ----------
    threshold : number

    Examples
    --------
    >>> import pandas as pd, skattr
    >>> from skattr.predicates import Above
    >>> Above(50_000)(pd.Series([40_000, 50_000, 60_000])).tolist()
    [False, False, True]
    >>> skattr.Secret.proportion("income", Above(50_000), pairs=[(0.2, 0.3)]).label
    'proportion(income: Above(50000)): pairs 0.2 vs 0.3'
    """

    _op = operator.gt


@persistable
@dataclass(frozen=True, repr=False)
class AtLeast(_Comparison):
    """Values at least ``threshold``: ``column >= threshold``.

    Parameters
    ----------
    threshold : number

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.predicates import AtLeast
    >>> AtLeast(65)(pd.Series([64, 65, 66])).tolist()
    [False, True, True]
    """

    _op = operator.ge


@persistable
@dataclass(frozen=True, repr=False)
class Below(_Comparison):
    """Values less than ``threshold``: ``column < threshold``.

    Parameters
    ----------
    threshold : number

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.predicates import Below
    >>> Below(18)(pd.Series([17, 18, 19])).tolist()
    [True, False, False]
    """

    _op = operator.lt


@persistable
@dataclass(frozen=True, repr=False)
class AtMost(_Comparison):
    """Values at most ``threshold``: ``column <= threshold``.

    Parameters
    ----------
    threshold : number

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.predicates import AtMost
    >>> AtMost(18)(pd.Series([17, 18, 19])).tolist()
    [True, True, False]
    """

    _op = operator.le


@persistable
@dataclass(frozen=True, repr=False)
class Between(Predicate):
    """Values from ``low`` to ``high``: ``column.between(low, high, closed)``.

    Parameters
    ----------
    low, high : number
        The ends, ``low < high``.
    closed : {"both", "neither", "left", "right"}, default="both"
        Which ends belong to the interval (pandas' ``inclusive=``).

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.predicates import Between
    >>> ages = pd.Series([17, 18, 30, 65])
    >>> Between(18, 65)(ages).tolist()
    [False, True, True, True]
    >>> Between(18, 65, closed="left")(ages).tolist()
    [False, True, True, False]
    """

    low: float
    high: float
    closed: str = "both"

    def __post_init__(self):
        """Check and normalise the fields."""
        low = _threshold(self.low, "Between", "low end")
        high = _threshold(self.high, "Between", "high end")
        if not low < high:
            raise InvalidParameterError(
                f"Between needs low < high; got low={low!r}, high={high!r}. "
                "For one value use Equals.")
        if self.closed not in _CLOSED:
            raise InvalidParameterError(
                f"The 'closed' parameter of Between must be one of {_CLOSED}. "
                f"Got {self.closed!r} instead.")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def _match(self, series: pd.Series) -> np.ndarray:
        return _compare(series, lambda s, ends: s.between(*ends,
                                                          inclusive=self.closed),
                        (self.low, self.high), self)

    def __repr__(self) -> str:
        """Return the predicate as Python that rebuilds it."""
        closed = "" if self.closed == "both" else f", closed={self.closed!r}"
        return f"Between({self.low!r}, {self.high!r}{closed})"


@persistable
@dataclass(frozen=True, repr=False)
class Equals(Predicate):
    """Values equal to ``value``: ``column == value``, as a category matches.

    Parameters
    ----------
    value : str, number or bool

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.predicates import Equals
    >>> Equals("female")(pd.Series(["female", "other"])).tolist()
    [True, False]
    """

    value: object

    def __post_init__(self):
        """Check and normalise the fields."""
        object.__setattr__(self, "value", _category(self.value, "Equals"))

    def _match(self, series: pd.Series) -> np.ndarray:
        return _mask(series == self.value)

    def __repr__(self) -> str:
        """Return the predicate as Python that rebuilds it."""
        return f"Equals({self.value!r})"


@persistable
@dataclass(frozen=True, repr=False)
class OneOf(Predicate):
    """Values among ``values``: ``column.isin(values)``.

    Parameters
    ----------
    values : list of str, number or bool
        Not empty.

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.predicates import OneOf
    >>> OneOf(["Bachelors", "Masters"])(pd.Series(["HS", "Masters"])).tolist()
    [False, True]
    """

    values: tuple

    def __post_init__(self):
        """Check and normalise the fields."""
        if isinstance(self.values, (str, bytes)) or not hasattr(
                self.values, "__iter__"):
            raise InvalidParameterError(
                f"OneOf takes a list of values, e.g. OneOf(['a', 'b']); got "
                f"{self.values!r}.")
        values = tuple(_category(v, "OneOf") for v in self.values)
        if not values:
            raise InvalidParameterError(
                "OneOf needs at least one value to match.")
        object.__setattr__(self, "values", values)

    def _match(self, series: pd.Series) -> np.ndarray:
        return _mask(series.isin(list(self.values)))

    def __repr__(self) -> str:
        """Return the predicate as Python that rebuilds it."""
        return f"OneOf({list(self.values)!r})"


def _check_parts(parts, owner: str, least: int) -> tuple:
    parts = tuple(parts)
    if len(parts) < least or not all(isinstance(p, Predicate) for p in parts):
        raise InvalidParameterError(
            f"{owner} combines at least {least} skattr predicates; build it "
            "with &, | and ~ (e.g. AtLeast(18) & Below(65)).")
    return parts


@persistable
@dataclass(frozen=True, repr=False)
class And(Predicate):
    """Values where every part holds: ``a & b & ...``.

    Parameters
    ----------
    parts : tuple of Predicate
        At least two; ``&`` builds it.

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.predicates import AtLeast, Below
    >>> working_age = AtLeast(18) & Below(65)
    >>> working_age, working_age(pd.Series([17, 30, 70])).tolist()
    (AtLeast(18) & Below(65), [False, True, False])
    """

    parts: tuple

    def __post_init__(self):
        """Check and normalise the fields."""
        object.__setattr__(self, "parts", _check_parts(self.parts, "And", 2))

    def _match(self, series: pd.Series) -> np.ndarray:
        return np.logical_and.reduce([p(series) for p in self.parts])

    def __repr__(self) -> str:
        """Return the predicate as Python that rebuilds it."""
        return " & ".join(f"({p!r})" if isinstance(p, Or) else repr(p)
                          for p in self.parts)


@persistable
@dataclass(frozen=True, repr=False)
class Or(Predicate):
    """Values where at least one part holds: ``a | b | ...``.

    Parameters
    ----------
    parts : tuple of Predicate
        At least two; ``|`` builds it.

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.predicates import Above, Below
    >>> extreme = Below(18) | Above(65)
    >>> extreme, extreme(pd.Series([17, 30, 70])).tolist()
    (Below(18) | Above(65), [True, False, True])
    """

    parts: tuple

    def __post_init__(self):
        """Check and normalise the fields."""
        object.__setattr__(self, "parts", _check_parts(self.parts, "Or", 2))

    def _match(self, series: pd.Series) -> np.ndarray:
        return np.logical_or.reduce([p(series) for p in self.parts])

    def __repr__(self) -> str:
        """Return the predicate as Python that rebuilds it."""
        return " | ".join(repr(p) for p in self.parts)


@persistable
@dataclass(frozen=True, repr=False)
class Not(Predicate):
    """Values where ``part`` does not hold: ``~part`` (missing values still not).

    Parameters
    ----------
    part : Predicate

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.predicates import OneOf
    >>> (~OneOf(["a"]))(pd.Series(["a", "b", None])).tolist()
    [False, True, False]
    """

    part: Predicate

    def __post_init__(self):
        """Check and normalise the fields."""
        _check_parts([self.part], "Not", 1)

    def _match(self, series: pd.Series) -> np.ndarray:
        return ~self.part(series)

    def __repr__(self) -> str:
        """Return the predicate as Python that rebuilds it."""
        inner = repr(self.part)
        return f"~({inner})" if isinstance(self.part, (And, Or)) else f"~{inner}"
