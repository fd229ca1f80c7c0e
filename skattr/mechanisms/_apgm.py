"""The Attribute-Private Gaussian Mechanism (Zhang, Ohrimenko and Cummings)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from skattr._certificate import Assumption, Method, MethodStep, unique
from skattr._query import Query, StackedQuery
from skattr._release import Certificate
from skattr._statistic import Statistic
from skattr.backends import backend_of
from skattr.calibration._coupled import pairs_coupled_variance
from skattr.calibration._exact_noise import exact_required_noise_variance
from skattr.calibration._joint_coupled import joint_gaussian_certificate
from skattr.calibration._pair_noise import (
    covariances_equal,
    pairs_certified,
    required_noise_variance,
)
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._gaussian import PairLaws
from skattr.laws._joint_band import widest_pairs_of
from skattr.mechanisms._keywords_of_0_2 import (
    pair_law_keywords,
    takes_keywords_of_0_2,
)
from skattr.mechanisms._pair_laws import GaussianPairLawMechanism
from skattr.mechanisms._registry import register
from skattr.mechanisms._relaxations import MaxDivergenceGap
from skattr.noise import GaussianNoise
from skattr.theta._band import order_outputs
from skattr.theta._spec import resolve_theta
from skattr.utils._docstrings import fill_doc
from skattr.utils._param_validation import Interval, Options, PositiveNumbers
from skattr.utils._stack import warn_once

__all__ = ["AttributePrivateGaussian"]


#: The widest span (largest over least) of an allocation's sds.
_SPAN = 1e12
#: A value given more than this many times sqrt(K) its noise alone warns.
_LOPSIDED = 10.0


def _shown(allocate) -> str:
    return repr(allocate) if isinstance(allocate, str) else "[...]"


def _kept(allocate):
    """Return a copy of ``allocate`` as fit read it (an array's values, exactly)."""
    if isinstance(allocate, str):
        return allocate
    if isinstance(allocate, dict):
        return pd.Series(allocate, dtype=float)
    if isinstance(allocate, pd.Series):
        return allocate.copy()
    return np.array(allocate, dtype=float, copy=True)


def _same(kept, allocate) -> bool:
    """Whether ``allocate`` is what fit read (``kept``)."""
    if isinstance(kept, str) or isinstance(allocate, str):
        return isinstance(kept, str) and isinstance(allocate, str) and (
            kept == allocate)
    if isinstance(allocate, dict):
        allocate = pd.Series(allocate, dtype=float)
    if isinstance(kept, pd.Series) != isinstance(allocate, pd.Series):
        return False
    if isinstance(kept, pd.Series):
        return kept.equals(allocate)
    return np.array_equal(kept, np.asarray(allocate, dtype=float))


def _in_order(allocate, names: list) -> np.ndarray:
    """Return an allocation's numbers in the release's order of ``names``.

    A dict, or a Series whose index holds the values' names, is read by
    name; any other sequence by position. Its length must be the number of
    values.
    """
    named = isinstance(allocate, dict)
    if named:
        allocate = pd.Series(allocate, dtype=float)
    if isinstance(allocate, pd.Series):
        index = [str(label) for label in allocate.index]
        if sorted(index) == sorted(names) and len(set(index)) == len(index):
            return allocate.set_axis(index).loc[names].to_numpy(dtype=float)
        if named or not isinstance(allocate.index, pd.RangeIndex):
            raise InvalidParameterError(
                f"allocate= is indexed by {index}; name the values "
                f"released ({', '.join(names)}) in its index, or pass a list "
                "in that order.")
    shares = np.asarray(allocate, dtype=float).ravel()
    if shares.size != len(names):
        raise InvalidParameterError(
            f"allocate= gives {shares.size} number(s); this release has "
            f"{len(names)} value(s) ({', '.join(names)}): give one public "
            "positive number per value, in that order.")
    return shares


@fill_doc()
@register
class AttributePrivateGaussian(GaussianPairLawMechanism):
    """Attribute-Private Gaussian Mechanism: Gaussian noise that hides a property.

    Releases a linear statistic F(X) (mean, sum, count or proportion of columns)
    plus N(0, sigma^2 I) noise, with sigma^2 the least variance such that, for
    every discriminative pair of the secret and every theta in Theta, the laws of
    the release given the two secrets are (epsilon, delta)-indistinguishable
    (dataset attribute privacy, Zhang et al. Def. 4). The data's own randomness
    counts: the noise is reduced by the conditional variance of F, and when that
    variance already covers the sensitivity no noise is added.

    Parameters
    ----------
    %(query)s
    %(pair_law_secret)s
    %(epsilon)s
    %(gaussian_delta)s
    %(gaussian_calibration)s
    %(pair_law_theta)s
    %(law)s
        Theorem 1 assumes F given a secret has the same variance for every
        secret. With ``AssumeGaussian(covariances="certify")`` (the default)
        and modelled covariances that differ, the exact privacy profile of
        the two Gaussians certifies the pair (closed form for one statistic,
        a generalised chi-square for several), and ``calibration="classic"``
        is honoured only if its noise certifies; ``"assume-equal"`` takes the
        theorem's assumption, using each side's covariance for both.
    %(max_divergence)s
    allocate : {"error", "relative"} or array-like of shape (n_values,), \
default="error"
        How the noise is shared among several values certified together
        over the reference's bands (the default Theta and law): ``"error"``
        the least expected squared error (sum of the values' variances,
        each value's noise capped at what splitting delta among them would
        give it); ``"relative"`` each value's sd in proportion to its value
        in the reference data (equal relative errors, in the release's
        units: a sum or count scaled to the n released); an array, each
        value's sd in proportion to these public positive numbers (in the
        release's order; a dict or Series keyed by the values' names, such
        as ``height`` or ``height:q0.25``, by name). The guarantee is the
        same; only where the noise goes changes (the plan's method says
        how). One value alone has nothing to share. Other laws
        (``law="gaussian"``, exact laws) add one variance to every value
        and refuse anything but ``"error"``.
    %(theta_bounds)s
    %(secure)s
    %(random_state)s
    %(allow_large_delta)s

    Attributes
    ----------
    %(query_attributes)s
    %(pair_law_fitted)s
    reference_values_ : ndarray of shape (n_values,)
        With ``allocate="relative"``, the statistic computed on the
        (clipped) reference data: the public values the noise follows.
    %(input_attributes)s

    See Also
    --------
    skattr.theta.ExpertTheta : Theta stated by an expert.

    Notes
    -----
    Algorithm 1 of Zhang et al. [1]_: with the sensitivity
    Delta = max_theta max_(a,b) ||E[F | s_a, theta] - E[F | s_b, theta]||_2,
    the noise variance is sigma^2 = (c Delta / epsilon)^2 - min Var(F | s, theta),
    clipped at 0, with c = sqrt(2 ln(1.25/delta)). skattr computes the same
    condition pair by pair and theta by theta: the release's law given s_a is
    N(mu_a, Sigma_a + sigma^2 I), and sigma^2 is the least value for which the
    Mahalanobis distance of every pair is at most epsilon / c (classic) or the
    analytic bound of Balle and Wang [2]_, which never needs more noise than the
    paper's formula and equals it for one statistic and one theta. When the two
    sides of a pair have different covariances (the mixture formulas of
    per-group moments give such), the exact privacy profile of the two
    Gaussians certifies the pair: a closed form for one statistic, and for
    several the law of the privacy loss, a generalised chi-square, inverted
    numerically with its integration error rounded up.

    Theorem 1 assumes F given a secret is Gaussian. skattr never assumes it
    silently: the exact law is used where it exists (counts, integer columns),
    and the Gaussian law only with ``law="gaussian"``, which the release
    records. For means over many records it holds approximately (central limit
    theorem); pass ``relaxation=MaxDivergenceGap(lam, eta)`` to account for
    the approximation (Algorithm 2 of the long version).

    Beyond the paper: under the default Theta, several sums, means and
    counts, and medians, quantiles and stds (a :class:`~skattr.Statistic`),
    are certified over the reference's confidence bands with no model of
    their law. Each value gets its own sd; delta is bounded by the expected
    Gaussian delta of the values' coupled moves, for every dependence
    between them (:mod:`skattr.calibration._joint_coupled`,
    ``docs/population.md``). A median, quantile or std takes no other
    Theta and no ``law=``; trimmed means, regressions and functions are
    refused (the Wasserstein mechanisms release them). For one such value
    alone their Laplace noise is less, so ``mechanism="auto"`` fits apgm
    for several at once only.

    References
    ----------
    .. [1]
       %(zhang_ohrimenko_cummings)s
       Algorithms 1-2, Theorems 1-3.
    .. [2]
       %(balle_wang)s

    Examples
    --------
    >>> import skattr
    >>> from skattr.datasets import make_hospital
    >>> reference = make_hospital(2000, random_state=0)
    >>> private = make_hospital(50, random_state=1)
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> mech = skattr.mechanisms.AttributePrivateGaussian(
    ...     query=skattr.Query.mean(["weight"]), secret=secret,
    ...     epsilon=1.0, delta=1e-3, law="gaussian", random_state=0
    ... ).fit(reference)
    >>> rel = mech.release(private)
    >>> round(rel.sensitivity, 2)   # 0.2 x the groups' weight gap, worst case
    4.23
    >>> round(float(rel.noise_std[0]), 2)
    10.6
    >>> round(mech.leakage(private), 2)  # epsilon of the raw mean, delta = 1e-3
    5.99

    The papers' plug-in Theta (``theta="moments"``) takes the reference's gap as
    the truth, which needs less noise and leaves estimation error uncovered:

    >>> plugin = skattr.mechanisms.AttributePrivateGaussian(
    ...     query=skattr.Query.mean(["weight"]), secret=secret,
    ...     law="gaussian", theta="moments").fit(reference)
    >>> round(plugin.plan(private).sensitivity, 2)
    3.79
    """

    _parameter_constraints = {
        **GaussianPairLawMechanism._parameter_constraints,
        # Medians, quantiles and stds over the reference's bands too.
        "query": [Query, StackedQuery, Statistic, None],
        # Gaussian noise certifies no (epsilon, 0) guarantee.
        "delta": [Interval("real", 0, 1, closed="neither")],
        # Theorem 4.7's extra Laplace noise is the Expected Value family's.
        "relaxation": [MaxDivergenceGap, None],
        "allocate": [Options(frozenset({"error", "relative"})),
                     PositiveNumbers("a list of positive numbers, one per "
                                     "value")],
    }

    mechanism_name = "apgm"
    noise = "gaussian"
    # Medians, quantiles and stds: through the bands' joint certificate only.
    accepts_statistics = True
    calibrates = ("gaussian", "exact", "box")
    # The default Theta's several statistics over the confidence bands,
    # certified jointly through their coupled moves (_joint_coupled_plan).
    _default_kinds = ("bands",)

    @takes_keywords_of_0_2
    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=1e-3,
                 calibration="analytic", theta="auto", law="auto",
                 relaxation=None, allocate="error", bounds="robust",
                 secure=False, random_state=None, allow_large_delta=False,
                 **deprecated):
        self.query = query
        self.secret = secret
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.theta = theta
        self.law, self.relaxation = pair_law_keywords(
            law, relaxation, deprecated, type(self).__name__, wasserstein=False)
        self.allocate = allocate
        self.bounds = bounds
        self.secure = secure
        self.random_state = random_state
        self.allow_large_delta = allow_large_delta

    @classmethod
    def releases_statistic(cls, query) -> bool:
        """Whether apgm releases this Statistic: a median, quantile or std.

        The values the bands' joint law bounds one by one (order and spread
        coordinates, :func:`~skattr.theta._band.order_outputs`); not a
        trimmed mean (certified by its own band law), a regression or a
        function.
        """
        return order_outputs(query, 1) is not None

    @classmethod
    def auto_takes(cls, query, secrets=()) -> bool:
        """Whether ``"auto"`` fits apgm for a median, quantile or std.

        For several values at once: their Gaussian noise, certified jointly,
        gains over the union of per-value tails the Wasserstein mechanisms
        split delta by. For one value their one-column coupling's Laplace
        noise is less (measured on the hospital's weight, n = 50 to 1,000,
        epsilon 0.2 to 20: 1.1x to 12x less expected error for a median, a
        std and a 0.9 quantile), so it is not fitted for nothing. Nor for a
        secret whose pairs nest (a window, sets, pairs inside pairs): the
        values' move laws are then read off a ladder of bounds, about 100
        CPU-s for two quartiles (the Wasserstein mechanisms' 6).
        """
        if not cls.releases_statistic(query) or any(
                _nested(secret) for secret in secrets):
            return False
        columns = getattr(query, "columns", None)
        return columns is None or (
            len(columns) * query.kind.outputs_per_column(query) > 1)

    @property
    def _ordered(self) -> bool:
        """Whether the query is a median, quantile or std (not linear)."""
        return isinstance(self.query, Statistic) and not self.query.is_linear

    def _law_kinds(self) -> tuple:
        # A median, quantile or std: the joint law of its values over the
        # bands, the one law whose certificate holds without a model of it.
        return ("bands",) if self._ordered else super()._law_kinds()

    def _validate_params(self):
        if self._ordered:
            # First: the generic checks would name Thetas and laws a median
            # cannot take.
            self._check_ordered()
        super()._validate_params()

    def _check_ordered(self) -> None:
        """Refuse, before any fit, a non-linear statistic apgm cannot certify.

        Gaussian noise on a median, quantile or std is certified over the
        reference's confidence bands alone (the values' coupled moves,
        :meth:`_joint_coupled_plan`), hiding a proportion: no Gaussian or
        exact law of such a statistic is modelled, and the bands bound no
        other.
        """
        query = self.query
        if not self.releases_statistic(query):
            raise NotCertifiableError(
                f"apgm adds Gaussian noise to means, sums, counts, medians, "
                f"quantiles and stds; Statistic {query.statistic!r} has no "
                "certificate here. Use mechanism='approx-wasserstein' (a "
                "trimmed mean's default), with theta=skattr.theta.Resample() "
                "for a regression or a function.")
        if self.law != "auto":
            raise NotCertifiableError(
                f"apgm certifies a {query.statistic} over the reference's "
                f"confidence bands, with no model of its law; law={self.law!r} "
                "names a model it has none of. Pass law='auto' (the default), "
                "or mechanism='approx-wasserstein'.")
        try:
            kinds = tuple(getattr(resolve_theta(self.theta), "law_kinds", ()))
        except (TypeError, ValueError):
            kinds = ("bands",)    # not a Theta: the generic check says so
        if "bands" not in kinds:
            raise NotCertifiableError(
                f"apgm certifies a {query.statistic} over the reference's "
                f"confidence bands only (theta='auto' or ConfidenceBand()); "
                f"theta={self.theta!r} gives no such law. Use "
                "mechanism='approx-wasserstein' for this Theta.")
        secrets = (self.secret if isinstance(self.secret, (list, tuple))
                   else [self.secret])
        if any(getattr(secret, "property", "proportion") != "proportion"
               for secret in secrets):
            raise NotCertifiableError(
                f"apgm certifies a {query.statistic} over the groups' "
                "confidence bands, for a secret that hides a proportion "
                "(Secret.proportion); a secret of a mean has no such bound. "
                "Pass theta=skattr.theta.Resample() with mechanism="
                "'approx-wasserstein' (the reference's records taken as the "
                "population, recorded).")

    def _fit_theta(self, frame, secrets) -> None:
        super()._fit_theta(frame, secrets)
        self._fit_allocation(frame)

    def _fit_allocation(self, frame) -> None:
        """Check ``allocate=`` against the fitted law; read the reference's values.

        Before any plan. One value alone takes its noise whatever the
        allocation (there is nothing to share). Otherwise anything but
        ``"error"`` needs the bands' joint plan (each value its own sd), an
        array one positive number per value (a dict or Series named by the
        values is read by name), and ``"relative"`` the statistic's values
        on the (clipped) reference, none of them 0; the ratios must span at
        most :data:`_SPAN` (beyond, floating point cannot hold the noise).
        """
        self.__dict__.pop("reference_values_", None)
        allocate = self.allocate
        self._allocate_fitted = _kept(allocate)
        self._shares = None
        if isinstance(allocate, str) and allocate == "error":
            return
        names = self.query_.names(self.columns_)
        k = len(names)
        if not isinstance(allocate, str):
            shares = _in_order(allocate, names)
        if k == 1:
            return
        if self.law_.kind != "bands":
            raise InvalidParameterError(
                f"allocate={_shown(allocate)} shares the noise among values "
                "certified together over the reference's bands (the default "
                f"Theta and law='auto'); this release's law ({self.law_.kind}) "
                "adds one variance to every value. Drop allocate= (--allocate "
                "on the command line), or release with theta='auto' and "
                "law='auto'.")
        if isinstance(allocate, str):
            rows, values = backend_of(frame).statistic(
                frame, self.query_, self.columns_, secrets=self.secrets_,
                what="the reference data")
            values = np.atleast_1d(np.asarray(values, dtype=float)).ravel()
            zero = [name for name, v in zip(names, values, strict=True)
                    if not (np.isfinite(v) and v != 0)]
            if zero:
                raise InvalidParameterError(
                    f"allocate='relative' gives each value noise in "
                    f"proportion to its value in the reference data; "
                    f"{', '.join(zero)} is 0 there (or not a number), so its "
                    "noise would be none. Pass allocate=[...] with a public "
                    "positive scale per value (e.g. each column's spread), or "
                    "allocate='error'.")
            self.reference_values_ = values
            self._reference_rows = int(rows)
            shares = np.abs(values)
        span = float(shares.max() / shares.min())
        if not span <= _SPAN:
            raise InvalidParameterError(
                f"allocate={_shown(allocate)} asks for noise whose sds span "
                f"{span:.3g} times (largest over least), more than "
                f"{_SPAN:.0e}: floating point cannot hold both. Give ratios "
                "closer together, or allocate='error'.")
        self._shares = None if isinstance(allocate, str) else shares

    def _cached_plan(self, n: int):
        # Checked before the plans kept (keyed by the parameters' repr, which
        # may round an array): an allocation set after fit is refused.
        self._check_allocation_fitted()
        return super()._cached_plan(n)

    def _check_allocation_fitted(self) -> None:
        allocate = self.allocate
        if not _same(getattr(self, "_allocate_fitted", "error"), allocate):
            raise InvalidParameterError(
                f"allocate={_shown(allocate)} was set after fit, which checked "
                "and read the reference for another; call fit again.")

    def _allocation(self, n: int) -> tuple[str, np.ndarray | None]:
        """Return (allocate, targets) for the joint certificate at n records.

        The allocation is fit's (checked by :meth:`_cached_plan`, the one
        way to a plan).
        """
        allocate = self.allocate
        if (isinstance(allocate, str) and allocate == "error") or len(
                self.query_.names(self.columns_)) == 1:
            return "error", None
        if self._shares is not None:
            return "relative", self._shares
        values = self.reference_values_
        if self.query_.is_linear:
            # A sum or count at the n released: the reference's per-record
            # total times n w(n) (a mean's or proportion's is its own).
            m = self._reference_rows
            values = values * (n * np.asarray(self.query_.weight(n), float)
                               / (m * np.asarray(self.query_.weight(m), float)))
        return "relative", values

    def _warn_lopsided(self, found, allocate: str) -> None:
        """Warn when an allocation gives a value far more noise than it needs.

        Each value alone at this epsilon and delta needs sd a_j (its own
        coupled law, ``found.alone``); the least-error allocation gives each
        about sqrt(K) a_j. A value given more than ``_LOPSIDED`` sqrt(K) a_j
        takes a share far beyond its moves (a value large beside its spread
        under ``"relative"``), or pays for another's share near 0.
        """
        if allocate == "error":
            return
        scales, alone = found.scales, found.alone
        k = len(scales)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(alone > 0, scales / alone, 0.0)
        worst = int(np.argmax(ratio))
        if ratio[worst] > _LOPSIDED * math.sqrt(k):
            # No figure in the text: said once a call however many epsilons
            # a ledger tries (warn_once).
            names = self.query_.names(self.columns_)
            warn_once(
                f"allocate={_shown(self.allocate)} gives {names[worst]} more "
                f"than {_LOPSIDED:g} sqrt(K) times the noise it needs alone "
                "(the least expected error gives each of the K values about "
                "sqrt(K) times): the allocation's ratios are far from the "
                "values' moves (under 'relative', a value large beside its "
                "spread, such as a temperature in degrees, or another near 0 "
                "that forces the rest up). Pass a public scale per value "
                "(allocate=[...], or a dict by name; describe() takes one per "
                "column, such as reference[columns].std(); on the command "
                "line --allocate error), or allocate='error'.", UserWarning)

    def _required_variance(self, laws: PairLaws
                           ) -> tuple[np.ndarray, MethodStep]:
        """Each pair's least isotropic variance, honouring ``calibration``.

        With unequal covariances the exact profile certifies; the classic
        constant (a Gaussian shift's calibration) is kept only when its noise,
        found on each side's covariance taken for both, certifies every pair
        by that profile, and refused otherwise.
        """
        if self.calibration != "classic" or covariances_equal(laws):
            return required_noise_variance(laws, self.epsilon, self.delta,
                                           self.calibration)
        classic, _ = required_noise_variance(laws.equalised(), self.epsilon,
                                             self.delta, "classic")
        m = laws.mean_diff.shape[0]
        classic = np.maximum(classic[:m], classic[m:])
        k = laws.mean_diff.shape[1]
        if pairs_certified(laws, float(classic.max(initial=0.0)) * np.eye(k),
                           self.epsilon, self.delta, "analytic").all():
            return classic, MethodStep.of("gaussian.classic-checked")
        self._refuse_replaced_classic(laws)

    def _plan(self, n: int) -> tuple[GaussianNoise, Certificate]:
        if self.law_.kind == "bands":
            return self._joint_coupled_plan(n)
        if self.law_.coupled:
            return self._coupled_plan(n)
        per_secret, notes = [], []
        for laws in self._laws(n):
            laws, note = self._prepare(laws)
            per_secret.append(laws)
            notes += note
        variance = 0.0
        methods = []
        if self._exact_law() is not None:
            variance = exact_required_noise_variance(
                self._exact_pairs(n), self.epsilon, self.delta)
            methods.append(MethodStep.of("exact-laws.gaussian-noise"))
        else:
            for laws in per_secret:
                required, method = self._required_variance(laws)
                methods.append(method)
                per_theta = self._per_theta(laws, required)
                variance = max(variance, float(per_theta.max(initial=0.0)))
        laws = PairLaws.concatenate(per_secret)
        k = len(self.columns_)
        cov = variance * np.eye(k)
        epsilon = self.epsilon
        delta, note = self._stated_delta(laws, cov, self.delta)
        assumptions = list(laws.assumptions) + list(unique(notes))
        assumptions += self._law_assumptions(n, variance == 0.0)
        method = Method(unique(methods))
        if note is not None:
            method = method.then(note)
        if self.relaxation is not None:
            _, epsilon, delta, method, assumed = self.relaxation.apply(
                None, epsilon, delta, method)
            assumptions.append(assumed)
        return GaussianNoise(cov), Certificate(
            epsilon=epsilon, delta=delta, sensitivity=laws.sensitivity,
            inherent_variance=laws.min_variance, certified_by=method,
            assumed=tuple(assumptions),
        )

    def _coupled_plan(self, n: int) -> tuple[GaussianNoise, Certificate]:
        """Gaussian noise for a box of count laws, through the swap coupling.

        delta is at most the expected Gaussian delta of the coupled distance
        (:mod:`skattr.calibration._coupled`); the data's own variance is not
        counted on (it may vanish at a corner of the box).
        """
        per_pair = self._coupled(n)
        variance = pairs_coupled_variance(per_pair, self.epsilon, self.delta)
        method = Method((self.law_.coupling_step(per_pair),))
        assumptions = self._law_assumptions(n, variance == 0.0)
        epsilon, delta = self.epsilon, self.delta
        if self.relaxation is not None:
            _, epsilon, delta, method, assumed = self.relaxation.apply(
                None, epsilon, delta, method)
            assumptions.append(assumed)
        k = len(self.columns_)
        return GaussianNoise(variance * np.eye(k)), Certificate(
            epsilon=epsilon, delta=delta,
            sensitivity=max(min(law.largest for law in laws)
                            for laws in per_pair),
            inherent_variance=(0.0,) * k, certified_by=method,
            assumed=tuple(assumptions))

    def _joint_coupled_plan(self, n: int) -> tuple[GaussianNoise, Certificate]:
        """Gaussian noise on several statistics over the bands, certified jointly.

        Each value gets its own sd: delta is at most the expected Gaussian
        delta of the coupled move's Mahalanobis length, bounded for every
        dependence between the values' moves from each one's law
        (:mod:`skattr.calibration._joint_coupled`), the sds the least total
        variance its bounded search finds.
        """
        per_pair = self.law_.coupled_distances(n, "dataset")
        allocate, targets = self._allocation(n)
        found = joint_gaussian_certificate(per_pair, self.epsilon, self.delta,
                                           allocate=allocate, targets=targets)
        self._warn_lopsided(found, allocate)
        k = len(found.scales)
        steps = [MethodStep.of("joint-coupled", statistics=k,
                               noise="Gaussian", bound=found.bound)]
        if allocate != "error":
            steps.append(MethodStep.of("noise.allocated", by=(
                "reference" if isinstance(self.allocate, str) else "given")))
        method = Method(tuple(steps))
        # What the bands' coupling assumes (the law's own, as its closeness
        # records them): records independent given the group, each drawn
        # from its group's law in the population.
        assumptions = [Assumption.of("records.independent",
                                     reads="population", privacy="dataset"),
                       *self.law_.assumptions]
        epsilon, delta = self.epsilon, self.delta
        if self.relaxation is not None:
            _, epsilon, delta, method, assumed = self.relaxation.apply(
                None, epsilon, delta, method)
            assumptions.append(assumed)
        largest = self.law_.largest(n, "dataset")
        variances = found.scales ** 2
        tiny = (found.scales > 0) & (variances == 0)
        if np.any(tiny):
            # Fail closed: an sd below 1e-154 squares to 0, which would
            # release the values bare.
            raise NotCertifiableError(
                f"Gaussian noise of sd {float(found.scales[tiny].min()):.3g} "
                "certifies this release: its variance is below floating "
                "point's least, and would be no noise. Declare a clipping "
                "range in the column's own units (bounds={column: (low, "
                "high)}), or rescale the column.")
        return GaussianNoise(np.diag(variances)), Certificate(
            epsilon=epsilon, delta=delta,
            sensitivity=float(np.sqrt(np.sum(largest ** 2))),
            inherent_variance=(0.0,) * k, certified_by=method,
            assumed=tuple(assumptions))


def _nested(secret) -> bool:
    """Whether a secret's pairs nest: a window, sets, or a pair inside a pair.

    The test the joint law's move laws make (``widest_pairs_of``'s inner
    pairs send them to the ladder of bounds), on the stated pairs.
    """
    if getattr(secret, "window", None) is not None or getattr(
            secret, "sets", None) is not None:
        return True
    pairs = [tuple(map(float, p)) for p in (getattr(secret, "pairs", None) or ())]
    return any(inner for _, _, inner in widest_pairs_of(pairs))

