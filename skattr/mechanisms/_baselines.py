"""Differential-privacy baselines: the Laplace and Gaussian mechanisms."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from skattr._certificate import Assumption, Method
from skattr._clipping import resolve_declared
from skattr._data import secret_indicator
from skattr._kinds import counts_records
from skattr._release import Certificate
from skattr._secret import SECRETS
from skattr.backends import backend_of
from skattr.calibration._gaussian import gaussian_delta, max_mahalanobis
from skattr.exceptions import InvalidParameterError
from skattr.mechanisms._base import BaseMechanism
from skattr.mechanisms._registry import register
from skattr.noise import GaussianNoise, LaplaceNoise, NoiseLaw
from skattr.utils._docstrings import fill_doc
from skattr.utils._param_validation import (
    Interval,
)

__all__ = [
    "DPGaussian",
    "DPLaplace",
    "GroupDPGaussian",
    "GroupDPLaplace",
    "record_sensitivities",
]

def _parts(query) -> tuple:
    # A stacked query (means and counts released together) has parts; a Query
    # is its own single part.
    return tuple(getattr(query, "parts", (query,)))


def _bounded_columns(query) -> list:
    """Return the columns of the mean and sum parts, once each, in order."""
    columns = []
    for part in _parts(query):
        if not counts_records(part):
            columns += [c for c in part.columns if c not in columns]
    return columns


def resolve_bounds(bounds, query, known=None) -> dict:
    """Return ``{column: (low, high)}`` for every column of a mean or sum.

    ``bounds`` is a dict ``{column: (low, high)}`` naming every such column (it
    may declare other columns of the data too, which are not used), a sequence
    of ``(low, high)`` pairs in their order, or one pair ``(low, high)`` for all
    of them. Counts and proportions take none: each record contributes 0 or 1.
    ``known``, when given, are the data's columns; a dict naming another column
    is refused (a misspelt column would otherwise go unnoticed). The one
    resolver of declared bounds, :func:`skattr._clipping.resolve_declared`.
    """
    counted = [c for part in _parts(query) if counts_records(part)
               for c in part.columns]
    return resolve_declared(bounds, _bounded_columns(query), known=known,
                            counted=counted)


def record_sensitivities(query, n: int, bounds=None) -> np.ndarray:
    """Per-statistic change of F(X) when one record is replaced.

    Parameters
    ----------
    query : Query or StackedQuery
        The statistics, with their columns named.
    n : int
        The number of records (public).
    bounds : dict, sequence or pair, optional
        The declared (low, high) of each averaged or summed column (see
        :func:`resolve_bounds`); none for counts and proportions.

    Returns
    -------
    ndarray of shape (k,)
        ``(high - low) w(n)`` per mean or sum, ``w(n)`` per count or
        proportion, with w(n) = 1/n for means and proportions and 1 for sums
        and counts.

    Examples
    --------
    >>> from skattr import Query
    >>> record_sensitivities(Query.mean(["age"]), 100, {"age": (17, 90)})
    array([0.73])
    >>> q = Query.mean(["age"]) + Query.count(["female"])
    >>> record_sensitivities(q, 100, {"age": (17, 90)})
    array([0.73, 1.  ])
    """
    if query.columns is None:
        raise InvalidParameterError(
            "record_sensitivities needs the query's columns; name them, e.g. "
            "Query.mean(['age'])."
        )
    declared = resolve_bounds(bounds, query)
    spans = []
    for part in _parts(query):
        for c in part.columns:
            low, high = declared.get(c, (0.0, 1.0))
            # Indicators lie in [0, 1] whatever the column holds.
            spans.append((1.0 if counts_records(part) else high - low)
                         * part.weight(n))
    return np.array(spans)


class _DPBaseline(BaseMechanism):
    """Shared shape of the baselines: no Theta, declared bounds, optional secret.

    ``fit`` only resolves the released columns (and checks that they are
    numeric and finite); nothing is learned from the values, so fitting on the
    private data itself leaks nothing and ``reference`` is not needed.
    """

    # Laplace noise has no delta and no Gaussian calibration.
    _parameter_constraints = {
        **{k: v for k, v in BaseMechanism._parameter_constraints.items()
           if k not in ("delta", "allow_large_delta", "calibration")},
        "secret": [SECRETS, None],
    }

    #: ``df.attrpriv`` may omit ``reference``: the mechanism fits no Theta.
    needs_reference = False
    #: Its fitted state is unchanged since skattr 0.2.
    fitted_layout = 1
    #: ``mechanism="auto"`` never picks a baseline: record-level DP does not hide
    #: a global property, and group DP needs bounds that "auto" cannot supply.
    auto_candidate = False
    _group = False

    #: ``fit`` checks the data chunk by chunk (``column_totals``): a Dask
    #: frame is never collected.
    _reads_dask_reference = True

    def _fit_theta(self, frame, secrets) -> None:
        """Learn nothing (differential privacy has no Theta); check the data.

        Only the columns' names and types are used (their values are checked
        to be numbers and finite, and the secrets to apply to them), so X may
        be reference data or the private data itself without any leak. The
        bounds are declared, never read off X (``fit`` refuses a policy).
        """
        what = "the data passed to fit"
        # The same checks, chunk by chunk for a lazy frame, in one pass.
        backend_of(frame).column_totals(
            frame, self.query_, self.columns_, what=what,
            check=lambda part: [secret_indicator(part, s, what=what)
                                for s in secrets])
        self.theta_ = ()

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on X and release X's statistics.

        No warning is needed (unlike the attribute-private mechanisms): ``fit``
        learns nothing from the values of X.
        """
        return self.fit(X, y, **fit_params).transform(X)

    def _group_size(self, n: int) -> int:
        if not self._group:
            return 1
        # Datasets of n records differ in at most n of them.
        return n if self.group_size is None else min(int(self.group_size), n)

    def _plan(self, n: int) -> tuple[NoiseLaw, Certificate]:
        per_record = record_sensitivities(self.query_, n, self.bounds)
        k = self._group_size(n)
        law, cert = self._calibrate(k, per_record)
        if self._group:
            guarantee = f"group differential privacy (groups of k = {k} records)"
            neighbours = Assumption.of("dp.group-neighbours", k=k, n=n)
        else:
            guarantee = "differential privacy (one record replaced)"
            neighbours = Assumption.of("dp.neighbours", n=n)
        bounds = resolve_bounds(self.bounds, self.query_)
        declared = (Assumption.of("dp.declared-bounds", bounds=tuple(
            (c, lo, hi) for c, (lo, hi) in bounds.items())) if bounds else
            Assumption.of("dp.zero-one"))
        return law, replace(cert, guarantee=guarantee,
                            assumed=(neighbours, declared))

    def _theta_description(self) -> str:
        return "none: differential privacy needs no Theta"


