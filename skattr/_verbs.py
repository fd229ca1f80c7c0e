"""The verbs of a release, written once: ``mean`` ... ``agg``.

:data:`VERBS` says what each verb is: its own parameters (before the
owner's keywords), their docs, and the statistic they build (a
:class:`~skattr.Query` or :class:`~skattr.Statistic`). The DataFrame
accessor's verbs (:mod:`skattr._accessor_verbs`) and the ledger's
(:mod:`skattr._ledger._verbs`) are written out in source from it by
``tools/generate_verbs.py``, each with its owner's keyword-only
parameters (the accessor's ``secret``, ``reference``, ``epsilon``, ...;
a ledger's ``**params``: its ``_release``'s) and its numpydoc docstring,
for ``help()``, IDEs and type checkers; ``tests/test_verbs.py`` checks
they are what the tool writes. Each body is one call of
:func:`release_verb`, which builds the statistic and hands it to the
owner's ``_release(statistic, **keywords)``; :func:`verb` checks the call
and names it in errors.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable, TypeVar, cast

from skattr._base_query import BaseQuery
from skattr._kinds import Mean, kind_of, kinds
from skattr._query import Query
from skattr._release import check_monotone
from skattr._statistic import Statistic
from skattr.exceptions import InvalidParameterError
from skattr.utils._param_validation import as_called

__all__ = ["VERBS", "Verb", "as_query", "called", "release_verb",
           "statistic_query", "verb"]

# pandas' aggregation names that skattr releases, and the statistic each means
# (Query's constructor of that name: Query.median and Query.std are
# Statistic's), as the kinds say.
_AGGREGATIONS = {kind.name: getattr(Query, kind.name) for kind in kinds()
                 if kind.aggregation}


def as_query(func, columns) -> BaseQuery:
    """Return the query ``func`` names: a statistic's name, a callable or a query."""
    if isinstance(func, BaseQuery):
        return func
    if isinstance(func, str):
        if func not in _AGGREGATIONS:
            raise InvalidParameterError(
                f"Unknown statistic {func!r}; use one of {sorted(_AGGREGATIONS)}, "
                "'count', 'proportion' or 'quantile' (with q=), or pass a "
                "callable DataFrame -> vector.")
        return _AGGREGATIONS[func](columns)
    if callable(func):
        return Statistic.function(func, columns=columns)
    raise InvalidParameterError(
        f"func must be a statistic's name, a callable or a Query; got "
        f"{type(func).__name__}.")


def statistic_query(statistic, columns, value=None, q=None) -> BaseQuery:
    """Return the query a ``plan(statistic=...)`` names (counts take ``value``).

    A query passed first, in the place of the columns (``plan(query)``), is
    the statistic itself when no other statistic is named.
    ``statistic="quantile"`` takes its levels as ``q``.
    """
    kind = kind_of(statistic) if isinstance(statistic, str) else None
    if kind is not None and kind.takes_levels():
        if q is None:
            raise InvalidParameterError(
                f"statistic={statistic!r} needs its levels: plan(columns, "
                f"statistic={statistic!r}, q=[0.25, 0.75]).")
        return Statistic.quantile(columns, q)
    if q is not None:
        raise InvalidParameterError(
            f"q= gives a quantile's levels; statistic={statistic!r} takes "
            "none. Pass statistic='quantile' with it, or drop q=.")
    if isinstance(columns, BaseQuery):
        # statistic="mean" is plan's default: no other statistic named.
        if not isinstance(kind_of(statistic), Mean) or value is not None:
            raise InvalidParameterError(
                f"A query ({type(columns).__name__}) was passed as the columns "
                f"together with statistic={statistic!r}; pass the query alone, "
                "e.g. df.attrpriv.plan(query, secret=...), or name columns "
                "and a statistic.")
        return columns
    if kind is None:
        kind = kind_of(statistic)
    if kind is not None and kind.counts:
        return Query(statistic, columns, value)
    return as_query(statistic, columns)


_P = inspect.Parameter
_COLUMNS = _P("columns", _P.POSITIONAL_OR_KEYWORD, default=None)
_COLUMNS_DOC = """\
columns : label or list of labels, optional
    The released columns; None releases every column but the secret's."""
_VALUE_DOC = """\
value : scalar or callable, optional
    The category counted, or a predicate of the column's values; None counts
    the 1s (or True) of a 0/1 column."""


@dataclass(frozen=True)
class Verb:
    """One verb: its name, its own parameters and the statistic they build.

    ``parameters`` are :class:`inspect.Parameter`, their annotations the
    source text of a type hint; ``summary`` and ``docs`` (numpydoc entries
    of its own parameters, unindented) open its docstring.
    """

    name: str
    summary: str
    parameters: tuple
    docs: str
    statistic: Callable
    after: Callable | None = None


def _quantile_after(release, arguments):
    return (release.monotone_quantiles(Statistic.quantile(
        arguments["columns"], arguments["q"]).q) if arguments["monotone"]
        else release)


