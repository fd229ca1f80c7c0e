"""Choosing epsilon under an attack: the attack scorer and the refit rules.

:func:`attack_scorer` measures :class:`PropertyInferenceAttack` against each
candidate of a ``GridSearchCV``, :func:`attack_accuracy_bounds` turns its
accuracies into one-sided Clopper-Pearson bounds, and
:func:`refit_under_attack_limit` picks the most useful candidate under a limit.
"""

from __future__ import annotations

import numbers
import re

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from skattr.attacks._property_inference import PropertyInferenceAttack
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.utils._param_validation import Interval, validate_parameter_constraints

__all__ = ["attack_accuracy_bounds", "attack_scorer",
           "check_every_candidate_scored", "refit_under_attack_limit"]


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
    if "mechanism" in attack_params or "synthesizer" in attack_params:
        raise InvalidParameterError(
            "attack_scorer takes the defence from GridSearchCV (a mechanism); "
            "do not pass mechanism= or synthesizer=. To attack a synthesiser, "
            "use PropertyInferenceAttack(query=..., synthesizer=...).")
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
        check_every_candidate_scored(cv_results, keys.values())
        score = np.asarray(cv_results[keys[utility]], dtype=float)
        accuracy = np.asarray(cv_results[keys[attack]], dtype=float)
        if confidence is None:
            return _best_under_mean(score, accuracy, limit)
        bounds = attack_accuracy_bounds(cv_results, n_test=n_test,
                                        confidence=confidence, attack=attack)
        return _last_of_sequence(cv_results, score, accuracy, bounds, limit,
                                 confidence, n_test)

    return refit


def check_every_candidate_scored(cv_results, keys) -> None:
    """Refuse a search in which a candidate has no score (NaN) in some split.

    ``GridSearchCV`` turns a fit or a score that failed into NaN (with a
    warning) and goes on; a refit rule that skipped those candidates would
    choose among the others silently. The usual cause is a fold of the
    reference data too small for the mechanism.
    """
    params = cv_results.get("params") or []
    failed = sorted({i for key in keys
                     for i in np.flatnonzero(np.isnan(np.asarray(
                         cv_results[key], dtype=float)))})
    if failed:
        which = ", ".join(str(params[i]) if i < len(params) else f"#{i}"
                          for i in failed[:3])
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        raise NotCertifiableError(
            f"GridSearchCV could not score {len(failed)} candidate(s) ({which}"
            f"{more}): their fit or score failed in some split, so their score "
            "is NaN. Its warnings say why; often a fold of the reference data "
            "is too small for the mechanism (each secret group needs at least "
            "10 records a fold): use fewer folds (cv=2) or more reference data. "
            "error_score='raise' stops at the first failure with its error.")


def _best_under_mean(score, accuracy, limit) -> int:
    """Return the best utility whose mean accuracy is at most the limit.

    Every score is a number: a NaN was refused before
    (:func:`check_every_candidate_scored`).
    """
    allowed = accuracy <= limit
    if not allowed.any():
        raise NotCertifiableError(
            f"No candidate keeps the mean attack accuracy at or below {limit}; "
            f"the lowest is {accuracy.min():.3f}. Add smaller epsilons (more noise) to "
            "the grid or raise the limit.")
    return int(np.flatnonzero(allowed)[np.argmax(score[allowed])])


def _last_of_sequence(cv_results, score, accuracy, bounds, limit, confidence,
                      n_test) -> int:
    """Test candidates by increasing utility; return the last before a failure.

    Every score is a number: a NaN was refused before
    (:func:`check_every_candidate_scored`).
    """
    index = np.arange(len(score))
    # Increasing utility; on equal utility the later candidate first, so that
    # the earlier one, tested last, is chosen when both pass.
    order = index[np.lexsort((-index, score))]
    chosen = None
    for i in order:
        if bounds[i] > limit:
            break
        chosen = int(i)
    if chosen is not None:
        return chosen
    level = f"{round(100 * confidence, 6):g}%"
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
