"""The Gaussian law of F under each secret of every discriminative pair.

For each secret and each theta in Theta, :func:`pair_laws` evaluates the mean
and covariance of F(X) = w(n) S given each side of every pair, which is all a
Gaussian calibration needs; :class:`GaussianLaw` is the law a Theta of moment
models produces (taken as Gaussian: an explicit, recorded assumption).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from skattr._certificate import Assumption, unique
from skattr._persistence import persistable
from skattr._secret import Secret
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.laws._base import StatisticLaw

__all__ = ["GaussianLaw", "PairLaws", "pair_laws"]

#: Fewest records on which the Gaussian law may certify a release with no
#: noise: below it a noiseless certificate would rest on the shape of a
#: handful of records' law, which the model does not know.
MIN_NOISELESS_RECORDS = 30


@dataclass(frozen=True)
class PairLaws:
    """Gaussian laws of F on both sides of m secret pairs.

    Attributes
    ----------
    mean_diff : ndarray of shape (m, k)
        E[F | s_a, theta] - E[F | s_b, theta].
    cov_a, cov_b : ndarray of shape (m, k, k)
        Cov[F | s_a, theta] and Cov[F | s_b, theta].
    theta_index : ndarray of shape (m,)
        Which model of Theta each pair was evaluated under.
    n_theta : int
        The number of models.
    assumptions : tuple of Assumption
        What the laws take for granted beyond the models.
    """

    mean_diff: np.ndarray
    cov_a: np.ndarray
    cov_b: np.ndarray
    theta_index: np.ndarray
    n_theta: int
    assumptions: tuple = ()

    @property
    def sensitivity(self) -> float:
        """The largest l2 distance between the two sides' means (Zhang Eq. 1)."""
        return float(np.linalg.norm(self.mean_diff, axis=1).max(initial=0.0))

    @property
    def min_variance(self) -> np.ndarray:
        """Smallest conditional variance of each statistic over pairs and Theta."""
        diag_a = np.diagonal(self.cov_a, axis1=1, axis2=2)
        diag_b = np.diagonal(self.cov_b, axis1=1, axis2=2)
        return np.minimum(diag_a.min(axis=0), diag_b.min(axis=0))

    def equalised(self) -> PairLaws:
        """Each side's covariance taken for both sides: the translation assumption.

        Every pair becomes two pairs, (d, C_a, C_a) and (d, C_b, C_b), as in Chen
        and Ohrimenko's Psi, which holds both orders of a pair.
        """
        index = np.concatenate([self.theta_index, self.theta_index])
        return PairLaws(np.concatenate([self.mean_diff, self.mean_diff]),
                        np.concatenate([self.cov_a, self.cov_b]),
                        np.concatenate([self.cov_a, self.cov_b]),
                        index, self.n_theta, self.assumptions)

    @staticmethod
    def concatenate(parts: list[PairLaws]) -> PairLaws:
        """Stack the pairs of several secrets (worst case taken over all)."""
        offset = 0
        index = []
        for p in parts:
            index.append(p.theta_index + offset)
            offset += p.n_theta
        assumptions = unique(a for p in parts for a in p.assumptions)
        return PairLaws(
            np.concatenate([p.mean_diff for p in parts]),
            np.concatenate([p.cov_a for p in parts]),
            np.concatenate([p.cov_b for p in parts]),
            np.concatenate(index), offset, assumptions,
        )


def _for_columns(model, columns):
    """Return the model of the released columns: itself, or its exact marginal.

    A marginal is taken for a strict subset of the model's statistics in the
    model's own order; anything else must match exactly (a reordering is
    refused, as it may be a mislabelled model).
    """
    known = list(model.columns)
    if hasattr(model, "marginal") and len(columns) < len(known) \
            and set(columns) <= set(known) \
            and len(set(columns)) == len(columns):
        idx = [known.index(c) for c in columns]
        if idx == sorted(idx):
            return model.marginal(columns)
    _check_columns(model, columns)
    return model


def _check_columns(model, columns) -> None:
    if tuple(model.columns) != tuple(columns):
        raise InvalidParameterError(
            f"The Theta model describes the statistics {list(model.columns)} but the "
            f"query releases {list(columns)}; state the models for the released "
            "columns (a model of more columns gives its marginal)."
        )


