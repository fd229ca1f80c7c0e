"""Theta for any statistic: the laws of F over subsets of the reference records.

The resampling model of Chen and Ohrimenko's experiments (App. C.1), taken as
Theta itself: a dataset whose property is a is n records drawn uniformly, without
replacement, from the public reference data, exactly round(a n) of them from the
secret's group (dataset privacy), or a Binomial(n, a) number of them
(distributional privacy). Every subset is equally likely, so the law of any
statistic F is exact in principle; it is enumerated when the subsets are few and
drawn otherwise, with the draws' error bounded by order statistics. Medians and
quantiles have exact laws at any size (:mod:`skattr.laws._order`). With
replacement, each group's records are i.i.d. draws from its reference records,
so n may exceed the reference data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from skattr._data import record_contributions, secret_indicator
from skattr._kinds import law_builder, query_kind
from skattr._persistence import persistable
from skattr._random import seed_of
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._coupling import ResamplingLaw
from skattr.laws._moment_bounds import MomentLaws
from skattr.laws._order import OrderLaws
from skattr.laws._resampled import ResampledLaws, RowEvaluator
from skattr.theta._protocol import ThetaSpec

__all__ = ["Resample", "row_evaluator"]


def row_evaluator(query, frame, columns) -> Callable[[np.ndarray], np.ndarray]:
    """Return f(index) -> (m, d): the query on each subset of rows ``index[i]``."""
    if query.is_linear:
        return RowEvaluator(query, record_contributions(frame, query, columns))
    return RowEvaluator(query, query.prepare(frame, columns,
                                             what="the reference data"))



@persistable
@dataclass(frozen=True)
class Resample(ThetaSpec):
    """Theta for any statistic: datasets drawn from the reference records.

    Pass as ``theta=`` to :class:`~skattr.mechanisms.WassersteinMechanism` or
    :class:`~skattr.mechanisms.ApproximateWassersteinMechanism`. Given a property
    value a, a dataset is n records drawn uniformly without replacement from
    the reference data, exactly round(a n) of them from the secret's group
    (dataset privacy; a Binomial(n, a) number of them for distributional
    privacy). The certificate is exact for this model: its laws are enumerated
    when at most ``max_exact`` datasets are possible, computed by convolution
    for medians and quantiles, bounded from the groups' moments for means,
    sums, counts and proportions, and otherwise bounded from ``n_draws``
    i.i.d. draws with a failure probability counted in delta.

    Parameters
    ----------
    n_draws : int or None, default=None
        Datasets drawn per property value. None draws 50,000 (10,000 for a
        Python callable, which runs once per dataset), or twice the least
        number that certifies the tails at the mechanism's delta if more.
    failure_share : float in (0, 1), default=0.1
        The share of delta spent on the chance that the draws misjudge a tail;
        the rest is the mass the Approximate Wasserstein Mechanism disregards.
    max_exact : int, default=10_000
        Enumerate every dataset when there are at most this many.
    random_state : int or None, default=None
        Seed of the draws (Theta comes from public reference data, so a seed
        costs no privacy); None draws a fresh seed at fit. Choose it before
        looking at the certificate: trying seeds and keeping the least W would
        void the failure probability counted in delta.
    replace : bool, default=False
        Draw each group's records with replacement: i.i.d. from its reference
        records, so a dataset may be larger than the reference data (a census
        against a reference extract). Without replacement a dataset is a
        subset of the reference records.
    exact_quantiles : bool, default=True
        Compute the laws of a median or quantiles exactly, by convolution of
        the two groups' counts below each value (dataset privacy, or
        distributional privacy with replacement): no dataset is drawn and no
        failure probability is spent. False draws datasets as for any other
        statistic.
    moment_bounds : "auto" or bool, default="auto"
        Bound the law of a mean, sum, count or proportion from the two groups'
        moment generating functions, third moments and the coupling that swaps
        group records (:mod:`skattr.laws._moment_bounds`): no dataset is drawn
        and no failure probability is spent, in milliseconds at any size.
        Draws bound it more tightly but their cost grows with n: "auto" draws
        when the draws hold at most 50 million records in all (then the least
        of the two bounds certifies) and uses the moment bounds alone beyond;
        True always uses them alone; False always draws.
    max_seconds : float or None, default=300
        Refuse (:class:`~skattr.exceptions.WorkLimitError`) as soon as the
        drawing, timed on its first datasets, would take longer than this
        (a Python function of 100,000 records run on 10,000 datasets takes
        minutes); the message gives the projection and the cheaper options.
        None never refuses.

    Notes
    -----
    Given k records of the group, the number of a dataset's records at most v
    is the sum of two independent counts, hypergeometric without replacement
    and binomial with, so the r-th smallest record is at most v with a
    probability computed by one convolution. NumPy's sample quantile that
    interpolates between two adjacent order statistics has its law from
    theirs jointly (exactly r + 1 records at most one value and none up to
    the next), or, beyond 200,000 pairs of values, is bracketed by their
    laws. The infinity-Wasserstein distance and the quantile
    coupling of the Wasserstein mechanisms are bounded from these brackets,
    with every rounding and truncation error counted
    (:mod:`skattr.laws._order`).

    Drawn datasets are made and evaluated a chunk at a time
    (:func:`iter_subsets`, at most ``CHUNK_POSITIONS`` row positions at once),
    so a drawn law takes about 150 MB whatever n, ``n_draws`` or the
    reference's size; the chunks are the datasets one vectorised draw would
    give for the seed, so chunking changes no certificate. The drawing shows
    its progress through the mechanism's ``progress=`` parameter.

    Examples
    --------
    >>> import numpy as np, pandas as pd, skattr
    >>> from skattr.theta import Resample
    >>> rng = np.random.default_rng(0)
    >>> ref = pd.DataFrame({"rich": rng.random(2000) < 0.3,
    ...                     "age": rng.normal(40, 10, 2000)})
    >>> ref.loc[ref.rich, "age"] += 5
    >>> mech = skattr.mechanisms.ApproximateWassersteinMechanism(
    ...     query=skattr.Query.median("age"),
    ...     secret=skattr.Secret.proportion("rich", True, pairs=[(0.2, 0.4)]),
    ...     theta=Resample(random_state=0), epsilon=1.0, delta=0.005).fit(ref)
    >>> plan = mech.plan(n=100)
    >>> plan.noise, bool(0 < plan.sensitivity < 20)
    ('laplace', True)
    """

    n_draws: int | None = None
    failure_share: float = 0.1
    max_exact: int = 10_000
    random_state: int | None = None
    replace: bool = False
    exact_quantiles: bool = True
    moment_bounds: bool | str = "auto"
    max_seconds: float | None = 300.0

    def __post_init__(self):
        for name, low in (("n_draws", 2), ("max_exact", 0)):
            value = getattr(self, name)
            if value is None and name == "n_draws":
                continue
            if isinstance(value, bool) or not isinstance(
                    value, (int, np.integer)) or value < low:
                raise InvalidParameterError(
                    f"The '{name}' parameter of Resample must be an int >= {low}"
                    f"{' or None' if name == 'n_draws' else ''}. Got {value!r} "
                    "instead.")
        share = self.failure_share
        if isinstance(share, bool) or not isinstance(
                share, (float, int, np.floating)) or not 0 < share < 1:
            raise InvalidParameterError(
                "The 'failure_share' parameter of Resample must be a float in "
                f"(0, 1). Got {share!r} instead.")
        seed_of(self.random_state, owner="Resample")  # refuse a bad kind now
        limit = self.max_seconds
        if limit is not None and (isinstance(limit, bool) or not isinstance(
                limit, (int, float, np.integer, np.floating))
                or not 0 < limit < math.inf):
            raise InvalidParameterError(
                "The 'max_seconds' parameter of Resample must be a positive "
                f"number of seconds or None. Got {limit!r} instead.")
        if self.moment_bounds != "auto" and not isinstance(
                self.moment_bounds, (bool, np.bool_)):
            raise InvalidParameterError(
                "The 'moment_bounds' parameter of Resample must be 'auto' or a "
                f"bool. Got {self.moment_bounds!r} instead.")
        for name in ("replace", "exact_quantiles"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise InvalidParameterError(
                    f"The '{name}' parameter of Resample must be a bool. Got "
                    f"{getattr(self, name)!r} instead.")

    #: Theta protocol: the laws are drawn from the reference's records.
    law_kinds = ("resampling",)
    states_law = False
    reads_reference = True
    assumptions = ()

    @property
    def resampling(self) -> Resample:
        """Theta protocol: a ledger draws joint laws with these options."""
        return self

    def fit_law(self, request) -> ResamplingLaw:
        """Return the resampling model's laws of the statistic, every secret."""
        if "resampling" not in request.kinds:
            request.refuse("Resample()", "the resampling model's laws")
        laws = tuple(self.fit(request.frame, request.query, request.columns, s)
                     for s in request.secrets)
        return ResamplingLaw(
            laws=laws, secrets=tuple(request.secrets),
            d=len(request.query.names(request.columns)),
            description=laws[0].description,
            reference_sizes=tuple((law.outside.size, law.inside.size)
                                  for law in laws))

    def fit(self, frame, query, columns, secret) -> ResampledLaws:
        """Return the resampling Theta of ``secret`` on the reference ``frame``."""
        if secret.property != "proportion":
            raise InvalidParameterError(
                f"The secret {secret.label} protects a mean; the resampling Theta "
                "draws datasets with an exact share of a group, so it needs "
                "Secret.proportion.")
        inside = secret_indicator(frame, secret) == 1
        if min(inside.sum(), (~inside).sum()) < 1:
            raise NotCertifiableError(
                f"The reference data has no record on one side of the secret "
                f"{secret.label}; datasets with either property cannot be drawn.")
        positions = np.arange(len(frame))
        how = "with" if self.replace else "without"
        evaluate = row_evaluator(query, frame, columns)
        # Only a callable can depend on the order of the records.
        kind = query_kind(query)
        ordered = kind is not None and kind.opaque
        groups = positions[inside], positions[~inside]
        if not ordered:
            # Each group's records in a canonical order (by the values the
            # statistic reads; equal rows are interchangeable), so that the
            # drawn datasets, and the certificate, depend neither on the order
            # of the reference's rows nor on its other columns (a Dask
            # reference is collected with the used columns only).
            rows = np.asarray(evaluate.rows, dtype=float).reshape(len(frame), -1)
            groups = tuple(g[np.lexsort(rows[g].T[::-1])] for g in groups)
        return ResampledLaws(
            evaluate=evaluate,
            ordered=ordered,
            replace=bool(self.replace),
            order=self._order_laws(frame, query, columns, inside),
            moments=self._moment_laws(frame, query, columns, inside),
            inside=groups[0], outside=groups[1],
            n_draws=self.n_draws,
            # A Python callable runs once per dataset; vectorised statistics
            # afford more draws, which bring the bounds closer to the truth.
            default_draws=(50_000 if kind is None else kind.default_draws),
            failure_share=float(self.failure_share),
            max_exact=int(self.max_exact),
            max_seconds=(None if self.max_seconds is None
                         else float(self.max_seconds)),
            seed=seed_of(self.random_state, owner="Resample"),
            description=(f"resampling Theta: datasets of n records drawn {how} "
                         f"replacement from {len(frame)} reference records "
                         f"({int(inside.sum())} in the secret's group)"),
        )

    def _moment_laws(self, frame, query, columns, inside) -> MomentLaws | None:
        """Return moment bounds on the law of a linear statistic, else None."""
        if not self.moment_bounds or not getattr(query, "is_linear", False):
            return None
        h = record_contributions(frame, query, columns)
        return MomentLaws(inside=h[inside], outside=h[~inside], weight=query.weight,
                          replace=bool(self.replace),
                          always=self.moment_bounds != "auto")

    def _order_laws(self, frame, query, columns, inside) -> OrderLaws | None:
        """Return the exact laws of a median or quantiles, else None."""
        kind = query_kind(query)
        build = law_builder("order", kind)
        if not self.exact_quantiles or build is None:
            return None
        block = query.prepare(frame, columns, what="the reference data")
        levels = kind.levels(query)
        # One law per released value, in the statistic's order: each column's
        # levels side by side.
        picks = [(j, q) for j in range(block.shape[1]) for q in levels]
        return build(
            inside=tuple(np.sort(block[inside, j]) for j, _ in picks),
            outside=tuple(np.sort(block[~inside, j]) for j, _ in picks),
            levels=tuple(q for _, q in picks), replace=bool(self.replace),
            statistic=kind.name)