VERBS = (
    Verb("mean", "Release the mean of each of ``columns``.", (_COLUMNS,),
         _COLUMNS_DOC, lambda columns: Query.mean(columns)),
    Verb("sum", "Release the sum of each of ``columns``.", (_COLUMNS,),
         _COLUMNS_DOC, lambda columns: Query.sum(columns)),
    Verb("count",
         "Release the number of records whose column equals (or passes) "
         "``value``.",
         (_COLUMNS, _P("value", _P.POSITIONAL_OR_KEYWORD, default=None)),
         _COLUMNS_DOC + "\n" + _VALUE_DOC,
         lambda columns, value: Query.count(columns, value)),
    Verb("proportion",
         "Release the fraction of records whose column equals (or passes) "
         "``value``.",
         (_COLUMNS, _P("value", _P.POSITIONAL_OR_KEYWORD, default=None)),
         _COLUMNS_DOC + "\n" + _VALUE_DOC,
         lambda columns, value: Query.proportion(columns, value)),
    Verb("median",
         "Release the median of each of ``columns`` (a Wasserstein mechanism).",
         (_COLUMNS,), _COLUMNS_DOC, lambda columns: Statistic.median(columns)),
    Verb("quantile", "Release the ``q`` quantile(s) of each of ``columns``.",
         (_COLUMNS, _P("q", _P.POSITIONAL_OR_KEYWORD, default=0.5,
                           annotation="float | Sequence[float]"),
          _P("monotone", _P.KEYWORD_ONLY, default=False, annotation="bool")),
         _COLUMNS_DOC + """
q : float or sequence of float in [0, 1], default=0.5
    The levels; each column's values come in this order.
monotone : bool, default=False
    Sort each column's released quantiles into the order of their
    levels (:meth:`Release.monotone_quantiles`): free, since
    post-processing spends no privacy, and never further from the
    true quantiles.""",
         lambda columns, q, monotone: Statistic.quantile(columns, q),
         after=_quantile_after),
    Verb("std",
         "Release the standard deviation of each of ``columns`` (ddof as "
         "pandas).",
         (_COLUMNS, _P("ddof", _P.POSITIONAL_OR_KEYWORD, default=1,
                       annotation="int")),
         _COLUMNS_DOC + """
ddof : int, default=1
    Delta degrees of freedom, as :meth:`pandas.DataFrame.std`.""",
         lambda columns, ddof: Statistic.std(columns, ddof)),
    Verb("agg",
         "Release any statistic: a name, a callable, a Query or a Statistic.",
         (_P("func", _P.POSITIONAL_OR_KEYWORD,
             annotation="str | Callable | BaseQuery"), _COLUMNS),
         """\
func : str, callable, Query or Statistic
    The statistic: "mean", "sum", "median" or "std", a callable
    DataFrame -> vector (it sees the frame restricted to ``columns``, all
    columns when None, and is released through the resampling Theta of
    the Wasserstein mechanisms), or a :class:`~skattr.Query` /
    :class:`~skattr.Statistic`.
""" + _COLUMNS_DOC,
         lambda func, columns: as_query(func, columns)),
)

_BY_NAME = {v.name: v for v in VERBS}


def called(name: str, given) -> str:
    """Return how errors name a call: the method, and the mechanism named.

    A value another mechanism takes (delta = 0) is refused by the one the
    user named, which the message then says.
    """
    mechanism = given.get("mechanism")
    if isinstance(mechanism, str) and mechanism != "auto":
        return f"{name} (mechanism={mechanism!r})"
    return name


_F = TypeVar("_F", bound=Callable[..., Any])


def verb(method: _F) -> _F:
    """Check how a verb written out in source is called, and name it in errors.

    ``method`` is the verb of :data:`VERBS` of its name, written with its
    owner's signature (:mod:`skattr._accessor_verbs`,
    :mod:`skattr._ledger._verbs`). A call that does not fit the signature
    (a positional argument too many, a value given twice, ``func``
    missing) is an :class:`~skattr.exceptions.InvalidParameterError`
    naming the parameters, not Python's TypeError; inside the call, errors
    about the parameters the user passed name the verb called
    (``df.attrpriv.mean``, ``ledger.mean``), not the mechanism it reached.
    """
    spec = _BY_NAME[method.__name__]
    signature = inspect.signature(method)
    own = {p.name for p in spec.parameters}

    @functools.wraps(method)
    def called_verb(self, *args, **kwargs):
        try:
            signature.bind(self, *args, **kwargs)
        except TypeError as exc:
            raise InvalidParameterError(
                f"{type(self).__name__}.{spec.name}(): {exc}. Its parameters: "
                f"{', '.join(list(signature.parameters)[1:])}.") from None
        with as_called(called(f"{self.called_as}.{spec.name}", kwargs),
                       {*kwargs, *own}):
            return method(self, *args, **kwargs)

    return cast(_F, called_verb)


def release_verb(owner, name: str, arguments: dict, **keywords):
    """Release verb ``name`` through ``owner._release`` (every verb's body).

    ``arguments`` are the verb's own (:attr:`Verb.parameters`), from which
    its statistic is built; ``keywords`` go to ``owner._release``.
    """
    spec = _BY_NAME[name]
    if "monotone" in arguments:
        check_monotone(arguments["monotone"])
    release = owner._release(spec.statistic(**arguments), **keywords)
    return (spec.after(release, arguments) if spec.after is not None
            else release)
