"""The Wasserstein and Approximate Wasserstein Mechanisms: Laplace noise W / epsilon."""

from __future__ import annotations

import numpy as np
import pandas as pd

from skattr._certificate import Method, MethodStep, unique
from skattr._query import Query, StackedQuery
from skattr._release import Certificate
from skattr._statistic import Statistic
from skattr.calibration._joint_coupled import joint_laplace_certificate
from skattr.exceptions import NotCertifiableError
from skattr.laws import SumLaws
from skattr.mechanisms._base import BaseMechanism
from skattr.mechanisms._keywords_of_0_2 import (
    takes_keywords_of_0_2,
    unused_keywords_of_0_2,
)
from skattr.mechanisms._registry import register
from skattr.noise import LaplaceNoise
from skattr.theta._protocol import GivesLaw
from skattr.theta._request import LawRequest
from skattr.theta._spec import resolve_theta
from skattr.utils._docstrings import fill_doc
from skattr.utils._param_validation import Interval, Options
from skattr.utils._progress import PROGRESS_CONSTRAINT, PROGRESS_DOC

__all__ = ["ApproximateWassersteinMechanism", "WassersteinMechanism"]

_SECRET = """
    secret : Secret or list of Secret
        Proportion secrets; under dataset privacy pairs are read on the grid
        k / n (:meth:`~skattr.Secret.grid_pairs`).
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
    theta_spec_ : object
        What ``theta`` names (the spec that fitted the law).
    law_ : StatisticLaw
        The law of F the noise is calibrated to: an
        :class:`~skattr.laws.ExactLaw` (count probabilities or sum laws), a
        :class:`~skattr.laws.BoxLaw`, a :class:`~skattr.laws.NetworkLaw` or
        a :class:`~skattr.laws.ResamplingLaw`.
    %(input_attributes)s
    """

_fill_doc = fill_doc(secret=_SECRET, theta=_THETA,
                     privacy=_PRIVACY, attributes=_ATTRIBUTES,
                     progress=PROGRESS_DOC)