class _LaplaceBaseline(_DPBaseline):
    noise = "laplace"

    def _calibrate(self, k: int, per_record: np.ndarray
                   ) -> tuple[NoiseLaw, Certificate]:
        d = len(per_record)
        sensitivity = k * float(np.sum(per_record))
        b = sensitivity / self.epsilon
        return LaplaceNoise.on_each(b, d), Certificate(
            epsilon=float(self.epsilon), delta=0.0, calibration="laplace",
            sensitivity=sensitivity,
            certified_by=Method.of("dp.laplace", k=k, l1=sensitivity / k,
                                   epsilon=self.epsilon),
        )


class _GaussianBaseline(_DPBaseline):
    noise = "gaussian"

    _parameter_constraints = {
        **_DPBaseline._parameter_constraints,
        "delta": [Interval("real", 0, 1, closed="neither")],
        "allow_large_delta": BaseMechanism._parameter_constraints[
            "allow_large_delta"],
        "calibration": BaseMechanism._parameter_constraints["calibration"],
    }

    def _calibrate(self, k: int, per_record: np.ndarray
                   ) -> tuple[NoiseLaw, Certificate]:
        d = len(per_record)
        sensitivity = k * float(np.linalg.norm(per_record))
        mu = max_mahalanobis(self.epsilon, self.delta, self.calibration)
        sigma = sensitivity / mu
        cov = sigma * sigma * np.eye(d)
        delta = float(self.delta)
        method = Method.of("dp.gaussian", sigma=sigma)
        if self.calibration == "classic":
            method = method.then("dp.gaussian.classic", mu=mu)
            # Proven for epsilon < 1 only: state what the noise really achieves.
            achieved = float(gaussian_delta(mu, self.epsilon))
            if achieved > delta:
                method = method.then("dp.achieved-delta", epsilon=self.epsilon,
                                     achieved=achieved, requested=delta)
                delta = achieved
        else:
            method = method.then("dp.gaussian.analytic", mu=mu)
        return GaussianNoise(cov), Certificate(
            epsilon=float(self.epsilon), delta=delta,
            calibration=self.calibration, sensitivity=sensitivity,
            certified_by=method,
        )


