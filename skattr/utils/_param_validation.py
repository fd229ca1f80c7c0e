"""Declarative parameter constraints, in the style of scikit-learn's.

scikit-learn's own ``Interval``/``StrOptions`` live in a private module, which a
library must not import (it breaks across releases); this is the small public-API
equivalent skattr's estimators declare in ``_parameter_constraints``.
"""

from __future__ import annotations

import math
import numbers
import re
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from skattr.exceptions import InvalidParameterError

__all__ = ["HasMethods", "Interval", "OneOrMore", "Options", "PositiveNumbers",
           "as_called", "validate_parameter_constraints"]


@dataclass(frozen=True)
class Interval:
    """Real or integral numbers in an interval.

    Parameters
    ----------
    kind : {"real", "integral"}
        ``"real"`` accepts any finite real number, ``"integral"`` integers only.
    left, right : float or None
        The bounds; None means unbounded on that side.
    closed : {"both", "left", "right", "neither"}
        Which bounds belong to the interval.
    """

    kind: str
    left: float | None
    right: float | None
    closed: str = "both"

    def is_satisfied_by(self, value) -> bool:
        """Whether ``value`` lies in the interval."""
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        if self.kind == "integral" and not isinstance(value, numbers.Integral):
            return False
        if not math.isfinite(value):
            return False
        if self.left is not None:
            left_ok = value >= self.left if self.closed in ("both", "left") else (
                value > self.left
            )
            if not left_ok:
                return False
        if self.right is not None:
            right_ok = value <= self.right if self.closed in ("both", "right") else (
                value < self.right
            )
            if not right_ok:
                return False
        return True

    def __str__(self) -> str:
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        left = "-inf" if self.left is None else repr(self.left)
        right = "inf" if self.right is None else repr(self.right)
        what = "a finite real number" if self.kind == "real" else "an int"
        return f"{what} in the range {lb}{left}, {right}{rb}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values (compared with ``==``)."""

    values: frozenset

    def is_satisfied_by(self, value) -> bool:
        """Whether ``value`` is one of the options."""
        try:
            return value in self.values
        except TypeError:
            return False

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in sorted(self.values, key=str))


@dataclass(frozen=True)
class HasMethods:
    """An object with the given methods (scikit-learn's ``HasMethods``).

    A protocol checked by what an object answers, not its class: a type
    written outside skattr passes as skattr's own do.

    Examples
    --------
    >>> HasMethods(("fit_law",)).is_satisfied_by("auto")
    False
    >>> str(HasMethods(("fit", "predict")))
    "an object implementing 'fit' and 'predict'"
    """

    methods: tuple

    def is_satisfied_by(self, value) -> bool:
        """Whether ``value`` has every method (a callable attribute).

        A class is not an object implementing its methods: ``theta=
        ConfidenceBox`` (the class, not ``ConfidenceBox()``) is refused here,
        not called without its instance.
        """
        return not isinstance(value, type) and all(
            callable(getattr(value, m, None)) for m in self.methods)

    def __str__(self) -> str:
        names = [repr(m) for m in self.methods]
        listed = names[0] if len(names) == 1 else (
            ", ".join(names[:-1]) + " and " + names[-1])
        return f"an object implementing {listed}"


@dataclass(frozen=True)
class OneOrMore:
    """An instance of a type, or a non-empty list or tuple of them.

    ``what`` names one instance in an error message (e.g. "a skattr.Secret
    (e.g. ...)"); the message adds "or a non-empty list of them".
    """

    type: type
    what: str = ""

    def is_satisfied_by(self, value) -> bool:
        """Whether ``value`` is one instance, or a non-empty list of them."""
        if isinstance(value, self.type):
            return True
        return (isinstance(value, (list, tuple)) and len(value) > 0
                and all(isinstance(v, self.type) for v in value))

    def __str__(self) -> str:
        what = self.what or f"an instance of {self.type.__name__!r}"
        return f"{what} or a non-empty list of them"


