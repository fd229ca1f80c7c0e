"""Randomized response and the exponential mechanism, the classic DP primitives."""

from __future__ import annotations

import math
from collections.abc import Set

import numpy as np
import pandas as pd

from skattr._random import check_random_state
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.utils._param_validation import Interval, validate_parameter_constraints

__all__ = [
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "randomized_response",
    "randomized_response_estimate",
    "randomized_response_variance",
]

_POSITIVE = [Interval("real", 0, None, closed="neither")]
_RANDOM_STATE = [
    None,
    Interval("integral", 0, None, closed="left"),
    np.random.Generator,
]


# --------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------


def _check_params(caller: str, **params) -> None:
    constraints = {
        "epsilon": _POSITIVE,
        "sensitivity": _POSITIVE,
        "random_state": _RANDOM_STATE,
    }
    validate_parameter_constraints(constraints, params, caller)


def _as_series(values, what: str) -> pd.Series:
    """``values`` as a 1-d Series (the caller's own object if it is one), checked."""
    if isinstance(values, pd.Series):
        series = values
    else:
        if isinstance(values, (str, bytes)) or np.ndim(values) == 0:
            raise DataValidationError(
                f"{what} must be a 1-d sequence of categories (a list, array or "
                f"Series), one per record; got {type(values).__name__} {values!r}."
            )
        try:
            series = pd.Series(values)
        except (TypeError, ValueError) as exc:
            raise DataValidationError(
                f"{what} must be a 1-d sequence of categories, one per record: {exc}"
            ) from None
    if series.size == 0:
        raise DataValidationError(
            f"{what} is empty; pass at least one record's category."
        )
    missing = int(series.isna().sum())
    if missing:
        raise DataValidationError(
            f"{what} holds {missing} missing value(s) (NaN/None). Randomized "
            "response needs a category for every record: fill them with an explicit "
            "category (e.g. 'missing', listed in categories) or drop those records."
        )
    return series


def _category_index(categories, series: pd.Series, what: str) -> pd.Index:
    """Return the k >= 2 distinct categories, in order, as an Index."""
    if categories is None:
        try:
            categories = sorted(pd.unique(series))
        except TypeError:
            raise InvalidParameterError(
                f"The categories of {what} cannot be sorted (mixed types?); pass the "
                "public list of possible categories as `categories`."
            ) from None
    elif isinstance(categories, (str, bytes)) or isinstance(categories, Set):
        raise InvalidParameterError(
            "`categories` must be an ordered sequence of the possible categories "
            f"(a list, tuple or array); got {type(categories).__name__} "
            f"{categories!r}."
        )
    # tupleize_cols=False keeps tuple categories as values, not a MultiIndex.
    index = pd.Index(list(categories), tupleize_cols=False)
    if index.hasnans:
        raise InvalidParameterError(
            "`categories` contains NaN/None; name the missing category explicitly "
            "(e.g. 'missing') instead."
        )
    if not index.is_unique:
        repeated = list(index[index.duplicated()].unique())[:5]
        raise InvalidParameterError(
            f"`categories` repeats {repeated}; list each category once."
        )
    if len(index) < 2:
        raise InvalidParameterError(
            f"Randomized response needs at least 2 categories; got {list(index)}. "
            "Pass the public list of every possible category as `categories` "
            "(with a single category the report would be the true value)."
        )
    return index


def _category_codes(values, categories, what: str):
    """Positions in the category index of every value, and that index."""
    series = _as_series(values, what)
    index = _category_index(categories, series, what)
    codes = index.get_indexer(pd.Index(series, tupleize_cols=False))
    unknown = codes < 0
    if unknown.any():
        examples = list(pd.unique(series[unknown]))[:5]
        raise DataValidationError(
            f"{what} holds {int(unknown.sum())} value(s) that are not in "
            f"`categories` (e.g. {examples}). Add them to `categories` (the public "
            "list of every possible category) or recode them before the release."
        )
    return codes, index


# --------------------------------------------------------------------------------
# Randomized response
# --------------------------------------------------------------------------------


