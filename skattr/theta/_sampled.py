"""Theta estimated by resampling the reference data: Monte-Carlo and bootstrap."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from skattr._persistence import persistable
from skattr._random import check_random_state, gaussian_noise, seed_of
from skattr._secret import grid_tolerance
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.theta._fit import fit_group_moments
from skattr.theta._protocol import ThetaSpec
from skattr.theta._request import LawUnavailable, gaussian_law_of

__all__ = ["Bootstrap", "MonteCarlo", "MonteCarloMoments"]


def refuse_mean_secret(secret) -> None:
    """Refuse a mean secret: per-group moments cannot condition on a mean."""
    if secret.property == "mean":
        raise InvalidParameterError(
            f"The secret {secret.label} protects a mean, which per-group "
            "moments cannot condition on; use theta='gaussian' (the joint "
            "Gaussian model of Zhang et al. Sec. 4.2).")


@persistable
@dataclass(frozen=True)
class MonteCarloMoments:
    """theta estimated as Chen and Ohrimenko do (App. C.1), by sampling datasets.

    For a property value a on n records, ``n_draws`` datasets are drawn from the
    reference records with exactly a*n records of the secret's group, and the
    mean and covariance (ddof = 1) of the contributions' sum S are their sample
    moments. The draws for each (a, n) come from a generator seeded by
    (``seed``, a*n, n), so an estimate never depends on the order of calls.
    """

    h_in: np.ndarray
    h_out: np.ndarray
    n_draws: int
    seed: int
    sampling: str
    columns: tuple
    description: str = ""
    #: Theta protocol: per-group draws cannot condition on a mean.
    conditions_on_mean = False

    def _group_sums(self, rng, group: np.ndarray, count: int) -> np.ndarray:
        """Sum ``count`` records of ``group``, once per drawn dataset."""
        if self.sampling == "with-replacement":
            index = rng.integers(0, group.shape[0], size=(self.n_draws, count))
        else:
            if count > group.shape[0]:
                raise NotCertifiableError(
                    f"A dataset needs {count} records of one group, but the "
                    f"reference holds only {group.shape[0]}: sampling without "
                    "replacement cannot form it. Use more reference data or "
                    "law=AssumeGaussian(sampling='with-replacement').")
            # `count` distinct records per dataset (numpy picks Floyd's algorithm
            # for small samples): a loop over datasets, never over records.
            index = np.array([rng.choice(group.shape[0], count, replace=False)
                              for _ in range(self.n_draws)]).reshape(
                self.n_draws, count)
        return group[index].sum(axis=1)

    def _draw_sums(self, k: int, n: int) -> np.ndarray:
        rng = check_random_state(self.seed, stream=(k, n))
        return (self._group_sums(rng, self.h_in, k)
                + self._group_sums(rng, self.h_out, n - k))

    def sum_moments(self, a, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Sample mean (m, k) and covariance (m, k, k) of S given g = a."""
        a = np.atleast_1d(np.asarray(a, dtype=float))
        counts = np.rint(a * n)
        off = np.abs(counts - a * n) > grid_tolerance(n)
        if np.any(off) or np.any((a < 0) | (a > 1)):
            raise InvalidParameterError(
                f"The Monte-Carlo estimate draws datasets with exactly a*n records "
                f"of the secret's group; a = {a.tolist()} on n = {n} records is "
                "not a whole number of records. Read the pairs on the grid of "
                "multiples of 1/n first (Secret.grid_pairs), as a release does.")
        k = self.h_in.shape[1]
        means = np.empty((a.size, k))
        covs = np.empty((a.size, k, k))
        cache = {}
        for i, count in enumerate(counts.astype(int)):
            if count not in cache:
                sums = self._draw_sums(int(count), n)
                cache[count] = (sums.mean(axis=0),
                                np.atleast_2d(np.cov(sums, rowvar=False)))
            means[i], covs[i] = cache[count]
        return means, covs

    def moments_given_set(self, lo: float, hi: float, n: int):
        """Not available: set readings need g's law, which sampling does not give."""
        raise NotCertifiableError(
            "The Monte-Carlo estimate gives laws at exact property values only; "
            "use the pointwise reading of set secrets with it.")


class _SampledTheta(ThetaSpec):
    """The Theta protocol of the estimators fit on the records' contributions.

    ``fit(z, h, ...)`` is the estimator's own; the protocol reads z and h
    through the data seam's :class:`~skattr.backends.Reference`.
    """

    law_kinds = ("gaussian",)
    states_law = False
    reads_reference = True
    assumptions = ()

    def fit_law(self, request):
        """Return the Gaussian law of the estimated moments (no exact law)."""
        if "gaussian" not in request.kinds:
            raise LawUnavailable(
                "theta states moments (an expert's, a joint Gaussian's or "
                "sampled ones), which fix no law of the statistic")
        return gaussian_law_of(self, request, request.reference())

    def moment_models(self, reference, secret, sampling: str) -> list:
        """Theta protocol: the estimator's models for ``secret``."""
        refuse_mean_secret(secret)
        return self.fit(reference.groups(secret), reference.records(),
                        sampling=sampling, columns=reference.columns,
                        secret_label=secret.label)

    def exact_law(self, reference, secret, statistic: str):
        """Theta protocol: None (sampled moments fix no law of the records)."""
        return None


