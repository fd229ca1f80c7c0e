"""``df.attrpriv``: release DataFrame aggregates while hiding a global property."""

from __future__ import annotations

import warnings

import pandas as pd

from skattr._query import Query, StackedQuery
from skattr._release import Plan, Release
from skattr._statistic import Statistic
from skattr.exceptions import (
    InvalidParameterError,
    NotCertifiableError,
    PrivacyLeakWarning,
)

__all__ = ["AttributePrivacyAccessor", "build_mechanism"]

# Every name of the design; those not in skattr.mechanisms.MECHANISMS yet are
# reported as not available rather than as unknown.
_PLANNED = ("markov-quilt",)

# pandas' aggregation names that skattr releases, and the statistic each means.
_AGGREGATIONS = {"mean": Query.mean, "sum": Query.sum, "median": Statistic.median,
                 "std": Statistic.std}


def _mechanism_classes(mechanism: str, query=None) -> dict:
    from skattr.mechanisms import MECHANISMS

    if isinstance(query, Statistic):
        # Only the Wasserstein mechanisms model the law of a non-linear
        # statistic (by resampling); the others need a linear one.
        accepting = {name: cls for name, cls in MECHANISMS.items()
                     if getattr(cls, "accepts_statistics", False)}
        if mechanism == "auto":
            return accepting
        if mechanism in MECHANISMS and mechanism not in accepting:
            raise InvalidParameterError(
                f"mechanism={mechanism!r} releases linear statistics (mean, sum, "
                f"count, proportion); a {query.statistic} needs one of "
                f"{', '.join(accepting)} (or 'auto').")
    if mechanism == "auto":
        # The differential-privacy baselines are not candidates: record-level DP
        # does not hide a global property, and they need declared bounds.
        return {name: cls for name, cls in MECHANISMS.items()
                if getattr(cls, "auto_candidate", True)}
    if mechanism in MECHANISMS:
        return {mechanism: MECHANISMS[mechanism]}
    available = ", ".join(["auto", *MECHANISMS])
    if mechanism in _PLANNED:
        raise InvalidParameterError(
            f"mechanism={mechanism!r} is not available in this version of skattr; "
            f"available: {available}.")
    raise InvalidParameterError(
        f"Unknown mechanism {mechanism!r}; available: {available}.")


def build_mechanism(query: Query, *, secret, reference, data: pd.DataFrame,
                    mechanism: str = "auto", **params):
    """Fit the ``mechanism=`` estimator (or, for "auto", the least-error one).

    Returns the fitted estimator. ``reference="self"`` fits Theta on ``data``
    and warns, since Theta then depends on the private data. Mechanisms that fit
    no Theta (the differential-privacy baselines) need no reference: with
    ``reference=None`` they are fitted on ``data``, of which ``fit`` reads only
    the columns.
    """
    classes = _mechanism_classes(mechanism, query)
    needs_reference = any(getattr(cls, "needs_reference", True)
                          for cls in classes.values())
    if reference is None:
        if needs_reference:
            raise InvalidParameterError(
                f"mechanism={mechanism!r} fits Theta on reference data: pass "
                "reference=<a DataFrame of public data from the same population> "
                "(or 'self', with a warning). Only the differential-privacy "
                "baselines (dp-laplace, dp-gaussian, group-dp-laplace, "
                "group-dp-gaussian) take no reference.")
        reference = data
    elif isinstance(reference, str) and reference == "self":
        if needs_reference:
            warnings.warn(
                "reference='self' fits Theta on the private data itself; the noise "
                "then depends on the data it protects and the certificate no "
                "longer holds exactly. Pass public reference data instead.",
                PrivacyLeakWarning, stacklevel=3)
        reference = data
    elif not isinstance(reference, pd.DataFrame):
        raise InvalidParameterError(
            "reference must be a DataFrame of public data from the same "
            "population (or 'self' to fit on the private data, with a warning); got "
            f"{type(reference).__name__}.")
    accepted = {key for cls in classes.values()
                for key in cls().get_params(deep=False)}
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise InvalidParameterError(
            f"mechanism={mechanism!r} takes no parameter(s) {unknown}; it takes "
            f"{sorted(accepted - {'query', 'secret'})}. Check the spelling.")
    candidates = []
    errors = []
    for name, cls in classes.items():
        # "auto" passes each candidate the parameters it takes (``law`` is the
        # Theta mechanisms', ``privacy`` the Wasserstein mechanisms').
        own = cls().get_params(deep=False)
        if mechanism == "auto" and "privacy" in params and "privacy" not in own:
            # A candidate that cannot give the privacy asked for is no candidate.
            continue
        est = cls(query=query, secret=secret,
                  **{k: v for k, v in params.items()
                     if mechanism != "auto" or k in own})
        try:
            est.fit(reference)
            plan = est.plan(n=len(data))
        except (NotCertifiableError, InvalidParameterError) as exc:
            # "auto" skips a candidate that cannot certify, or whose parameters
            # do not fit it (delta = 0 for the Approximate Wasserstein
            # Mechanism); a bad parameter for every candidate is raised below.
            if mechanism != "auto":
                raise
            errors.append((name, exc))
            continue
        candidates.append((plan.expected_error, name, est))
    if not candidates:
        invalid = [exc for _, exc in errors
                   if isinstance(exc, InvalidParameterError)]
        if len(invalid) == len(errors):
            raise invalid[0]
        raise NotCertifiableError(
            "No available mechanism certifies this release: "
            + " | ".join(f"{name}: {exc}" for name, exc in errors))
    # Mechanisms that coincide (e.g. for one statistic) tie up to rounding: the
    # first in the registry's order wins, so the choice is deterministic.
    least = min(c[0] for c in candidates)
    return next(est for error, _, est in candidates
                if error <= least * (1 + 1e-9) + 1e-300)


