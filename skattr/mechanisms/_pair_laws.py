"""Mechanisms calibrated to the laws of F on both sides of every pair."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from skattr._certificate import Assumption, MethodStep, unique
from skattr.calibration._coupled import (
    pairs_coupled_delta,
    pairs_coupled_epsilon,
)
from skattr.calibration._exact_noise import exact_leakage, exact_pairs_delta
from skattr.calibration._pair_noise import (
    covariances_equal,
    max_covariance_gap,
    pairs_certified,
    pairs_delta,
    raw_leakage_epsilon,
    required_noise_variance,
)
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws import AssumeGaussian, ExactLaw, PairLaws
from skattr.mechanisms._base import BaseMechanism
from skattr.mechanisms._keywords_of_0_2 import (
    LAW_KEYWORDS,
    RELAXATION_KEYWORDS,
    RefusedKeywords,
    pair_law_keywords,
)
from skattr.mechanisms._relaxations import WassersteinGap
from skattr.theta._protocol import GivesLaw
from skattr.theta._request import LawRequest, LawUnavailable
from skattr.theta._spec import resolve_theta
from skattr.utils._param_validation import Options

__all__ = ["GaussianPairLawMechanism"]

class GaussianPairLawMechanism(BaseMechanism):
    """Base of the mechanisms calibrated to the pair laws of a fitted Theta.

    ``fit`` asks Theta for the law of F (``law_``: a
    :class:`~skattr.laws.GaussianLaw`, or an :class:`~skattr.laws.ExactLaw`
    with its moments); ``_laws(n)`` gives the Gaussian laws of F on both
    sides of every discriminative pair, ``_exact_pairs(n)`` the exact pmfs,
    which each subclass turns into a noise law in ``_plan``: the
    Attribute-Private Gaussian Mechanism and Chen and Ohrimenko's Expected
    Value family.
    """

    _reads_dask_reference = True
    calibrates = ("gaussian", "exact")
    #: Kinds of law the default Theta may give besides ``calibrates`` (apgm:
    #: several statistics' bands, and a median's, quantile's or std's);
    #: a ``theta=`` spec giving one is taken too (``ConfidenceBand``).
    _default_kinds: tuple = ()
    # Dataset privacy: a share of the n records at hand, on the grid k / n.
    _reads_pairs_on_grid = True

    _parameter_constraints = {
        **BaseMechanism._parameter_constraints,
        # A Theta spec by what it answers (skattr.theta.ThetaSpec), giving
        # a law of a kind the pair-law mechanisms calibrate.
        "theta": [Options(frozenset({"auto", "moments", "gaussian"})),
                  GivesLaw(calibrates)],
        "law": [Options(frozenset({"auto", "exact", "gaussian"})), AssumeGaussian],
    }

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # theta= is taken when its spec gives a kind of law this class
        # calibrates: the constraint follows ``calibrates``, its one source
        # (apgm adds boxes; the Laplace Expected Value mechanisms take
        # Gaussian laws only).
        cls._parameter_constraints = {
            **cls._parameter_constraints,
            "theta": [GivesLaw((*cls.calibrates, *cls._default_kinds))
                      if isinstance(c, GivesLaw) else c
                      for c in cls._parameter_constraints["theta"]]}

    @property
    def _gaussian(self) -> AssumeGaussian | None:
        """The Gaussian model ``law=`` takes (``"gaussian"``: its defaults), or None."""
        if isinstance(self.law, AssumeGaussian):
            return self.law
        return AssumeGaussian() if self.law == "gaussian" else None

    def set_params(self, **params):
        """Set parameters; 0.2's keywords fold into law= and relaxation= (to 0.4)."""
        old = {k: params.pop(k) for k in list(params)
               if k in LAW_KEYWORDS or k in RELAXATION_KEYWORDS}
        if old:
            # Each old keyword changes its field of the current value, as in
            # 0.2; with law= or relaxation= given too, they must agree.
            params["law"], params["relaxation"] = pair_law_keywords(
                params.get("law", self.law),
                params.get("relaxation", self.relaxation), old,
                type(self).__name__,
                wasserstein=WassersteinGap in self._parameter_constraints.get(
                    "relaxation", ()),
                update="law" not in params and "relaxation" not in params)
        return super().set_params(**params)

    def _validate_params(self):
        # 0.2's keywords, when they name no value of 0.3, first.
        for name in ("law", "relaxation"):
            if isinstance(getattr(self, name), RefusedKeywords):
                raise InvalidParameterError(getattr(self, name).message)
        super()._validate_params()

    def _per_theta(self, laws: PairLaws, required: np.ndarray,
                   what: str = "required noise variance") -> np.ndarray:
        """Reduce a per-pair requirement to one per theta; check expert grids.

        For Theta stated as parameter ranges (``ExpertTheta.from_ranges``) the
        worst case over the grid is the supremum over the ranges only if the
        requirement peaks at an end of every grid line; otherwise this refuses.
        """
        return self.law_.per_theta(laws, required, what)

    def _coupled(self, n: int, delta: float | None = None):
        """Per pair, the coupled distance laws of a box law of F, else None.

        A count's default Theta is the reference's confidence box
        (:class:`~skattr.theta.ConfidenceBox`), whose laws are certified
        through the swap coupling (:meth:`~skattr.laws.BoxLaw.coupled_distances`),
        read at ``delta`` (the mechanism's when None).
        """
        if not self.law_.coupled:
            return None
        return self.law_.coupled_distances(
            n, "dataset", delta=self.delta if delta is None else delta)

    def _exact_law(self) -> ExactLaw | None:
        """Return the exact law when F's law is exact, else None (Gaussian)."""
        return self.law_ if isinstance(self.law_, ExactLaw) else None

    def _prepared_laws(self, n: int) -> tuple[list[PairLaws], list[Assumption]]:
        """Each secret's pair laws after the ``covariances`` choice, grid-checked.

        On an expert grid, the quantities the mechanisms' noise grows with are
        checked: the l1 and l2 sensitivities and the Attribute-Private Gaussian
        Mechanism's noise variance (which also counts the data's own variance).
        """
        per_secret, notes = [], []
        for laws in self._laws(n):
            laws, note = self._prepare(laws)
            if getattr(self.law_, "grid", None) is not None:
                for order, name in ((1, "l1 sensitivity"), (2, "l2 sensitivity")):
                    self._per_theta(laws, np.linalg.norm(laws.mean_diff, order,
                                                         axis=1), name)
                required, _ = required_noise_variance(laws, self.epsilon,
                                                      max(self.delta, 1e-12),
                                                      self.calibration)
                self._per_theta(laws, required)
            per_secret.append(laws)
            notes += note
        return per_secret, list(unique(notes))

    def _prepare(self, laws: PairLaws) -> tuple[PairLaws, list[Assumption]]:
        """Apply the ``covariances`` choice to the pairs' laws.

        With "assume-equal" and covariances that differ, each side's covariance is
        taken for both (the papers' translation assumption) and the assumption is
        recorded with the size of the difference.
        """
        model = self._gaussian
        if (model is None or model.covariances != "assume-equal"
                or covariances_equal(laws)):
            return laws, []
        return laws.equalised(), [
            Assumption.of("covariances.equal", gap=max_covariance_gap(laws))]

    def _fit_theta(self, frame, secrets) -> None:
        # The name given to theta= becomes its spec object once, here; the
        # spec gives the law of F (skattr.theta._spec).
        spec = self.theta_spec_ = resolve_theta(self.theta)
        request = LawRequest(
            frame=frame, query=self.query_, columns=self.columns_,
            secrets=tuple(secrets), moments=True,
            ranges=self.clipping_.ranges,
            sampling=(self._gaussian or AssumeGaussian()).sampling,
            kinds=self._law_kinds())
        try:
            self.law_ = request.fit(spec)
        except LawUnavailable as why:
            alternative = (
                "pass law='gaussian' to take F(X) given each secret as Gaussian "
                "with the modelled moments (an assumption the release records), "
                "or use mechanism='approx-wasserstein', certified from the "
                "resampled laws of the statistic.")
            refusal = NotCertifiableError(
                f"The exact law of this statistic is not available ({why}). "
                + ("To release it, " if self.law == "exact" else
                   "skattr does not assume the statistic is Gaussian unless "
                   "asked; to release it, ") + alternative)
            # "auto" states this reason in one line: a model to opt into.
            refusal.needs_model = self.law != "exact"
            raise refusal from None
        if self.law_.kind not in (*self.calibrates, *self._default_kinds):
            raise self._uncalibrated()

    def _law_kinds(self) -> tuple:
        """Return the kinds of law of F asked of Theta, in this class's order.

        law="gaussian" takes no exact law, so none is looked for (it would
        read the records' values).
        """
        if self._gaussian is not None:
            return ("gaussian",)
        return tuple(k for k in (*self.calibrates, *self._default_kinds)
                     if k != "gaussian")

    def _uncalibrated(self) -> NotCertifiableError:
        """Return the refusal of a law of a kind this mechanism does not calibrate."""
        return NotCertifiableError(
            f"{type(self).__name__} calibrates {' or '.join(self.calibrates)} "
            f"laws of F; Theta gave a {self.law_.kind} law.")

    def _laws(self, n: int) -> list[PairLaws]:
        return self.law_.pair_laws(n)

    def _exact_pairs(self, n: int) -> list[tuple]:
        """Return the exact laws (x_a, p_a, x_b, p_b) of F on both sides of pairs."""
        return self._exact_law().exact_pairs(n)

    def _law_assumptions(self, n: int, noiseless: bool) -> list[Assumption]:
        """Return what the chosen law of F assumes; refuse what it cannot certify.

        The law refuses a noiseless release of too few records
        (:meth:`~skattr.laws.StatisticLaw.check_noiseless`).
        """
        if noiseless:
            self.law_.check_noiseless(n)
        return list(self.law_.assumptions) + [self.law_.statement]

    def _refuse_replaced_classic(self, laws: PairLaws) -> None:
        """Refuse calibration="classic" when its noise would be replaced.

        The classic constant calibrates a Gaussian shift (equal covariances).
        With unequal ones, noise that the constant does not certify would be
        set by the exact privacy profile instead: the calibration asked for
        would be silently replaced.
        """
        if self.calibration != "classic":
            return
        raise NotCertifiableError(
            f"calibration='classic' calibrates a Gaussian shift (equal "
            f"covariances), but the two secrets' covariances differ by up to "
            f"{max_covariance_gap(laws):.2%} and the classic noise of "
            f"{self.mechanism_name} does not certify them: it would have to be "
            "replaced by noise certified by the exact privacy profile, which is "
            "what calibration='analytic' does (exact for every epsilon). Pass "
            "calibration='analytic', or law=AssumeGaussian(covariances="
            "'assume-equal') to take the papers' translation assumption "
            "explicitly.")

    def _stated_delta(self, laws: PairLaws, noise_cov: np.ndarray,
                      delta: float) -> tuple[float, MethodStep | None]:
        """Return the delta to state: what the noise achieves, for classic noise.

        The classic constant is proven for epsilon < 1 only; above, its noise
        can fall short of the requested delta. The release then states the
        delta the noise really achieves at epsilon (exact profile), never the
        requested one, and says so (None when the requested one holds).
        """
        if self.calibration != "classic" or self._exact_law() is not None:
            return delta, None
        achieved = pairs_delta(laws, noise_cov, self.epsilon)
        if achieved <= delta:
            return delta, None
        return achieved, MethodStep.of("classic.achieved-delta",
                                       achieved=achieved, epsilon=self.epsilon,
                                       requested=delta)

    def _theta_description(self) -> str:
        return self.law_.description

    def leakage(self, X=None, *, n: int | None = None, delta: float | None = None
                ) -> float:
        """Epsilon, at ``delta``, of releasing the raw statistic with no noise.

        The inherent leakage of F(X) under Theta: the least epsilon for which
        the laws of F given the two secrets of every pair are
        (epsilon, delta)-indistinguishable. Only n = len(X) is used. It is
        exact, not a bound: the analytic formula for equal covariances, the
        exact privacy profile of two Gaussians for unequal ones (inverted
        numerically, its integration error rounded up, so within a relative
        1e-9 above the true epsilon), or the exact laws' profile.

        Parameters
        ----------
        X : DataFrame or array-like, optional
            The private data (only its size is used).
        n : int, optional
            The number of records, instead of X.
        delta : float, optional
            Defaults to the mechanism's ``delta``.

        Returns
        -------
        float
            The epsilon; ``inf`` when no epsilon bounds it (a statistic that
            determines the secret).
        """
        check_is_fitted(self)
        if n is None:
            if X is None:
                raise InvalidParameterError("leakage needs the private data X or n=.")
            frame, backend = self._private_frame(X)
            n = backend.row_count(frame, what="the private data")
        self._validate_params()
        delta = self.delta if delta is None else delta
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not (
                0 < delta < 1):
            raise InvalidParameterError(
                f"delta must be in (0, 1) for a leakage; got {delta!r}.")
        per_pair = self._coupled(int(n), delta)
        if per_pair is not None:
            return pairs_coupled_epsilon(per_pair, 0.0, delta)
        if self._exact_law() is not None:
            return exact_leakage(self._exact_pairs(int(n)), delta)
        return float(max(raw_leakage_epsilon(self._prepare(laws)[0], delta).max(
            initial=0.0) for laws in self._laws(int(n))))

    def noiseless_certified(self, X=None, *, n: int | None = None) -> bool:
        """Whether releasing F(X) with no noise at all is (epsilon, delta)-private.

        Chen and Ohrimenko's Theorem 4.4: with equal covariances, every pair's
        Mahalanobis distance (mu_a - mu_b)^T Sigma^-1 (mu_a - mu_b) must be at most
        (epsilon / c)^2 (``calibration="classic"``) or the analytic bound. With
        unequal covariances, the theorem generalised: the exact privacy profile
        of the two Gaussians decides; with ``law="exact"``, the exact laws.
        The Gaussian law never certifies fewer than 30 records without
        noise. Only n = len(X) is used.
        """
        check_is_fitted(self)
        if n is None:
            if X is None:
                raise InvalidParameterError(
                    "noiseless_certified needs the private data X or n=.")
            frame, backend = self._private_frame(X)
            n = backend.row_count(frame, what="the private data")
        self._validate_params()
        try:
            self.law_.check_noiseless(int(n))
        except NotCertifiableError:
            return False
        per_pair = self._coupled(int(n))
        if per_pair is not None:
            return pairs_coupled_delta(per_pair, 0.0, self.epsilon) <= self.delta
        if self._exact_law() is not None:
            return exact_pairs_delta(self._exact_pairs(int(n)), 0.0,
                                     self.epsilon) <= self.delta
        k = len(self.columns_)
        return all(bool(pairs_certified(self._prepare(laws)[0], np.zeros((k, k)),
                                        self.epsilon, self.delta,
                                        self.calibration).all())
                   for laws in self._laws(int(n)))