_SHARED_PARAMETERS = """\
%(query)s
secret : Secret, list of Secret or None, default=None
    Not needed: differential privacy protects records, not a property. When
    given, its label is recorded in the release (for comparison with the
    attribute-private mechanisms) and its column is left out of the
    default query.
%(epsilon)s"""

_BOUNDS_PARAMETER = """\
bounds : dict, sequence of (low, high), (low, high) or None, default=None
    Declared range of each averaged or summed column, never read from the
    data: ``{column: (low, high)}`` (other columns of the data may be
    declared too), one pair per column in the query's order, or one pair for
    every column. Required for means and sums; counts and proportions need
    none (each record contributes 0 or 1). A release clips each record's
    values to them, so the sensitivity computed from them, and the
    guarantee, hold whatever the private data (refusing data outside them
    would itself reveal that some record lies outside). ``"reference"`` is
    refused: these mechanisms fit no Theta on public reference data. The
    release records the bounds (``clipping``), never how many records were
    clipped."""

_GAUSSIAN_PARAMETERS = """\
%(gaussian_delta)s
%(gaussian_calibration)s"""

_GROUP_PARAMETER = """\
group_size : int or None, default=None
    k, the number of records a neighbouring dataset may replace. None means
    k = n (every record), Chen and Ohrimenko's baseline; k is capped at n."""

_ATTRIBUTES = """\
Attributes
----------
%(query_attributes)s
secrets_ : tuple of Secret
    The recorded secrets (empty when none is given).
%(input_attributes)s"""

_SENSITIVITY_NOTE = """\
Replacing one record changes a mean or proportion by at most
(high - low) / n per column (1/n for an indicator) and a sum or count by
(high - low) (1 for an indicator)."""

_REFERENCES = """\
.. [1] C. Dwork and A. Roth. "The Algorithmic Foundations of Differential
   Privacy." Foundations and Trends in Theoretical Computer Science 9(3-4),
   2014. Theorems 2.2, 3.6 and A.1.
.. [2]
   %(chen_ohrimenko)s
   Section 5.1 and Table 2 (the group DP baseline with k = n = 100).
.. [3]
   %(balle_wang)s"""


_GROUP_NOTE = """\
Group privacy is obtained from the sensitivity of replacing k records,
k times the per-record sensitivity (a sum of k per-record changes), and the
noise is calibrated to it at the stated epsilon and delta. This is not the
generic group-privacy composition of Dwork and Roth [1]_ (Theorem 2.2 and
its (k epsilon, k e^((k-1) epsilon) delta) analogue), which holds for any
mechanism but is far weaker here."""

_fill_doc = fill_doc(
    shared=_SHARED_PARAMETERS,
    bounds=_BOUNDS_PARAMETER,
    gaussian=_GAUSSIAN_PARAMETERS,
    group=_GROUP_PARAMETER,
    attributes=_ATTRIBUTES,
    sensitivity=_SENSITIVITY_NOTE,
    references=_REFERENCES,
    group_note=_GROUP_NOTE,
)


