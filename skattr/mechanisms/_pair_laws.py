"""Mechanisms calibrated to the laws of F on both sides of every pair."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from skattr._data import Reference
from skattr._query import Query
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
from skattr.laws._gaussian import PairLaws, pair_laws
from skattr.laws._sums import pair_pmfs
from skattr.mechanisms._base import BaseMechanism
from skattr.theta import Bootstrap, ExpertTheta, MonteCarlo
from skattr.theta._spec import resolve_theta
from skattr.utils._param_validation import Options

__all__ = ["GaussianPairLawMechanism"]

#: Fewest records on which the Gaussian law (``law="gaussian"``) may certify a
#: release with no noise: below it a noiseless certificate would rest on the
#: shape of a handful of records' law, which the model does not know.
MIN_NOISELESS_RECORDS = 30

#: Fewest records the exact law certifies with no noise: below it a noiseless
#: release publishes a function of a handful of records exactly, and rests wholly
#: on the group frequencies estimated from the reference data.
MIN_EXACT_NOISELESS_RECORDS = 6

#: Most distinct values of an integer column whose sum's exact law is computed.
MAX_EXACT_VALUES = 256

#: Largest magnitude of such a value (sums live on an int64 lattice).
MAX_EXACT_MAGNITUDE = 2**20

#: Most atoms of an exact law of F (n times the column's lattice width).
MAX_EXACT_ATOMS = 10_000


def _lattice_width(values: np.ndarray) -> float:
    """Count the steps between the smallest and largest of sorted integer values.

    The step is the values' greatest common difference, the spacing of the
    lattice their sums live on.
    """
    if values.size < 2:
        return 1.0
    step = int(np.gcd.reduce(np.diff(values).astype(np.int64)))
    return float((values[-1] - values[0]) / max(step, 1))


class GaussianPairLawMechanism(BaseMechanism):
    """Base of the mechanisms calibrated to the pair laws of a fitted Theta.

    ``fit`` learns one list of models per secret (``theta_``); ``_laws(n)`` gives
    the laws of F on both sides of every discriminative pair (Gaussian with the
    modelled moments, or ``_exact_pairs(n)``: the exact pmfs), which each
    subclass turns into a noise law in ``_plan``: the Attribute-Private
    Gaussian Mechanism and Chen and Ohrimenko's Expected Value family.
    """

    _reads_dask_reference = True

    _parameter_constraints = {
        **BaseMechanism._parameter_constraints,
        "theta": [Options(frozenset({"auto", "moments", "gaussian"})), ExpertTheta,
                  MonteCarlo, Bootstrap],
        "sampling": [Options(frozenset({"without-replacement", "with-replacement"}))],
        "covariances": [Options(frozenset({"certify", "assume-equal"}))],
        "law": [Options(frozenset({"auto", "exact", "gaussian"}))],
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
        # The name given to theta= becomes its spec object once, here; the
        # spec answers every question about Theta (skattr.theta._spec).
        self.theta_spec_ = resolve_theta(self.theta)
        reference = Reference(frame, self.query_, self.columns_, secrets)
        # law="gaussian" takes no exact law, so none is looked for (it would
        # read the records' values).
        exact, why = ((None, "") if self.law == "gaussian"
                      else self._fit_exact_laws(reference, secrets))
        if self.law == "gaussian":
            self.law_, self.exact_laws_ = "gaussian", None
        elif exact is not None:
            self.law_, self.exact_laws_ = "exact", exact
        else:
            alternative = (
                "pass law='gaussian' to take F(X) given each secret as Gaussian "
                "with the modelled moments (an assumption the release records), "
                "or use mechanism='approx-wasserstein', certified from the "
                "resampled laws of the statistic.")
            raise NotCertifiableError(
                f"The exact law of this statistic is not available ({why}). "
                + ("To release it, " if self.law == "exact" else
                   "skattr does not assume the statistic is Gaussian unless "
                   "asked; to release it, ") + alternative)
        # Exact laws model records as independent draws from their group
        # (with replacement); the moments must agree with them.
        sampling = "with-replacement" if self.law_ == "exact" else self.sampling
        return tuple(self.theta_spec_.moment_models(reference, s, sampling)
                     for s in secrets)

    def _fit_exact_laws(self, reference, secrets) -> tuple[tuple | None, str]:
        """Each secret's exact law model of F, or None and why there is none.

        Exact laws cover one count or proportion, or the sum or mean of one
        integer-valued column with at most ``MAX_EXACT_VALUES`` values, under
        a proportion secret compared pointwise, with a Theta that fixes the
        records' law (``theta="auto"`` or ``"moments"``).
        """
        query = self.query_
        if not self.theta_spec_.fixes_law:
            return None, ("theta states moments (an expert's, a joint Gaussian's "
                          "or sampled ones), which fix no law of the statistic")
        if not isinstance(query, Query) or len(self.columns_) != 1:
            return None, (f"exact laws cover one count, proportion, sum or mean; "
                          f"this query releases {len(self.columns_)} statistics")
        for s in secrets:
            if s.property != "proportion" or s.sets is not None:
                return None, (f"exact laws need a proportion secret with pairs or "
                              f"a window; {s.label} is not one")
        if query.statistic in ("sum", "mean"):
            values = np.unique(reference.records()[:, 0])
            if not np.all(values == np.round(values)):
                return None, (f"the column {self.columns_[0]!r} takes non-integer "
                              "values, so the law of its mean is continuous")
            if values.size > MAX_EXACT_VALUES:
                return None, (f"the column {self.columns_[0]!r} takes "
                              f"{values.size} distinct values (the exact law is "
                              f"computed for at most {MAX_EXACT_VALUES})")
            # Sums are computed on an int64 lattice: values must stay far from
            # overflow, and the lattice narrow enough to hold a dataset's sum.
            if np.abs(values).max() > MAX_EXACT_MAGNITUDE:
                return None, (f"the column {self.columns_[0]!r} takes values "
                              f"beyond {MAX_EXACT_MAGNITUDE:g} in magnitude")
            if _lattice_width(values) > MAX_EXACT_ATOMS:
                return None, (f"the column {self.columns_[0]!r} spans "
                              f"{_lattice_width(values):g} steps of its values' "
                              "lattice, too wide for its exact law")
        return tuple(self.theta_spec_.exact_law(reference, s, query.statistic)
                     for s in secrets), ""

    def _laws(self, n: int) -> list[PairLaws]:
        weight = self.query_.weight(n)
        return [pair_laws(models, s, weight, n, self.columns_)
                for s, models in zip(self.secrets_, self.theta_, strict=True)]

    def _exact_pairs(self, n: int) -> list[tuple]:
        """Return the exact laws (x_a, p_a, x_b, p_b) of F on both sides of pairs."""
        weight = self.query_.weight(n)
        first = self.exact_laws_[0]
        # A count's lattice is 0..n; a sum's is n times its values' width.
        width = (_lattice_width(np.asarray(first.values, dtype=float))
                 if hasattr(first, "values") else 1.0)
        if n * width > MAX_EXACT_ATOMS:
            raise NotCertifiableError(
                f"The exact law of this statistic on {n} records has about "
                f"{n * width:.0f} values, more than the {MAX_EXACT_ATOMS} skattr "
                "computes a privacy profile for. Use mechanism='wasserstein' or "
                "'approx-wasserstein', or pass law='gaussian'.")
        out = []
        for s, theta in zip(self.secrets_, self.exact_laws_, strict=True):
            pairs = s.grid_pairs(n, alternative="pass law='gaussian'")
            for (xa, pa), (xb, pb) in pair_pmfs(theta, pairs, n):
                out.append((xa * weight, pa, xb * weight, pb))
        return out

    def _law_assumptions(self, n: int, noiseless: bool) -> list[str]:
        """Return what the chosen law of F assumes; refuse what it cannot certify.

        The Gaussian law is an opt-in (``law="gaussian"``) and never certifies a
        noiseless release of fewer than ``MIN_NOISELESS_RECORDS`` records; no law
        certifies one of fewer than ``MIN_EXACT_NOISELESS_RECORDS``. An
        ``ExpertTheta`` states the records' law itself and is exempt.
        """
        # An expert who states Theta states the law of the records itself (Chen
        # and Ohrimenko's Theta of distributions is often one record, n = 1).
        stated = self.theta_spec_.states_law
        if (self.law_ == "gaussian" and noiseless and not stated
                and n < MIN_NOISELESS_RECORDS):
            raise NotCertifiableError(
                f"The Gaussian law of F certifies releasing the raw statistic of "
                f"{n} records, but with fewer than {MIN_NOISELESS_RECORDS} records "
                "a noiseless release would rest entirely on the shape of the "
                "records' law, which the Gaussian model does not know. Use an "
                "integer or count column (exact law), "
                "mechanism='approx-wasserstein', or more records.")
        if noiseless and not stated and n < MIN_EXACT_NOISELESS_RECORDS:
            raise NotCertifiableError(
                f"The exact law certifies releasing the raw statistic of {n} "
                f"records, but a release of fewer than "
                f"{MIN_EXACT_NOISELESS_RECORDS} records with no noise publishes "
                "a function of a handful of records exactly, and its certificate "
                "would rest wholly on the group frequencies estimated from the "
                "reference data. Release more records, or a smaller epsilon.")
        theta = list(self.theta_spec_.assumptions)
        if self.law_ == "exact":
            return theta + [
                "the law of F(X) given each secret is exact: records are "
                "independent draws from their group's value frequencies, "
                "estimated from the reference data (law='exact')"]
        return theta + [
            "ASSUMED (law='gaussian'): F(X) given each secret is Gaussian with the "
            "modelled mean and covariance; the shape of its law is not checked "
            "against the data"]

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
            "calibration='analytic', or covariances='assume-equal' to take the "
            "papers' translation assumption explicitly.")

    def _stated_delta(self, laws: PairLaws, noise_cov: np.ndarray,
                      delta: float) -> tuple[float, str]:
        """Return the delta to state: what the noise achieves, for classic noise.

        The classic constant is proven for epsilon < 1 only; above, its noise
        can fall short of the requested delta. The release then states the
        delta the noise really achieves at epsilon (exact profile), never the
        requested one.
        """
        if self.calibration != "classic" or self.law_ == "exact":
            return delta, ""
        achieved = pairs_delta(laws, noise_cov, self.epsilon)
        if achieved <= delta:
            return delta, ""
        return achieved, (f"; the classic constant's noise achieves delta "
                          f"{achieved:.4g} at epsilon {self.epsilon:g}, not the "
                          f"requested {delta:g} (exact profile), and the "
                          "release states it")

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
            n = len(self._private_frame(X))
        self._validate_params()
        delta = self.delta if delta is None else delta
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not (
                0 < delta < 1):
            raise InvalidParameterError(
                f"delta must be in (0, 1) for a leakage; got {delta!r}.")
        if self.law_ == "exact":
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
        The Gaussian law never certifies fewer than ``MIN_NOISELESS_RECORDS``
        records without noise. Only n = len(X) is used.
        """
        check_is_fitted(self)
        if n is None:
            if X is None:
                raise InvalidParameterError(
                    "noiseless_certified needs the private data X or n=.")
            n = len(self._private_frame(X))
        self._validate_params()
        if not self.theta_spec_.states_law and (
                n < MIN_EXACT_NOISELESS_RECORDS
                or (self.law_ == "gaussian" and n < MIN_NOISELESS_RECORDS)):
            return False
        if self.law_ == "exact":
            return exact_pairs_delta(self._exact_pairs(int(n)), 0.0,
                                     self.epsilon) <= self.delta
        k = len(self.columns_)
        return all(bool(pairs_certified(self._prepare(laws)[0], np.zeros((k, k)),
                                        self.epsilon, self.delta,
                                        self.calibration).all())
                   for laws in self._laws(int(n)))
