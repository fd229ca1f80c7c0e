"""``ShareHidden``: any scikit-learn estimator, trained so a share cannot be inferred.

Property inference on trained models (Ateniese et al. 2015; Ganju et al.
2018; Zhang, Tople and Ohrimenko 2021) reads a global property of the
training data, say the share of women, from a released model. Under the
attribute-privacy model (records independent given their group, a group's
law the same under every secret), a model fitted on each group of the
secret subsampled to its public size (:mod:`skattr._subsample`) has one
law under every secret of the pairs, whatever the learner and its own
randomness: the share is hidden exactly, with no noise on the model. What
it costs is the records left out, and a model trained at the groups'
public sizes rather than at the data's share.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from skattr._certificate import Assumption, Method, MethodStep
from skattr._plain import plain_subsampled
from skattr._private_learners import Unprotected, learner_privacy
from skattr._release import Certificate
from skattr._secret import Secret
from skattr._subsample import (
    neighbours_assumption,
    public_sizes,
    share_certificate,
    subsample_positions,
)
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.utils._scoring import searched

__all__ = ["ShareHidden"]

#: What a model trained on subsampled groups does not protect.
_RECORDS = (
    "No record is protected by the subsampling: the model can reveal what "
    "it learned of any kept record, as every model does, unless the wrapped "
    "estimator is itself differentially private.")


def _estimator_has(name: str):
    """Whether the wrapped (or fitted) estimator offers ``name``."""
    def check(self) -> bool:
        estimator = getattr(self, "estimator_", self.estimator)
        return hasattr(estimator, name)

    return check


class ShareHidden(MetaEstimatorMixin, BaseEstimator):
    """Fit any estimator so that the share of a group in its training data is hidden.

    ``fit`` keeps, of each group of the secret (the records it counts, and
    the rest), a number of records fixed by n and the secret alone (the
    least the group can hold under the secret; under distributional privacy
    a binomial quantile failing with chance ``delta``), drawn uniformly at
    random, and fits a clone of ``estimator`` on them (``y`` and
    ``sample_weight`` subsampled with ``X``). Under the attribute-privacy
    model the fitted model has one law under every secret of the pairs: the
    share is hidden exactly (dataset privacy: epsilon 0, delta 0).

    Parameters
    ----------
    estimator : estimator
        Any scikit-learn estimator (or Pipeline); cloned, never changed.
    secret : Secret
        ``Secret.proportion(column, value, pairs=...)`` (or a window or
        sets): a column of ``X`` (a feature, used by the estimator or not)
        or the label itself (``y``'s name: the share of high earners in an
        income classifier).
    privacy : {"dataset", "distributional"}, default="dataset"
    delta : float, default=1e-6
        Distributional privacy: the chance a group of the data is smaller
        than its public size (then nothing is fitted): the share's delta.
    neighbours : {"any", "same-group"}, default="any"
        Differential privacy's neighbouring datasets, when the wrapped
        learner is one skattr trusts (:mod:`skattr._private_learners`):
        "any" replaces a record by any other, its group included, which
        moves both groups' subsamples (the learner's epsilon doubled, its
        delta times 1 + e^epsilon: group privacy of two records; the
        subsample must then be unseeded); "same-group" takes a record's
        group as public (an assumption, recorded), which moves one
        subsample (the learner's own guarantee).
    random_state : None, int or Generator, default=None
        The subsample (secure by default). The estimator's own randomness
        is its own parameter.

    Attributes
    ----------
    estimator_ : estimator
        The clone fitted on the subsample.
    group_sizes_ : dict
        Each group's public size: the records of it the model was fitted on.
    left_out_ : int
        Records of the data the model never saw.
    trained_share_ : float
        The group's share in the records the model was fitted on (public:
        its public size over both), never the data's.
    certificate_ : Certificate
        The share's guarantee, and the model it rests on.
    records_certificate_ : Certificate or None
        Each record's differential privacy, when the wrapped learner is
        on skattr's list (diffprivlib 0.6's LogisticRegression and
        StandardScaler, unfitted, bounds stated, unseeded; alone or with
        steps that learn nothing from the data); None when no record is
        protected.
    unprotected_ : str or None
        Why no record is protected (None when they are).
    classes_, n_features_in_, feature_names_in_
        The fitted estimator's, where it has them.

    Examples
    --------
    >>> import numpy as np, pandas as pd, skattr
    >>> from sklearn.linear_model import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"sex": rng.integers(0, 2, 1000),
    ...                   "age": rng.normal(40, 10, 1000)})
    >>> y = (X["age"] + 5 * X["sex"] + rng.normal(0, 5, 1000) > 42).astype(int)
    >>> model = skattr.ShareHidden(
    ...     LogisticRegression(),
    ...     secret=skattr.Secret.proportion("sex", 1, pairs=[(0.4, 0.6)]),
    ...     random_state=0).fit(X, y)
    >>> model.group_sizes_, model.left_out_
    ({'inside': 400, 'outside': 400}, 200)
    >>> model.trained_share_                # 400 of each group kept
    0.5
    """

    _parameter_constraints: dict = {}

    def __init__(self, estimator=None, *, secret=None, privacy="dataset",
                 delta=1e-6, neighbours="any", random_state=None):
        self.estimator = estimator
        self.secret = secret
        self.privacy = privacy
        self.delta = delta
        self.neighbours = neighbours
        self.random_state = random_state

    # ------------------------------------------------------------ checks
    def _check_parameters(self) -> None:
        """Refuse what cannot be fitted, before any value is read."""
        if isinstance(self.estimator, type):
            raise InvalidParameterError(
                f"ShareHidden wraps an estimator instance: pass "
                f"{self.estimator.__name__}(), not the class "
                f"{self.estimator.__name__}.")
        if self.estimator is None or not hasattr(self.estimator, "fit"):
            raise InvalidParameterError(
                "ShareHidden wraps an estimator with a fit method (e.g. "
                "ShareHidden(LogisticRegression(), secret=...)); got "
                f"{type(self.estimator).__name__}.")
        if not isinstance(self.secret, Secret):
            raise InvalidParameterError(
                "ShareHidden needs secret=Secret.proportion(column, value, "
                "pairs=...): the group whose share in the training data is "
                "hidden.")
        if self.secret.property != "proportion":
            raise InvalidParameterError(
                "ShareHidden hides the share of a group (a categorical value "
                "of a feature or of the label): state the secret as "
                "Secret.proportion(column, value, ...). A mean secret has no "
                "group to subsample; bin the column and hide the share above "
                "a threshold (Secret.proportion(column, skattr.predicates."
                "Above(t), ...)) instead.")
        if self.privacy not in ("dataset", "distributional"):
            raise InvalidParameterError(
                "privacy must be 'dataset' or 'distributional'; got "
                f"{self.privacy!r}.")
        if not (isinstance(self.delta, (int, float))
                and not isinstance(self.delta, bool) and 0 < self.delta < 1):
            raise InvalidParameterError(
                f"delta must be in (0, 1); got {self.delta!r}.")
        if self.neighbours not in ("any", "same-group"):
            raise InvalidParameterError(
                "neighbours must be 'any' (a record may change group) or "
                f"'same-group' (its group public); got {self.neighbours!r}.")

    def _groups(self, X, y) -> pd.DataFrame:
        """Return the secret's column (from X, or y as the label) by position."""
        from scipy import sparse

        column = self.secret.column
        if isinstance(X, pd.DataFrame):
            if column in X.columns:
                return X[[column]].reset_index(drop=True)
        elif (isinstance(column, (int, np.integer)) and len(X.shape) == 2
              and 0 <= column < X.shape[1]):
            values = X[:, [column]]
            values = (values.toarray() if sparse.issparse(values)
                      else np.asarray(values))
            return pd.DataFrame({column: values.ravel()})
        name = getattr(y, "name", None)
        if y is not None and name is not None and name == column:
            return pd.DataFrame({column: np.asarray(y)})
        raise InvalidParameterError(
            f"The secret's column {column!r} is neither a column of X nor the "
            f"label (y's name is {name!r}). Name a feature of X, or pass y as "
            "a Series named after the secret's column to hide the label's "
            "share.")

    # -------------------------------------------------------------- fit
    def fit(self, X, y=None, **fit_params):
        """Fit a clone of the estimator on each group subsampled to its public size.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
        **fit_params
            Passed to the estimator's ``fit``; those of one value a record
            (``sample_weight``) are subsampled with ``X``.

        Returns
        -------
        self : ShareHidden
        """
        self._check_parameters()
        search = searched(self)
        if search is not None:
            named = search if search != "A search" else "GridSearchCV"
            raise InvalidParameterError(
                f"{search} is choosing ShareHidden's parameters by scores on "
                "records the subsample never saw: the choice would read the "
                "whole data, its share of the group included. Search inside "
                "the wrapper, on the kept records: ShareHidden("
                f"{named}(estimator, param_grid), secret=...).")
        X, y = _as_rows(X), (None if y is None else _as_rows(y))
        n = _num_samples(X)
        if y is not None and _num_samples(y) != n:
            raise DataValidationError(
                f"X has {n} records and y {_num_samples(y)}: pass one label "
                "a record.")
        if n < 2:
            raise DataValidationError(
                f"ShareHidden needs at least 2 records; got n_samples = {n}.")
        if len(getattr(X, "shape", ())) == 2 and X.shape[1] == 0:
            raise DataValidationError(
                f"Found array with 0 feature(s) (shape={X.shape}) while a "
                "minimum of 1 is required: X has no column for the model.")
        if y is None and self.estimator.__sklearn_tags__().target_tags.required:
            raise DataValidationError(
                f"{type(self.estimator).__name__} requires y to be passed, "
                "but the target y is None.")
        # The sizes are public: refused here, before a value is read.
        sizes = public_sizes(self.secret, n, self.privacy,
                             delta=float(self.delta))
        kept = subsample_positions(self._groups(X, y), self.secret, sizes,
                                   self.random_state, what="the training data")
        params = {k: _take(v, kept, n) for k, v in fit_params.items()}
        estimator = clone(self.estimator)
        try:
            learner, reason = learner_privacy(self.estimator), None
        except Unprotected as why:
            learner, reason = None, str(why)
        # A private learner fits in this process: in joblib's worker
        # processes diffprivlib draws its noise from a copy of numpy's
        # global state, not the system's secure randomness.
        from joblib import parallel_config

        with (parallel_config(n_jobs=1) if learner is not None
              else nullcontext()):
            if y is None:
                estimator.fit(_take(X, kept, n), **params)
            else:
                estimator.fit(_take(X, kept, n), _take(y, kept, n), **params)
        self.estimator_ = estimator
        self.group_sizes_ = {"inside": sizes.inside, "outside": sizes.outside}
        self.left_out_ = sizes.left_out
        self.n_records_ = n
        self.trained_share_ = sizes.inside / (sizes.inside + sizes.outside)
        self.certificate_ = share_certificate(self.secret, sizes,
                                              what="fitted")
        # The parameters as stated: diffprivlib writes the bounds it read
        # from the data onto the fitted estimator.
        self.records_certificate_, self.unprotected_ = self._records(
            learner, reason, sizes)
        for name in ("classes_", "n_features_in_", "feature_names_in_"):
            if hasattr(estimator, name):
                setattr(self, name, getattr(estimator, name))
        return self

    def _records(self, learner, reason, sizes):
        """Return each record's certificate (or None) and, if None, why."""
        if learner is None:
            return None, reason
        if self.random_state is not None and self.neighbours == "any":
            return None, (
                f"the subsample is seeded (random_state="
                f"{self.random_state!r}): with a known seed, a record moved "
                "to the other group changes which records are kept, and the "
                "coupling the guarantee rests on fails; leave "
                "random_state=None (or take neighbours='same-group')")
        epsilon, delta = learner.epsilon, learner.delta
        if self.neighbours == "any":
            # Group privacy of two records: both subsamples move by one.
            with np.errstate(over="ignore"):
                epsilon, delta = 2 * epsilon, (
                    0.0 if delta == 0 else (1 + np.exp(epsilon)) * delta)
            composition = ("epsilon doubled and delta times 1 + e^epsilon "
                           "(group privacy of two records): a record "
                           "replaced by one of the other group moves both "
                           "groups' subsamples, each by one record")
        else:
            composition = ("a record's group public, it moves its own "
                           "group's subsample by one record")
        if not (delta < 1 and epsilon < 700):
            return None, (f"its guarantee for each record, epsilon "
                          f"{epsilon:.3g} and delta {delta:.3g}, protects "
                          "nothing")
        return Certificate(
            epsilon=float(epsilon), delta=float(delta),
            sensitivity=float("nan"),
            certified_by=Method((MethodStep.of(
                "learner.differential-privacy",
                learners="; ".join(learner.parts), epsilon=learner.epsilon,
                delta=learner.delta, composition=composition),)),
            assumed=(Assumption.of(
                "learner.as-stated",
                steps=", ".join(learner.others) or "none",
                functions=("; a FunctionTransformer's function applied to "
                           "each record alone" if learner.functions else ""),
                classes=("; the label's classes public, each in every "
                         "neighbour's subsample (the learner reads them, and "
                         "splits its budget over them, from the data)"
                         if learner.classes else "")),
                     neighbours_assumption(sizes, self.neighbours)),
            guarantee="differential privacy",
            calibration="learner"), None

    def in_plain_words(self) -> str:
        """Return the share's guarantee in plain words, and what it does not cover."""
        check_is_fitted(self, "estimator_")
        unprotected = (None if self.unprotected_ is None else
                       f"{_RECORDS} Here {self.unprotected_}.")
        rest = None
        if self.records_certificate_ is not None:
            given = self.records_certificate_.assumed[0]
            rest = ("This rests on the learner's own differential privacy, "
                    "as its library states it, with its bounds stated "
                    "rather than read from the data")
            if given.params.get("classes"):
                rest += (", on the label's classes being public and "
                         "each in every subsample (the learner reads them "
                         "from the data)")
            if given.params.get("functions"):
                rest += (", on each FunctionTransformer's function "
                         "transforming each record alone")
            rest += (". The library's own budget accountant is not charged: "
                     "this statement is the account.")
        return plain_subsampled(
            self.secret.label, self.certificate_, self.records_certificate_,
            sizes=self.group_sizes_, n=self.n_records_, what="the model",
            neighbours=self.neighbours, hidden=self.secret.share_label,
            unprotected=unprotected, records_rest=rest)

    def summary(self) -> str:
        """Return the guarantee, what it assumes and the model fitted."""
        cert = self.certificate_ if hasattr(self, "certificate_") else None
        check_is_fitted(self, "estimator_")
        lines = [f"A {type(self.estimator_).__name__} fitted on "
                 f"{self.group_sizes_['inside']} records of the group and "
                 f"{self.group_sizes_['outside']} others "
                 f"({self.left_out_} of {self.n_records_} left out).",
                 self.in_plain_words(),
                 f"The model was trained at a share of "
                 f"{self.trained_share_:.4g} of the group (the public sizes), "
                 "not the data's: a prediction's calibration across groups "
                 "follows that share.",
                 f"The share: ({cert.epsilon:g}, {cert.delta:g})-"
                 f"{cert.guarantee}. Certified by: {cert.method}."]
        lines += [f"  Assumes: {a}." for a in cert.assumptions]
        records = self.records_certificate_
        if records is None:
            lines.append(f"Each record: not protected ({self.unprotected_}).")
        else:
            lines.append(f"Each record: ({records.epsilon:.6g}, "
                         f"{records.delta:.6g})-{records.guarantee}. "
                         f"Certified by: {records.method}.")
            lines += [f"  Assumes: {a}." for a in records.assumptions]
        return "\n".join(lines)

    # -------------------------------------------------------- delegation
    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Return the fitted estimator's ``predict``."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Return the fitted estimator's ``predict_proba``."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Return the fitted estimator's ``predict_log_proba``."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_log_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Return the fitted estimator's ``decision_function``."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    @available_if(_estimator_has("transform"))
    def transform(self, X):
        """Return the fitted estimator's ``transform``."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.transform(X)

    @available_if(_estimator_has("score"))
    def score(self, X, y=None, **params):
        """Return the fitted estimator's ``score``."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.score(X, y, **params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.estimator is not None and hasattr(self.estimator,
                                                  "__sklearn_tags__"):
            inner = self.estimator.__sklearn_tags__()
            tags.estimator_type = inner.estimator_type
            tags.classifier_tags = inner.classifier_tags
            tags.regressor_tags = inner.regressor_tags
            tags.transformer_tags = inner.transformer_tags
            tags.target_tags.required = inner.target_tags.required
            tags.input_tags.sparse = inner.input_tags.sparse
        return tags


def _as_rows(values):
    """Return frames, arrays and (CSR) sparse matrices; anything else as an array."""
    from scipy import sparse

    if sparse.issparse(values):
        return values.tocsr()
    if isinstance(values, (pd.DataFrame, pd.Series)) or hasattr(values,
                                                                "shape"):
        return values
    try:
        return np.asarray(values)
    except (TypeError, ValueError):
        raise DataValidationError(
            f"Expected rows of data; got {type(values).__name__}.") from None


def _num_samples(values) -> int:
    try:
        return values.shape[0] if hasattr(values, "shape") else len(values)
    except (TypeError, IndexError):
        raise DataValidationError(
            f"Expected rows of data; got {type(values).__name__}.") from None


def _take(values, rows: np.ndarray, n: int):
    """Return ``values``' rows ``rows`` when it has one a record, else as is."""
    if isinstance(values, (pd.DataFrame, pd.Series)):
        return values.iloc[rows].reset_index(drop=True)
    if hasattr(values, "shape") and len(getattr(values, "shape", ())) >= 1 \
            and values.shape[0] == n:
        return values[rows]
    if isinstance(values, (list, tuple)) and len(values) == n:
        return [values[i] for i in rows]
    return values
