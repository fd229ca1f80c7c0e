"""Refuse a scikit-learn metric scoring a mechanism in a search, at its fit.

``GridSearchCV(mechanism, ..., scoring="neg_mean_absolute_error")`` scores
each candidate with a metric of predictions against y. A mechanism predicts
nothing (it releases one statistic of a whole dataset), so the scorer fails
on every candidate (without y it cannot even be called), scikit-learn turns
each failure into a NaN score with a warning, and the search picks an
arbitrary epsilon. Nothing of skattr runs when such a scorer is called, so
the mechanism's ``fit``, which the search calls first in the same split,
looks at the split's scorer and refuses it, naming skattr's scorers.
scikit-learn then reports every fit failed, with this message, and stops.
"""

from __future__ import annotations

import inspect

from skattr.exceptions import InvalidParameterError

__all__ = ["check_search_scorer", "searched"]

#: How far up the stack a search's split is looked for (the mechanism's fit
#: is called a few frames below it: a pipeline's steps, joblib's call).
_DEPTH = 40


def _scored(estimator, mechanism) -> bool:
    """Whether ``estimator`` is ``mechanism``, or a pipeline ending in it."""
    while estimator is not mechanism:
        steps = getattr(estimator, "steps", None)
        if not steps:
            return False
        estimator = steps[-1][1]
    return True


def _split_scorer(mechanism):
    """Return the scorer of the split that fits and scores ``mechanism``, if any.

    scikit-learn fits and scores each split in ``_fit_and_score`` (the
    searches, ``cross_validate``, ``cross_val_score``; in a worker process
    too), whose ``estimator`` is the one fitted and ``scorer`` the split's
    scorer. A mechanism fitted inside another estimator the split scores
    (an attack's) is not what that scorer scores.
    """
    frame = inspect.currentframe()
    for _ in range(_DEPTH):
        if frame is None:
            return None
        if (frame.f_code.co_name == "_fit_and_score"
                and frame.f_globals.get("__name__", "").startswith("sklearn.")):
            scored = _scored(frame.f_locals.get("estimator"), mechanism)
            return frame.f_locals.get("scorer") if scored else None
        frame = frame.f_back
    return None


def _metrics(scorer) -> list:
    """Return the names of scikit-learn metrics among ``scorer``'s scorers.

    A metric scorer (``get_scorer(name)``, ``make_scorer(metric)``) compares
    the estimator's predictions with y; the passthrough one (``scoring=None``:
    the estimator's own ``score``), skattr's scorers and the user's own
    callables are left alone.
    """
    scorers = getattr(scorer, "_scorers", None)     # several (a dict scoring=)
    found = []
    for one in (scorers.values() if isinstance(scorers, dict) else [scorer]):
        metric = getattr(one, "_score_func", None)
        if metric is not None and type(one).__module__.startswith("sklearn."):
            found.append(getattr(metric, "__name__", repr(metric)))
    return found


def check_search_scorer(mechanism) -> None:
    """Refuse a mechanism's fit inside a search scored by a scikit-learn metric.

    Outside a cross-validation split, inside one that scores another
    estimator, or with a scorer that can score a mechanism, nothing happens.

    Raises
    ------
    InvalidParameterError
        The split's scorer is a metric of predictions, which a mechanism
        cannot give: every candidate would score NaN.
    """
    metrics = _metrics(_split_scorer(mechanism))
    if not metrics:
        return
    raise InvalidParameterError(
        f"A search scores {type(mechanism).__name__} with scikit-learn's "
        f"{', '.join(metrics)}, a metric of predictions against y; a mechanism "
        "predicts nothing (it releases a statistic of the whole dataset), so "
        "every candidate would score NaN and the search would pick an "
        "arbitrary epsilon. Score it with skattr.model_selection's scorers: "
        "scoring={'error': expected_error_scorer(n=...)} with "
        "refit=refit_smallest_epsilon(target), the smallest epsilon whose "
        "expected error meets a target; or attack_scorer(...) with "
        "refit_under_attack_limit(...). (scoring=None scores minus the "
        "expected error, which always picks the largest epsilon.)")


def searched(estimator) -> str | None:
    """Return the name of the scikit-learn search fitting ``estimator``, if any.

    A search (``GridSearchCV``, ``RandomizedSearchCV``, the halving ones)
    fits each candidate in ``_fit_and_score`` with the candidate's
    ``parameters`` (in a worker process too); ``cross_validate`` passes none
    (nothing is chosen) and gives None. The candidate is ``estimator`` or a
    pipeline ending in it. The search's class names it when its ``fit`` is
    in the same process; "A search" otherwise.

    Examples
    --------
    >>> searched(object()) is None
    True
    """
    frame = inspect.currentframe()
    found = None
    for _ in range(_DEPTH):
        if frame is None:
            return found
        module = frame.f_globals.get("__name__", "")
        if (found is None and frame.f_code.co_name == "_fit_and_score"
                and module.startswith("sklearn.")):
            if (not _scored(frame.f_locals.get("estimator"), estimator)
                    or frame.f_locals.get("parameters") is None):
                return None
            found = "A search"
        elif (found is not None and frame.f_code.co_name == "fit"
              and module.startswith("sklearn.model_selection")
              and frame.f_locals.get("self") is not None):
            return type(frame.f_locals["self"]).__name__
        frame = frame.f_back
    return found