def _as_query(func, columns):
    """Return the query ``func`` names: a statistic's name, a callable or a query."""
    if isinstance(func, (Query, StackedQuery, Statistic)):
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


@pd.api.extensions.register_dataframe_accessor("attrpriv")
class AttributePrivacyAccessor:
    """Attribute-private aggregates of a DataFrame: ``df.attrpriv.mean(...)``.

    Every method takes the statistic's columns and the keywords ``secret``
    (a :class:`~skattr.Secret` or a list), ``reference`` (public reference data,
    or ``"self"``; omitted for the differential-privacy baselines, which fit no
    Theta), ``epsilon``, ``delta``, ``mechanism`` (default ``"auto"``),
    ``calibration``, ``theta`` and ``random_state``, plus any parameter of the
    chosen mechanism. It never modifies the frame and stores nothing.

    Examples
    --------
    >>> import skattr
    >>> from skattr.datasets import make_hospital
    >>> private = make_hospital(50, random_state=1)
    >>> reference = make_hospital(2000, random_state=0)
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> rel = private.attrpriv.mean(["blood_pressure"], secret=secret,
    ...                             reference=reference, random_state=0)
    >>> rel.mechanism       # certified from the resampled laws: no Gaussian model
    'approx-wasserstein'
    >>> round(rel.epsilon, 3), rel.delta
    (1.0, 0.001)
    >>> rel = private.attrpriv.mean(["blood_pressure"], secret=secret,
    ...                             reference=reference, law="gaussian",
    ...                             mechanism="apgm", random_state=0)
    >>> rel.assumptions[-1][:26]
    "ASSUMED (law='gaussian'): "
    """

    def __init__(self, pandas_obj: pd.DataFrame):
        if not pandas_obj.columns.is_unique:
            raise AttributeError(
                "df.attrpriv needs unique column labels; rename the duplicated "
                "columns first.")
        self._obj = pandas_obj

    def _release(self, query: Query, *, secret, reference, mechanism="auto",
                 **params) -> Release:
        est = build_mechanism(query, secret=secret, reference=reference,
                              data=self._obj, mechanism=mechanism, **params)
        return est.release(self._obj)

    def mean(self, columns=None, *, secret=None, reference=None,
             **params) -> Release:
        """Release the mean of each of ``columns``."""
        return self._release(Query.mean(columns), secret=secret,
                             reference=reference, **params)

    def sum(self, columns=None, *, secret=None, reference=None,
            **params) -> Release:
        """Release the sum of each of ``columns``."""
        return self._release(Query.sum(columns), secret=secret,
                             reference=reference, **params)

    def count(self, columns=None, value=None, *, secret=None, reference=None,
              **params) -> Release:
        """Release the number of records whose column equals (or passes) ``value``."""
        return self._release(Query.count(columns, value), secret=secret,
                             reference=reference, **params)

    def proportion(self, columns=None, value=None, *, secret=None,
                   reference=None, **params) -> Release:
        """Release the fraction of records whose column equals (or passes) ``value``."""
        return self._release(Query.proportion(columns, value), secret=secret,
                             reference=reference, **params)

    def median(self, columns=None, *, secret=None, reference=None,
               **params) -> Release:
        """Release the median of each of ``columns`` (a Wasserstein mechanism)."""
        return self._release(Statistic.median(columns), secret=secret,
                             reference=reference, **params)

    def quantile(self, columns=None, q=0.5, *, secret=None, reference=None,
                 **params) -> Release:
        """Release the ``q`` quantile(s) of each of ``columns``."""
        return self._release(Statistic.quantile(columns, q), secret=secret,
                             reference=reference, **params)

    def std(self, columns=None, ddof: int = 1, *, secret=None, reference=None,
            **params) -> Release:
        """Release the standard deviation of each of ``columns`` (ddof as pandas)."""
        return self._release(Statistic.std(columns, ddof), secret=secret,
                             reference=reference, **params)

    def agg(self, func, columns=None, *, secret=None, reference=None,
            **params) -> Release:
        """Release any statistic: a name, a callable, a Query or a Statistic.

        ``func`` is "mean", "sum", "median" or "std", a callable DataFrame ->
        vector, or a :class:`~skattr.Query` / :class:`~skattr.Statistic`. A
        callable sees the frame restricted to ``columns`` (all columns when
        None) and is released through the resampling Theta of the Wasserstein
        mechanisms (``mechanism="approx-wasserstein"`` by default choice of
        ``"auto"``).

        Examples
        --------
        >>> import numpy as np, pandas as pd, skattr
        >>> rng = np.random.default_rng(0)
        >>> ref = pd.DataFrame({"rich": rng.random(3000) < 0.3,
        ...                     "age": rng.normal(40, 10, 3000).round()})
        >>> private = ref.sample(100, random_state=1)
        >>> secret = skattr.Secret.proportion("rich", True, pairs=[(0.2, 0.4)])
        >>> rel = private.attrpriv.agg(lambda d: d["age"].max() - d["age"].min(),
        ...                            ["age"], secret=secret, reference=ref,
        ...                            delta=0.01, random_state=0)
        >>> rel.mechanism, rel.delta
        ('approx-wasserstein', 0.01)
        """
        query = _as_query(func, columns)
        return self._release(query, secret=secret, reference=reference, **params)

    def plan(self, columns=None, *, statistic="mean", value=None,
             secret=None, reference=None, mechanism="auto", **params) -> Plan:
        """Return the noise law and expected error, without releasing anything.

        ``statistic`` is a name ("mean", "sum", "count", "proportion", "median",
        "std"), a callable, or a :class:`~skattr.Query` /
        :class:`~skattr.Statistic`.
        """
        query = (Query(statistic, columns, value)
                 if statistic in ("count", "proportion")
                 else _as_query(statistic, columns))
        est = build_mechanism(query, secret=secret, reference=reference,
                              data=self._obj, mechanism=mechanism, **params)
        return est.plan(n=len(self._obj))

    def leakage(self, columns=None, *, statistic: str = "mean", value=None,
                secret=None, reference=None, delta: float = 1e-3,
                **params) -> float:
        """Epsilon, at ``delta``, of releasing the raw statistic with no noise."""
        # The leakage of the raw statistic depends on Theta alone; the
        # Gaussian mechanism's estimator holds the machinery that computes it.
        params.pop("mechanism", None)
        if statistic not in ("mean", "sum", "count", "proportion"):
            raise InvalidParameterError(
                f"leakage is computed for linear statistics (mean, sum, count, "
                f"proportion), whose laws are Gaussian; got {statistic!r}. For "
                "another statistic, plan a release and read its noise.")
        est = build_mechanism(Query(statistic, columns, value), secret=secret,
                              reference=reference, data=self._obj, mechanism="apgm",
                              delta=delta, **params)
        return est.leakage(n=len(self._obj), delta=delta)