@persistable
@dataclass(frozen=True)
class MonteCarlo(_SampledTheta):
    """Estimate Theta by sampling datasets from the reference data (Chen App. C.1).

    Pass as ``theta=`` to a mechanism. Beside the exact closed form of
    ``theta="moments"``, this is the paper's estimate: for each property value,
    ``n_draws`` datasets of n records with that exact value are drawn and the
    statistic's sample mean and covariance taken.

    Parameters
    ----------
    n_draws : int, default=1000
        Datasets drawn per property value (the paper uses 1,000).
    random_state : int or None, default=None
        Seed of the draws (Theta comes from public reference data, so a seed
        costs no privacy); None draws a fresh seed at fit.
    """

    n_draws: int = 1000
    random_state: int | None = None

    def __post_init__(self):
        if isinstance(self.n_draws, bool) or not isinstance(
                self.n_draws, (int, np.integer)) or self.n_draws < 2:
            raise InvalidParameterError(
                f"n_draws must be an int >= 2; got {self.n_draws!r}.")
        seed_of(self.random_state, owner="MonteCarlo")  # refuse it now

    def fit(self, z: np.ndarray, h: np.ndarray, *, sampling: str, columns,
            secret_label: str) -> list:
        """Return the one-model Theta of this estimate."""
        inside = z == 1
        if min(inside.sum(), (~inside).sum()) < 2:
            raise NotCertifiableError(
                f"The reference data has too few records on one side of the secret "
                f"{secret_label} to sample datasets from.")
        return [MonteCarloMoments(
            h_in=h[inside], h_out=h[~inside], n_draws=int(self.n_draws),
            seed=seed_of(self.random_state, owner="MonteCarlo"), sampling=sampling,
            columns=tuple(columns),
            description=f"Monte-Carlo estimate: {self.n_draws} datasets per "
                        f"property value from {z.size} reference records, "
                        f"sampling {sampling}")]


#: Above this many reference records the bootstrap draws its replicate means
#: from their normal law instead of resampling the records (50 resamples of a
#: million records cost 50 passes over them).
RESAMPLED_RECORDS = 20_000


@persistable
@dataclass(frozen=True)
class Bootstrap(_SampledTheta):
    """Theta as a set: per-group moments fit on bootstrap replicates of the reference.

    Each replicate resamples the reference records with replacement within each
    secret group (a stratified bootstrap: the groups keep their sizes, so no
    replicate loses a group) and fits the exact mixture moments; the mechanisms
    take the worst case over the replicates and the fit on the reference
    itself, so the guarantee survives the estimation error of a finite
    reference. ``docs/small_reference.md`` measures how often it does. A
    reference of more than ``RESAMPLED_RECORDS`` records is not resampled: the
    replicates' group means are drawn from their normal law N(m_g, C_g / n_g)
    and the covariances kept.

    Parameters
    ----------
    n_replicates : int, default=20
        Bootstrap replicates.
    random_state : int or None, default=None
        Seed of the resampling.
    """

    n_replicates: int = 20
    random_state: int | None = None

    def __post_init__(self):
        if isinstance(self.n_replicates, bool) or not isinstance(
                self.n_replicates, (int, np.integer)) or self.n_replicates < 1:
            raise InvalidParameterError(
                f"n_replicates must be an int >= 1; got {self.n_replicates!r}.")
        seed_of(self.random_state, owner="Bootstrap")  # refuse it now

    def fit(self, z: np.ndarray, h: np.ndarray, *, sampling: str, columns,
            secret_label: str) -> list:
        """Return the reference's model and one per bootstrap replicate."""
        rng = check_random_state(seed_of(self.random_state, owner="Bootstrap"))
        models = [fit_group_moments(z, h, sampling=sampling, columns=columns,
                                    secret_label=secret_label)]
        inside = np.flatnonzero(z == 1)
        outside = np.flatnonzero(z != 1)
        if z.size > RESAMPLED_RECORDS:
            return self._normal_replicates(models[0], inside.size, outside.size,
                                           rng, sampling)
        # Each group's records in a canonical order (by their contributions),
        # so that the replicates, and the certificate, do not depend on the
        # order of the reference's rows; equal rows are interchangeable.
        inside, outside = (group[np.lexsort(h[group].T[::-1])]
                           for group in (inside, outside))
        for _ in range(self.n_replicates):
            rows = np.concatenate([
                inside[rng.integers(0, inside.size, inside.size)],
                outside[rng.integers(0, outside.size, outside.size)]])
            models.append(fit_group_moments(z[rows], h[rows], sampling=sampling,
                                            columns=columns,
                                            secret_label=secret_label))
        text = (f"bootstrap Theta: per-group moments of {z.size} reference "
                f"records ({inside.size} in the secret's group) and of "
                f"{self.n_replicates} resamples within each group, worst case, "
                f"sampling {sampling}")
        return [replace(m, description=text) for m in models]

    def _normal_replicates(self, fitted, n_in: int, n_out: int, rng,
                           sampling: str) -> list:
        """Replicates of a large reference without a pass over its records.

        Each group's bootstrap mean is, to the central limit theorem's
        accuracy at these sizes, N(m_g, C_g / n_g); the means are drawn so and
        the covariances kept, whose estimation error at more than
        ``RESAMPLED_RECORDS`` records is a small fraction of the means' (the
        failures the bootstrap guards against follow the standard error of
        the groups' gap, ``docs/small_reference.md``).
        """
        text = (f"bootstrap Theta: per-group moments of {n_in + n_out} reference "
                f"records ({n_in} in the secret's group), worst case over "
                f"{self.n_replicates} replicate means drawn from their normal "
                f"law (a large reference), sampling {sampling}")
        # One validated copy per replicate (each replace re-checks the model).
        models = [replace(fitted, description=text)]
        for _ in range(self.n_replicates):
            means = [m + gaussian_noise(c / size, rng) for m, c, size in (
                (fitted.mean_in, fitted.cov_in, n_in),
                (fitted.mean_out, fitted.cov_out, n_out))]
            models.append(replace(fitted, mean_in=means[0], mean_out=means[1],
                                  description=text))
        return models