def pair_laws(models: list, secret: Secret, weight: float, n: int,
              columns) -> PairLaws:
    """Means and covariances of F on both sides of every pair, under every model.

    Parameters
    ----------
    models : list of GroupMoments or JointGaussian
        Theta for this secret.
    secret : Secret
        The property and its discriminative pairs.
    weight : float or ndarray of shape (k,)
        The query's w(n) (1/n for means, 1 for sums), or one per statistic.
    n : int
        The number of records of the private dataset (public).
    columns : tuple
        The released statistics, to check the models against.
    """
    models = [_for_columns(model, columns) for model in models]
    for model in models:
        if secret.property == "mean" and not model.conditions_on_mean:
            raise InvalidParameterError(
                f"The secret {secret.label} protects a mean, which per-group moments "
                "cannot condition on; use theta='gaussian' (the joint Gaussian model "
                "of Zhang et al. Sec. 4.2)."
            )
    assumptions = []
    diffs, covs_a, covs_b, index = [], [], [], []
    reading = secret.set_reading if secret.sets is not None else "pointwise"
    if reading == "pointwise":
        # A dataset with share a holds a n records of the group: the pairs on
        # the grid k / n, a stated pair off it as every grid pair around it.
        a, b = np.array(secret.grid_pairs(n), dtype=float).reshape(-1, 2).T
        for t, model in enumerate(models):
            mean_a, cov_a = model.sum_moments(a, n)
            mean_b, cov_b = model.sum_moments(b, n)
            diffs.append(mean_a - mean_b)
            covs_a.append(cov_a)
            covs_b.append(cov_b)
            index.append(np.full(a.size, t))
    else:
        for t, model in enumerate(models):
            for u, v in secret.set_pairs():
                if reading == "paper":
                    points = np.array([np.mean(u), np.mean(v)])
                    mean, cov = model.sum_moments(points, n)
                    diffs.append(mean[:1] - mean[1:])
                    covs_a.append(cov[:1])
                    covs_b.append(cov[1:])
                else:
                    sides = [model.moments_given_set(lo, hi, n) for lo, hi in (u, v)]
                    for (prob, _, _), s in zip(sides, (u, v), strict=True):
                        if prob <= 0:
                            raise NotCertifiableError(
                                f"Under a model of Theta no dataset of {n} records "
                                f"has {secret.label.split(':')[0]} in {s}, so its "
                                "conditional mean is undefined. Use the pointwise "
                                "reading or adjust the sets."
                            )
                    diffs.append((sides[0][1] - sides[1][1])[None])
                    covs_a.append(sides[0][2][None])
                    covs_b.append(sides[1][2][None])
                index.append(np.array([t]))
        assumptions.append(Assumption.of("secret.set-reading", reading=reading))
    if not diffs or sum(d.shape[0] for d in diffs) == 0:
        # Fail closed: no pair would mean no noise.
        raise NotCertifiableError(
            f"The secret {secret.label} gives no pair of values to hide on {n} "
            "records, so no noise could be calibrated; state its pairs."
        )
    # w(n) is a scalar, or one weight per statistic for a stacked query.
    w = np.atleast_1d(np.asarray(weight, dtype=float))
    diff = np.concatenate(diffs) * w
    outer = np.outer(w, w)
    cov_a = np.concatenate(covs_a) * outer
    cov_b = np.concatenate(covs_b) * outer
    return PairLaws(diff, cov_a, cov_b, np.concatenate(index), len(models),
                    tuple(assumptions))


@persistable
@dataclass(frozen=True, eq=False)
class GaussianLaw(StatisticLaw):
    """F(X) given each secret taken as Gaussian with the modelled moments.

    The law a Theta of moment models produces (the reference's fit, its
    bootstrap replicates, a Monte-Carlo estimate, the joint Gaussian model or
    an expert's models): the means and covariances of F on both sides of
    every pair, under every model (:meth:`pair_laws`). The Gaussian shape is
    an assumption the release records (``law="gaussian"``).

    Attributes
    ----------
    models : tuple of tuple
        Per secret, the moment models of Theta (``sum_moments``,
        ``moments_given_set`` and ``conditions_on_mean``).
    secrets : tuple of Secret
    query : Query or StackedQuery
        The released statistic (its weight w(n)).
    columns : tuple
        The released columns, which the models must describe.
    grid : object or None
        An expert's Theta over parameter ranges, whose worst case is
        certified on its grid only when it peaks at a grid line's end
        (``check_worst_case_on_grid``); None otherwise.
    sampling : str
        How a dataset's records are drawn from their groups.
    """

    kind: ClassVar[str] = "gaussian"

    models: tuple
    secrets: tuple
    query: object
    columns: tuple
    description: str = ""
    assumptions: tuple = ()
    reads_reference: bool = True
    states_law: bool = False
    reference_sizes: tuple | None = None
    grid: object = field(default=None, repr=False)
    sampling: str = "without-replacement"
    source: object = field(default=None, repr=False, compare=False)

    @property
    def records_iid(self) -> bool:
        return self.sampling == "with-replacement"

    @property
    def statement(self) -> Assumption:
        """What taking F as Gaussian assumes, as the release records it."""
        return Assumption.of("law.gaussian")

    def check_noiseless(self, n: int) -> None:
        """Refuse a noiseless release of fewer than ``MIN_NOISELESS_RECORDS``."""
        if not self.states_law and n < MIN_NOISELESS_RECORDS:
            raise NotCertifiableError(
                f"The Gaussian law of F certifies releasing the raw statistic of "
                f"{n} records, but with fewer than {MIN_NOISELESS_RECORDS} "
                "records a noiseless release would rest entirely on the shape "
                "of the records' law, which the Gaussian model does not know. "
                "Use an integer or count column (exact law), "
                "mechanism='approx-wasserstein', or more records.")
        super().check_noiseless(n)

    def pair_laws(self, n: int) -> list[PairLaws]:
        """Each secret's Gaussian laws of F on both sides of its pairs, on n records."""
        weight = self.query.weight(n)
        return [pair_laws(models, s, weight, n, self.columns)
                for s, models in zip(self.secrets, self.models, strict=True)]

    def per_theta(self, laws: PairLaws, required: np.ndarray,
                  what: str) -> np.ndarray:
        """Reduce a per-pair requirement to one per model; check an expert grid.

        For Theta stated as parameter ranges the worst case over the grid is
        the supremum over the ranges only if the requirement peaks at an end
        of every grid line; otherwise this refuses.
        """
        per_theta = np.zeros(laws.n_theta)
        np.maximum.at(per_theta, laws.theta_index, required)
        if self.grid is not None:
            self.grid.check_worst_case_on_grid(per_theta, what)
        return per_theta