def _rr_probabilities(epsilon: float, k: int) -> tuple[float, float]:
    """``(keep, other)`` of k-ary randomized response.

    ``keep = e^eps / (e^eps + k - 1)`` is the probability of reporting the true
    category, ``other = 1 / (e^eps + k - 1)`` that of reporting one given other
    category. Both are written with ``t = e^-eps`` so that no epsilon overflows.
    """
    t = math.exp(-epsilon)
    denominator = 1.0 + (k - 1) * t
    return 1.0 / denominator, t / denominator


def _rr_gap(epsilon: float, k: int) -> float:
    """``keep - other = (e^eps - 1) / (e^eps + k - 1)``, without cancellation."""
    return -math.expm1(-epsilon) / (1.0 + (k - 1) * math.exp(-epsilon))


def randomized_response(values, epsilon: float, *, categories=None, random_state=None):
    r"""Report each record's category through k-ary randomized response.

    Each record independently reports its true category with probability
    :math:`e^\varepsilon / (e^\varepsilon + k - 1)`, and otherwise one of the
    other :math:`k - 1` categories chosen uniformly at random. For two categories
    this is Warner's randomized response [1]_; for :math:`k` it is the
    generalised (k-ary, "direct encoding") form [2]_ [3]_. Each record's report is
    :math:`\varepsilon`-differentially private in the local model: whatever the
    other records hold, changing one record's category changes the probability of
    any report by a factor of at most :math:`e^\varepsilon`.

    Parameters
    ----------
    values : pandas.Series or array_like of hashable
        One category per record. Never modified. Missing values raise: give them
        an explicit category.
    epsilon : float
        The privacy parameter :math:`\varepsilon > 0` (finite) of each report.
    categories : sequence of hashable, default=None
        The public list of the :math:`k \ge 2` possible categories. ``None``
        uses the sorted distinct values of ``values``, which reveals exactly which
        categories occur in the data (a category held by a single record then
        gives that record away): pass the public list for a private release.
    random_state : None, int or numpy.random.Generator, default=None
        ``None`` draws every report from the operating system's entropy
        (``os.urandom``, the source of ``random.SystemRandom``), which cannot be
        predicted from any seed. An int or ``Generator`` reproduces the reports,
        which experiments want and a real release must not use: anyone who knows
        the seed can undo the randomization. The global ``np.random`` state is
        never used.

    Returns
    -------
    pandas.Series or numpy.ndarray
        The reports: a Series with the index and name of ``values`` if it is a
        Series (and its categorical dtype if every category belongs to it),
        otherwise a 1-d array of the categories.

    Raises
    ------
    InvalidParameterError
        If ``epsilon`` is not finite and > 0, ``random_state`` is not one of the
        accepted kinds, or ``categories`` has repeats, NaN or fewer than two
        entries.
    DataValidationError
        If ``values`` is empty, not 1-d, has missing values or values that are
        not in ``categories``.

    See Also
    --------
    randomized_response_estimate : Unbiased category frequencies from the reports.

    Notes
    -----
    The channel from true category :math:`a` to report :math:`o` is

    .. math::

        P(o \mid a) = \begin{cases}
            e^\varepsilon / (e^\varepsilon + k - 1) & o = a, \\
            1 / (e^\varepsilon + k - 1) & o \ne a,
        \end{cases}

    so :math:`\max_o P(o \mid a) / P(o \mid b) = e^\varepsilon` for every
    :math:`a \ne b`, with equality. With :math:`k = 2` and
    :math:`e^\varepsilon = 3` this is the coin-flip protocol (answer truthfully on
    heads, otherwise flip again for "yes"/"no"), keeping the truth with
    probability 3/4.

    A report is altered with a probability computed as
    :math:`(k - 1) / (e^\varepsilon + k - 1)` and compared with a uniform on the
    grid :math:`j 2^{-53}`; the rounding only ever raises that probability (to at
    least :math:`2^{-53}`), which can only lower the privacy ratio. The
    replacement category is drawn exactly uniformly.

    References
    ----------
    .. [1] S. L. Warner, "Randomized Response: A Survey Technique for Eliminating
       Evasive Answer Bias", Journal of the American Statistical Association
       60(309), 1965.
    .. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", Foundations and Trends in Theoretical Computer Science 9(3-4),
       2014, Section 3.2.
    .. [3] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private
       Protocols for Frequency Estimation", USENIX Security 2017 (Direct
       Encoding).

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.dp import randomized_response
    >>> answers = pd.Series(["yes", "no", "no", "yes", "no"], name="violated")
    >>> randomized_response(answers, epsilon=1.0, categories=["no", "yes"],
    ...                     random_state=0).tolist()
    ['yes', 'no', 'yes', 'no', 'no']
    """
    _check_params("randomized_response", epsilon=epsilon, random_state=random_state)
    codes, index = _category_codes(values, categories, "values")
    k = len(index)
    keep, other = _rr_probabilities(float(epsilon), k)
    rng = check_random_state(random_state)
    # u < flip rounds flip up to the uniform's grid: never less randomization.
    # The floor keeps it so beyond epsilon ~ 745, where e^-epsilon underflows.
    flip = rng.random(codes.size) < max((k - 1) * other, math.ulp(0.0))
    reports = codes.copy()
    # True category plus a shift of 1..k-1 (mod k): uniform over the others.
    shift = rng.integers(1, k, size=int(flip.sum()))
    reports[flip] = (codes[flip] + shift) % k
    chosen = index.take(reports)
    if not isinstance(values, pd.Series):
        return chosen.to_numpy()
    result = pd.Series(chosen.to_numpy(), index=values.index, name=values.name)
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype) and index.isin(dtype.categories).all():
        result = result.astype(dtype)
    return result


