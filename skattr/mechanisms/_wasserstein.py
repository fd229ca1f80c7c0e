"""The Wasserstein and Approximate Wasserstein Mechanisms: Laplace noise W / epsilon."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd
from scipy import stats

from skattr._data import Reference
from skattr._query import Query, StackedQuery
from skattr._release import Certificate
from skattr._statistic import Statistic
from skattr.bayes import NetworkTheta
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._count_sensitivity import count_sensitivity, count_sensitivity_box
from skattr.laws._draws import quantile_bounds, tail_bounds
from skattr.laws._resampled import ResampledLaws
from skattr.laws._sums import (
    SumLaws,
    pair_pmfs,
    sum_sensitivity,
)
from skattr.mechanisms._base import BaseMechanism
from skattr.mechanisms._registry import register
from skattr.noise import LaplaceNoise
from skattr.theta._box import ProbabilityBox
from skattr.theta._resample import Resample
from skattr.theta._spec import (
    BOOTSTRAP_REPLICATES,
    FitAndBootstrap,
    PlugIn,
    resolve_theta,
)
from skattr.utils._docstrings import fill_doc
from skattr.utils._param_validation import Interval, Options
from skattr.utils._progress import PROGRESS_CONSTRAINT, PROGRESS_DOC, progress_bar
from skattr.wasserstein import w_infinity, wd_closeness

__all__ = ["ApproximateWassersteinMechanism", "WassersteinMechanism"]

# Quantile levels (less one) at which a one-dimensional law drawn by the
# resampling Theta is bounded: finer grids cost more bounds in the union.
_BAND_LEVELS = 64

# Most distinct values of an exact law of several statistics whose distances
# are computed exactly (a linear program over every pair of values in R^d).
_MAX_EXACT_POINTS = 300

# Records the draws of a linear statistic may hold in all before the moment
# bounds replace them (Resample(moment_bounds="auto")): about five seconds.
_DRAWN_RECORDS = 50_000_000

# The same for (W, delta)-closeness on the line (a search over the pairwise
# distances of the two supports).
_MAX_LINE_POINTS = 3000

_SECRET = """
    secret : Secret or list of Secret
        Proportion secrets; pairs must be multiples of 1/n for dataset privacy.
    """

_CALIBRATION = """
    calibration : {"analytic", "classic"}, default="analytic"
        Unused (Laplace noise); kept for a uniform interface.
    """

_THETA = """
    theta : "auto", "moments", array-like of shape (m, 2), ProbabilityBox, \
