"""The Wasserstein Mechanism for count queries with exact conditional laws."""

from __future__ import annotations

import numpy as np

from skattr._query import Query
from skattr._release import Plan, expected_laplace_norm
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.mechanisms._base import BaseMechanism
from skattr.theta._counts import count_sensitivity
from skattr.utils._param_validation import Options

__all__ = ["WassersteinMechanism"]


class WassersteinMechanism(BaseMechanism):
    """Wasserstein Mechanism: Laplace noise W / epsilon (Zhang Alg. 4, Chen Thm 3.1).

    W is the largest infinity-Wasserstein distance between the laws of the
    released statistic under the two secrets of a pair, worst case over Theta.
    This version covers a count (or proportion) of records matching a value, with
    a binary sensitive attribute: given the secret, the count is exactly a
    convolution of binomials (:func:`skattr.theta.count_pmf`), so W is exact. It
    certifies (epsilon, 0) with no Gaussian or translation assumption.

    Parameters
    ----------
    query : Query
        ``Query.count(column, value)`` or ``Query.proportion(column, value)`` of
        one column.
    secret : Secret or list of Secret
        Proportion secrets; pairs must be multiples of 1/n for dataset privacy.
    epsilon : float, default=1.0
        Privacy loss bound, > 0.
    delta : float, default=0.0
        Ignored in the certificate, which has delta = 0.
    calibration : {"analytic", "classic"}
        Unused (Laplace noise); kept for a uniform interface.
    theta : "moments" or array-like of shape (m, 2), default="moments"
        ``"moments"`` estimates p = (P(counted | not in the secret's group),
        P(counted | in it)) from the reference data; an array states a finite
        set Theta of such pairs. Ranges of p are not accepted: the supremum of W
        over a continuum is not certified from a grid yet.
    privacy : {"dataset", "distributional"}, default="dataset"
        Dataset attribute privacy (the secret is the realised share) or
        distributional (the secret is the parameter the share is drawn from).
    random_state : None, int, Generator or RandomState, default=None
        None draws the noise from the operating system's entropy.

    Attributes
    ----------
    theta_ : tuple of ndarray
        For each secret, the (m, 2) array of p pairs.

    Notes
    -----
    Song, Wang and Chaudhuri's Wasserstein Mechanism (Zhang et al. Alg. 4,
    Theorem 5; Chen and Ohrimenko Thm 3.1) adds Laplace(W / epsilon) noise. For
    Zhang et al.'s Example 2 (four records, p in [0.4, 0.6]^2) W = 1, against a
    group-privacy sensitivity of 4.

    References
    ----------
    .. [1] S. Song, Y. Wang and K. Chaudhuri. "Pufferfish Privacy Mechanisms for
       Correlated Data." SIGMOD 2017.
    .. [2] W. Zhang, O. Ohrimenko and R. Cummings. "Attribute Privacy:
       Framework and Mechanisms." FAccT 2022, long version, Sec. 6.

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

    _parameter_constraints = {
        **BaseMechanism._parameter_constraints,
        "theta": [Options(frozenset({"moments"})), list, tuple, np.ndarray],
        "privacy": [Options(frozenset({"dataset", "distributional"}))],
    }

    mechanism_name = "wasserstein"
    auto_candidate = False

    def __init__(self, *, query=None, secret=None, epsilon=1.0, delta=0.0,
                 calibration="analytic", theta="moments", privacy="dataset",
                 random_state=None):
        self.query = query
        self.secret = secret
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.theta = theta
        self.privacy = privacy
        self.random_state = random_state

    def _fit_theta(self, frame, secrets) -> tuple:
        query = self.query_
        if (not isinstance(query, Query) or query.statistic not in (
                "count", "proportion") or len(self.columns_) != 1):
            raise InvalidParameterError(
                "The Wasserstein Mechanism here releases one count or proportion, "
                "e.g. query=Query.count('x1', 1); other statistics need the "
                "resampling Theta (not available yet).")
        for s in secrets:
            if s.property != "proportion":
                raise InvalidParameterError(
                    f"The secret {s.label} protects a mean; the exact count laws "
                    "need a proportion secret.")
        if not (isinstance(self.theta, str) and self.theta == "moments"):
            thetas = np.asarray(self.theta, dtype=float)
            if thetas.ndim != 2 or thetas.shape[1] != 2 or not np.all(
                    (thetas >= 0) & (thetas <= 1)):
                raise InvalidParameterError(
                    "theta must be 'moments' or a finite set of pairs "
                    "[[P(counted | out), P(counted | in)], ...] in [0, 1]; got "
                    f"{self.theta!r}.")
            return tuple(thetas for _ in secrets)
        counted = query.contributions(frame, self.columns_,
                                      what="the reference data")[:, 0]
        models = []
        for s in secrets:
            inside = s.indicator(frame, what="the reference data") == 1
            if min(inside.sum(), (~inside).sum()) < 2:
                raise NotCertifiableError(
                    f"The reference data has too few records on one side of the "
                    f"secret {s.label} to estimate the count's law.")
            models.append(np.array([[counted[~inside].mean(),
                                     counted[inside].mean()]]))
        return tuple(models)

    def _plan(self, n: int) -> Plan:
        weight = self.query_.weight(n)
        sensitivity = 0.0
        for s, thetas in zip(self.secrets_, self.theta_, strict=True):
            a, b = s.pair_values(n)
            if self.privacy == "dataset" and np.any(
                    np.abs(np.concatenate([a, b]) * n
                           - np.rint(np.concatenate([a, b]) * n)) > 1e-9):
                raise NotCertifiableError(
                    f"Dataset privacy conditions on exactly a*n records of the "
                    f"secret's group; the pairs of {s.label} are not multiples of "
                    f"1/{n}. State pairs on that grid, or use privacy="
                    "'distributional'.")
            w = count_sensitivity(list(zip(a, b, strict=True)), n, thetas,
                                  privacy=self.privacy)
            sensitivity = max(sensitivity, w * weight)
        scale = sensitivity / self.epsilon
        k = 1
        return Plan(
            mechanism=self.mechanism_name,
            statistics=tuple(self.query_.names(self.columns_)),
            n=n, epsilon=self.epsilon, delta=0.0, calibration="laplace",
            secrets=tuple(s.label for s in self.secrets_),
            theta=("p estimated from the reference data" if isinstance(
                self.theta, str) else f"{len(self.theta_[0])} stated p pairs"),
            sensitivity=sensitivity,
            inherent_variance=(0.0,),
            noise_covariance=2 * scale**2 * np.eye(k),
            noise="laplace", noise_scale=scale, noise_basis=np.eye(k),
            noiseless=scale == 0.0,
            expected_error=expected_laplace_norm(scale, k),
            method="Laplace(W / epsilon), W the largest infinity-Wasserstein "
                   "distance between the exact count laws (Zhang Alg. 4)",
            assumptions=(f"records are independent given the sensitive attribute, "
                         f"counted with the stated probabilities ({self.privacy} "
                         "attribute privacy)",),
        )
