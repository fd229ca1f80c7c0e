"""Which learners protect each record, and as what: the list ``ShareHidden`` trusts.

A model trained on the groups' subsamples protects each record only when the
learner does. skattr states that guarantee for the learners on
:data:`ALLOWED` alone, each checked by its exact class and library version,
unfitted, its bounds public finite numbers and its noise unseeded; and for a
Pipeline, ColumnTransformer or FeatureUnion (exact classes) of them and of
steps that learn nothing from the data. Anything else is refused with the
reason: a record guarantee stated where none holds is the bug to avoid, so
the list is short and grows only with a check of the learner's calibration
for one record replaced.
"""

from __future__ import annotations

import numbers
import sys
from dataclasses import dataclass

import numpy as np

__all__ = ["ALLOWED", "LearnerPrivacy", "Unprotected", "learner_privacy"]

#: (module, class) of the learners whose epsilon holds for one record
#: replaced, as their library states it, with the parameters that must be
#: stated (finite numbers, not read from the data). diffprivlib 0.6:
#: LogisticRegression (Chaudhuri et al.'s objective perturbation, rows
#: clipped to ``data_norm``; its optimiser taken as exact) and
#: StandardScaler (bounded means and variances). Its KMeans, GaussianNB,
#: LinearRegression and trees are left out: their calibration does not hold
#: for one record replaced (IBM/differential-privacy-library #104, #105).
ALLOWED = {
    ("diffprivlib.models.logistic_regression", "LogisticRegression"):
        ("data_norm",),
    ("diffprivlib.models.standard_scaler", "StandardScaler"): ("bounds",),
}
#: The diffprivlib releases the list was checked against.
_VERSIONS = ("0.6.",)
#: Learners on the list that read the label's classes from the data.
_READS_CLASSES = {"LogisticRegression"}


class Unprotected(Exception):
    """Why a learner protects no record (its message says, in words)."""


@dataclass(frozen=True)
class LearnerPrivacy:
    """A learner's record guarantee for one record replaced, and what it rests on.

    Attributes
    ----------
    parts : tuple of str
        Its private steps, each with its budget (``"diffprivlib
        LogisticRegression epsilon 1"``).
    epsilon, delta : float
        Their budgets added (basic composition).
    others : tuple of str
        The steps that learn nothing from the data, nested ones included.
    functions : bool
        Whether a FunctionTransformer is among them (its function is
        assumed to act on each record alone).
    classes : bool
        Whether a learner reads the label's classes from the data (they are
        assumed public, every class in each neighbour's subsample).
    """

    parts: tuple
    epsilon: float
    delta: float
    others: tuple
    functions: bool
    classes: bool


def learner_privacy(estimator) -> LearnerPrivacy:
    """Return ``estimator``'s record guarantee, or raise :class:`Unprotected`.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> try:
    ...     learner_privacy(LogisticRegression())
    ... except Unprotected as why:
    ...     print(why)
    LogisticRegression learns from the data without differential privacy
    """
    found = {"parts": [], "others": [], "functions": False, "classes": False}
    _walk(estimator, found)
    if not found["parts"]:
        raise Unprotected("no step of it is differentially private")
    return LearnerPrivacy(
        parts=tuple(p[0] for p in found["parts"]),
        epsilon=float(sum(p[1] for p in found["parts"])),
        delta=float(sum(p[2] for p in found["parts"])),
        others=tuple(found["others"]), functions=found["functions"],
        classes=found["classes"])


