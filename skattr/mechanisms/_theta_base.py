"""Mechanisms whose noise is calibrated to the laws of F under Theta."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from skattr._gaussian_noise import (
    covariances_equal,
    max_covariance_gap,
    pairs_certified,
    raw_leakage_epsilon,
    required_noise_variance,
)
from skattr._pairs import PairLaws, pair_laws
from skattr.exceptions import InvalidParameterError
from skattr.mechanisms._base import BaseMechanism
from skattr.theta import (
    Bootstrap,
    ExpertTheta,
    MonteCarlo,
    fit_group_moments,
    fit_joint_gaussian,
)
from skattr.utils._param_validation import Options

__all__ = ["ThetaMechanism"]


class ThetaMechanism(BaseMechanism):
    """Base of the mechanisms that fit Theta and calibrate to the pairs' laws.

    ``fit`` learns one list of models per secret (``theta_``); ``_laws(n)`` gives
    the Gaussian laws of F on both sides of every discriminative pair, which each
    subclass turns into a noise law in ``_plan``.
    """

    _parameter_constraints = {
        **BaseMechanism._parameter_constraints,
        "theta": [Options(frozenset({"moments", "gaussian"})), ExpertTheta,
                  MonteCarlo, Bootstrap],
        "sampling": [Options(frozenset({"without-replacement", "with-replacement"}))],
        "covariances": [Options(frozenset({"certify", "assume-equal"}))],
    }

    def _per_theta(self, laws: PairLaws, required: np.ndarray,
                   what: str = "required noise variance") -> np.ndarray:
        """Reduce a per-pair requirement to one per theta; check expert grids.

        For Theta stated as parameter ranges (``ExpertTheta.from_ranges``) the
        worst case over the grid is the supremum over the ranges only if the
        requirement peaks at an end of every grid line; otherwise this refuses.
        """
        per_theta = np.zeros(laws.n_theta)
        np.maximum.at(per_theta, laws.theta_index, required)
        if isinstance(self.theta, ExpertTheta):
            self.theta.check_worst_case_on_grid(per_theta, what)
        return per_theta

    def _prepared_laws(self, n: int) -> tuple[list[PairLaws], list[str]]:
        """Each secret's pair laws after the ``covariances`` choice, grid-checked.

        On an expert grid, the quantities the mechanisms' noise grows with are
        checked: the l1 and l2 sensitivities and the Attribute-Private Gaussian
        Mechanism's noise variance (which also counts the data's own variance).
        """
        per_secret, notes = [], []
        for laws in self._laws(n):
            laws, note = self._prepare(laws)
            if isinstance(self.theta, ExpertTheta):
                for order, name in ((1, "l1 sensitivity"), (2, "l2 sensitivity")):
                    self._per_theta(laws, np.linalg.norm(laws.mean_diff, order,
                                                         axis=1), name)
                required, _ = required_noise_variance(laws, self.epsilon,
                                                      max(self.delta, 1e-12),
                                                      self.calibration)
                self._per_theta(laws, required)
            per_secret.append(laws)
            notes += note
        return per_secret, list(dict.fromkeys(notes))

    def _prepare(self, laws: PairLaws) -> tuple[PairLaws, list[str]]:
        """Apply the ``covariances`` choice to the pairs' laws.

        With "assume-equal" and covariances that differ, each side's covariance is
        taken for both (the papers' translation assumption) and the assumption is
        recorded with the size of the difference.
        """
        if self.covariances != "assume-equal" or covariances_equal(laws):
            return laws, []
        gap = max_covariance_gap(laws)
        return laws.equalised(), [
            f"ASSUMED: the laws under the two secrets of a pair are translations "
            f"of each other (equal covariances), though the modelled covariances "
            f"differ by up to {gap:.2%}, as in the papers' experiments (Chen & "
            "Ohrimenko App. C.1); the guarantee holds only under that assumption"]

    def _fit_theta(self, frame, secrets) -> tuple:
        if isinstance(self.theta, ExpertTheta):
            return tuple(self.theta.models_for(s.column) for s in secrets)
        if self.theta != "gaussian":
            for s in secrets:
                if s.property == "mean":
                    raise InvalidParameterError(
                        f"The secret {s.label} protects a mean, which per-group "
                        "moments cannot condition on; use theta='gaussian' (the "
                        "joint Gaussian model of Zhang et al. Sec. 4.2).")
        h = self.query_.contributions(frame, self.columns_,
                                      what="the reference data")
        models = []
        for s in secrets:
            z = s.indicator(frame, what="the reference data")
            if isinstance(self.theta, (MonteCarlo, Bootstrap)):
                models.append(self.theta.fit(z, h, sampling=self.sampling,
                                             columns=self.columns_,
                                             secret_label=s.label))
            elif self.theta == "moments":
                models.append([fit_group_moments(z, h, sampling=self.sampling,
                                                 columns=self.columns_,
                                                 secret_label=s.label)])
            else:
                models.append([fit_joint_gaussian(z, h, columns=self.columns_,
                                                  secret_label=s.label)])
        return tuple(models)

    def _laws(self, n: int) -> list[PairLaws]:
        weight = self.query_.weight(n)
        return [pair_laws(models, s, weight, n, self.columns_)
                for s, models in zip(self.secrets_, self.theta_, strict=True)]

    def _theta_description(self) -> str:
        if isinstance(self.theta, ExpertTheta):
            return self.theta.description
        return "; ".join(dict.fromkeys(m.description for ms in self.theta_
                                       for m in ms))

    def leakage(self, X=None, *, n: int | None = None, delta: float | None = None
                ) -> float:
        """Epsilon, at ``delta``, of releasing the raw statistic with no noise.

        The inherent leakage of F(X) under Theta: the least epsilon for which
        the laws of F given the two secrets of every pair are
        (epsilon, delta)-indistinguishable. Only n = len(X) is used.

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
            n = len(self._private_frame(X))
        self._validate_params()
        delta = self.delta if delta is None else delta
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not (
                0 < delta < 1):
            raise InvalidParameterError(
                f"delta must be in (0, 1) for a leakage; got {delta!r}.")
        return float(max(raw_leakage_epsilon(self._prepare(laws)[0], delta).max(
            initial=0.0) for laws in self._laws(int(n))))

    def noiseless_certified(self, X=None, *, n: int | None = None) -> bool:
        """Whether releasing F(X) with no noise at all is (epsilon, delta)-private.

        Chen and Ohrimenko's Theorem 4.4: with equal covariances, every pair's
        Mahalanobis distance (mu_a - mu_b)^T Sigma^-1 (mu_a - mu_b) must be at most
        (epsilon / c)^2 (``calibration="classic"``) or the analytic bound. With
        unequal covariances the exact 1-D profile or the Renyi bound decides.
        Only n = len(X) is used.
        """
        check_is_fitted(self)
        if n is None:
            if X is None:
                raise InvalidParameterError(
                    "noiseless_certified needs the private data X or n=.")
            n = len(self._private_frame(X))
        self._validate_params()
        k = len(self.columns_)
        return all(bool(pairs_certified(self._prepare(laws)[0], np.zeros((k, k)),
                                        self.epsilon, self.delta,
                                        self.calibration).all())
                   for laws in self._laws(int(n)))