def randomized_response_estimate(reports, epsilon: float, *, categories) -> pd.Series:
    r"""Unbiased estimate of the true category frequencies from RR reports.

    Inverts the known channel of :func:`randomized_response`: with observed
    report frequencies :math:`\lambda_j`,

    .. math::

        \hat\pi_j = \frac{\lambda_j - q}{p - q}, \qquad
        p = \frac{e^\varepsilon}{e^\varepsilon + k - 1}, \quad
        q = \frac{1}{e^\varepsilon + k - 1},

    which is :math:`M^{-1} \lambda` for the channel matrix
    :math:`M = (p - q) I + q \mathbf{1}\mathbf{1}^\top`. Since
    :math:`E[\lambda] = M \pi`, the estimate is unbiased for the frequencies
    :math:`\pi` of the records that were reported [1]_ [2]_. It uses only the
    reports, so it spends no further privacy.

    Parameters
    ----------
    reports : pandas.Series or array_like of hashable
        The reports returned by :func:`randomized_response`, one per record.
    epsilon : float
        The :math:`\varepsilon` the reports were made with.
    categories : sequence of hashable
        The same public list of categories the reports were made with (its
        length is :math:`k`, which the channel depends on).

    Returns
    -------
    pandas.Series
        The estimated frequency of each category, indexed by ``categories``,
        named ``"frequency"``. The estimates sum to 1 but individual ones can be
        negative or exceed 1; clipping or projecting them onto the simplex is free
        post-processing but makes them biased.

    Raises
    ------
    InvalidParameterError
        If ``epsilon`` is not finite and > 0 or ``categories`` is missing, has
        repeats, NaN or fewer than two entries.
    DataValidationError
        If ``reports`` is empty, has missing values or values not in
        ``categories``.

    See Also
    --------
    randomized_response_variance : The variance of each estimate.

    Notes
    -----
    Given the records, each category's estimate has variance

    .. math::

        \operatorname{Var}(\hat\pi_j) = \frac{\pi_j\, p (1 - p)
        + (1 - \pi_j)\, q (1 - q)}{n (p - q)^2},

    which :func:`randomized_response_variance` computes (pass the estimate for a
    plug-in standard error). It decreases as :math:`1/n`, and for small
    :math:`\varepsilon` grows as :math:`k^2 / (n \varepsilon^2)` for rare
    categories.

    References
    ----------
    .. [1] S. L. Warner, "Randomized Response: A Survey Technique for Eliminating
       Evasive Answer Bias", Journal of the American Statistical Association
       60(309), 1965.
    .. [2] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private
       Protocols for Frequency Estimation", USENIX Security 2017 (Direct
       Encoding).

    Examples
    --------
    >>> import numpy as np
    >>> from skattr.dp import randomized_response, randomized_response_estimate
    >>> categories = ["a", "b", "c"]
    >>> truth = np.repeat(categories, [12_000, 6_000, 2_000])  # 0.6, 0.3, 0.1
    >>> reports = randomized_response(truth, 1.0, categories=categories,
    ...                               random_state=0)
    >>> randomized_response_estimate(reports, 1.0, categories=categories).round(3)
    a    0.587
    b    0.308
    c    0.105
    Name: frequency, dtype: float64
    """
    _check_params("randomized_response_estimate", epsilon=epsilon)
    if categories is None:
        raise InvalidParameterError(
            "Pass `categories`: the same public list of categories the reports were "
            "made with (the channel, hence the estimate, depends on their number)."
        )
    codes, index = _category_codes(reports, categories, "reports")
    k = len(index)
    observed = np.bincount(codes, minlength=k) / codes.size
    _, other = _rr_probabilities(float(epsilon), k)
    estimate = (observed - other) / _rr_gap(float(epsilon), k)
    return pd.Series(estimate, index=index, name="frequency")


