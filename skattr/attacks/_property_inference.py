"""Property-inference attack: a meta-classifier trained on shadow datasets."""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted
from statsmodels.stats.proportion import proportion_confint

from skattr._data import secret_indicator
from skattr._query import Query, StackedQuery
from skattr._random import check_random_state, draw_k_subsets
from skattr._secret import Secret
from skattr._validation import as_frame
from skattr.exceptions import (
    DataValidationError,
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.utils._param_validation import Interval, validate_parameter_constraints
from skattr.utils._progress import PROGRESS_CONSTRAINT, track

__all__ = [
    "AttackResult",
    "PropertyInferenceAttack",
    "attack_accuracy_bounds",
    "attack_scorer",
    "refit_under_attack_limit",
]


@dataclass(frozen=True)
class AttackResult:
    """Accuracy of an attack on fresh datasets, with a confidence interval.

    Attributes
    ----------
    accuracy : float
        Fraction of the test datasets whose property value the attack guessed.
    ci_low, ci_high : float
        The confidence interval of the accuracy (Wilson score interval by
        default).
    n_datasets : int
        Number of test datasets.
    confidence : float
        Coverage of the interval.
    """

    accuracy: float
    ci_low: float
    ci_high: float
    n_datasets: int
    confidence: float = 0.95

    def __str__(self) -> str:
        level = f"{round(100 * self.confidence, 6):g}%"
        return (f"accuracy {self.accuracy:.2f} ({level} CI {self.ci_low:.2f}-"
                f"{self.ci_high:.2f}, {self.n_datasets} datasets)")


def sample_indices(member, counts, n: int, rng) -> np.ndarray:
    """Draw datasets of n records with exactly ``counts[i]`` members each.

    Parameters
    ----------
    member : array-like of bool of shape (n_records,)
        Whether each record of the pool belongs to the secret's group.
    counts : array-like of int of shape (n_datasets,)
        Number of group members in each dataset; the other n - count records are
        drawn from the rest. Records are drawn without replacement.
    n : int
        Records per dataset.
    rng : numpy.random.Generator or OSEntropy
        The randomness, as :func:`skattr._random.check_random_state` gives it.

    Returns
    -------
    ndarray of int of shape (n_datasets, n)
        Row positions into the pool, one dataset a row, in random order.
    """
    member = np.asarray(member, dtype=bool)
    counts = np.asarray(counts, dtype=np.intp)
    inside, outside = np.flatnonzero(member), np.flatnonzero(~member)
    rows = np.empty((len(counts), n), dtype=np.intp)
    for k in np.unique(counts):
        k, chosen = int(k), counts == k
        size = int(chosen.sum())
        rows[chosen, :k] = inside[draw_k_subsets(inside.size, k, size, rng,
                                                 keys_only=True)]
        rows[chosen, k:] = outside[draw_k_subsets(outside.size, n - k, size, rng,
                                                  keys_only=True)]
    # Shuffled so that no statistic can read the group from a record's position.
    return rng.permuted(rows, axis=1)


class PropertyInferenceAttack(BaseEstimator):
    """Property-inference attack: guess a global property from released statistics.

    The attacker knows the data come from one of two worlds, where the property
    of the secret (e.g. the proportion of women) is ``values[0]`` or
    ``values[1]``, and sees the statistics a defence releases. It draws shadow
    datasets of ``n`` records from auxiliary data, half in each world, computes
    what the defence would release on each, and trains a meta-classifier on
    these features to tell the worlds apart (Chen and Ohrimenko, Sec. 5.3 [1]_,
    after Ateniese et al. [2]_). Its accuracy on fresh datasets drawn from test
    data measures how much the release leaks the property; 0.5 is chance.

    Parameters
    ----------
    mechanism : fitted skattr mechanism or None, default=None
        The defence: its ``release`` gives the features, its ``query_`` and
        ``secrets_[0]`` the statistic and the property. None attacks the exact
        statistics (no defence); ``query`` and ``secret`` must then be given.
        The mechanism is used as fitted and never changed; its noise follows its
        own ``random_state`` (an int there reproduces the sequence of releases
        from the defence's fit; each release still draws fresh noise).
    query : Query, StackedQuery or None, default=None
        The released statistic when there is no defence.
    secret : Secret or None, default=None
        Whose proportion is inferred; with a defence it defaults to the one the
        defence hides (another may be given to attack a property it does not).
        Only proportion secrets: the records of the group are counted.
    values : tuple of two floats, default=(0.45, 0.55)
        The two property values the attacker tells apart, in [0, 1]. Each
        shadow dataset has exactly round(value * n) group members.
    n : int, default=100
        Records per dataset.
    n_shadow : int, default=200
        Shadow datasets to train the meta-classifier on (half each value).
    n_test : int, default=200
        Fresh datasets drawn from the test data by ``score`` and ``evaluate``.
    classifier : scikit-learn classifier or None, default=None
        The meta-classifier, cloned before fitting; None is a standardising
        logistic regression, as in the paper.
    random_state : None, int, Generator or RandomState, default=None
        Randomness of the datasets drawn (not of the defence's noise), by
        :func:`skattr._random.check_random_state`: None uses the operating
        system's entropy; an int makes ``fit`` and ``score`` reproducible, each
        with a stream of its own; a Generator is shared and advanced; a
        RandomState seeds a Generator.
    progress : "auto" or bool, default="auto"
        Show a progress bar (tqdm) over the datasets released by ``fit`` and
        ``score``. "auto" shows one when tqdm is installed and standard error
        is a terminal; True always (pip install "skattr[progress]"); False
        never. It changes no result.

    Attributes
    ----------
    classifier_ : estimator
        The fitted meta-classifier (labels 0 for ``values_[0]``, 1 for
        ``values_[1]``).
    values_ : tuple of two floats
        The property values of the datasets drawn: round(value * n) / n.
    secret_ : Secret
        The secret whose proportion is inferred.
    query_ : Query or StackedQuery
        The statistic the features come from, with its columns resolved.
    shadow_features_ : ndarray of shape (n_shadow, n_statistics)
        What the defence released on each shadow dataset.
    shadow_labels_ : ndarray of int of shape (n_shadow,)
        The value index (0 or 1) of each shadow dataset.

    See Also
    --------
    attack_scorer : The attack's accuracy as a ``GridSearchCV`` scorer.
    refit_under_attack_limit : Choose the most useful candidate the attack fails
        against.
    skattr.model_selection : Both, and the choice of epsilon by expected error.

    Notes
    -----
    The attack measures one attacker, not a guarantee: a defence certified at
    (epsilon, delta) bounds every attacker's accuracy by
    (e^epsilon + delta) / (1 + e^epsilon) only for the pairs of values it
    hides, while a low accuracy here may reflect a weak meta-classifier or too
    few shadow datasets. The shadow and test datasets are drawn without
    replacement from the records of each group, so the auxiliary and test data
    need at least round(value * n) group members and n - round(value * n) other
    records for each value.

    References
    ----------
    .. [1] M. Chen and O. Ohrimenko. "Protecting Global Properties of Datasets
       with Distribution Privacy Mechanisms." AISTATS 2023. Sec. 5.3, App. C.2.
    .. [2] G. Ateniese, L. V. Mancini, A. Spognardi, A. Villani, D. Vitali and
       G. Felici. "Hacking Smart Machines with Smarter Ones: How to Extract
       Meaningful Data from Machine Learning Classifiers." IJSN 10(3), 2015.

    Examples
    --------
    >>> import skattr
    >>> from skattr.attacks import PropertyInferenceAttack
    >>> from skattr.datasets import make_hospital
    >>> auxiliary = make_hospital(2000, random_state=0)
    >>> test = make_hospital(2000, random_state=1)
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> attack = PropertyInferenceAttack(
    ...     query=skattr.Query.mean(["weight"]), secret=secret, values=(0.4, 0.6),
    ...     random_state=0).fit(auxiliary)
    >>> print(attack.evaluate(test))
    accuracy 0.80 (95% CI 0.73-0.85, 200 datasets)

    The same attack against the Attribute-Private Gaussian Mechanism hiding
    0.4 vs 0.6 at epsilon = 1 (a Generator, so each release draws new noise):

    >>> import numpy as np
    >>> defence = skattr.mechanisms.AttributePrivateGaussian(
    ...     query=skattr.Query.mean(["weight"]), secret=secret, epsilon=1.0,
    ...     law="gaussian", random_state=np.random.default_rng(0),
    ... ).fit(make_hospital(2000, random_state=2))
    >>> attack = PropertyInferenceAttack(defence, values=(0.4, 0.6),
    ...                                  random_state=0).fit(auxiliary)
    >>> print(attack.evaluate(test))
    accuracy 0.49 (95% CI 0.43-0.56, 200 datasets)
    """

    _parameter_constraints: dict = {
        "query": [Query, StackedQuery, None],
        "secret": [Secret, None],
        "n": [Interval("integral", 2, None, closed="left")],
        "n_shadow": [Interval("integral", 4, None, closed="left")],
        "n_test": [Interval("integral", 2, None, closed="left")],
        "random_state": ["random_state"],
        "progress": PROGRESS_CONSTRAINT,
    }

    def __init__(self, mechanism=None, *, query=None, secret=None,
                 values=(0.45, 0.55), n=100, n_shadow=200, n_test=200,
                 classifier=None, random_state=None, progress="auto"):
        self.mechanism = mechanism
        self.query = query
        self.secret = secret
        self.values = values
        self.n = n
        self.n_shadow = n_shadow
        self.n_test = n_test
        self.classifier = classifier
        self.random_state = random_state
        self.progress = progress

    def __sklearn_clone__(self):
        # The defence is attacked as fitted: cloning it would unfit it.
        params = self.get_params(deep=False)
        if self.classifier is not None:
            params["classifier"] = clone(self.classifier)
        return type(self)(**params)

    def _check_params(self) -> tuple[int, int]:
        validate_parameter_constraints(
            self._parameter_constraints, self.get_params(deep=False),
            type(self).__name__)
        try:
            p1, p2 = (float(v) for v in self.values)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                "'values' must be two property values such as (0.45, 0.55); got "
                f"{self.values!r}.") from exc
        if not all(0.0 <= p <= 1.0 for p in (p1, p2)):
            raise InvalidParameterError(
                f"'values' must be proportions in [0, 1]; got {self.values!r}.")
        if p1 == p2:
            raise InvalidParameterError(
                f"'values' must be two different proportions; got {self.values!r}.")
        k1, k2 = round(p1 * self.n), round(p2 * self.n)
        if k1 == k2:
            raise InvalidParameterError(
                f"'values' {self.values!r} give the same count of group members "
                f"({k1}) in datasets of n = {self.n} records; increase n or move "
                "the values apart.")
        classifier = self.classifier
        if classifier is not None and not (
                hasattr(classifier, "fit") and hasattr(classifier, "predict")):
            raise InvalidParameterError(
                "'classifier' must be a scikit-learn classifier (with fit and "
                f"predict); got {type(self.classifier).__name__}.")
        return k1, k2

    def _target(self) -> tuple[Query, Secret]:
        """Return the released query and the attacked secret."""
        if self.mechanism is None:
            if self.query is None or self.secret is None:
                raise InvalidParameterError(
                    "With no defence (mechanism=None) the attack needs the "
                    "released statistic and the property: pass query= and secret=.")
            return self.query, self.secret
        if not hasattr(self.mechanism, "release"):
            raise InvalidParameterError(
                "'mechanism' must be a fitted skattr mechanism (with release) or "
                f"None for no defence; got {type(self.mechanism).__name__}.")
        if self.query is not None:
            raise InvalidParameterError(
                "The defence decides the released statistic; leave query=None "
                "when a mechanism is given.")
        check_is_fitted(
            self.mechanism,
            msg=(f"The defence {type(self.mechanism).__name__} is not fitted; fit "
                 "it on reference data first: the attack measures the defence as "
                 "it would release."))
        secret = self.secret if self.secret is not None else self.mechanism.secrets_[0]
        return self.mechanism.query_, secret

    def _members(self, frame: pd.DataFrame, secret: Secret, counts, *, what: str):
        """Return who is in the secret's group, checked against the counts."""
        member = secret_indicator(frame, secret, what=what) == 1.0
        group = secret.label.rsplit(": ", 1)[0]
        low, high = min(counts), max(counts)
        for where, have, count, need in (("in", member.sum(), high, high),
                                         ("outside", (~member).sum(), low,
                                          self.n - low)):
            if have < need:
                raise DataValidationError(
                    f"{what[0].upper()}{what[1:]} has {have} records {where} the "
                    f"secret's group ({group}); drawing datasets of n = {self.n} "
                    f"records with proportion {count / self.n:g} without "
                    f"replacement needs {need}. Pass more data or a smaller n.")
        return member

    def _draw(self, frame: pd.DataFrame, member, counts, n_datasets: int, rng):
        """Draw datasets half in each world; return their features and labels."""
        labels = np.repeat([0, 1], [n_datasets // 2, n_datasets - n_datasets // 2])
        rows = sample_indices(member, np.asarray(counts)[labels], self.n, rng)
        rows = track(rows, self.progress, unit="dataset",
                     desc="property inference: datasets")
        if self.mechanism is None:
            columns = self.query_.columns
            features = [self.query_.evaluate(frame.iloc[r], columns).to_numpy()
                        for r in rows]
        else:
            features = [self.mechanism.release(frame.iloc[r]).values.to_numpy()
                        for r in rows]
        return np.vstack(features), labels

    def fit(self, X, y=None):
        """Draw the shadow datasets from auxiliary data and train the classifier.

        Parameters
        ----------
        X : DataFrame
            Auxiliary data the attacker holds: records from the same population
            as the private data, with the secret's column and the released
            columns.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted attack.
        """
        k1, k2 = self._check_params()
        query, secret = self._target()
        if secret.property != "proportion":
            raise InvalidParameterError(
                f"The attack infers a proportion; the secret {secret.label} is a "
                "mean. Use Secret.proportion(column, value, ...).")
        frame = as_frame(X, what="the auxiliary data")
        self.secret_ = secret
        self.values_ = (k1 / self.n, k2 / self.n)
        member = self._members(frame, secret, (k1, k2), what="the auxiliary data")
        if self.mechanism is None:
            query = query.with_columns(
                query.resolve_columns(frame, exclude=[secret.column]))
        self.query_ = query
        rng = check_random_state(self.random_state, stream=0)
        self.shadow_features_, self.shadow_labels_ = self._draw(
            frame, member, (k1, k2), self.n_shadow, rng)
        classifier = (make_pipeline(StandardScaler(), LogisticRegression())
                      if self.classifier is None else self.classifier)
        self.classifier_ = clone(classifier).fit(self.shadow_features_,
                                                 self.shadow_labels_)
        return self

    def evaluate(self, X, *, confidence: float = 0.95,
                 method: str = "wilson") -> AttackResult:
        """Measure the accuracy on ``n_test`` fresh datasets, with an interval.

        Parameters
        ----------
        X : DataFrame
            Test data, disjoint from the auxiliary data; the datasets are drawn
            from it as in ``fit``, half with each value.
        confidence : float, default=0.95
            Coverage of the interval, in (0, 1).
        method : {"wilson", "beta"}, default="wilson"
            The Wilson score interval, or "beta" for Clopper-Pearson's exact
            interval (as in :func:`statsmodels.stats.proportion.proportion_confint`).

        Returns
        -------
        AttackResult
            Accuracy, interval and number of datasets.
        """
        check_is_fitted(self, "classifier_",
                        msg="This PropertyInferenceAttack is not fitted yet; call "
                            "fit with auxiliary data first.")
        if isinstance(confidence, bool) or not isinstance(
                confidence, numbers.Real) or not 0 < confidence < 1:
            raise InvalidParameterError(
                f"confidence must be in (0, 1); got {confidence!r}.")
        if method not in ("wilson", "beta"):
            raise InvalidParameterError(
                f"method must be 'wilson' or 'beta'; got {method!r}.")
        k1, k2 = self._check_params()
        if (k1 / self.n, k2 / self.n) != self.values_:
            raise InvalidParameterError(
                "values or n changed since fit; fit the attack again.")
        frame = as_frame(X, what="the test data")
        member = self._members(frame, self.secret_, (k1, k2), what="the test data")
        features, labels = self._draw(
            frame, member, (k1, k2), self.n_test,
            check_random_state(self.random_state, stream=1))
        correct = int((self.classifier_.predict(features) == labels).sum())
        low, high = proportion_confint(correct, self.n_test, alpha=1 - confidence,
                                       method=method)
        return AttackResult(correct / self.n_test, float(low), float(high),
                            self.n_test, float(confidence))

    def score(self, X, y=None) -> float:
        """Return the accuracy on ``n_test`` fresh datasets drawn from X.

        Parameters
        ----------
        X : DataFrame
            Test data (see :meth:`evaluate`).
        y : None
            Ignored.

        Returns
        -------
        float
            Fraction of datasets whose property value the attack guessed.
        """
        return self.evaluate(X).accuracy


class _AttackScorer:
    """``scorer(estimator, X, y=None)``: the attack's accuracy against estimator."""

    def __init__(self, auxiliary, test, attack_params):
        self.auxiliary = auxiliary
        self.test = test
        self.attack_params = attack_params

    @property
    def n_test(self) -> int:
        """Number of held-out datasets each call draws (the attack's ``n_test``)."""
        return PropertyInferenceAttack(**self.attack_params).n_test

    def __call__(self, estimator, X=None, y=None) -> float:
        attack = PropertyInferenceAttack(estimator, **self.attack_params)
        return attack.fit(self.auxiliary).score(self.test)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.attack_params.items())
        return f"attack_scorer(<auxiliary>, <test>{', ' if params else ''}{params})"


def attack_scorer(auxiliary, test, **attack_params):
    """Scorer for ``GridSearchCV``: the attack's accuracy against each candidate.

    Parameters
    ----------
    auxiliary : DataFrame
        The attacker's auxiliary data: the shadow datasets the meta-classifier
        trains on are drawn from it.
    test : DataFrame
        Held-out data the accuracy is measured on, disjoint from ``auxiliary``.
        For a choice that holds on a final attack, it must also be data that
        final attack never sees (see Notes).
    **attack_params
        Parameters of :class:`PropertyInferenceAttack` other than
        ``mechanism`` (``values``, ``n``, ``n_shadow``, ``n_test``,
        ``random_state``, ...).

    Returns
    -------
    callable
        ``scorer(estimator, X, y=None) -> float``: fits the attack with the
        fitted ``estimator`` as defence on ``auxiliary`` and returns its
        accuracy on ``n_test`` datasets drawn from ``test``, a multiple of
        1 / n_test. X and y are ignored (the cross-validation folds only
        change the data the candidate's Theta is fit on). Lower is better for
        the defence. Its ``n_test`` attribute is the number of datasets each
        call draws, which :func:`refit_under_attack_limit` needs for its
        confidence bound.

    See Also
    --------
    refit_under_attack_limit : Pick the candidate from the two scores.
    attack_accuracy_bounds : Upper confidence bounds of the accuracies.

    Notes
    -----
    A limit checked on the accuracies this scorer measures says something about
    a later attack only if that attack is not evaluated on the same data: keep
    three disjoint samples, ``auxiliary`` (training), ``test`` (this scorer's
    held-out data) and the final attack's own test data. Even then the mean
    accuracy is a noisy estimate, and the most useful candidate under a limit
    on it is the one whose accuracy was most underestimated; pass
    ``confidence=`` to :func:`refit_under_attack_limit` to apply the limit to an
    upper confidence bound instead.

    Examples
    --------
    >>> from skattr.datasets import make_hospital
    >>> from skattr.model_selection import attack_scorer
    >>> scorer = attack_scorer(make_hospital(500, random_state=1),
    ...                        make_hospital(500, random_state=3),
    ...                        values=(0.4, 0.6), n_test=300, random_state=0)
    >>> scorer
    attack_scorer(<auxiliary>, <test>, values=(0.4, 0.6), n_test=300, random_state=0)
    >>> scorer.n_test
    300
    """
    if "mechanism" in attack_params:
        raise InvalidParameterError(
            "attack_scorer takes the defence from GridSearchCV; do not pass "
            "mechanism=.")
    if test is auxiliary and test is not None:
        raise InvalidParameterError(
            "attack_scorer got the same data to train the attack on and to "
            "measure it on; pass held-out test data, disjoint from the "
            "auxiliary data (and from the data a final attack is measured on).")
    # Fail at construction on bad parameters, not inside every fold.
    PropertyInferenceAttack(**attack_params)._check_params()
    return _AttackScorer(auxiliary, test, attack_params)


def _split_scores(cv_results, name: str) -> np.ndarray:
    """Return the per-split test scores ``name``: shape (n_candidates, n_splits)."""
    pattern = re.compile(rf"split(\d+)_test_{re.escape(name)}")
    splits = sorted((int(m.group(1)), key) for key in cv_results
                    if (m := pattern.fullmatch(str(key))))
    if not splits:
        raise InvalidParameterError(
            f"cv_results_ has no 'split0_test_{name}'; name the attack_scorer "
            f"{name!r} in scoring= (or pass attack= its name).")
    return np.column_stack([np.asarray(cv_results[key], dtype=float)
                            for _, key in splits])


def attack_accuracy_bounds(cv_results, *, n_test: int, confidence: float = 0.95,
                           attack: str = "attack") -> np.ndarray:
    """Upper confidence bound of each candidate's attack accuracy, in every split.

    Parameters
    ----------
    cv_results : dict
        ``GridSearchCV.cv_results_`` with the scores of an
        :func:`attack_scorer`.
    n_test : int
        Number of held-out datasets each scorer call measured the accuracy on
        (the scorer's ``n_test`` attribute).
    confidence : float, default=0.95
        Coverage of each one-sided bound, in [0.5, 1).
    attack : str, default="attack"
        Name of the :func:`attack_scorer` in ``scoring``.

    Returns
    -------
    ndarray of shape (n_candidates,)
        For each candidate, the largest over the splits of the one-sided
        Clopper-Pearson upper bound of the accuracy; NaN when a split has no
        score (a failed fit).

    Raises
    ------
    InvalidParameterError
        When a score is not a count of correct guesses over ``n_test``
        datasets: the ``n_test`` given is not the scorer's.

    Notes
    -----
    In split k the attack guessed c_k of the ``n_test`` held-out datasets.
    Given the meta-classifier and the defence, the datasets and the noise are
    drawn afresh for each guess, so c_k is a sum of independent Bernoulli
    trials whose mean is the attack's accuracy p_k, and the Clopper-Pearson
    bound [1]_ U_k (the ``confidence`` quantile of Beta(c_k + 1,
    n_test - c_k), :func:`statsmodels.stats.proportion.proportion_confint`
    with ``method="beta"``) exceeds p_k with probability at least
    ``confidence``. Half the datasets have each property value, so c_k is a
    sum of two binomial counts, less dispersed than one binomial count of the
    same mean [2]_, which keeps the bound conservative.

    The splits are not pooled: seeded defences replay one noise sequence in
    every split, so their counts are far from independent. Taking the largest
    U_k instead asks the bound to hold in every split, and stays valid
    however the splits depend on each other.

    References
    ----------
    .. [1] C. J. Clopper and E. S. Pearson. "The Use of Confidence or Fiducial
       Limits Illustrated in the Case of the Binomial." Biometrika 26(4), 1934.
    .. [2] W. Hoeffding. "On the Distribution of the Number of Successes in
       Independent Trials." Ann. Math. Statist. 27(3), 1956.

    Examples
    --------
    >>> from skattr.model_selection import attack_accuracy_bounds
    >>> results = {"split0_test_attack": [0.52, 0.60],
    ...            "split1_test_attack": [0.53, 0.57]}
    >>> attack_accuracy_bounds(results, n_test=200).round(3).tolist()
    [0.59, 0.658]
    """
    validate_parameter_constraints(
        {"n_test": [Interval("integral", 1, None, closed="left")],
         "confidence": [Interval("real", 0.5, 1, closed="left")],
         "attack": [str]},
        {"n_test": n_test, "confidence": confidence, "attack": attack},
        "attack_accuracy_bounds")
    accuracy = _split_scores(cv_results, attack)
    scored = ~np.isnan(accuracy)
    correct = np.rint(accuracy * n_test)
    off = scored & ((np.abs(accuracy * n_test - correct) > 1e-6)
                    | (accuracy < 0) | (accuracy > 1))
    if off.any():
        raise InvalidParameterError(
            f"The attack scores are not counts of correct guesses over n_test = "
            f"{n_test} datasets (e.g. {float(accuracy[off][0])!r}); pass the n_test of "
            "the attack_scorer (its n_test attribute).")
    upper = np.full(accuracy.shape, np.nan)
    # One-sided at `confidence`: the upper end of the two-sided interval at
    # 2 * confidence - 1.
    upper[scored] = proportion_confint(correct[scored], n_test,
                                       alpha=2 * (1 - confidence), method="beta")[1]
    return upper.max(axis=1)


def refit_under_attack_limit(limit: float, utility: str = "utility",
                             attack: str = "attack", *,
                             confidence: float | None = None,
                             n_test: int | None = None):
    """``GridSearchCV(refit=...)``: best utility whose attack accuracy is <= limit.

    Parameters
    ----------
    limit : float
        Highest acceptable attack accuracy, in [0, 1].
    utility : str, default="utility"
        Name of the utility scorer in ``scoring`` (higher is better), e.g.
        :func:`skattr.model_selection.expected_error_scorer`.
    attack : str, default="attack"
        Name of the :func:`attack_scorer` in ``scoring``.
    confidence : float or None, default=None
        None applies the limit to the mean accuracy over the splits (a noisy
        estimate: the choice can exceed the limit on a later attack). A float
        in [0.5, 1) applies it to the one-sided Clopper-Pearson upper bound at
        that confidence, in every split (:func:`attack_accuracy_bounds`), and
        needs ``n_test``.
    n_test : int or None, default=None
        Number of held-out datasets the attack scorer draws in each split (its
        ``n_test`` attribute); used only with ``confidence``.

    Returns
    -------
    callable
        ``refit(cv_results) -> int``: the index of the candidate chosen. It
        raises ``NotCertifiableError`` when no candidate qualifies.

    See Also
    --------
    attack_scorer : The attack's accuracy as a scorer.
    attack_accuracy_bounds : The bounds the limit is applied to.

    Notes
    -----
    With ``confidence=None`` the choice is the candidate with the best mean
    test utility among those whose mean test accuracy is at most ``limit``
    (the first on ties).

    With a ``confidence`` the candidates are tested in order of increasing
    utility, least useful first, and the choice is the last one before the
    first whose bound exceeds the limit (on equal utility, the earlier
    candidate is tested last, so it is preferred). A candidate whose accuracy
    exceeds the limit in some split passes only if that split's bound falls
    below its accuracy, which happens with probability at most
    1 - confidence. The order is fixed by the utility, which does not depend
    on the attack, and the choice can only be such a candidate if the first
    of them in the order passed, so the chance that the chosen candidate's
    accuracy exceeds the limit is at most 1 - confidence for the whole grid
    at once (fixed-sequence testing [1]_): no share of the confidence is lost
    to the number of candidates. When the accuracy grows with the utility (a
    grid of epsilons of one mechanism), this is the most useful candidate
    whose bound is at most the limit.

    What the bound covers is the attack the scorer runs: its meta-classifier,
    shadow datasets and held-out data. A stronger attacker can do better;
    only the certificate bounds every attacker, by
    (e^epsilon + delta) / (1 + e^epsilon) for the pairs the defence hides.

    References
    ----------
    .. [1] J. C. Hsu and R. L. Berger. "Stepwise Confidence Intervals without
       Multiplicity Adjustment for Dose-Response and Toxicity Studies." JASA
       94(446), 1999.

    Examples
    --------
    >>> from skattr.model_selection import refit_under_attack_limit
    >>> results = {"mean_test_utility": [-5.0, -2.0, -1.0],
    ...            "mean_test_attack": [0.52, 0.575, 0.9],
    ...            "split0_test_attack": [0.52, 0.58, 0.9],
    ...            "split1_test_attack": [0.52, 0.57, 0.9],
    ...            "params": [{"epsilon": 0.1}, {"epsilon": 1}, {"epsilon": 10}]}
    >>> refit_under_attack_limit(0.6)(results)
    1
    >>> refit_under_attack_limit(0.6, confidence=0.95, n_test=200)(results)
    0
    """
    if isinstance(limit, bool) or not isinstance(limit, numbers.Real) or not (
            0 <= limit <= 1):
        raise InvalidParameterError(f"limit must be in [0, 1]; got {limit!r}.")
    validate_parameter_constraints(
        {"utility": [str], "attack": [str],
         "confidence": [Interval("real", 0.5, 1, closed="left"), None],
         "n_test": [Interval("integral", 1, None, closed="left"), None]},
        {"utility": utility, "attack": attack, "confidence": confidence,
         "n_test": n_test},
        "refit_under_attack_limit")
    if confidence is not None and n_test is None:
        raise InvalidParameterError(
            "refit_under_attack_limit(confidence=...) needs n_test=, the number "
            "of held-out datasets the attack scorer draws (its n_test "
            "attribute).")

    def refit(cv_results) -> int:
        keys = {name: f"mean_test_{name}" for name in (utility, attack)}
        missing = [k for k in keys.values() if k not in cv_results]
        if missing:
            raise InvalidParameterError(
                f"cv_results_ has no {missing}; name the scorers {utility!r} and "
                f"{attack!r} in scoring= (or pass utility= and attack=).")
        score = np.asarray(cv_results[keys[utility]], dtype=float)
        accuracy = np.asarray(cv_results[keys[attack]], dtype=float)
        if confidence is None:
            return _best_under_mean(score, accuracy, limit)
        bounds = attack_accuracy_bounds(cv_results, n_test=n_test,
                                        confidence=confidence, attack=attack)
        return _last_of_sequence(cv_results, score, accuracy, bounds, limit,
                                 confidence, n_test)

    return refit


def _best_under_mean(score, accuracy, limit) -> int:
    """Return the best utility whose mean accuracy is at most the limit."""
    allowed = (accuracy <= limit) & ~np.isnan(score)
    if not allowed.any():
        lowest = np.nanmin(accuracy) if not np.isnan(accuracy).all() else math.nan
        raise NotCertifiableError(
            f"No candidate keeps the mean attack accuracy at or below {limit}; "
            f"the lowest is {lowest:.3f}. Add smaller epsilons (more noise) to "
            "the grid or raise the limit.")
    return int(np.flatnonzero(allowed)[np.argmax(score[allowed])])


def _last_of_sequence(cv_results, score, accuracy, bounds, limit, confidence,
                      n_test) -> int:
    """Test candidates by increasing utility; return the last before a failure."""
    index = np.arange(len(score))
    tested = index[~np.isnan(score) & ~np.isnan(bounds)]
    # Increasing utility; on equal utility the later candidate first, so that
    # the earlier one, tested last, is chosen when both pass.
    order = tested[np.lexsort((-tested, score[tested]))]
    chosen = None
    for i in order:
        if bounds[i] > limit:
            break
        chosen = int(i)
    if chosen is not None:
        return chosen
    level = f"{round(100 * confidence, 6):g}%"
    if order.size == 0:
        raise NotCertifiableError(
            "No candidate has both a utility and an attack accuracy in every "
            "split (the fits or scorers failed); see the warnings GridSearchCV "
            "raised.")
    first = int(order[0])
    params = cv_results.get("params")
    which = (f" ({params[first]})" if params is not None and len(params) > first
             else f" (candidate {first})")
    raise NotCertifiableError(
        f"No candidate keeps the attack accuracy at or below {limit} with "
        f"{level} confidence: the least useful one{which} has an upper bound of "
        f"{bounds[first]:.3f} (mean accuracy {accuracy[first]:.3f} on "
        f"{n_test} held-out datasets a split), and candidates are tested from "
        "the least useful up, stopping at the first above the limit. Add "
        "smaller epsilons (more noise) to the grid, raise the scorer's n_test "
        "for a tighter bound, or raise the limit.")