SumLaws, Resample or NetworkTheta, default="auto"
        Where the laws of F given a secret come from.

        - ``"moments"``: exact count laws (Zhang et al. Sec. 6), records
          independent given the sensitive attribute, counted with probabilities
          p = (P(counted | not in the group), P(counted | in it)) estimated
          from the reference data.
        - an array of such p pairs: a finite Theta stated by an expert.
        - :class:`~skattr.theta.ProbabilityBox`: every p in a box; the
          supremum over it is certified by branch and bound (never
          underestimated).
        - :class:`~skattr.theta.SumLaws`: for a sum or mean of one
          integer-valued column, its law in and out of the secret's group
          (``"moments"`` fits it from the reference data).
        - :class:`~skattr.theta.Resample`: any statistic; datasets of n
          reference records with the secret's exact property value.
        - :class:`~skattr.bayes.NetworkTheta`: distributional attribute
          privacy under a parameter network (the Markov quilt mechanism's
          Theta), one count or proportion, ``privacy="distributional"``.
        - ``"auto"``: for one count or proportion, the fit of ``"moments"``
          and 50 stratified bootstrap replicates of it, worst case (the same
          Theta as every mechanism's ``"auto"``); otherwise
          ``Resample()``, whose draws an int ``random_state`` seeds.
    """

_PRIVACY = """
    privacy : {"dataset", "distributional"}, default="dataset"
        Dataset attribute privacy (the secret is the realised share) or
        distributional (the secret is the parameter the share is drawn from).
    """

_ATTRIBUTES = """
    Attributes
    ----------
    %(query_attributes)s
    secrets_ : tuple of Secret
        The secrets.
    theta_ : tuple
        For each secret, its p pairs (m, 2), a ProbabilityBox, a
        :class:`~skattr.theta.SumLaws`, or a
        :class:`~skattr.theta._resample.ResampledLaws`.
    %(input_attributes)s
    """

_fill_doc = fill_doc(secret=_SECRET, calibration=_CALIBRATION, theta=_THETA,
                     privacy=_PRIVACY, attributes=_ATTRIBUTES,
                     progress=PROGRESS_DOC)


def _small_enough(law, *, closeness: bool = False) -> bool:
    """Whether an exact law exists and its distances can be computed exactly.

    On the line W_inf is fast at any size, while (W, delta)-closeness searches
    over every pairwise distance; in R^d both are a flow over every pair of
    support points.
    """
    if law is None:
        return False
    size, dims = law[0].shape
    if dims == 1:
        return not closeness or size <= _MAX_LINE_POINTS
    return size <= _MAX_EXACT_POINTS


def _points(support: np.ndarray) -> np.ndarray:
    """Support points as the distance functions read them: 1-d on the line."""
    return support[:, 0] if support.shape[1] == 1 else support


def _count_query(query) -> bool:
    return (isinstance(query, Query) and query.statistic in ("count", "proportion")
            and query.columns is not None and len(query.columns) == 1)


def _sum_query(query) -> bool:
    return (isinstance(query, Query) and query.statistic in ("sum", "mean")
            and query.columns is not None and len(query.columns) == 1)


class _WassersteinFamily(BaseMechanism):
    """What the two Wasserstein Mechanisms share: Theta, pairs and the Plan."""

    _parameter_constraints = {
        **BaseMechanism._parameter_constraints,
        "query": [Query, StackedQuery, Statistic, None],
        "theta": [Options(frozenset({"auto", "moments"})), list, tuple, np.ndarray,
                  ProbabilityBox, SumLaws, Resample, NetworkTheta],
        "privacy": [Options(frozenset({"dataset", "distributional"}))],
        "progress": PROGRESS_CONSTRAINT,
    }

    accepts_statistics = True

    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=0.0,
                 calibration="analytic", theta="auto", privacy="dataset",
                 bounds="reference", secure=False, random_state=None,
                 progress="auto"):
        self.query = query
        self.secret = secret
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.theta = theta
        self.privacy = privacy
        self.bounds = bounds
        self.secure = secure
        self.random_state = random_state
        self.progress = progress

    def _resolve_query(self, frame: pd.DataFrame, secrets) -> None:
        super()._resolve_query(frame, secrets)
        query = self.query_
        if query.n_outputs(self.columns_) is None:
            # A function's labels (and their number) show only when it runs:
            # run it once on the reference data and keep them.
            labels = query.evaluate(frame, self.columns_).index
            self.query_ = query.with_names(list(labels))

    # ------------------------------------------------------------------ Theta
    def _fit_theta(self, frame: pd.DataFrame, secrets) -> tuple:
        # The name given to theta= becomes its spec object once, here.
        spec = self.theta_spec_ = resolve_theta(self.theta, ("auto", "moments"))
        if isinstance(spec, FitAndBootstrap) and not _count_query(self.query_):
            # A statistic with no exact law here: the resampling model of the
            # reference records is the only Theta that describes its law. An
            # int random_state seeds its draws too, so that a seeded fit is
            # reproducible (and its certificate the same for any row order).
            seed = (self.random_state if isinstance(self.random_state, Integral)
                    and not isinstance(self.random_state, bool) else None)
            spec = self.theta_spec_ = Resample(random_state=seed)
        if isinstance(spec, Resample):
            return tuple(spec.fit(frame, self.query_, self.columns_, s)
                         for s in secrets)
        if isinstance(spec, NetworkTheta):
            return self._fit_network_theta(spec, secrets)
        for s in secrets:
            if s.property != "proportion":
                raise InvalidParameterError(
                    f"The secret {s.label} protects a mean; the exact laws need a "
                    "proportion secret (or theta=skattr.theta.Resample()).")
        counting = _count_query(self.query_)
        if not (counting or (_sum_query(self.query_)
                             and isinstance(spec, (SumLaws, PlugIn)))):
            raise InvalidParameterError(
                "Exact laws cover one count or proportion (theta='moments', p "
                "pairs or a ProbabilityBox) or the sum or mean of one "
                "integer-valued column (theta='moments' or SumLaws); for any "
                "other statistic use theta=skattr.theta.Resample().")
        if isinstance(spec, (ProbabilityBox, SumLaws)):
            return tuple(spec for _ in secrets)
        if getattr(spec, "fixes_law", False):
            # The reference's fit (theta="moments"), and for "auto" its
            # bootstrap replicates: the same Theta as every mechanism's.
            reference = Reference(frame, self.query_, self.columns_, secrets)
            statistic = "count" if counting else "sum"
            self._check_groups(reference, secrets, statistic)
            return tuple(spec.exact_law(reference, s, statistic)
                         for s in secrets)
        thetas = np.asarray(spec, dtype=float)
        if thetas.ndim != 2 or thetas.shape[1] != 2 or not np.all(
                (thetas >= 0) & (thetas <= 1)):
            raise InvalidParameterError(
                "theta must be 'moments', a finite set of pairs "
                "[[P(counted | out), P(counted | in)], ...] in [0, 1], a "
                f"ProbabilityBox or a Resample; got {self.theta!r}.")
        return tuple(thetas for _ in secrets)

    def _fit_network_theta(self, spec: NetworkTheta, secrets) -> tuple:
        """Map each secret to its node; the laws come from the network alone."""
        if not _count_query(self.query_):
            raise InvalidParameterError(
                "theta=NetworkTheta(...) gives the law of one count or "
                "proportion; release one such statistic.")
        if self.privacy != "distributional":
            raise InvalidParameterError(
                "theta=NetworkTheta(...) states the law of the attribute "
                "parameters, so the secret is a parameter: use "
                "privacy='distributional'.")
        self.secret_nodes_ = tuple(spec.network.secret_node(s.column)
                                   for s in secrets)
        return tuple(spec for _ in secrets)

    def _network_laws(self, n: int):
        """Yield (support, law | a, law | b) for every pair and network."""
        for s, spec, node in zip(self.secrets_, self.theta_, self.secret_nodes_,
                                 strict=True):
            for a, b in self._pairs(s, n):
                support, given_a = spec.count_laws(node, a, n)
                _, given_b = spec.count_laws(node, b, n)
                for pa, pb in zip(given_a, given_b, strict=True):
                    yield support, pa, pb

    @staticmethod
    def _check_groups(reference, secrets, statistic: str) -> None:
        """Refuse a secret with fewer than two reference records on a side."""
        for s in secrets:
            inside = reference.groups(s) == 1
            if min(inside.sum(), (~inside).sum()) < 2:
                raise NotCertifiableError(
                    f"The reference data has too few records on one side of the "
                    f"secret {s.label} to estimate the {statistic}'s law.")

    def _pairs(self, secret, n: int) -> list[tuple[float, float]]:
        if self.privacy == "dataset":
            return secret.grid_pairs(n, alternative="use privacy='distributional'")
        a, b = secret.pair_values(n)
        return list(zip(a.tolist(), b.tolist(), strict=True))

    def _theta_description(self) -> str:
        first = self.theta_[0]
        if isinstance(first, NetworkTheta):
            net = first.network
            many = (f", worst case over {len(net.members)} networks"
                    if len(net.members) > 1 else "")
            return (f"Bayesian network of the attribute parameters "
                    f"({len(net.nodes)} nodes{many}), records counted given "
                    f"{list(first.reads)}")
        if isinstance(first, ResampledLaws):
            return first.description
        if isinstance(first, SumLaws):
            return (f"the law of the column's {len(first.values)} values in and "
                    f"out of the group ({len(first.probs)} theta)")
        if isinstance(self.theta_spec_, FitAndBootstrap):
            return (f"p estimated from the reference data and "
                    f"{BOOTSTRAP_REPLICATES} stratified bootstrap replicates "
                    "(worst case)")
        if isinstance(first, ProbabilityBox):
            return f"p anywhere in [{first.low}, {first.high}]"
        if isinstance(self.theta_spec_, PlugIn):
            return "p estimated from the reference data"
        return f"{len(first)} stated p pairs"

    # ------------------------------------------------------------ certificate
    def _order_laws(self):
        """Return the exact order-statistic laws of every secret, or None."""
        found = [laws.order for laws in self.theta_]
        if all(o is not None and o.supports(self.privacy) for o in found):
            return found
        return None

    def _ordered_gap(self, n: int, low: float, high: float) -> float:
        """Bound sup |Q_a - Q_b| over [low, high] of a quantile, every pair."""
        return max(order.gap(0, a, b, n, self.privacy, low, high)
                   for s, order in zip(self.secrets_, self._order_laws(),
                                       strict=True)
                   for a, b in self._pairs(s, n))

    def _order_method(self) -> str:
        order = self._order_laws()[0]
        return ("the exact laws of the order statistics that make up each "
                "quantile (or bracket it), by convolution of the groups' "
                f"{'binomial' if order.replace else 'hypergeometric'} counts "
                "below each reference value, rounding errors counted")

    def _resampled_w_infinity(self, n: int) -> tuple[float | None, str]:
        """W_inf of the exact resampling laws and how, or None and why not.

        On success the text completes "W the infinity-Wasserstein distance
        between ...".
        """
        worst = 0.0
        for s, laws in zip(self.secrets_, self.theta_, strict=True):
            for pair in self._pairs(s, n):
                exact = [laws.exact_law(a, n, self.privacy) for a in pair]
                if any(law is None for law in exact):
                    if (self._order_laws() is not None
                            and len(self.query_.names(self.columns_)) == 1):
                        # A bound: the laws' extremes below and above 1e-8.
                        return self._ordered_gap(n, 0.0, 1.0), (
                            f"{self._order_method()} (an upper bound)")
                    return None, (
                        "A function sees the records in a random order, so its "
                        "law spans every ordering" if laws.ordered else
                        "The resampling Theta spreads each law over more than "
                        f"max_exact = {laws.max_exact} datasets (raise "
                        "Resample(max_exact=...) to enumerate more)")
                if not all(_small_enough(law) for law in exact):
                    return None, (
                        f"The exact laws take more than {_MAX_EXACT_POINTS} "
                        "distinct values, too many for an exact distance in "
                        "R^d (a flow over every pair of values)")
                (xa, pa), (xb, pb) = exact
                worst = max(worst, w_infinity(_points(xa), _points(xb), pa, pb))
        return worst, "the exact laws of every dataset of the resampling model"

    def _sensitivity(self, n: int) -> tuple[float, str, tuple]:
        """W (largest over pairs and Theta), how it was found, what it assumes."""
        raise NotImplementedError

    def _certified_delta(self) -> float:
        return 0.0

    def _plan(self, n: int) -> tuple[LaplaceNoise, Certificate]:
        w, method, assumptions = self._sensitivity(n)
        k = len(self.query_.names(self.columns_))
        scale = w / self.epsilon
        if not np.isfinite(scale):
            raise NotCertifiableError(
                "The Wasserstein distance is not finite; no Laplace scale "
                "certifies this release.")
        return LaplaceNoise.on_each(scale, k), Certificate(
            epsilon=self.epsilon, delta=self._certified_delta(),
            calibration="laplace", sensitivity=w, method=method,
            assumptions=assumptions,
            guarantee=("distributional attribute privacy"
                       if self.privacy == "distributional" else
                       "attribute privacy"))

    def _count_assumption(self) -> tuple:
        how = ("take the column's values with the stated probabilities"
               if isinstance(self.theta_[0], SumLaws)
               else "are counted with the stated probabilities")
        if isinstance(self.theta_[0], NetworkTheta):
            return self.theta_[0].assumptions
        return (f"records are independent given the sensitive attribute and "
                f"{how} ({self.privacy} attribute privacy)",)

    def _resample_assumption(self) -> str:
        return (f"the data are distributed as the resampling model says "
                f"(datasets drawn from the reference data; {self.privacy} "
                "privacy)")


@_fill_doc
@register
class WassersteinMechanism(_WassersteinFamily):
    """Wasserstein Mechanism: Laplace(W / epsilon) noise (Zhang Alg 4).

    W is the largest infinity-Wasserstein distance (L1 ground metric) between
    the laws of the released statistic under the two secrets of a pair, worst
    case over Theta. It certifies (epsilon, 0) with no Gaussian or translation
    assumption, but needs the laws exactly: exact count laws (one count or
    proportion with a binary sensitive attribute), the resampling model when
    its datasets are few enough to enumerate, or the resampling model's exact
    laws of one median or quantile (a certified upper bound on W, from the
    laws of the order statistics and their extremes). Otherwise use
    :class:`ApproximateWassersteinMechanism`.

    Parameters
    ----------
    query : Query or Statistic
        The released statistic(s).
    %(secret)s
    %(epsilon)s
    delta : float, default=0.0
        Ignored: the certificate has delta = 0.
    %(calibration)s
    %(theta)s
    %(privacy)s
    %(theta_bounds)s
    %(secure)s
    %(random_state)s
    %(progress)s

    %(attributes)s

    See Also
    --------
    ApproximateWassersteinMechanism : (epsilon, delta), any statistic.
    skattr.wasserstein.w_infinity : the distance.

    Notes
    -----
    Song, Wang and Chaudhuri's Wasserstein Mechanism (Zhang et al. Alg. 4,
    Theorem 5; Chen and Ohrimenko Thm 3.1) adds Laplace(W / epsilon) noise to
    each statistic. For Zhang et al.'s Example 2 (four records, p in
    [0.4, 0.6]^2) W = 1, against a group-privacy sensitivity of 4.

    References
    ----------
    .. [1] S. Song, Y. Wang and K. Chaudhuri. "Pufferfish Privacy Mechanisms for
       Correlated Data." SIGMOD 2017.
    .. [2]
       %(zhang_ohrimenko_cummings)s
       Long version, Sec. 6.
    .. [3]
       %(chen_ohrimenko)s
       Thm 3.1.

    Examples
    --------
    >>> import pandas as pd, skattr
    >>> frame = pd.DataFrame({"x1": [1, 0, 1, 1], "x2": [1, 0, 0, 1]})
    >>> mech = skattr.mechanisms.WassersteinMechanism(
    ...     query=skattr.Query.count("x1", 1),
    ...     secret=skattr.Secret.proportion("x2", 1, pairs=[(0.0, 1.0)]),
    ...     theta=[[0.6, 0.4]], epsilon=1.0).fit(frame)
    >>> mech.plan(n=4).sensitivity
    1.0
    """

    mechanism_name = "wasserstein"

    def _sensitivity(self, n: int) -> tuple[float, str, tuple]:
        worst = 0.0
        if isinstance(self.theta_spec_, Resample):
            worst, how = self._resampled_w_infinity(n)
            if worst is None:
                raise NotCertifiableError(
                    f"{how}; an infinity-Wasserstein distance cannot be certified "
                    "from draws (it depends on the rarest datasets). Use "
                    "mechanism='approx-wasserstein' with delta > 0.")
            return (worst, "Laplace(W / epsilon), W the infinity-Wasserstein "
                    f"distance between {how} (Chen Thm 3.1)",
                    (self._resample_assumption(),))
        if isinstance(self.theta_spec_, NetworkTheta):
            worst = max(w_infinity(x, x, pa, pb)
                        for x, pa, pb in self._network_laws(n))
            return (worst * self.query_.weight(n),
                    "Laplace(W / epsilon), W the largest infinity-Wasserstein "
                    "distance between the exact laws of the count given the "
                    "secret node's parameter, mixtures of binomials over the "
                    "network (Zhang Alg. 4)", self._count_assumption())
        for s, theta in zip(self.secrets_, self.theta_, strict=True):
            pairs = self._pairs(s, n)
            if isinstance(theta, SumLaws):
                worst = max(worst, sum_sensitivity(pairs, n, theta.probs,
                                                   theta.values,
                                                   privacy=self.privacy))
            elif isinstance(theta, ProbabilityBox):
                bound = count_sensitivity_box(pairs, n, theta.low, theta.high,
                                              privacy=self.privacy)
                worst = max(worst, bound.upper)
            else:
                worst = max(worst, count_sensitivity(pairs, n, theta,
                                                     privacy=self.privacy))
        return (worst * self.query_.weight(n),
                "Laplace(W / epsilon), W the largest infinity-Wasserstein "
                "distance between the exact laws of the count or sum (Zhang "
                "Alg. 4)",
                self._count_assumption())


@_fill_doc
@register
class ApproximateWassersteinMechanism(_WassersteinFamily):
    """Approximate Wasserstein Mechanism: any statistic (Chen Thm 3.2-3.3).

    Laplace noise W / epsilon per statistic, W such that the laws of F under the
    two secrets of every pair are (W, delta)-close (Chen and Ohrimenko Def 3.2):
    some coupling moves all but delta of the mass by at most W in L1. Rare
    extreme values, which make the infinity-Wasserstein distance large or
    undefined, are disregarded at a cost of delta.

    Parameters
    ----------
    query : Query or Statistic
        The released statistic(s): a count or proportion (exact laws), or any
        :class:`~skattr.Statistic` (median, quantiles, std, trimmed mean, OLS
        coefficients, a function) with ``theta=Resample()``.
    %(secret)s
    %(epsilon)s
    delta : float, default=1e-3
        The certificate's delta, > 0: the mass disregarded, plus (with drawn
        laws) the chance that the draws misjudge a tail.
    %(calibration)s
    %(theta)s
    %(privacy)s
    %(theta_bounds)s
    %(secure)s
    %(random_state)s
    %(progress)s

    %(attributes)s

    See Also
    --------
    WassersteinMechanism : delta = 0, exact laws only.
    skattr.wasserstein.wd_closeness : the least W at a given delta.

    Notes
    -----
    W is found in one of four ways, in this order of tightness:

    - exact laws (count laws over a finite Theta, or every dataset of the
      resampling model): the least W of Def 3.2, exactly
      (:func:`~skattr.wasserstein.wd_closeness`);
    - a median or quantiles under the resampling model: the exact laws of the
      order statistics that make up each value, by convolution
      (:mod:`skattr.laws._order`), read through the quantile coupling
      over the middle 1 - delta (one value) or boxes with exact tails of mass
      delta / (4 d) (several); no draws, so all of delta is disregarded mass;
    - a :class:`~skattr.theta.ProbabilityBox`: the certified supremum of the
      infinity-Wasserstein distance over the box, which bounds W at any delta;
    - drawn laws: Chen and Ohrimenko's remark after Thm 3.2 (and Thm 3.3's
      argument). If a box R_a holds mass at least 1 - delta'/2 of the law
      given a, every coupling of the laws of a pair puts mass 1 - delta' on
      R_a x R_b, whose points are at most W = sum_j max(U_aj - L_bj,
      U_bj - L_aj) apart. The box's faces are order statistics of the draws
      that bound each tail with mass delta' / (4 d)
      (:func:`~skattr.theta._resample.tail_bounds`); the chance beta that any bound is
      wrong is counted in delta = delta' + beta. Because the draws come from
      public data, independently of the private data, a mechanism whose noise
      scale is itself random in this way is (epsilon, delta' + beta)-private.

    References
    ----------
    .. [1]
       %(chen_ohrimenko)s
       Def 3.2, Thm 3.2-3.3.

    Examples
    --------
    A count of 100 records, the share of the group hidden between 0.4 and 0.6:
    disregarding 1% of the mass saves one unit of W.

    >>> import pandas as pd, skattr
    >>> frame = pd.DataFrame({"x1": [1, 0, 1, 1], "x2": [1, 0, 0, 1]})
    >>> kw = dict(query=skattr.Query.count("x1", 1),
    ...           secret=skattr.Secret.proportion("x2", 1, pairs=[(0.4, 0.6)]),
    ...           theta=[[0.3, 0.5]])
    >>> skattr.mechanisms.WassersteinMechanism(**kw).fit(frame).plan(n=100).sensitivity
    5.0
    >>> approx = skattr.mechanisms.ApproximateWassersteinMechanism(delta=0.01, **kw)
    >>> approx.fit(frame).plan(n=100).sensitivity
    4.0
    """

    _parameter_constraints = {
        **_WassersteinFamily._parameter_constraints,
        "delta": [Interval("real", 0, 1, closed="neither")],
    }

    mechanism_name = "approx-wasserstein"

    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=1e-3,
                 calibration="analytic", theta="auto", privacy="dataset",
                 bounds="reference", secure=False, random_state=None,
                 progress="auto"):
        super().__init__(query=query, secret=secret, epsilon=epsilon, delta=delta,
                         calibration=calibration, theta=theta, privacy=privacy,
                         bounds=bounds, secure=secure,
                         random_state=random_state, progress=progress)

    def _certified_delta(self) -> float:
        return self.delta

    def _sensitivity(self, n: int) -> tuple[float, str, tuple]:
        if isinstance(self.theta_spec_, Resample):
            return self._resampled_sensitivity(n)
        if isinstance(self.theta_spec_, NetworkTheta):
            worst = max(wd_closeness(x, x, self.delta, pa, pb)
                        for x, pa, pb in self._network_laws(n))
            return (worst * self.query_.weight(n),
                    "Laplace(W / epsilon), W the least (W, delta)-closeness of "
                    "the exact laws of the count given the secret node's "
                    "parameter, mixtures of binomials over the network (Chen "
                    "Def 3.2, Thm 3.2)", self._count_assumption())
        worst = 0.0
        boxed = False
        for s, theta in zip(self.secrets_, self.theta_, strict=True):
            pairs = self._pairs(s, n)
            if isinstance(theta, ProbabilityBox):
                boxed = True
                bound = count_sensitivity_box(pairs, n, theta.low, theta.high,
                                              privacy=self.privacy)
                worst = max(worst, bound.upper)
                continue
            for (xa, u), (xb, v) in pair_pmfs(theta, pairs, n, privacy=self.privacy):
                worst = max(worst, wd_closeness(xa, xb, self.delta, u, v))
        method = ("Laplace(W / epsilon), W the supremum over the box of the "
                  "infinity-Wasserstein distance between the exact count laws, "
                  "which bounds (W, delta)-closeness" if boxed else
                  "Laplace(W / epsilon), W the least (W, delta)-closeness of the "
                  "exact laws of the count or sum (Chen Def 3.2, Thm 3.2)")
        return worst * self.query_.weight(n), method, self._count_assumption()

    def _ordered_sensitivity(self, n: int, d: int) -> tuple[float, str, tuple]:
        """W from the exact laws of a median or quantiles: no draws, no beta.

        One value: the quantile coupling over the levels [delta/2, 1 -
        delta/2]. Several: a box per law holding all but delta/2 of it, each
        face at an exact tail of mass delta / (4 d) (Chen's remark after Thm
        3.2).
        """
        if d == 1:
            low = self.delta / 2
            worst = self._ordered_gap(n, low, 1 - low)
            how = f"the quantile coupling over levels [{low:.3g}, 1 - {low:.3g}]"
        else:
            tail = self.delta / (4 * d)
            worst = 0.0
            for s, order in zip(self.secrets_, self._order_laws(), strict=True):
                for a, b in self._pairs(s, n):
                    gap = 0.0
                    for j in range(d):
                        la, ua = order.tail_bounds(j, a, n, self.privacy, tail)
                        lb, ub = order.tail_bounds(j, b, n, self.privacy, tail)
                        gap += max(ua - lb, ub - la)
                    worst = max(worst, gap)
            how = (f"boxes holding all but {2 * d * tail:.3g} of each law, "
                   "faces at exact tails")
        return worst, (
            f"Laplace(W / epsilon), W from {how}, read from "
            f"{self._order_method()} (Chen Def 3.2, Thm 3.2); delta = "
            f"{self.delta:.3g} disregarded mass"), (self._resample_assumption(),)

    def _moment_sensitivity(self, n: int, values, delta: float
                            ) -> tuple[float, str, tuple]:
        """W of a mean, sum, count or proportion from moment bounds: no draws."""
        worst, how = 0.0, ""
        for laws, pairs, _ in values:
            w, found = laws.moments.closeness(pairs, n, self.privacy, delta)
            if w >= worst:
                worst, how = w, found
        return worst, (
            f"Laplace(W / epsilon), W from {how}, the law of the statistic under "
            "the resampling model bounded from the groups' reference values "
            f"(Chen Def 3.2, Thm 3.2); delta = {delta:.3g} disregarded "
            "mass"), (self._resample_assumption(),)

    def _resampled_sensitivity(self, n: int) -> tuple[float, str, tuple]:
        values = []
        for s, laws in zip(self.secrets_, self.theta_, strict=True):
            pairs = self._pairs(s, n)
            values.append((laws, pairs, sorted({a for pair in pairs for a in pair})))
        if all(_small_enough(laws.exact_law(a, n, self.privacy), closeness=True)
               for laws, _, points in values for a in points):
            worst = 0.0
            for laws, pairs, _ in values:
                for pair in pairs:
                    (xa, pa), (xb, pb) = (laws.exact_law(a, n, self.privacy)
                                          for a in pair)
                    worst = max(worst, wd_closeness(_points(xa), _points(xb),
                                                    self.delta, pa, pb))
            return (worst, "Laplace(W / epsilon), W the least (W, delta)-closeness "
                    "of the exact laws of every dataset of the resampling model "
                    "(Chen Def 3.2, Thm 3.2)", (self._resample_assumption(),))
        d = len(self.query_.names(self.columns_))
        if self._order_laws() is not None:
            return self._ordered_sensitivity(n, d)
        moments = all(laws.moments is not None for laws, _, _ in values)
        if moments and any(laws.moments.always for laws, _, _ in values):
            return self._moment_sensitivity(n, values, self.delta)
        n_values = sum(len(points) for _, _, points in values)
        # Every secret's laws come from the same Resample: one budget.
        share = values[0][0].failure_share
        disregarded, beta = (1 - share) * self.delta, share * self.delta
        if d == 1:
            # The quantile coupling, all but disregarded/2 of each tail kept:
            # W <= sup |Q_a(u) - Q_b(u)| over those levels, bounded between
            # grid levels by monotonicity of Q. The grid is even in probit
            # scale so the tails, where Q moves fast, are covered finely.
            ends = stats.norm.ppf([disregarded / 2, 1 - disregarded / 2])
            levels = stats.norm.cdf(np.linspace(*ends, _BAND_LEVELS + 1))
            levels[[0, -1]] = disregarded / 2, 1 - disregarded / 2
            failure = beta / (2 * levels.size * n_values)
            tail = disregarded / 2
        else:
            # A box per law holding all but disregarded/2 of it, split over
            # its 2 d faces (Chen's remark after Thm 3.2).
            levels = None
            failure = beta / (2 * d * n_values)
            tail = disregarded / (4 * d)
        m = values[0][0].draws_needed(tail, failure)
        if moments and m * n * n_values > _DRAWN_RECORDS:
            # Draws this large take minutes: the moment bounds take
            # milliseconds.
            return self._moment_sensitivity(n, values, self.delta)
        worst = 0.0
        bar = progress_bar(self.progress, total=m * n_values, unit="dataset",
                           desc=f"{self.mechanism_name}: datasets drawn")
        for laws, pairs, points in values:
            bounds = {}
            for a in points:
                draws = laws.drawn_law(a, n, self.privacy, m, bar=bar)
                bounds[a] = (quantile_bounds(draws, levels, failure)
                             if d == 1 else tail_bounds(draws, tail, failure))
            for a, b in pairs:
                (la, ua), (lb, ub) = bounds[a], bounds[b]
                if d == 1:
                    gap = np.maximum(ua[1:] - lb[:-1], ub[1:] - la[:-1]).max()
                else:
                    gap = np.maximum(ua - lb, ub - la).sum()
                worst = max(worst, float(gap))
        bar.close()
        how = (f"the quantile coupling over levels [{disregarded / 2:.3g}, "
               f"1 - {disregarded / 2:.3g}], quantiles bounded at "
               f"{_BAND_LEVELS + 1} levels" if d == 1 else
               f"boxes holding all but {2 * d * tail:.3g} of each law, faces "
               "bounded")
        method = (f"Laplace(W / epsilon), W from {how} by order statistics of {m} "
                  f"drawn datasets per property value (Chen Thm 3.2 and the "
                  f"remark after it); delta = {disregarded:.3g} disregarded mass "
                  f"+ {beta:.3g} chance the draws misjudge a quantile")
        if moments:
            # The moment bounds at the drawn bound's disregarded mass: the
            # least of two bounds valid at (disregarded, beta) is valid.
            bound, how, _ = self._moment_sensitivity(n, values, disregarded)
            if bound < worst:
                worst, method = bound, how + f" + {beta:.3g} unused for draws"
        exact, how = self._resampled_w_infinity(n)
        if exact is not None and exact < worst:
            # Exact laws too large for closeness still give W_inf, which
            # certifies any delta: the least of two valid bounds is valid
            # (the draws' failure can only matter when theirs is used).
            worst, method = exact, (
                "Laplace(W / epsilon), W the infinity-Wasserstein distance "
                f"between {how}, which bounds (W, delta)-closeness (Chen Thm "
                "3.1-3.2)")
        return worst, method, (self._resample_assumption(),)