def randomized_response_variance(n: int, p: float, epsilon: float, *, k: int = 2):
    r"""Variance of the randomized-response estimate of one category's frequency.

    Parameters
    ----------
    n : int
        The number of reports.
    p : float
        The category's true frequency :math:`\pi \in [0, 1]` (or its estimate,
        for a plug-in variance).
    epsilon : float
        The :math:`\varepsilon > 0` the reports were made with.
    k : int, default=2
        The number of categories; 2 is Warner's binary randomized response.

    Returns
    -------
    float
        :math:`\operatorname{Var}(\hat\pi)` of
        :func:`randomized_response_estimate`, over the randomization of the
        reports with the records fixed. Take its square root for a standard
        error.

    Raises
    ------
    InvalidParameterError
        If ``n`` is not an int >= 1, ``p`` not in [0, 1], ``epsilon`` not finite
        and > 0, or ``k`` not an int >= 2.

    Notes
    -----
    With :math:`P(\text{keep}) = e^\varepsilon / (e^\varepsilon + k - 1)` and
    :math:`q = 1 / (e^\varepsilon + k - 1)`, the count of reports of the category
    is a sum of independent Bernoulli draws, :math:`n \pi` with mean
    :math:`P(\text{keep})` and :math:`n (1 - \pi)` with mean :math:`q`, so

    .. math::

        \operatorname{Var}(\hat\pi) = \frac{\pi P(\text{keep})(1 - P(\text{keep}))
        + (1 - \pi)\, q (1 - q)}{n (P(\text{keep}) - q)^2}.

    For :math:`k = 2` this is :math:`e^\varepsilon / (n (e^\varepsilon - 1)^2)`
    whatever :math:`\pi`. Warner's variance [1]_ for a population proportion
    estimated from a simple random sample with replacement adds the sampling
    term :math:`\pi (1 - \pi) / n`.

    References
    ----------
    .. [1] S. L. Warner, "Randomized Response: A Survey Technique for Eliminating
       Evasive Answer Bias", Journal of the American Statistical Association
       60(309), 1965.
    .. [2] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private
       Protocols for Frequency Estimation", USENIX Security 2017 (Direct
       Encoding).

    Examples
    --------
    >>> from skattr.dp import randomized_response_variance
    >>> round(randomized_response_variance(1000, 0.3, 1.0), 8)
    0.00092067
    """
    validate_parameter_constraints(
        {
            "n": [Interval("integral", 1, None, closed="left")],
            "p": [Interval("real", 0, 1, closed="both")],
            "epsilon": _POSITIVE,
            "k": [Interval("integral", 2, None, closed="left")],
        },
        {"n": n, "p": p, "epsilon": epsilon, "k": k},
        "randomized_response_variance",
    )
    keep, other = _rr_probabilities(float(epsilon), k)
    # 1 - keep written as (k - 1) * other: exact even when keep rounds to 1.
    spread = p * keep * (k - 1) * other + (1 - p) * other * (1 - other)
    return float(spread / (n * _rr_gap(float(epsilon), k) ** 2))