class _WassersteinFamily(BaseMechanism):
    """What the two Wasserstein Mechanisms share: Theta, pairs and the Plan."""

    # No calibration (Laplace noise); delta only for the approximate mechanism.
    _parameter_constraints = {
        **{k: v for k, v in BaseMechanism._parameter_constraints.items()
           if k not in ("calibration", "delta", "allow_large_delta")},
        "query": [Query, StackedQuery, Statistic, None],
        # Stated values (count probabilities, SumLaws) or a Theta spec by
        # what it answers (skattr.theta.ThetaSpec), giving a law of a kind
        # these mechanisms calibrate.
        "theta": [Options(frozenset({"auto", "moments"})), list, tuple, np.ndarray,
                  SumLaws, GivesLaw(("exact", "box", "bands", "network",
                                     "resampling"))],
        "privacy": [Options(frozenset({"dataset", "distributional"}))],
        "progress": PROGRESS_CONSTRAINT,
    }

    accepts_statistics = True
    calibrates = ("exact", "box", "bands", "network", "resampling")
    noise = "laplace"
    _unused_of_0_2 = {"calibration": "analytic", "delta": 0.0}

    @property
    def _reads_pairs_on_grid(self) -> bool:
        return self.privacy == "dataset"

    def set_params(self, **params):
        """Set parameters; 0.2's keywords that did nothing warn (until 0.4)."""
        old = {k: params.pop(k) for k in list(params) if k in self._unused_of_0_2}
        unused_keywords_of_0_2(old, type(self).__name__, self._unused_of_0_2)
        return super().set_params(**params)

    @takes_keywords_of_0_2
    def __init__(self, *, query=None, secret=None, epsilon=1.0, theta="auto",
                 privacy="dataset", bounds="robust", secure=False,
                 random_state=None, progress="auto", **deprecated):
        # 0.2 took calibration= (and, for the exact mechanism, delta=) for a
        # uniform interface; Laplace noise certifying delta = 0 uses neither.
        unused_keywords_of_0_2(deprecated, type(self).__name__,
                               self._unused_of_0_2)
        self.query = query
        self.secret = secret
        self.epsilon = epsilon
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
    def _fit_theta(self, frame: pd.DataFrame, secrets) -> None:
        # The name given to theta= becomes its spec object once, here; it
        # gives the law of F of a kind these mechanisms calibrate. The
        # mechanism's random_state seeds its noise, never the fit (a Theta
        # that draws records takes its own random_state).
        spec = self.theta_spec_ = resolve_theta(self.theta, ("auto", "moments"))
        self.law_ = LawRequest(
            frame=frame, query=self.query_, columns=self.columns_,
            secrets=tuple(secrets), kinds=self.calibrates,
            privacy=self.privacy, ranges=self.clipping_.ranges).fit(spec)

    def _theta_description(self) -> str:
        return self.law_.description

    # ------------------------------------------------------------ certificate
    def _sensitivity(self, n: int) -> tuple[float, Method, tuple]:
        """W (largest over pairs and Theta), how it was found, what it assumes."""
        bound = self._bound(n)
        # What Theta assumes (theta="moments": the plug-in fit taken as the
        # population's), then what the bound does.
        assumed = unique((*self.law_.assumptions, *bound.assumptions))
        return bound.value, Method.of("wasserstein", bound=bound.how), assumed

    def _bound(self, n: int):
        raise NotImplementedError

    def _certified_delta(self) -> float:
        return 0.0

    def _plan(self, n: int) -> tuple[LaplaceNoise, Certificate]:
        w, method, assumptions = self._sensitivity(n)
        k = len(self.query_.names(self.columns_))
        scale = np.asarray(w, dtype=float) / self.epsilon
        if not np.all(np.isfinite(scale)):
            raise NotCertifiableError(
                "The Wasserstein distance is not finite; no Laplace scale "
                "certifies this release.")
        # One W for every statistic, or (several statistics over confidence
        # bands) each its own, in its own units.
        noise = (LaplaceNoise.on_each(float(scale), k) if scale.ndim == 0
                 else LaplaceNoise.per_statistic(scale))
        return noise, Certificate(
            epsilon=self.epsilon, delta=self._certified_delta(),
            calibration="laplace", sensitivity=float(np.max(w)),
            certified_by=method,
            assumed=assumptions,
            guarantee=("distributional attribute privacy"
                       if self.privacy == "distributional" else
                       "attribute privacy"))


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

    def _bound(self, n: int):
        return self.law_.w_infinity(n, self.privacy)


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
    %(theta)s
    %(privacy)s
    %(theta_bounds)s
    %(secure)s
    %(random_state)s
    %(progress)s
    %(allow_large_delta)s

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
      (:func:`~skattr.laws._draws.tail_bounds`); the chance beta that any bound is
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
    disregarding 0.5% of the mass saves one unit of W (a delta below 1/n:
    at 1/n or more the plan warns).

    >>> import pandas as pd, skattr
    >>> frame = pd.DataFrame({"x1": [1, 0, 1, 1], "x2": [1, 0, 0, 1]})
    >>> kw = dict(query=skattr.Query.count("x1", 1),
    ...           secret=skattr.Secret.proportion("x2", 1, pairs=[(0.4, 0.6)]),
    ...           theta=[[0.3, 0.5]])
    >>> skattr.mechanisms.WassersteinMechanism(**kw).fit(frame).plan(n=100).sensitivity
    5.0
    >>> approx = skattr.mechanisms.ApproximateWassersteinMechanism(delta=0.005, **kw)
    >>> approx.fit(frame).plan(n=100).sensitivity
    4.0
    """

    _parameter_constraints = {
        **_WassersteinFamily._parameter_constraints,
        "delta": [Interval("real", 0, 1, closed="neither")],
        "allow_large_delta": BaseMechanism._parameter_constraints[
            "allow_large_delta"],
    }

    mechanism_name = "approx-wasserstein"
    _unused_of_0_2 = {"calibration": "analytic"}

    @takes_keywords_of_0_2
    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=1e-3,
                 theta="auto", privacy="dataset", bounds="robust",
                 secure=False, random_state=None, progress="auto",
                 allow_large_delta=False, **deprecated):
        super().__init__(query=query, secret=secret, epsilon=epsilon,
                         theta=theta, privacy=privacy, bounds=bounds,
                         secure=secure, random_state=random_state,
                         progress=progress, **deprecated)
        self.delta = delta
        self.allow_large_delta = allow_large_delta

    def _certified_delta(self) -> float:
        return self.delta

    def _bound(self, n: int):
        return self.law_.closeness(n, self.privacy, self.delta,
                                   progress=self.progress,
                                   label=self.mechanism_name)

    def _plan(self, n: int) -> tuple[LaplaceNoise, Certificate]:
        """Laplace(W_j / epsilon), or per-value scales certified jointly.

        Several sums, means, counts or trimmed means over the confidence
        bands (a law of kind "bands"): besides each value's W_j at delta / K
        with scale K W_j / epsilon, scales certified for every dependence
        between the values' coupled moves
        (:func:`~skattr.calibration._joint_coupled.joint_laplace_certificate`);
        the noise of the smaller expected error is taken (both certify).
        """
        noise, certificate = super()._plan(n)
        # Sums, means, counts and trimmed means only: the move laws of
        # quantiles (the count bound's chances at every distance) and stds
        # (their bound on a ladder of chances) cost seconds a plan (two
        # stds: 0.44 -> 9.5 CPU-s), and a ledger or describe() plans a
        # release a dozen times (a 3.8 s describe() took 44 s). One value
        # alone (a ledger's median, planned under its records' coupling)
        # is one move law, cached on the law across the plans.
        if self.law_.kind != "bands" or (len(self.law_.outputs) > 1 and any(
                kind not in ("linear", "monotone")
                for _, kind, _ in self.law_.outputs)):
            return noise, certificate
        try:
            found = joint_laplace_certificate(
                self.law_.coupled_distances(n, self.privacy), self.epsilon,
                self.delta)
        except NotCertifiableError:
            # The values' own bounds still certify (a union over them).
            return noise, certificate
        joint = LaplaceNoise.per_statistic(found.scales)
        if not joint.expected_norm() < noise.expected_norm():
            return noise, certificate
        k = len(found.scales)
        largest = self.law_.largest(n, self.privacy)
        return joint, Certificate(
            epsilon=self.epsilon, delta=self.delta, calibration="laplace",
            sensitivity=float(np.sum(largest)),
            certified_by=Method((MethodStep.of(
                "joint-coupled", statistics=k, noise="Laplace",
                bound=found.bound),)),
            assumed=certificate.assumed, guarantee=certificate.guarantee)
