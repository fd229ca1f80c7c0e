"""The verbs of a release, written once: ``mean`` ... ``agg``.

Each verb builds its statistic (a :class:`~skattr.Query` or
:class:`~skattr.Statistic`) from its own arguments and hands it to its
owner's ``_release(statistic, **keywords)``. The DataFrame accessor and the
ledger both take the verbs from :func:`with_verbs`, which gives each verb the
owner's own keyword-only signature for a release (the accessor's
``secret``, ``reference``, ``epsilon``, ...; a ledger's ``**params``) and
its docstring.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

from skattr._base_query import BaseQuery
from skattr._kinds import Mean, kind_of
from skattr._query import Query
from skattr._release import check_monotone
from skattr._statistic import Statistic
from skattr.exceptions import InvalidParameterError
from skattr.utils._param_validation import as_called

__all__ = ["VERBS", "Verb", "as_query", "called", "statistic_query", "with_verbs"]

# pandas' aggregation names that skattr releases, and the statistic each means.
_AGGREGATIONS = {"mean": Query.mean, "sum": Query.sum, "median": Statistic.median,
                 "std": Statistic.std}


def as_query(func, columns) -> BaseQuery:
    """Return the query ``func`` names: a statistic's name, a callable or a query."""
    if isinstance(func, BaseQuery):
        return func
    if isinstance(func, str):
        if func not in _AGGREGATIONS:
            raise InvalidParameterError(
                f"Unknown statistic {func!r}; use one of {sorted(_AGGREGATIONS)}, "
                "df.attrpriv.count/proportion/quantile, or pass a callable "
                "DataFrame -> vector.")
        return _AGGREGATIONS[func](columns)
    if callable(func):
        return Statistic.function(func, columns=columns)
    raise InvalidParameterError(
        f"func must be a statistic's name, a callable or a Query; got "
        f"{type(func).__name__}.")


def statistic_query(statistic, columns, value=None) -> BaseQuery:
    """Return the query a ``plan(statistic=...)`` names (counts take ``value``).

    A query passed first, in the place of the columns (``plan(query)``), is
    the statistic itself when no other statistic is named.
    """
    if isinstance(columns, BaseQuery):
        # statistic="mean" is plan's default: no other statistic named.
        if not isinstance(kind_of(statistic), Mean) or value is not None:
            raise InvalidParameterError(
                f"A query ({type(columns).__name__}) was passed as the columns "
                f"together with statistic={statistic!r}; pass the query alone, "
                "e.g. df.attrpriv.plan(query, secret=...), or name columns "
                "and a statistic.")
        return columns
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
    """One verb: its name, its own parameters and the statistic they build."""

    name: str
    summary: str
    parameters: tuple
    docs: str
    statistic: Callable
    after: Callable | None = None
    notes: str = ""


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
         (_COLUMNS, _P("q", _P.POSITIONAL_OR_KEYWORD, default=0.5),
          _P("monotone", _P.KEYWORD_ONLY, default=False, annotation=bool)),
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
                       annotation=int)),
         _COLUMNS_DOC + """
ddof : int, default=1
    Delta degrees of freedom, as :meth:`pandas.DataFrame.std`.""",
         lambda columns, ddof: Statistic.std(columns, ddof)),
    Verb("agg",
         "Release any statistic: a name, a callable, a Query or a Statistic.",
         (_P("func", _P.POSITIONAL_OR_KEYWORD), _COLUMNS),
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


def _signature(verb: Verb, keywords) -> inspect.Signature:
    own_kw = [p for p in verb.parameters if p.kind is _P.KEYWORD_ONLY]
    positional = [p for p in verb.parameters if p.kind is not _P.KEYWORD_ONLY]
    var = [p for p in keywords if p.kind is _P.VAR_KEYWORD]
    named = [p for p in keywords if p.kind is _P.KEYWORD_ONLY]
    return inspect.Signature([_P("self", _P.POSITIONAL_OR_KEYWORD), *positional,
                              *named, *own_kw, *var])


def _indent(text: str, spaces: int = 8) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line else line for line in text.splitlines())


def with_verbs(keywords_doc: str, returns_doc: str):
    """Class decorator: give the class every verb, over its ``_release``.

    Each verb takes its own parameters, then the keyword-only parameters of
    the class's ``_release(statistic, ...)`` (its signature is the verb's
    ``__signature__``); unknown keywords are an
    :class:`~skattr.exceptions.InvalidParameterError` unless ``_release``
    takes ``**params``. The docstring is the verb's summary, its parameters,
    ``keywords_doc`` and ``returns_doc`` (numpydoc text, unindented).
    """
    def decorate(cls):
        release = inspect.signature(cls._release)
        keywords = [p for p in release.parameters.values()
                    if p.kind in (_P.KEYWORD_ONLY, _P.VAR_KEYWORD)]
        for verb in VERBS:
            setattr(cls, verb.name, _make(cls, verb, keywords, keywords_doc,
                                          returns_doc))
        return cls

    return decorate


def called(name: str, given) -> str:
    """Return how errors name a call: the method, and the mechanism named.

    A value another mechanism takes (delta = 0) is refused by the one the
    user named, which the message then says.
    """
    mechanism = given.get("mechanism")
    if isinstance(mechanism, str) and mechanism != "auto":
        return f"{name} (mechanism={mechanism!r})"
    return name


def _make(cls, verb: Verb, keywords, keywords_doc: str, returns_doc: str):
    signature = _signature(verb, keywords)
    own = [p.name for p in verb.parameters]

    def method(self, *args, **kwargs):
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as exc:
            raise InvalidParameterError(
                f"{type(self).__name__}.{verb.name}(): {exc}. Its parameters: "
                f"{', '.join(list(signature.parameters)[1:])}.") from None
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop("self")
        mine = {name: arguments.pop(name) for name in own}
        extra = {}
        for p in keywords:
            if p.kind is _P.VAR_KEYWORD:
                extra = arguments.pop(p.name, {})
        # Errors name the verb the user called, not the mechanism it reached.
        with as_called(called(f"{self.called_as}.{verb.name}", kwargs),
                       {*kwargs, *mine}):
            if "monotone" in mine:
                check_monotone(mine["monotone"])
            release = self._release(verb.statistic(**mine), **arguments,
                                    **extra)
            return (verb.after(release, mine) if verb.after is not None
                    else release)

    method.__name__ = verb.name
    method.__qualname__ = f"{cls.__name__}.{verb.name}"
    method.__module__ = cls.__module__
    method.__signature__ = signature
    method.__doc__ = (f"{verb.summary}\n\n        Parameters\n        ----------\n"
                      f"{_indent(verb.docs)}\n{_indent(keywords_doc)}\n\n"
                      f"{_indent(returns_doc)}\n        ")
    return method