@_fill_doc
@register
class DPLaplace(_LaplaceBaseline):
    """Laplace mechanism: (epsilon, 0)-differential privacy of records.

    Releases a linear statistic F(X) plus independent Laplace(0, b) noise on
    each statistic, with b = l1 / epsilon for the l1 sensitivity of F when one
    record is replaced. A baseline: differential privacy protects each record,
    not a global property of the data (Chen and Ohrimenko [2]_, Sec. 1); see
    :class:`GroupDPLaplace` for groups of records.

    Parameters
    ----------
    %(shared)s
    %(bounds)s
    %(secure)s
    %(random_state)s

    %(attributes)s

    See Also
    --------
    GroupDPLaplace : The same for groups of k records.
    DPGaussian : Gaussian noise, (epsilon, delta)-differential privacy.

    Notes
    -----
    Dwork and Roth [1]_, Theorem 3.6: with l1 = sum_i Delta_i over the
    statistics, adding Laplace(l1 / epsilon) to each is (epsilon, 0)-DP.
    %(sensitivity)s
    The release's ``delta`` is 0 and its ``calibration`` is ``"laplace"``.

    References
    ----------
    %(references)s

    Examples
    --------
    >>> import pandas as pd
    >>> import skattr
    >>> df = pd.DataFrame({"age": [23, 35, 51, 62], "hours": [40, 38, 45, 20]})
    >>> mech = skattr.mechanisms.DPLaplace(
    ...     query=skattr.Query.mean(["age", "hours"]),
    ...     bounds={"age": (17, 90), "hours": (1, 99)}, epsilon=1.0,
    ...     random_state=0).fit(df)
    >>> rel = mech.release(df)
    >>> round(rel.sensitivity, 2)      # (73 + 98) / 4
    42.75
    >>> round(rel.noise_scale, 2), rel.delta
    (42.75, 0.0)
    """

    mechanism_name = "dp-laplace"

    def __init__(self, *, query=None, secret=None, epsilon=1.0, bounds=None,
                 secure=False, random_state=None):
        self.query = query
        self.secret = secret
        self.epsilon = epsilon
        self.bounds = bounds
        self.secure = secure
        self.random_state = random_state


@_fill_doc
@register
class DPGaussian(_GaussianBaseline):
    """Gaussian mechanism: (epsilon, delta)-differential privacy of records.

    Releases a linear statistic F(X) plus N(0, sigma^2 I) noise with
    sigma = l2 / mu, for the l2 sensitivity of F when one record is replaced
    and mu the largest Mahalanobis distance certified at (epsilon, delta). A
    baseline: differential privacy protects each record, not a global property
    of the data (Chen and Ohrimenko [2]_, Sec. 1); see :class:`GroupDPGaussian`
    for groups of records.

    Parameters
    ----------
    %(shared)s
    %(gaussian)s
    %(bounds)s
    %(secure)s
    %(random_state)s
    %(allow_large_delta)s

    %(attributes)s

    See Also
    --------
    GroupDPGaussian : The same for groups of k records.
    DPLaplace : Laplace noise, (epsilon, 0)-differential privacy.

    Notes
    -----
    With ``calibration="classic"``, mu = epsilon / sqrt(2 ln(1.25/delta))
    (Dwork and Roth [1]_, Theorem A.1, proven for epsilon < 1); with
    ``"analytic"``, the exact mu of Balle and Wang [3]_, which is larger (less
    noise) and valid for every epsilon.
    %(sensitivity)s

    References
    ----------
    %(references)s

    Examples
    --------
    >>> import pandas as pd
    >>> import skattr
    >>> df = pd.DataFrame({"age": [23, 35, 51, 62], "hours": [40, 38, 45, 20]})
    >>> mech = skattr.mechanisms.DPGaussian(
    ...     query=skattr.Query.mean(["age", "hours"]),
    ...     bounds={"age": (17, 90), "hours": (1, 99)}, epsilon=0.5,
    ...     calibration="classic", random_state=0).fit(df)
    >>> rel = mech.release(df)
    >>> round(rel.sensitivity, 2)      # hypot(73, 98) / 4
    30.55
    >>> round(float(rel.noise_std[0]), 2)   # 30.55 sqrt(2 ln 1250) / 0.5
    230.74
    """

    mechanism_name = "dp-gaussian"

    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=1e-3,
                 calibration="analytic", bounds=None, secure=False,
                 random_state=None, allow_large_delta=False):
        self.query = query
        self.secret = secret
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.bounds = bounds
        self.secure = secure
        self.random_state = random_state
        self.allow_large_delta = allow_large_delta


