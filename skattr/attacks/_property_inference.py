"""Property-inference attack: a meta-classifier trained on shadow datasets."""

from __future__ import annotations

import numbers
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
)
from skattr.utils._param_validation import (
    Interval,
    Options,
    validate_parameter_constraints,
)
from skattr.utils._progress import PROGRESS_CONSTRAINT, track

__all__ = ["AttackResult", "PropertyInferenceAttack", "sample_indices"]


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
    mechanism : fitted skattr mechanism, Pipeline ending in one, or None, \
default=None
        The defence: its ``release`` gives the features, its ``query_`` and
        ``secrets_[0]`` the statistic and the property (in a fitted Pipeline,
        each dataset goes through the steps before the mechanism first). None
        attacks the exact
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
    train_on : {"released", "clean"}, default="released"
        What the meta-classifier learns from: the defence's releases on the
        shadow datasets (``"released"``, the attacker who can query the
        defence), or their noise-free statistics (``"clean"``, the protocol
        of Chen and Ohrimenko's notebook, which reproduces their Table 3). It
        is tested on released statistics either way. Without a defence both
        are the exact statistics.
    synthesizer : unfitted synthesiser or None, default=None
        The defence is a synthetic table (with ``mechanism=None``): each
        dataset drawn is synthesised by a clone of it (e.g.
        :class:`~skattr.synth.AttributePrivateRAP` or
        :class:`~skattr.synth.DPRAP`, seeded from ``random_state``), a table
        of ``n`` records sampled, and ``query`` computed on the table; the
        secret defaults to the synthesiser's. With ``train_on="clean"`` the
        classifier learns from the datasets' own statistics.
    model : unfitted estimator or None, default=None
        The defence is a trained model (with ``mechanism=None`` and
        ``query=None``): each dataset drawn trains a clone of it (e.g.
        ``LogisticRegression()``, or :class:`~skattr.ShareHidden` wrapping
        one; its ``random_state`` seeded from ``random_state``) to predict
        ``target`` from the other columns, and the features are its outputs
        on ``probe`` (the probability of the second class, or the decision
        function), as Ganju et al. and Zhang, Tople and Ohrimenko do. The
        secret defaults to the model's (a ``ShareHidden``'s).
    target : str or None, default=None
        The label column the models are trained to predict (with ``model``).
    probe : DataFrame or None, default=None
        Public records (the model's features) whose outputs the attacker
        reads from each model (with ``model``).
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
        What the classifier learnt from on each shadow dataset: the defence's
        release, or the exact statistic with ``train_on="clean"``.
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
        "train_on": [Options(frozenset({"released", "clean"}))],
        "progress": PROGRESS_CONSTRAINT,
    }

    def __init__(self, mechanism=None, *, query=None, secret=None,
                 values=(0.45, 0.55), n=100, n_shadow=200, n_test=200,
                 classifier=None, random_state=None, train_on="released",
                 progress="auto", synthesizer=None, model=None, target=None,
                 probe=None):
        self.mechanism = mechanism
        self.synthesizer = synthesizer
        self.model = model
        self.target = target
        self.probe = probe
        self.query = query
        self.secret = secret
        self.values = values
        self.n = n
        self.n_shadow = n_shadow
        self.n_test = n_test
        self.classifier = classifier
        self.random_state = random_state
        self.train_on = train_on
        self.progress = progress

    def __sklearn_clone__(self):
        # The defence is attacked as fitted: cloning it would unfit it.
        params = self.get_params(deep=False)
        if self.classifier is not None:
            params["classifier"] = clone(self.classifier)
        if self._is_synthesizer(self.synthesizer):
            # Unfitted: a template each dataset is synthesised by a clone of,
            # and never the caller's object (set_params on the clone).
            params["synthesizer"] = clone(self.synthesizer)
        if self.model is not None and hasattr(self.model, "get_params"):
            params["model"] = clone(self.model)
        return type(self)(**params)

    @staticmethod
    def _is_synthesizer(obj) -> bool:
        return not isinstance(obj, type) and all(
            hasattr(obj, m) for m in ("fit", "sample", "get_params",
                                      "set_params"))

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
        if self.model is not None:
            return None, self._model_secret()
        if self.synthesizer is not None:
            synthesizer = self.synthesizer
            if not self._is_synthesizer(synthesizer):
                what = (f"the class {synthesizer.__name__} (pass an instance)"
                        if isinstance(synthesizer, type)
                        else type(synthesizer).__name__)
                raise InvalidParameterError(
                    "synthesizer= is an unfitted synthesiser: a scikit-learn "
                    "style estimator with fit(frame) and sample(n, "
                    "random_state=), such as skattr.synth.AttributePrivateRAP("
                    f"...); got {what}.")
            if self.mechanism is not None:
                raise InvalidParameterError(
                    "Give one defence: mechanism= (a release) or synthesizer= "
                    "(a synthetic table), not both.")
            if self.query is None:
                raise InvalidParameterError(
                    "Against a synthesiser the attack computes query= on each "
                    "synthetic table: pass the statistic the attacker reads, "
                    "e.g. query=skattr.Query.proportion(column, value).")
            secret = (self.secret if self.secret is not None
                      else getattr(synthesizer, "secret", None))
            if secret is None:
                raise InvalidParameterError(
                    f"{type(synthesizer).__name__} hides no secret of its own: "
                    "pass secret= (the property the attack infers).")
            known = getattr(synthesizer, "categories", None)
            if isinstance(known, dict):
                absent = [c for c in self.query.columns or ()
                          if c not in known]
                if absent:
                    raise InvalidParameterError(
                        f"query= reads column(s) {absent}, which the "
                        "synthetic tables do not have (the synthesiser's "
                        f"categories name {list(known)}).")
            return self.query, secret
        if self.mechanism is None:
            if self.query is None or self.secret is None:
                raise InvalidParameterError(
                    "With no defence (mechanism=None) the attack needs the "
                    "released statistic and the property: pass query= and secret=.")
            return self.query, self.secret
        from skattr.mechanisms import split_pipeline

        _, mechanism = split_pipeline(
            self.mechanism, what="PropertyInferenceAttack's mechanism= (None for "
            "no defence)")
        if not hasattr(mechanism, "release"):
            raise InvalidParameterError(
                "PropertyInferenceAttack's mechanism= must release (a fitted "
                f"skattr mechanism); {type(mechanism).__name__} has no release.")
        if self.query is not None:
            raise InvalidParameterError(
                "The defence decides the released statistic; leave query=None "
                "when a mechanism is given.")
        check_is_fitted(
            mechanism,
            msg=(f"The defence {type(mechanism).__name__} is not fitted; fit "
                 "it on reference data first: the attack measures the defence as "
                 "it would release."))
        secret = self.secret if self.secret is not None else mechanism.secrets_[0]
        return mechanism.query_, secret

    def _model_secret(self) -> Secret:
        """Check the model defence's parameters; return the attacked secret."""
        model = self.model
        if isinstance(model, type) or not all(
                hasattr(model, m) for m in ("fit", "get_params")):
            raise InvalidParameterError(
                "model= is an unfitted scikit-learn estimator (each shadow "
                "dataset trains a clone of it), e.g. LogisticRegression() or "
                f"skattr.ShareHidden(...); got {type(model).__name__}.")
        if self.mechanism is not None or self.synthesizer is not None:
            raise InvalidParameterError(
                "Give one defence: mechanism=, synthesizer= or model=.")
        if self.query is not None:
            raise InvalidParameterError(
                "Against a model the attack reads the model's outputs on "
                "probe=, not a statistic: leave query=None.")
        if self.train_on != "released":
            raise InvalidParameterError(
                "A model has no noise-free version to train on: leave "
                "train_on='released'.")
        if self.target is None:
            raise InvalidParameterError(
                "Against a model, target= names the label column each shadow "
                "model is trained to predict (the rest are its features).")
        if not isinstance(self.probe, pd.DataFrame) or len(self.probe) == 0:
            raise InvalidParameterError(
                "Against a model, probe= is a public DataFrame of records "
                "(features only) whose predictions the attacker reads from "
                "each model, as Ganju et al. and Zhang et al. do.")
        secret = (self.secret if self.secret is not None
                  else getattr(model, "secret", None))
        if not isinstance(secret, Secret):
            raise InvalidParameterError(
                f"{type(model).__name__} hides no secret of its own: pass "
                "secret= (the property the attack infers).")
        return secret

    def _model_outputs(self, frame: pd.DataFrame, rng) -> np.ndarray:
        """Return the probe's outputs of a fresh model trained on ``frame``."""
        est = clone(self.model)
        if "random_state" in est.get_params(deep=False):
            est.set_params(random_state=int(rng.integers(0, 2**32)))
        data = frame.reset_index(drop=True)
        est.fit(data.drop(columns=[self.target]), data[self.target])
        probe = self.probe[[c for c in data.columns if c != self.target]]
        for method in ("predict_proba", "decision_function", "predict"):
            if hasattr(est, method):
                out = np.asarray(getattr(est, method)(probe), dtype=float)
                binary = (method == "predict_proba" and out.ndim == 2
                          and out.shape[1] == 2)
                return (out[:, 1] if binary else out).ravel()
        raise InvalidParameterError(
            f"{type(est).__name__} has no predict_proba, decision_function or "
            "predict to read on the probe.")

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

    def _draw(self, frame: pd.DataFrame, member, counts, n_datasets: int, rng,
              *, clean: bool = False):
        """Draw datasets half in each world; return their features and labels.

        The features are the defence's releases, or with ``clean`` (and with
        no defence) the exact statistics of the datasets.
        """
        labels = np.repeat([0, 1], [n_datasets // 2, n_datasets - n_datasets // 2])
        rows = sample_indices(member, np.asarray(counts)[labels], self.n, rng)
        rows = track(rows, self.progress, unit="dataset",
                     desc="property inference: datasets")
        if self.model is not None:
            return np.vstack([self._model_outputs(frame.iloc[r], rng)
                              for r in rows]), labels
        if self.mechanism is None:
            columns = self.query_.columns
            seen = ((lambda r: frame.iloc[r])
                    if self.synthesizer is None or clean
                    else (lambda r: self._synthesized(frame.iloc[r], rng)))
            features = [self.query_.evaluate(seen(r), columns).to_numpy()
                        for r in rows]
            return np.vstack(features), labels
        # A pipeline's steps before the mechanism transform each dataset.
        from skattr.mechanisms import split_pipeline

        before, mechanism = split_pipeline(self.mechanism)
        seen = ((lambda r: frame.iloc[r]) if before is None
                else (lambda r: before.transform(frame.iloc[r])))
        if clean:
            columns = mechanism.columns_
            features = [mechanism.query_.evaluate(seen(r), columns).to_numpy()
                        for r in rows]
        else:
            # In law (and for a seeded mechanism, value by value) what one
            # release of each dataset gives, without a Release for each.
            return mechanism.release_values([seen(r) for r in rows]), labels
        return np.vstack(features), labels

    def _synthesized(self, frame: pd.DataFrame, rng) -> pd.DataFrame:
        """Return a synthetic table of ``frame``: a fresh clone fitted on it."""
        est = clone(self.synthesizer)
        params = est.get_params(deep=False)
        given = {"random_state": int(rng.integers(0, 2**32))}
        if "progress" in params:
            given["progress"] = False
        est.set_params(**{k: v for k, v in given.items() if k in params})
        return est.fit(frame).sample(self.n,
                                     random_state=int(rng.integers(0, 2**32)))

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
        if self.model is not None:
            absent = [c for c in frame.columns
                      if c != self.target and c not in self.probe.columns]
            if self.target not in frame.columns or absent:
                raise InvalidParameterError(
                    f"The auxiliary data must hold target={self.target!r} and "
                    f"the probe every other column; the probe lacks {absent}."
                    if self.target in frame.columns else
                    f"target={self.target!r} is not a column of the auxiliary "
                    f"data ({list(frame.columns)}).")
        elif self.mechanism is None:
            query = query.with_columns(
                query.resolve_columns(frame, exclude=[secret.column]))
        self.query_ = query
        rng = check_random_state(self.random_state, stream=0)
        self.shadow_features_, self.shadow_labels_ = self._draw(
            frame, member, (k1, k2), self.n_shadow, rng,
            clean=self.train_on == "clean")
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