@dataclass(frozen=True)
class PositiveNumbers:
    """A non-empty list, tuple, 1-d array, Series or dict of finite positive reals.

    Examples
    --------
    >>> PositiveNumbers().is_satisfied_by([1, 2.5])
    True
    >>> PositiveNumbers().is_satisfied_by([1, 0])
    False
    >>> PositiveNumbers().is_satisfied_by([True])
    False
    """

    what: str = "a list of positive numbers"

    def is_satisfied_by(self, value) -> bool:
        """Whether ``value`` is such a list (booleans and text are not numbers)."""
        series = hasattr(value, "to_numpy") and getattr(value, "ndim", 0) == 1
        if isinstance(value, dict):
            value = list(value.values())
        elif not (series or isinstance(value, (list, tuple, np.ndarray))):
            return False
        array = value.to_numpy() if series else np.asarray(value)
        return (array.ndim == 1 and array.size > 0
                and array.dtype.kind in "iuf"
                and bool(np.all(np.isfinite(array) & (array > 0))))

    def __str__(self) -> str:
        return self.what


def _describe(constraint) -> str:
    if constraint is None:
        return "None"
    if isinstance(constraint, type):
        return f"an instance of {constraint.__name__!r}"
    if constraint == "random_state":
        return "an int, a numpy Generator or RandomState, or None"
    if constraint == "callable":
        return "a callable"
    if constraint == "boolean":
        return "a bool"
    return str(constraint)


def _satisfies(constraint, value) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    if constraint == "random_state":

        return value is None or isinstance(
            value, (numbers.Integral, np.random.Generator, np.random.RandomState)
        ) and not isinstance(value, bool)
    if constraint == "callable":
        return callable(value)
    if constraint == "boolean":

        return isinstance(value, (bool, np.bool_))
    return constraint.is_satisfied_by(value)


def validate_parameter_constraints(constraints: dict, params: dict, caller: str):
    """Check every parameter against its declared constraints.

    Parameters
    ----------
    constraints : dict
        Maps a parameter name to a list of accepted constraints: ``None``, a type,
        the strings ``"random_state"``, ``"callable"`` or ``"boolean"``, an
        :class:`Interval`, :class:`Options`, :class:`OneOrMore` or
        :class:`HasMethods` (or any object with ``is_satisfied_by``).
    params : dict
        The parameters to check (``estimator.get_params(deep=False)``).
    caller : str
        The class name used in the message.

    Raises
    ------
    InvalidParameterError
        The first parameter that satisfies none of its constraints, with a
        message in scikit-learn's wording.
    """
    for name, value in params.items():
        accepted = constraints.get(name)
        if accepted is None:
            continue
        if any(_satisfies(c, value) for c in accepted):
            continue
        described = [_describe(c) for c in accepted]
        if len(described) > 1:
            text = ", ".join(described[:-1]) + " or " + described[-1]
        else:
            text = described[0]
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be {text}. "
            f"Got {value!r} instead."
        )


# The caller as validate_parameter_constraints names it: a class, a
# function, or a keyword and its value (mechanism='apgm').
_NAMED = re.compile(r"The '(\w+)' parameter of ([\w.]+(?:='[^']*')?)")


@contextmanager
def as_called(caller: str, given):
    """Name ``caller``, the function the user called, in parameter errors.

    A parameter the user passed to ``df.attrpriv.mean`` is checked by the
    mechanism it reaches (``AttributePrivateGaussian``), a class the user
    may never have chosen. Inside this block, an
    :class:`~skattr.exceptions.InvalidParameterError` reading "The
    'epsilon' parameter of X ..." about a parameter in ``given`` (the
    names the user passed) reads "The 'epsilon' parameter of
    df.attrpriv.mean ..." instead; parameters the user did not pass keep
    the name of what checked them.

    Examples
    --------
    >>> try:
    ...     with as_called("df.attrpriv.mean", {"epsilon"}):
    ...         validate_parameter_constraints(
    ...             {"epsilon": [Interval("real", 0, None, closed="neither")]},
    ...             {"epsilon": "1.0"}, "AttributePrivateGaussian")
    ... except InvalidParameterError as exc:
    ...     print(exc)
    The 'epsilon' parameter of df.attrpriv.mean must be a finite real number \
in the range (0, inf). Got '1.0' instead.
    """
    try:
        yield
    except InvalidParameterError as exc:
        given = set(given)
        message = _NAMED.sub(
            lambda m: (f"The {m.group(1)!r} parameter of {caller}"
                       if m.group(1) in given else m.group(0)),
            str(exc), count=1)
        exc.args = (message, *exc.args[1:])
        raise