# --------------------------------------------------------------------------------
# Exponential mechanism
# --------------------------------------------------------------------------------


def _check_scores(scores) -> np.ndarray:
    try:
        array = np.asarray(scores, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"`scores` must be a 1-d sequence of finite numbers; got {scores!r}."
        ) from None
    if array.ndim != 1:
        raise InvalidParameterError(
            "`scores` must be 1-d, one score per candidate; got an array of shape "
            f"{array.shape}."
        )
    if array.size == 0:
        raise InvalidParameterError(
            "`scores` is empty; the exponential mechanism needs at least one "
            "candidate with a score."
        )
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise InvalidParameterError(
            f"`scores` holds NaN or infinite values at positions {bad[:5].tolist()}; "
            "give every candidate a finite score (drop candidates that cannot be "
            "scored)."
        )
    return array


def exponential_mechanism_probabilities(
    scores, epsilon: float, sensitivity: float
) -> np.ndarray:
    r"""Compute the exponential mechanism's probability of each candidate.

    .. math::

        P(o) = \frac{\exp(\varepsilon\, u(x, o) / (2 \Delta u))}
        {\sum_{o'} \exp(\varepsilon\, u(x, o') / (2 \Delta u))},

    computed after subtracting the largest score, so no score overflows.

    Parameters
    ----------
    scores : array_like of float
        The utility :math:`u(x, o)` of each candidate on the data, finite; at
        least one.
    epsilon : float
        The privacy parameter :math:`\varepsilon > 0` (finite).
    sensitivity : float
        :math:`\Delta u > 0`: the most any one score can change between
        neighbouring datasets (for every candidate).

    Returns
    -------
    numpy.ndarray
        The probabilities, in the order of ``scores``; they sum to 1.

    Raises
    ------
    InvalidParameterError
        If ``epsilon`` or ``sensitivity`` is not finite and > 0, or ``scores``
        is empty, not 1-d or not finite.

    See Also
    --------
    exponential_mechanism : Draw one candidate with these probabilities.

    Notes
    -----
    A candidate whose score is so far below the best that its probability is
    below the smallest float (about :math:`e^{-745}`) gets probability 0; the
    privacy ratio of such negligible probabilities is not guaranteed in floating
    point (Ilvento, CCS 2020, studies exact implementations).

    References
    ----------
    .. [1] F. McSherry and K. Talwar, "Mechanism Design via Differential
       Privacy", FOCS 2007.
    .. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", Foundations and Trends in Theoretical Computer Science 9(3-4),
       2014, Section 3.4.

    Examples
    --------
    >>> from skattr.dp import exponential_mechanism_probabilities
    >>> exponential_mechanism_probabilities([0.0, 1.0, 2.0], 2.0, 1.0).round(4)
    array([0.09  , 0.2447, 0.6652])
    """
    _check_params(
        "exponential_mechanism_probabilities",
        epsilon=epsilon,
        sensitivity=sensitivity,
    )
    array = _check_scores(scores)
    # Divide the (non-positive) gaps first: the best candidate's 0 stays 0 even
    # when epsilon / sensitivity overflows. A gap that overflows to -inf gets
    # weight 0, its limit.
    with np.errstate(over="ignore"):
        gaps = (array - array.max()) / (2.0 * float(sensitivity))
        weights = np.exp(float(epsilon) * gaps)
    return weights / weights.sum()


