"""Attribute-private RAP: synthetic data that hides the share of a group.

The differentially private RAP (:mod:`skattr.synth._dp_rap`) fits the
table's marginals, and so publishes the share of every group faithfully:
the share of women, of high earners, whatever a company wants to hide.
Here the secret's group and the rest are each fitted to their *own*
marginals: each group's share of records in each cell (its histograms).
Under both secrets of a pair a group's records come from the same law,
so its histograms move only by which records happen to be drawn
(:mod:`skattr.laws._group_histograms` bounds that move for every law of
the records, with no reference data), and Gaussian noise on every cell
hides it. The synthetic table joins the two groups at a share that you
state (by default the middle of the pairs hidden): it carries nothing of
the data's share.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from skattr._certificate import Assumption, Method, MethodStep
from skattr._data import secret_indicator
from skattr._persistence import persistable
from skattr._random import check_random_state
from skattr._release import Certificate
from skattr._secret import Secret
from skattr.calibration._coupled import coupled_required_noise_variance
from skattr.exceptions import (
    InvalidParameterError,
    NotCertifiableError,
)
from skattr.laws._base import grid_assumptions, secret_pairs
from skattr.laws._group_histograms import (
    group_histogram_distances,
    group_sizes,
    histogram_units,
)
from skattr.synth._base import Synthesizer
from skattr.synth._rap import (
    OneHotDomain,
    answer,
    check_draws,
    draw_records,
    relaxed_probs,
    relaxed_projection,
)
from skattr.utils._param_validation import (
    Interval,
    Options,
)
from skattr.utils._progress import PROGRESS_CONSTRAINT, progress_bar

__all__ = ["AttributePrivateRAP"]

#: Share of delta spent on the group sizes' bounds (distributional privacy).
_SIZE_SHARE = 0.1
_GROUPS = ("inside", "outside")


@persistable(estimator=True)
class AttributePrivateRAP(Synthesizer):
    """Relaxed Adaptive Projection that hides a group's share (attribute privacy).

    Each group of the secret (the records it counts, and the rest) gets its
    own relaxed table, fitted to that group's k-way marginals as shares of
    the group (its histograms), released with Gaussian noise. The noise is
    certified through the coupling of the two secrets' datasets, for every
    law of the records independent given their group: no reference data, no
    model of the columns. The synthetic table joins the groups at ``share``.

    Parameters
    ----------
    categories : dict column -> list
        Every category of every column, the secret's included (public: a
        value of the data outside them is refused).
    secret : Secret
        ``Secret.proportion(column, value, pairs=...)`` (or a window or
        sets) on one of the columns: the share of records it counts is
        hidden.
    epsilon : float, default=1.0
    delta : float, default=1e-3
        The (epsilon, delta) attribute-privacy guarantee, for every pair.
    privacy : {"dataset", "distributional"}, default="dataset"
        Dataset privacy hides the realised share (pairs on the grid k / n,
        a stated pair off it as every grid pair around it: the group sizes
        run from the least rounded share's records inside to the largest's);
        distributional hides the chance each record is in the group.
    share : float or None, default=None
        The secret group's share in the synthetic table (None: the middle of
        the pairs' values). Stated, never read from the data.
    k : int, default=3
    n_marginals : int or None, default=64
        As :class:`DPRAP`: the workload, drawn from ``random_state``.
        The noise grows as the square root of the marginals answered.
    marginals : list of tuple or None, default=None
        The workload by column names, chosen from public information (e.g.
        :func:`select_marginals` on a public reference, which spends no
        privacy); None draws ``n_marginals`` k-way marginals at random.
    n_synthetic : int, default=1000
        Records of each group's relaxed table.
    iterations : int, default=1000
    learning_rate : float, default=0.05
    progress : "auto" or bool, default="auto"
    random_state : None, int or Generator, default=None
        The noise (secure by default) and the workload's draw.

    Attributes
    ----------
    domain_ : OneHotDomain
    workload_ : list of tuple
    noisy_answers_ : dict group -> list of ndarray
        Each group's released histograms ("inside", "outside").
    sigma_ : dict group -> float
        Each group's noise sd on every cell (shares of the group).
    certificate_ : Certificate
        What was certified and what was assumed.
    logits_ : dict group -> ndarray
        The relaxed tables.

    Notes
    -----
    Only one release is made (all marginals of both groups at once), so it
    is certified alone; the groups' histograms reveal how each group looks,
    not how large it is. The synthetic table's share of the group is
    ``share``: use it for nothing. Adaptive rounds are not offered: a choice
    of marginals from the noisy answers would need a certificate of its own
    (as large as answering every candidate); choose them from public data
    instead (``marginals=select_marginals(reference, ...)``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skattr import Secret
    >>> from skattr.synth import AttributePrivateRAP
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"sex": rng.choice(["F", "M"], 4000),
    ...                    "job": rng.choice(["a", "b", "c"], 4000)})
    >>> rap = AttributePrivateRAP(
    ...     categories={"sex": ["F", "M"], "job": ["a", "b", "c"]},
    ...     secret=Secret.proportion("sex", "F", pairs=[(0.45, 0.55)]), k=1,
    ...     privacy="distributional", n_synthetic=100, random_state=0).fit(df)
    >>> synthetic = rap.sample(1000, random_state=1)
    >>> float((synthetic["sex"] == "F").mean())       # the stated share
    0.5
    """

    _parameter_constraints = {
        "categories": [dict],
        "secret": [Secret],
        "epsilon": [Interval("real", 0, None, closed="neither")],
        "delta": [Interval("real", 0, 1, closed="neither")],
        "privacy": [Options(frozenset({"dataset", "distributional"}))],
        "share": [Interval("real", 0, 1, closed="neither"), None],
        "k": [Interval("integral", 1, None, closed="left")],
        "n_marginals": [Interval("integral", 1, None, closed="left"), None],
        "marginals": [list, tuple, None],
        "n_synthetic": [Interval("integral", 1, None, closed="left")],
        "iterations": [Interval("integral", 1, None, closed="left")],
        "learning_rate": [Interval("real", 0, None, closed="neither")],
        "progress": PROGRESS_CONSTRAINT,
        "random_state": ["random_state"],
    }

    def __init__(self, *, categories=None, secret=None, epsilon=1.0,
                 delta=1e-3, privacy="dataset", share=None, k=3,
                 n_marginals=64, marginals=None, n_synthetic=1000,
                 iterations=1000,
                 learning_rate=0.05, progress="auto", random_state=None):
        self.categories = categories
        self.secret = secret
        self.epsilon = epsilon
        self.delta = delta
        self.privacy = privacy
        self.share = share
        self.k = k
        self.n_marginals = n_marginals
        self.marginals = marginals
        self.n_synthetic = n_synthetic
        self.iterations = iterations
        self.learning_rate = learning_rate
        self.progress = progress
        self.random_state = random_state

    # ------------------------------------------------------------ checks
    def _check(self, X) -> tuple[OneHotDomain, np.ndarray]:
        """Validate; return the domain and the secret's categories in the group."""
        name = type(self).__name__
        if self.secret is None:
            raise InvalidParameterError(
                f"{name} needs secret=: the secret whose group's share is "
                "hidden (Secret.proportion(column, value, pairs=...)).")
        domain = self._checked(X)
        secret = self.secret
        if secret.property != "proportion":
            raise InvalidParameterError(
                f"{name} hides the share of a group: state the secret as "
                "Secret.proportion(column, value, ...); a mean secret has no "
                "group to fit apart.")
        if secret.column not in domain.columns:
            raise InvalidParameterError(
                f"The secret's column {secret.column!r} is not among the "
                f"domain's columns {domain.columns}; add it with its "
                "categories.")
        cats = pd.DataFrame({secret.column: list(
            domain.categories[secret.column])})
        try:
            inside = secret_indicator(cats, secret,
                                      what="the categories").astype(bool)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"The secret's value must decide each category of "
                f"{secret.column!r} ({domain.categories[secret.column]}); "
                f"it could not ({exc}). Name the group's categories, e.g. "
                "Secret.proportion(column, skattr.predicates.OneOf([...]), "
                "...) with the bins' labels of a binned column.") from exc
        if inside.all() or not inside.any():
            raise InvalidParameterError(
                f"The secret {secret.label} counts "
                f"{'every' if inside.all() else 'no'} category of "
                f"{secret.column!r} (its categories: "
                f"{domain.categories[secret.column]}): there is no group to "
                "hide the share of. Check the secret's value.")
        return domain, inside

    def _share(self, pairs) -> float:
        if self.share is not None:
            return float(self.share)
        values = np.asarray(pairs, dtype=float)
        return float((values.min() + values.max()) / 2)

    # -------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Release both groups' marginals and fit a relaxed table to each.

        Parameters
        ----------
        X : DataFrame
            The private data, with every column of ``categories``.
        y : None
            Ignored.

        Returns
        -------
        self : AttributePrivateRAP
        """
        domain, inside_cats = self._check(X)
        rng = check_random_state(self.random_state, owner=type(self).__name__)
        workload = self._workload(domain, rng)
        share, sizes, law, tau, sd = self._calibrate(len(X), len(workload))
        real = domain.onehot(X)                 # refuses unseen values
        truth = group_answers(domain, real, inside_cats, self.secret.column,
                              workload)
        bar = progress_bar(self.progress, total=2 * int(self.iterations),
                           desc=type(self).__name__, unit="step")
        noisy, logits = {}, {}
        try:
            for g in _GROUPS:
                noisy[g] = [t + sd[g] * rng.standard_normal(t.size)
                            for t in truth[g]]
                logits[g] = relaxed_projection(
                    domain, workload, noisy[g], self._start(domain, rng),
                    iterations=self.iterations,
                    learning_rate=self.learning_rate, bar=bar)
        finally:
            bar.close()
        self.certificate_ = Certificate(
            epsilon=float(self.epsilon), delta=float(self.delta),
            sensitivity=float(law.closeness(float(self.delta))),
            certified_by=Method((MethodStep.of(
                "coupling.group-histograms", marginals=len(workload),
                records=int(sizes.moved.max())),)),
            assumed=(Assumption.of("records.independent", reads="any law",
                                   privacy=self.privacy),
                     *(grid_assumptions((self.secret,), len(X))
                       if self.privacy == "dataset" else ())),
            guarantee=f"{self.privacy} attribute privacy",
            calibration="coupled")
        self.domain_ = domain
        self.workload_ = workload
        self.noisy_answers_ = noisy
        self.sigma_ = sd
        self.share_ = share
        self.inside_categories_ = inside_cats
        self.logits_ = logits
        self.dtypes_ = {c: str(X[c].dtype) for c in domain.columns}
        self.n_records_ = len(X)
        return self

    def _calibrate(self, n: int, marginals: int):
        """Return the share, group sizes, distance law, tau and each group's sd."""
        pairs = secret_pairs(self.secret, n, self.privacy)
        # The table's share is stated, not certified: the pairs as stated
        # (0.35 for 0.3 vs 0.4, whatever n), not their grid neighbours.
        share = self._share(np.column_stack(self.secret.pair_values(n)))
        failure = (_SIZE_SHARE * float(self.delta)
                   if self.privacy == "distributional" else 0.0)
        sizes = group_sizes(n, pairs, self.privacy, failure)
        units = histogram_units(sizes, (share, 1 - share))
        law = group_histogram_distances(sizes, marginals, units)
        tau = coupled_required_noise_variance(law, float(self.epsilon),
                                              float(self.delta)) ** 0.5
        return (share, sizes, law, tau,
                dict(zip(_GROUPS, (tau * units).tolist(), strict=True)))

    def sample(self, n: int | None = None, *, random_state=None) -> pd.DataFrame:
        """Draw synthetic records, the group's at the share ``share_``.

        Each group's records come from its relaxed table (randomized
        rounding). Post-processing: no privacy is spent. The secret's column of a
        group's records takes only that group's categories.

        Parameters
        ----------
        n : int or None, default=None
            Records to draw (default: as many as the private data).
        random_state : None, int or Generator, default=None

        Returns
        -------
        DataFrame
            The original columns, rows of both groups shuffled together.
        """
        check_is_fitted(self, "logits_")
        owner = f"{type(self).__name__}.sample"
        n = check_draws(self.n_records_ if n is None else n, owner)
        rng = check_random_state(random_state, owner=owner)
        inside = int(round(self.share_ * n))
        j = self.domain_.columns.index(self.secret.column)
        parts = []
        for g, count, keep in (("inside", inside, self.inside_categories_),
                               ("outside", n - inside,
                                ~self.inside_categories_)):
            if count == 0:
                continue
            table = self.logits_[g]
            rows = self._rows(table, count, rng)
            probs = relaxed_probs(self.domain_, table)
            # The group's records take only its own categories of the secret.
            masked = probs[j] * keep
            probs[j] = np.where(masked.sum(axis=1, keepdims=True) > 0, masked,
                                keep / keep.sum())
            parts.append(draw_records(self.domain_, probs, rows, rng,
                                      self.dtypes_))
        out = pd.concat(parts, ignore_index=True)
        return out.iloc[rng.permuted(np.arange(len(out)))].reset_index(drop=True)


def group_answers(domain: OneHotDomain, real: list, inside_categories,
                  column, workload) -> dict:
    """Return each group's histograms: its records' shares in each marginal's cells.

    ``real`` is the data's one-hot blocks; a record is inside the group when
    its category of ``column`` is one of ``inside_categories`` (a mask).
    Refuses data without a record in a group (its histograms undefined).
    """
    j = domain.columns.index(column)
    member = real[j] @ np.asarray(inside_categories, dtype=float) > 0.5
    out = {}
    for g, rows in zip(_GROUPS, (member, ~member), strict=True):
        if not rows.any():
            raise NotCertifiableError(
                f"The data has no record {g} the secret's group, so that "
                "group's marginals are not defined; the certificate covers "
                "data with both groups present.")
        part = [block[rows] for block in real]
        out[g] = [answer(part, m) for m in workload]
    return out

