"""Choose epsilon in ``GridSearchCV``: scorers and refit rules for what a release needs.

A mechanism's default ``score`` is minus the expected error of a release, which
only falls as epsilon grows, so ``GridSearchCV`` maximising it always picks the
largest epsilon of the grid. Choosing epsilon needs a requirement that more
privacy can meet, and this module turns two such requirements into the scorers
and ``refit`` callables ``GridSearchCV`` takes:

- **an error target**: :func:`expected_error_scorer` measures each candidate's
  expected error (absolute, or relative to the statistic) and
  :func:`refit_smallest_epsilon` picks the smallest epsilon that meets the
  target;
- **a limit on an attack**: :func:`attack_scorer` measures a property-inference
  attack on held-out data and :func:`refit_under_attack_limit` (with
  ``confidence=``) picks the most useful candidate whose upper confidence
  bound on the attack's accuracy (:func:`attack_accuracy_bounds`) is at most
  the limit.

The scorers return floats (higher is better, as scikit-learn expects, so an
error is returned negated, like ``"neg_mean_absolute_error"``) and the rules
are separate callables of ``cv_results_``: each score keeps its meaning in
``cv_results_``, and the rule that picks the candidate is stated once, in
``refit=``. Scoring an expected error spends no privacy: it is a plan, a dry
run that reads only n.

The scorers, the refit rules and the attack take a mechanism or a scikit-learn
``Pipeline`` ending in one: the steps before it transform what the mechanism
sees, and ``refit_smallest_epsilon`` finds the searched ``"<step>__epsilon"``.
A ``ColumnTransformer`` hands the mechanism a DataFrame with
``set_output(transform="pandas")`` and ``verbose_feature_names_out=False``
(the mechanism reads columns by name).

Examples
--------
>>> import skattr
>>> from sklearn.compose import ColumnTransformer
>>> from sklearn.model_selection import GridSearchCV
>>> from sklearn.pipeline import Pipeline
>>> from sklearn.preprocessing import FunctionTransformer
>>> from skattr.datasets import make_hospital
>>> from skattr.mechanisms import AttributePrivateGaussian
>>> from skattr.model_selection import (expected_error_scorer,
...                                     refit_smallest_epsilon)
>>> reference = make_hospital(3000, random_state=0)
>>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
>>> to_kg = ColumnTransformer(
...     [("kg", FunctionTransformer(lambda w: w * 0.4536,
...                                 feature_names_out="one-to-one"), ["weight"])],
...     remainder="passthrough", verbose_feature_names_out=False,
... ).set_output(transform="pandas")
>>> pipe = Pipeline([("kg", to_kg), ("mech", AttributePrivateGaussian(
...     query=skattr.Query.mean(["weight"]), secret=secret,
...     bounds={"weight": (30, 120)}))])
>>> search = GridSearchCV(
...     pipe, {"mech__epsilon": [0.5, 1, 2, 4]},
...     scoring={"error": expected_error_scorer(n=100, relative=True)},
...     refit=refit_smallest_epsilon(0.05), cv=3).fit(reference)
>>> search.best_params_       # the smallest epsilon within 5% of the mean
{'mech__epsilon': 2}
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from skattr._data import column_totals, statistic_values
from skattr._validation import as_frame
from skattr.attacks._search import (
    attack_accuracy_bounds,
    attack_scorer,
    check_every_candidate_scored,
    refit_under_attack_limit,
)
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.utils._param_validation import Interval, validate_parameter_constraints
from skattr.utils._public import public_dir

__all__ = [
    "attack_accuracy_bounds",
    "attack_scorer",
    "expected_error_scorer",
    "refit_smallest_epsilon",
    "refit_under_attack_limit",
]

__dir__ = public_dir(__all__)


class _ExpectedErrorScorer:
    """``scorer(estimator, X, y=None)``: minus the expected error of a release."""

    def __init__(self, n: int, relative: bool):
        self.n = n
        self.relative = relative

    def __call__(self, estimator, X=None, y=None) -> float:
        from skattr.mechanisms import split_pipeline

        before, mechanism = split_pipeline(estimator, what="expected_error_scorer")
        error = mechanism.plan(n=self.n).expected_error
        if not self.relative:
            return -float(error)
        if X is None:
            raise InvalidParameterError(
                "expected_error_scorer(relative=True) needs the fold's data X: "
                "the error is relative to its statistic.")
        if before is not None:
            X = before.transform(X)     # what the mechanism sees
        norm = float(np.linalg.norm(_reference_statistic(mechanism, X, self.n)))
        if not math.isfinite(norm) or norm == 0.0:
            raise DataValidationError(
                f"The statistic of the fold's data has norm {norm!r}, so the "
                "error relative to it is undefined; use relative=False and an "
                "error target in the statistic's units.")
        return -float(error) / norm

    def __repr__(self) -> str:
        return f"expected_error_scorer(n={self.n!r}, relative={self.relative!r})"


def _reference_statistic(estimator, X, n: int) -> np.ndarray:
    """Return the statistic F that n records like X's give, before any noise.

    A linear statistic is w(n) * n times the mean contribution of X's records
    (a mean is X's mean, a sum or count X's scaled to n records); any other
    (median, quantiles, std, coefficients, a function) is its value on X, as an
    estimate of its value on n records. X is the data the scorer was given (a
    fold of the reference data), never anything else.
    """
    frame = as_frame(X, what="the fold's data")
    if len(frame) == 0:
        raise DataValidationError(
            "The fold's data has 0 rows, so it has no statistic to compare the "
            "error with; use more reference data or fewer folds.")
    query, columns = estimator.query_, estimator.columns_
    if query.is_linear:
        totals = column_totals(frame, query, columns, what="the fold's data")
        return totals / len(frame) * n * query.weight(n)
    return np.asarray(statistic_values(frame, query, columns,
                                       what="the fold's data"), dtype=float)


def expected_error_scorer(*, n: int,
                          relative: bool = False) -> Callable[..., float]:
    """Scorer for ``GridSearchCV``: minus the expected error of a release on n records.

    Parameters
    ----------
    n : int
        Number of records the release will be made on (public). Required: the
        size of a cross-validation fold is rarely that of the release, and the
        expected error depends on it.
    relative : bool, default=False
        False returns minus E||noise||_2, in the statistic's units. True
        divides it by ||F||_2, the norm of the statistic that the fold's data
        X gives at n records (see Notes), so that a target reads as a fraction
        of the statistic (0.05 for 5%).

    Returns
    -------
    callable
        ``scorer(estimator, X, y=None) -> float``: ``-estimator.plan(n=n)
        .expected_error``, divided by ||F||_2 when ``relative``. Higher is
        better, as scikit-learn's scorers are (``"neg_..."``). It spends no
        privacy: a plan draws no noise and reads only n.

    Raises
    ------
    InvalidParameterError
        On bad ``n`` or ``relative``, or when the scored estimator is not a
        skattr mechanism.

    See Also
    --------
    refit_smallest_epsilon : Pick the smallest epsilon meeting an error target.

    Notes
    -----
    The relative error compares the noise with the statistic of the data the
    scorer is given, X: in ``GridSearchCV.fit(reference)``, the held-out fold
    of the reference data, which the candidate's Theta was not fit on. That
    is public data from the population; the private data is never read (do
    not pass it to ``GridSearchCV.fit``: fitting Theta on it already leaks).
    A linear statistic is scaled to n records, w(n) n times the fold's mean
    contribution (a mean is the fold's mean; a sum or count of the fold's
    records is scaled to n); another statistic (median, quantiles, std, ...)
    is taken as the fold gives it. With several statistics the norm mixes
    their units, so the largest dominate: standardise the columns, or release
    one statistic per mechanism, for a per-statistic target.

    Examples
    --------
    >>> import skattr
    >>> from skattr.datasets import make_hospital
    >>> from skattr.mechanisms import AttributePrivateGaussian
    >>> from skattr.model_selection import expected_error_scorer
    >>> reference = make_hospital(2000, random_state=0)
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> mech = AttributePrivateGaussian(
    ...     query=skattr.Query.mean(["height"]), secret=secret, epsilon=1.0,
    ...     law="gaussian").fit(reference)
    >>> error = expected_error_scorer(n=100)
    >>> round(error(mech, reference), 2)
    -2.17
    >>> round(expected_error_scorer(n=100, relative=True)(mech, reference), 4)
    -0.0324
    """
    validate_parameter_constraints(
        {"n": [Interval("integral", 1, None, closed="left")],
         "relative": [bool]},
        {"n": n, "relative": relative}, "expected_error_scorer")
    return _ExpectedErrorScorer(int(n), relative)


def refit_smallest_epsilon(target: float, *, error: str = "error",
                           param: str = "epsilon") -> Callable[[dict], int]:
    """``GridSearchCV(refit=...)``: the smallest epsilon whose error meets a target.

    Parameters
    ----------
    target : float
        Largest acceptable mean expected error, > 0, in the units of the
        :func:`expected_error_scorer` named ``error``: the statistic's units,
        or a fraction of the statistic with ``relative=True``.
    error : str, default="error"
        Name of the :func:`expected_error_scorer` in ``scoring`` (``"score"``
        when it is the only scorer).
    param : str, default="epsilon"
        Name of the searched privacy parameter in ``cv_results_["params"]``.
        When no candidate has it, the one ``"<step>__epsilon"`` searched is
        taken (a pipeline ending in a mechanism).

    Returns
    -------
    callable
        ``refit(cv_results) -> int``: among the candidates whose mean expected
        error over the splits is at most ``target``, the one with the smallest
        ``param``; on equal epsilons, the least error, then the first.

    Raises
    ------
    NotCertifiableError
        From the callable, when no candidate meets the target: the message
        names the least error reached and what to change.
    InvalidParameterError
        On a bad target or names, or a ``cv_results_`` without the scorer or
        the parameter.

    See Also
    --------
    expected_error_scorer : The score this rule reads.

    Notes
    -----
    Why a scorer and a rule, not one score: a score whose argmax is the
    smallest epsilon meeting the target would have to encode epsilon itself,
    so ``cv_results_`` would no longer hold the errors. Here the scorer
    measures, the rule chooses, and a candidate whose fit or score failed in a
    split (a NaN score) is an error, never skipped silently.
    The smallest epsilon is the most privacy the target allows: the expected
    error falls as epsilon grows, so every larger epsilon meets the target
    too, spending more privacy for accuracy that was not asked for.

    The target applies to the expected error, not to the error of one
    release, which is random: ``best_estimator_.plan(n=n)`` gives its law
    (and ``alpha(beta)``, the error a release exceeds with probability beta).

    Examples
    --------
    >>> from skattr.model_selection import refit_smallest_epsilon
    >>> results = {"mean_test_error": [-8.5, -2.13, -1.07, -0.21],
    ...            "params": [{"epsilon": 0.25}, {"epsilon": 1.0},
    ...                       {"epsilon": 2.0}, {"epsilon": 10.0}]}
    >>> refit_smallest_epsilon(2.5)(results)
    1
    >>> refit_smallest_epsilon(0.05)(results)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    skattr.exceptions.NotCertifiableError: ... the least is 0.21, at epsilon=10.0. ...
    """
    validate_parameter_constraints(
        {"target": [Interval("real", 0, None, closed="neither")],
         "error": [str], "param": [str]},
        {"target": target, "error": error, "param": param},
        "refit_smallest_epsilon")

    def refit(cv_results) -> int:
        key = f"mean_test_{error}"
        if key not in cv_results:
            raise InvalidParameterError(
                f"cv_results_ has no {key!r}; name the expected_error_scorer "
                f"{error!r} in scoring= (scoring={{{error!r}: "
                "expected_error_scorer(n=...)}), or pass error= its name "
                "('score' when it is the only scorer).")
        check_every_candidate_scored(cv_results, [key])
        scores = np.asarray(cv_results[key], dtype=float)
        if np.any(scores > 0):
            raise InvalidParameterError(
                f"{key} holds positive values; refit_smallest_epsilon reads minus "
                "the expected error, as expected_error_scorer returns it.")
        epsilons = _searched_values(cv_results, param, len(scores))
        errors = -scores
        meets = errors <= target
        if not meets.any():
            best = int(np.argmin(errors))
            raise NotCertifiableError(
                f"No candidate's mean expected error meets the target {target:g}: "
                f"the least is {errors[best]:.4g}, at {param}={epsilons[best]!r}. "
                "Add larger epsilons to the grid or relax the target.")
        candidates = np.flatnonzero(meets)
        smallest = min(epsilons[i] for i in candidates)
        tied = [i for i in candidates if epsilons[i] == smallest]
        return int(min(tied, key=lambda i: (errors[i], i)))

    return refit


def _searched_values(cv_results, param: str, size: int) -> list:
    """Return each candidate's value of ``param``, checked to be a real number."""
    params = cv_results.get("params")
    if params is None or len(params) != size:
        raise InvalidParameterError(
            "cv_results_ has no 'params' with one entry per candidate; pass "
            "GridSearchCV's cv_results_.")
    if params and all(param not in candidate for candidate in params):
        # Inside a pipeline: the one "<step>__epsilon" searched.
        nested = {k for candidate in params for k in candidate
                  if k.endswith(f"__{param}")}
        if len(nested) == 1:
            param = nested.pop()
    values = []
    for i, candidate in enumerate(params):
        if param not in candidate:
            searched = sorted(candidate)
            raise InvalidParameterError(
                f"Candidate {i} has no {param!r} among its parameters {searched}; "
                f"search {param!r} in every grid, or pass param= its name (e.g. "
                "'mechanism__epsilon' in a pipeline).")
        value = candidate[param]
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise InvalidParameterError(
                f"{param!r} must be a number in every candidate; candidate {i} has "
                f"{value!r}.")
        values.append(value)
    return values