def _walk(step, found: dict) -> None:
    """Add ``step``'s private parts and other steps to ``found``, or raise."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion, Pipeline
    from sklearn.preprocessing import (
        FunctionTransformer,
        OneHotEncoder,
        OrdinalEncoder,
    )

    if step is None or (isinstance(step, str)
                        and step in ("drop", "passthrough")):
        return
    kind, name = type(step), type(step).__name__
    if kind.__module__.split(".")[0] == "diffprivlib":
        found["parts"].append(_diffprivlib_part(step))
        found["classes"] |= name in _READS_CLASSES
        return
    # Exact classes: a subclass may keep anything it read in fit.
    if kind is Pipeline:
        for _, inner in step.steps:
            _walk(inner, found)
    elif kind is ColumnTransformer:
        if step.sparse_threshold != 0:
            raise Unprotected(
                "its ColumnTransformer's output is sparse or dense by the "
                "data's density (sparse_threshold="
                f"{step.sparse_threshold!r}): set sparse_threshold=0")
        for _, inner, columns in step.transformers:
            if not _named_columns(columns):
                raise Unprotected(
                    "its ColumnTransformer chooses columns by a function, "
                    "which can read the values: name the columns")
            _walk(inner, found)
        _walk(step.remainder, found)
        found["others"].append(name)
    elif kind is FeatureUnion:
        for _, inner in step.transformer_list:
            _walk(inner, found)
        found["others"].append(name)
    elif kind is FunctionTransformer:
        found["functions"] = True
        found["others"].append(name)
    elif kind in (OneHotEncoder, OrdinalEncoder):
        ignores = ("ignore" if kind is OneHotEncoder
                   else "use_encoded_value")
        if (isinstance(step.categories, str) or step.min_frequency
                is not None or step.max_categories is not None):
            raise Unprotected(
                f"its {name} reads its categories from the data: state "
                "categories=[...] (and no min_frequency or max_categories)")
        codes = ([step.unknown_value, step.encoded_missing_value]
                 if kind is OrdinalEncoder else [])
        if not all(_finite(c) for c in codes):
            raise Unprotected(
                f"its {name} codes an unknown or missing value as "
                "NaN, which the learner refuses, so one record decides "
                "whether the model is fitted: set unknown_value and "
                "encoded_missing_value to finite codes")
        if step.handle_unknown != ignores:
            raise Unprotected(
                f"its {name} refuses a value outside its categories, so one "
                "record decides whether the model is fitted: set "
                f"handle_unknown={ignores!r}")
        found["others"].append(name)
    else:
        raise Unprotected(
            f"{name} learns from the data without differential privacy")


def _named_columns(columns) -> bool:
    """Whether a ColumnTransformer's selector names columns (no function)."""
    if isinstance(columns, (str, numbers.Integral, slice)):
        return True
    try:
        return all(isinstance(c, (str, numbers.Integral, np.bool_, bool))
                   for c in list(columns))
    except TypeError:
        return False


def _diffprivlib_part(step) -> tuple[str, float, float]:
    """Return a diffprivlib learner's (words, epsilon, delta), or raise."""
    kind, name = type(step), type(step).__name__
    required = ALLOWED.get((kind.__module__, name))
    if required is None:
        raise Unprotected(
            f"diffprivlib's {name} is not among the learners skattr has "
            "checked for one record replaced (diffprivlib's "
            "LogisticRegression and StandardScaler)")
    version = str(getattr(sys.modules.get("diffprivlib"), "__version__", ""))
    if not version.startswith(_VERSIONS):
        raise Unprotected(
            f"diffprivlib {version or '(unknown version)'} is not a release "
            f"skattr has checked ({', '.join(v + 'x' for v in _VERSIONS)})")
    if hasattr(step, "n_features_in_"):
        raise Unprotected(
            f"diffprivlib's {name} was fitted before, and may hold bounds it "
            "read from the data: wrap an unfitted one")
    params = step.get_params(deep=False)
    for key in required:
        if not _finite(params.get(key)):
            raise Unprotected(
                f"diffprivlib's {name} was given {key}="
                f"{params.get(key)!r}, so it reads {key} from the data (or "
                f"has none): state {key} as finite numbers from public "
                "knowledge")
    epsilon, delta = params.get("epsilon"), params.get("delta", 0.0) or 0.0
    if not (_real(epsilon) and 0 < epsilon < np.inf and _real(delta)
            and 0 <= delta < 1):
        raise Unprotected(
            f"diffprivlib's {name} states epsilon={epsilon!r}, "
            f"delta={delta!r}: not a finite guarantee")
    if params.get("n_jobs") not in (None, 1):
        raise Unprotected(
            f"diffprivlib's {name} fits in worker processes (n_jobs="
            f"{params['n_jobs']!r}), where its noise is drawn from a copy of "
            "numpy's global state, not the system's secure randomness: "
            "leave n_jobs=None")
    if params.get("random_state") is not None:
        raise Unprotected(
            f"diffprivlib's {name} has its noise seeded (random_state="
            f"{params['random_state']!r}): a known seed makes it "
            "deterministic, so no record is protected; leave "
            "random_state=None")
    words = f"diffprivlib {name} epsilon {float(epsilon):g}"
    if delta:
        words += f" delta {float(delta):g}"
    return words, float(epsilon), float(delta)


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _finite(value) -> bool:
    """Whether ``value`` is a number or array of numbers, all finite."""
    if value is None or isinstance(value, (str, bool)):
        return False
    try:
        values = np.concatenate([np.ravel(np.asarray(v, dtype=float))
                                 for v in (value if isinstance(value, tuple)
                                           else (value,))])
    except (TypeError, ValueError):
        return False
    return values.size > 0 and bool(np.all(np.isfinite(values)))