def exponential_mechanism(
    candidates, scores, epsilon: float, sensitivity: float, *, random_state=None
):
    r"""Choose one candidate with the exponential mechanism.

    Candidate :math:`o` is chosen with probability proportional to
    :math:`\exp(\varepsilon\, u(x, o) / (2 \Delta u))`, where :math:`u(x, o)`
    is its score on the data and :math:`\Delta u` the sensitivity of the scores.
    The choice is :math:`\varepsilon`-differentially private (McSherry and
    Talwar [1]_; Dwork and Roth [2]_, Theorem 3.10) provided that, for every
    candidate, the score changes by at most ``sensitivity`` between neighbouring
    datasets, and that the candidates themselves do not depend on the data.

    Parameters
    ----------
    candidates : sequence
        The possible outputs, in the order of ``scores`` (a list, tuple, array
        or Series; not a set, whose order is arbitrary). Never modified.
    scores : array_like of float
        The score :math:`u(x, o)` of each candidate, finite; higher is better.
    epsilon : float
        The privacy parameter :math:`\varepsilon > 0` (finite).
    sensitivity : float
        :math:`\Delta u > 0`, the largest change of any one score between
        neighbouring datasets.
    random_state : None, int or numpy.random.Generator, default=None
        ``None`` draws from the operating system's entropy (``os.urandom``, the
        source of ``random.SystemRandom``); an int or ``Generator`` reproduces the
        choice, for experiments only. The global ``np.random`` state is never used.

    Returns
    -------
    object
        The chosen element of ``candidates``.

    Raises
    ------
    InvalidParameterError
        If ``epsilon`` or ``sensitivity`` is not finite and > 0, there are no
        candidates, ``candidates`` is a set, the lengths differ, or a score is
        not finite.

    See Also
    --------
    exponential_mechanism_probabilities : The probability of each candidate.

    Notes
    -----
    For neighbours :math:`x, x'`, each weight changes by a factor of at most
    :math:`e^{\varepsilon/2}` and so does their sum, hence
    :math:`P_x(o) / P_{x'}(o) \le e^\varepsilon`. The best candidate's score is
    within :math:`(2 \Delta u / \varepsilon)(\ln |O| + t)` of the chosen one's
    except with probability :math:`e^{-t}` (Dwork and Roth, Theorem 3.11).

    The factor 2 pays for the normalising sum moving against the candidate's own
    weight. If between any two neighbours all scores move in the same direction
    (counts when a record is added, say), the two cannot compound and the choice
    is ``epsilon / 2``-private: passing ``2 * epsilon`` then spends exactly
    ``epsilon``. This function never assumes it.

    The candidate is drawn by inverting the cumulative probabilities at one
    uniform from the grid :math:`j 2^{-53}`.

    References
    ----------
    .. [1] F. McSherry and K. Talwar, "Mechanism Design via Differential
       Privacy", FOCS 2007.
    .. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", Foundations and Trends in Theoretical Computer Science 9(3-4),
       2014, Section 3.4.

    Examples
    --------
    Choose the most common colour (a count has sensitivity 1):

    >>> from skattr.dp import exponential_mechanism
    >>> colours = ["red", "green", "blue"]
    >>> counts = [30, 25, 5]
    >>> exponential_mechanism(colours, counts, epsilon=0.5, sensitivity=1.0,
    ...                       random_state=0)
    'red'
    """
    _check_params(
        "exponential_mechanism",
        epsilon=epsilon,
        sensitivity=sensitivity,
        random_state=random_state,
    )
    if isinstance(candidates, (Set, str, bytes)):
        raise InvalidParameterError(
            "`candidates` must be an ordered sequence (a list, tuple, array or "
            "Series) so that scores[i] belongs to candidates[i]; got "
            f"{type(candidates).__name__}."
        )
    options = list(candidates)
    if not options:
        raise InvalidParameterError(
            "`candidates` is empty; the exponential mechanism needs at least one "
            "candidate to choose from."
        )
    probabilities = exponential_mechanism_probabilities(scores, epsilon, sensitivity)
    if probabilities.size != len(options):
        raise InvalidParameterError(
            f"Got {len(options)} candidates but {probabilities.size} scores; give "
            "exactly one score per candidate, in the same order."
        )
    cumulative = np.cumsum(probabilities)
    target = check_random_state(random_state).random(1)[0] * cumulative[-1]
    chosen = int(np.searchsorted(cumulative, target, side="right"))
    # Rounding can put the target at the very end: fall back on the last candidate
    # that has any probability, never on one that has none.
    return options[min(chosen, int(np.flatnonzero(probabilities)[-1]))]
