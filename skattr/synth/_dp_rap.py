"""DPRAP: differentially private synthetic data by relaxed adaptive projection.

The estimator of :mod:`skattr.synth._rap`: ``fit`` spends the privacy
budget on the workload's marginals and keeps the relaxed table; ``sample``
draws synthetic records from it (post-processing: any number, any time).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from skattr._persistence import persistable
from skattr._random import check_random_state
from skattr.dp import check_privacy_level, epsilon_of_rho, rho_of_epsilon
from skattr.exceptions import InvalidParameterError
from skattr.synth._base import ReleasedCells, check_draws
from skattr.synth._rap import (
    OneHotDomain,
    answer,
    draw_records,
    relaxed_probs,
    relaxed_projection,
    report_noisy_max,
)
from skattr.synth._rap_base import RAPBase
from skattr.utils._param_validation import (
    Interval,
    Options,
)
from skattr.utils._progress import PROGRESS_CONSTRAINT, progress_bar

__all__ = ["DPRAP", "Projection", "check_rounds", "marginal_errors",
           "marginal_sd", "private_projection"]


def marginal_errors(domain: OneHotDomain, workload, real: pd.DataFrame,
                    synthetic: pd.DataFrame) -> tuple[float, float]:
    """Max and mean absolute error of the workload's marginals (shares).

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.synth import OneHotDomain, marginal_errors
    >>> d = OneHotDomain({"a": [0, 1], "b": ["x", "y"]})
    >>> real = pd.DataFrame({"a": [0, 1, 1, 0], "b": ["x", "y", "y", "y"]})
    >>> marginal_errors(d, [(0, 1)], real, real)
    (0.0, 0.0)
    """
    p, q = domain.onehot(real), domain.onehot(synthetic)
    errors = np.concatenate([np.abs(answer(p, m) - answer(q, m))
                             for m in workload])
    return float(errors.max()), float(errors.mean())


def check_rounds(rounds, queries_per_round, marginals: int) -> tuple[int, int]:
    """Return T and K: the rounds and the marginals chosen in each."""
    T = int(rounds)
    K = (int(queries_per_round) if queries_per_round is not None
         else max(1, marginals // T))
    if T > 1 and T * K > marginals:
        raise InvalidParameterError(
            f"rounds * queries_per_round = {T * K} exceeds the {marginals} "
            "marginals; choose fewer rounds or queries.")
    return T, K


def marginal_sd(budget: float, cells: int, n: int,
                accounting: str = "marginal") -> float:
    """Return the noise sd of one marginal of n records answered with ``budget`` rho.

    "marginal": the marginal's vector of cell shares is one Gaussian query
    of l2 sensitivity sqrt(2) / n (one record replaced moves two cells by
    1 / n each); "cell": each cell its own query of sensitivity 1 / n with
    ``budget / cells``.

    Examples
    --------
    >>> round(marginal_sd(0.5, 4, 100), 6)      # sqrt(2) / 100 / sqrt(1)
    0.014142
    """
    if accounting == "cell":
        return (1.0 / n) / math.sqrt(2 * budget / cells)
    return (math.sqrt(2.0) / n) / math.sqrt(2 * budget)


@dataclass(frozen=True)
class Projection:
    """What :func:`private_projection` released and fitted.

    Attributes
    ----------
    answered : list of tuple
        The marginals answered, in the order released.
    noisy : list of ndarray
        Their released answers (shares of the records).
    sigma : ndarray
        Each answer's noise sd (zeros when no noise was added).
    logits : ndarray
        The relaxed table fitted to them.
    """

    answered: list
    noisy: list
    sigma: np.ndarray
    logits: np.ndarray


def private_projection(domain: OneHotDomain, real: list, workload, rho,
                       *, rounds: int, queries_per_round: int,
                       accounting: str, start: np.ndarray, iterations: int,
                       learning_rate: float, rng, bar=None) -> Projection:
    """Answer the workload on ``real`` under rho-zCDP and fit a relaxed table.

    RAP's release (Aydore et al. 2021): one round answers every marginal
    with Gaussian noise of ``rho / len(workload)`` each; T > 1 rounds choose
    K marginals a round by report-noisy-max on the relaxed table's largest
    errors, each choice and each answer taking ``rho / (2 T K)``. The
    records are ``real``'s rows (one-hot blocks), their number n the
    sensitivity's denominator: one record replaced moves a marginal's
    shares by sqrt(2) / n in l2 and its largest error by 1 / n. ``rho=None``
    answers exactly (no privacy for the records: the caller asked for it).

    The one home of the differentially private release: :class:`DPRAP` runs
    it on the whole table, :class:`~skattr.synth.AttributePrivateRAP` on
    each group's subsample.
    """
    n = real[0].shape[0]
    truth = [answer(real, m) for m in workload]
    T, K = int(rounds), int(queries_per_round)
    chosen, targets, sigmas = [], [], []

    def release(i: int, budget) -> None:
        """Answer marginal i with Gaussian noise of zCDP ``budget``."""
        sd = 0.0 if budget is None else marginal_sd(budget, truth[i].size, n,
                                                    accounting)
        chosen.append(i)
        sigmas.append(sd)
        targets.append(truth[i] + sd * rng.standard_normal(truth[i].size)
                       if budget is not None else truth[i].copy())

    def project(logits):
        return relaxed_projection(
            domain, [workload[i] for i in chosen], targets, logits,
            iterations=iterations, learning_rate=learning_rate, bar=bar)

    logits = start
    if T == 1:
        for i in range(len(workload)):
            release(i, None if rho is None else rho / len(workload))
        logits = project(logits)
    else:
        share = None if rho is None else rho / (2 * T * K)
        for _ in range(T):
            probs = relaxed_probs(domain, logits)
            for _ in range(K):
                left = [i for i in range(len(workload)) if i not in chosen]
                score = np.array([np.abs(answer(probs, workload[i])
                                         - truth[i]).max() for i in left])
                if share is None:
                    pick = int(np.argmax(score))
                else:
                    # Report-noisy-max is eps-DP, so eps^2 / 2-zCDP: each
                    # choice takes eps = sqrt(2 share); a marginal's largest
                    # error moves by at most 1/n when one record is replaced.
                    pick = report_noisy_max(score, math.sqrt(2 * share),
                                            1.0 / n, rng)
                release(left[pick], share)
            logits = project(logits)
    return Projection([workload[i] for i in chosen], targets,
                      np.array(sigmas), logits)


@persistable(estimator=True)
class DPRAP(RAPBase):
    """Relaxed Adaptive Projection (Aydore et al. 2021), differentially private.

    Synthetic records that reproduce the k-way marginals of categorical data
    under (epsilon, delta)-differential privacy of each record. Numeric
    columns must be binned first (the bins chosen from public information).
    A baseline for synthetic data that hides a global property: this one
    publishes the marginals faithfully, the share of every group included.

    Parameters
    ----------
    categories : dict column -> list
        Every category of every column (public: stated, or read from a
        public reference with :meth:`OneHotDomain.from_frame`); a value of
        the data outside them is refused.
    epsilon : float, default=1.0
    delta : float, default=1e-6
        The guarantee, converted to zCDP: rho with
        ``epsilon = rho + 2 sqrt(rho log(1/delta))``.
    k : int, default=3
        The marginals' order.
    n_marginals : int or None, default=64
        How many k-way marginals, drawn at random from ``random_state``
        (public); None takes them all.
    marginals : list of tuple or None, default=None
        The workload by column names, chosen from public information (e.g.
        :func:`select_marginals` on public data); None draws it.
    n_synthetic : int, default=1000
        Records of the relaxed table (n').
    rounds : int, default=1
        T. One round answers every marginal at once; more rounds choose
        ``queries_per_round`` marginals a round by report-noisy-max on the
        relaxed table's errors, spending half of each round's budget on the
        choice.
    queries_per_round : int or None, default=None
        K (default: the marginals divided evenly over the rounds).
    accounting : {"marginal", "cell"}, default="marginal"
        "marginal": each marginal's cells are one Gaussian query of l2
        sensitivity sqrt(2) / n (one record replaced moves two cells);
        "cell": each cell a query of sensitivity 1/n with rho / m, as the
        slides state RAP (more noise for marginals of more than two cells).
    iterations : int, default=1000
        Adam steps of a relaxed projection.
    learning_rate : float, default=0.05
    progress : "auto" or bool, default="auto"
    random_state : None, int or Generator, default=None
        The noise (secure by default) and the workload's draw.

    Attributes
    ----------
    domain_ : OneHotDomain
    workload_ : list of tuple
        The marginals, by column position.
    noisy_answers_ : list of ndarray
        The released (noisy) answers the table was fitted to.
    rho_ : float
        The zCDP budget spent.
    sigma_ : ndarray
        Each answered marginal's noise sd (shares).
    logits_ : ndarray of shape (n_synthetic, features)
        The relaxed table.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skattr.synth import DPRAP
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"a": rng.integers(0, 2, 2000),
    ...                    "b": rng.choice(["x", "y", "z"], 2000)})
    >>> rap = DPRAP(categories={"a": [0, 1], "b": ["x", "y", "z"]}, k=2,
    ...             epsilon=1.0, n_synthetic=200, random_state=0).fit(df)
    >>> synthetic = rap.sample(500, random_state=1)
    >>> synthetic.shape, list(synthetic.columns)
    ((500, 2), ['a', 'b'])
    """

    _parameter_constraints = {
        "categories": [dict],
        "epsilon": [Interval("real", 0, None, closed="neither")],
        "delta": [Interval("real", 0, 1, closed="neither")],
        "k": [Interval("integral", 1, None, closed="left")],
        "n_marginals": [Interval("integral", 1, None, closed="left"), None],
        "marginals": [list, tuple, None],
        "n_synthetic": [Interval("integral", 1, None, closed="left")],
        "rounds": [Interval("integral", 1, None, closed="left")],
        "queries_per_round": [Interval("integral", 1, None, closed="left"),
                              None],
        "accounting": [Options(frozenset({"marginal", "cell"}))],
        "iterations": [Interval("integral", 1, None, closed="left")],
        "learning_rate": [Interval("real", 0, None, closed="neither")],
        "progress": PROGRESS_CONSTRAINT,
        "random_state": ["random_state"],
    }

    def __init__(self, *, categories=None, epsilon=1.0, delta=1e-6, k=3,
                 n_marginals=64, marginals=None, n_synthetic=1000, rounds=1,
                 queries_per_round=None, accounting="marginal",
                 iterations=1000, learning_rate=0.05, progress="auto",
                 random_state=None):
        self.categories = categories
        self.epsilon = epsilon
        self.delta = delta
        self.k = k
        self.n_marginals = n_marginals
        self.marginals = marginals
        self.n_synthetic = n_synthetic
        self.rounds = rounds
        self.queries_per_round = queries_per_round
        self.accounting = accounting
        self.iterations = iterations
        self.learning_rate = learning_rate
        self.progress = progress
        self.random_state = random_state

    def fit(self, X, y=None):
        """Spend the budget on the marginals and fit the relaxed table.

        Parameters
        ----------
        X : DataFrame
            The private data, with every column of ``categories``.
        y : None
            Ignored.

        Returns
        -------
        self : DPRAP
        """
        domain = self._checked(X)
        n = len(X)
        # The one check of how much a guarantee protects, as every mechanism
        # and AttributePrivateRAP make it: before any value is read.
        check_privacy_level(self.epsilon, self.delta, n, allow=None)
        real = domain.onehot(X)                 # refuses unseen values first
        rng = check_random_state(self.random_state, owner="DPRAP")
        workload = self._workload(domain, rng)
        rho = rho_of_epsilon(float(self.epsilon), float(self.delta))
        T, K = check_rounds(self.rounds, self.queries_per_round, len(workload))
        bar = progress_bar(self.progress, total=T * int(self.iterations),
                           desc="DPRAP", unit="step")
        try:
            fitted = private_projection(
                domain, real, workload, rho, rounds=T, queries_per_round=K,
                accounting=self.accounting, start=self._start(domain, rng),
                iterations=int(self.iterations),
                learning_rate=float(self.learning_rate), rng=rng, bar=bar)
        finally:
            bar.close()
        self.domain_ = domain
        self.workload_ = workload
        self.answered_ = fitted.answered
        self.noisy_answers_ = fitted.noisy
        self.sigma_ = fitted.sigma
        self.rho_ = rho
        self.epsilon_ = epsilon_of_rho(rho, float(self.delta))
        self.logits_ = fitted.logits
        # From the categories (public): the data's dtype depends on its values.
        self.dtypes_ = domain.dtypes()
        self.n_records_ = n
        return self

    def sample(self, n: int | None = None, *, random_state=None) -> pd.DataFrame:
        """Draw synthetic records from the relaxed table (randomized rounding).

        Each relaxed record is used equally often (n / n_synthetic times,
        the remainder at random), each column drawn from its probabilities.
        Post-processing: no privacy is spent.

        Parameters
        ----------
        n : int or None, default=None
            Records to draw (default: as many as the private data).
        random_state : None, int or Generator, default=None

        Returns
        -------
        DataFrame
            The original columns, with their dtypes where the categories
            allow.
        """
        check_is_fitted(self, "logits_")
        n = check_draws(self.n_records_ if n is None else n, "DPRAP.sample")
        rng = check_random_state(random_state, owner="DPRAP.sample")
        rows = self._rows(self.logits_, n, rng)
        return draw_records(self.domain_, relaxed_probs(self.domain_,
                                                        self.logits_),
                            rows, rng, self.dtypes_)

    def released_cells(self) -> ReleasedCells:
        """Return the released cells against the relaxed table's (the plot's)."""
        check_is_fitted(self, "logits_")
        return ReleasedCells(
            {"released": self._cells(self.logits_, self.answered_,
                                     self.noisy_answers_)},
            f"{type(self).__name__}: {len(self.workload_)} marginals, "
            f"({self.epsilon_:.3g}, {self.delta:g})-differential privacy")