@_fill_doc
@register
class GroupDPLaplace(_LaplaceBaseline):
    """Laplace mechanism for group differential privacy (groups of k records).

    Releases a linear statistic F(X) plus independent Laplace(0, b) noise on
    each statistic with b = k l1 / epsilon: (epsilon, 0)-indistinguishable
    for any two datasets that differ in at most k records. With k = n (the
    default) every pair of datasets of n records is covered, so every global
    property is hidden, at a large cost in noise: the baseline of Chen and
    Ohrimenko [2]_ (Sec. 5.1, k = n = 100).

    Parameters
    ----------
    %(shared)s
    %(bounds)s
    %(group)s
    %(secure)s
    %(random_state)s

    %(attributes)s

    See Also
    --------
    DPLaplace : The same for one record (k = 1).
    GroupDPGaussian : Gaussian noise.

    Notes
    -----
    %(group_note)s
    %(sensitivity)s

    References
    ----------
    %(references)s

    Examples
    --------
    >>> import pandas as pd
    >>> import skattr
    >>> df = pd.DataFrame({"female": [1, 0, 1, 1]})
    >>> mech = skattr.mechanisms.GroupDPLaplace(
    ...     query=skattr.Query.count(["female"]), epsilon=1.0,
    ...     random_state=0).fit(df)
    >>> plan = mech.plan(df)
    >>> plan.sensitivity, plan.noise_scale   # k = n = 4 records, 1 each
    (4.0, 4.0)
    """

    mechanism_name = "group-dp-laplace"
    _group = True
    _parameter_constraints = {
        **_LaplaceBaseline._parameter_constraints,
        "group_size": [Interval("integral", 1, None, closed="left"), None],
    }

    def __init__(self, *, query=None, secret=None, epsilon=1.0, bounds=None,
                 group_size=None, secure=False, random_state=None):
        self.query = query
        self.secret = secret
        self.epsilon = epsilon
        self.bounds = bounds
        self.group_size = group_size
        self.secure = secure
        self.random_state = random_state


@_fill_doc
@register
class GroupDPGaussian(_GaussianBaseline):
    """Gaussian mechanism for group differential privacy (groups of k records).

    Releases a linear statistic F(X) plus N(0, sigma^2 I) noise with
    sigma = k l2 / mu: (epsilon, delta)-indistinguishable for any two datasets
    that differ in at most k records. With k = n (the default) every pair of
    datasets of n records is covered, so every global property is hidden, at a
    large cost in noise: the GroupDP (G) baseline of Chen and Ohrimenko [2]_
    (Sec. 5.1 and Table 2, k = n = 100).

    Parameters
    ----------
    %(shared)s
    %(gaussian)s
    %(bounds)s
    %(group)s
    %(secure)s
    %(random_state)s
    %(allow_large_delta)s

    %(attributes)s

    See Also
    --------
    DPGaussian : The same for one record (k = 1).
    GroupDPLaplace : Laplace noise, delta = 0.

    Notes
    -----
    %(group_note)s
    mu is epsilon / sqrt(2 ln(1.25/delta)) (``calibration="classic"``, as in
    the paper) or the exact value of Balle and Wang [3]_.
    %(sensitivity)s

    References
    ----------
    %(references)s

    Examples
    --------
    >>> import pandas as pd
    >>> import skattr
    >>> df = pd.DataFrame({"age": [23, 35, 51, 62]})
    >>> mech = skattr.mechanisms.GroupDPGaussian(
    ...     query=skattr.Query.mean(["age"]), bounds=(17, 90), group_size=2,
    ...     epsilon=0.5, calibration="classic", random_state=0).fit(df)
    >>> plan = mech.plan(df)
    >>> plan.sensitivity                 # 2 records x 73 / 4
    36.5
    >>> round(float(plan.noise_std[0]), 2)
    275.68
    """

    mechanism_name = "group-dp-gaussian"
    _group = True
    _parameter_constraints = {
        **_GaussianBaseline._parameter_constraints,
        "group_size": [Interval("integral", 1, None, closed="left"), None],
    }

    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=1e-3,
                 calibration="analytic", bounds=None, group_size=None,
                 secure=False, random_state=None, allow_large_delta=False):
        self.query = query
        self.secret = secret
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.bounds = bounds
        self.group_size = group_size
        self.secure = secure
        self.random_state = random_state
        self.allow_large_delta = allow_large_delta
