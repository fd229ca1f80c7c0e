"""Attribute-private RAP: synthetic data that hides a group's share and every record.

The differentially private RAP (:mod:`skattr.synth._dp_rap`) fits the
table's marginals, and so publishes the share of every group faithfully:
the share of women, of high earners, whatever a company wants to hide.
Here each group of the secret (the records it counts, and the rest) is
first subsampled, uniformly and independently of the values, to a size
fixed by public information alone (:mod:`skattr._subsample`): under the
attribute-privacy model the subsamples have one law whatever the share, so
nothing computed from them reveals it (no noise is needed for the share).
Each group's subsample is then released as DPRAP releases a table (its
histograms with zCDP Gaussian noise, adaptive rounds allowed), which
protects every record, and fitted by its own relaxed table. The synthetic
table joins the two groups at a share that you state.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from skattr._certificate import Method, MethodStep
from skattr._data import secret_indicator
from skattr._persistence import persistable
from skattr._plain import plain_subsampled
from skattr._random import check_random_state
from skattr._release import Certificate
from skattr._secret import PRIVACY_HELP, Secret
from skattr._subsample import (
    neighbours_assumption,
    public_sizes,
    share_certificate,
    stated_shares,
    subsample_positions,
)
from skattr.dp import check_privacy_level, epsilon_of_rho, rho_of_epsilon
from skattr.exceptions import (
    InvalidParameterError,
    NotCertifiableError,
    PrivacyLeakWarning,
)
from skattr.synth._base import (
    Option,
    ReleasedCells,
    certificate_lines,
    check_draws,
)
from skattr.synth._dp_rap import check_rounds, marginal_sd, private_projection
from skattr.synth._rap import (
    OneHotDomain,
    answer,
    draw_records,
    relaxed_probs,
)
from skattr.synth._rap_base import RAPBase
from skattr.synth._registry import register_synthesizer
from skattr.utils._param_validation import (
    Interval,
    Options,
)
from skattr.utils._progress import PROGRESS_CONSTRAINT, progress_bar
from skattr.utils._stack import caller_stacklevel

__all__ = ["AttributePrivateRAP", "group_answers"]

_GROUPS = ("inside", "outside")

#: What a table fitted without differential privacy exposes (the warning).
UNPROTECTED = (
    "individuals=None: the synthetic table hides the group's share but "
    "protects no record. Its marginals are the kept records' exact shares, "
    "so a rare combination of values (one person's) can reappear in it, and "
    "whether a person is in the data can be inferred. Leave individuals at "
    "its default ('dp') to protect each record with differential privacy.")


@register_synthesizer
@persistable(estimator=True)
class AttributePrivateRAP(RAPBase):
    """Relaxed Adaptive Projection that hides a group's share and protects each record.

    Each group of the secret (the records it counts, and the rest) is
    subsampled to a public size (the least it can hold under the secret),
    uniformly at random and independently of the values; under the
    attribute-privacy model the subsamples then have the same law under
    every secret, so the share is hidden exactly (epsilon 0; delta 0 under
    dataset privacy, the size bound's failure chance under distributional).
    Each group's subsample is released as :class:`DPRAP` releases a table:
    its k-way marginals as shares of the group (its histograms) with zCDP
    Gaussian noise, one round or adaptive rounds, then fitted by its own
    relaxed table: (epsilon, delta)-differential privacy for every record.
    The synthetic table joins the groups at ``share``.

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
    delta : float, default=1e-6
        Each record's (epsilon, delta)-differential privacy; under
        distributional privacy ``delta`` is also the chance that a group of
        the data is smaller than its public size (then nothing is released):
        the share's delta.
    privacy : {"dataset", "distributional"}, default="dataset"
        Dataset privacy hides the realised share (pairs on the grid k / n,
        a stated pair off it as every grid pair around it); distributional
        hides the chance each record is in the group (the group's size is
        then a binomial quantile, failing with chance ``delta``).
    share : float or None, default=None
        The secret group's share in the synthetic table (None: the middle of
        the pairs' values). Stated, never read from the data.
    individuals : {"dp"} or None, default="dp"
        "dp": every record protected by differential privacy. None: the
        share hidden, no record protected (the histograms exact; a
        :class:`~skattr.exceptions.PrivacyLeakWarning` says what that
        exposes).
    neighbours : {"any", "same-group"}, default="any"
        Differential privacy's neighbouring datasets. "any": one record
        replaced by any other, its group included; such a record can move
        both groups' subsamples, so each group gets half the budget.
        "same-group": a record's group is public and kept (a recorded
        assumption); each group gets the whole budget (parallel
        composition: a record moves one group's subsample only).
    k : int, default=3
    n_marginals : int or None, default=64
        As :class:`DPRAP`: the workload, drawn from ``random_state``.
    marginals : list of tuple or None, default=None
        The workload by column names, chosen from public information (e.g.
        :func:`select_marginals` on a public reference, which spends no
        privacy); None draws ``n_marginals`` k-way marginals at random.
    n_synthetic : int, default=1000
        Records of the two groups' relaxed tables together, half each (as
        many as :class:`DPRAP`'s one table: the fit costs about as much).
    rounds : int, default=1
        As :class:`DPRAP`, in each group: more rounds choose
        ``queries_per_round`` marginals a round by report-noisy-max on that
        group's relaxed table's errors.
    queries_per_round : int or None, default=None
    iterations : int, default=1000
    learning_rate : float, default=0.05
    progress : "auto" or bool, default="auto"
    random_state : None, int or Generator, default=None
        The subsample, the noise (secure by default) and the workload's draw.

    Attributes
    ----------
    domain_ : OneHotDomain
    workload_ : list of tuple
    group_sizes_ : dict group -> int
        Each group's public size: the records of it that were read.
    left_out_ : int
        Records of the data that no computation read.
    answered_ : dict group -> list of tuple
        The marginals each group answered, in the order released.
    noisy_answers_ : dict group -> list of ndarray
        Each group's released histograms ("inside", "outside").
    sigma_ : dict group -> float
        Each group's noise sd on every cell (shares of the group; 0 with
        ``individuals=None``).
    rho_ : dict group -> float
        Each group's zCDP budget (None with ``individuals=None``).
    certificate_ : Certificate
        The share's guarantee: what was certified and what was assumed.
    records_certificate_ : Certificate or None
        Each record's differential privacy (None with ``individuals=None``).
    logits_ : dict group -> ndarray
        The relaxed tables.

    Notes
    -----
    The share's guarantee holds for the table and anything computed from
    it, alone. Other releases of the same data (a ledger's) are not
    certified together with it: given the subsample, they read the records
    left out, whose number depends on the share (``docs/synthetic.md``).

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
    ...     n_synthetic=100, random_state=0).fit(df)
    >>> rap.group_sizes_                  # 0.45 of 4,000 women, 0.45 men
    {'inside': 1800, 'outside': 1800}
    >>> synthetic = rap.sample(1000, random_state=1)
    >>> float((synthetic["sex"] == "F").mean())       # the stated share
    0.5
    """

    #: skattr 0.3's fitted state (one coupled certificate) is not read.
    fitted_layout = 2

    method_name = "rap"
    description = (
        "Fit attribute-private Relaxed Adaptive Projection to a CSV or "
        "Parquet file: each group subsampled to a public size (the share "
        "hidden exactly), its k-way marginals released with differential "
        "privacy for every record, a synthetic table written whose share of "
        "the group is the one stated. Prints what was certified and assumed.")
    command_line = (
        Option("epsilon"),
        Option("delta", help="each record's delta; under distributional "
                             "privacy also the chance a group is smaller "
                             "than kept (default: 1e-6)"),
        Option("privacy", help=PRIVACY_HELP + "; default: dataset"),
        Option("share", help="the group's share in the synthetic table "
                             "(default: the middle of the pairs)"),
        Option("individuals", words={"dp": "dp", "none": None},
               help="dp (default): every record protected by differential "
                    "privacy; none: the share hidden, no record protected "
                    "(a warning says what that exposes)"),
        Option("neighbours",
               help="differential privacy's neighbours: a record replaced "
                    "by any other (default; each group half the budget), or "
                    "its group kept as public (each group the whole budget)"),
        Option("rounds", help="adaptive rounds in each group "
                              "(report-noisy-max chooses the marginals; "
                              "default: 1, all at once)"),
        Option("k", help="the marginals' order"),
        Option("n_marginals", flag="--marginals",
               help="k-way marginals answered, drawn at random (the noise "
                    "grows as their square root)"),
        Option("marginals", flag="--choose",
               words={"random": None, "reference": "reference"},
               help="which marginals: drawn at random (default) or the most "
                    "dependent in --reference (public: spends no privacy)"),
        Option("iterations", help="steps of each relaxed projection"),
    )

    _parameter_constraints = {
        "categories": [dict],
        "secret": [Secret],
        "epsilon": [Interval("real", 0, None, closed="neither")],
        "delta": [Interval("real", 0, 1, closed="neither")],
        "privacy": [Options(frozenset({"dataset", "distributional"}))],
        "share": [Interval("real", 0, 1, closed="neither"), None],
        "individuals": [Options(frozenset({"dp"})), None],
        "neighbours": [Options(frozenset({"any", "same-group"}))],
        "k": [Interval("integral", 1, None, closed="left")],
        "n_marginals": [Interval("integral", 1, None, closed="left"), None],
        "marginals": [list, tuple, None],
        "n_synthetic": [Interval("integral", 2, None, closed="left")],
        "rounds": [Interval("integral", 1, None, closed="left")],
        "queries_per_round": [Interval("integral", 1, None, closed="left"),
                              None],
        "iterations": [Interval("integral", 1, None, closed="left")],
        "learning_rate": [Interval("real", 0, None, closed="neither")],
        "progress": PROGRESS_CONSTRAINT,
        "random_state": ["random_state"],
    }

    def __init__(self, *, categories=None, secret=None, epsilon=1.0,
                 delta=1e-6, privacy="dataset", share=None, individuals="dp",
                 neighbours="any", k=3, n_marginals=64, marginals=None,
                 n_synthetic=1000, rounds=1, queries_per_round=None,
                 iterations=1000, learning_rate=0.05, progress="auto",
                 random_state=None):
        self.categories = categories
        self.secret = secret
        self.epsilon = epsilon
        self.delta = delta
        self.privacy = privacy
        self.share = share
        self.individuals = individuals
        self.neighbours = neighbours
        self.k = k
        self.n_marginals = n_marginals
        self.marginals = marginals
        self.n_synthetic = n_synthetic
        self.rounds = rounds
        self.queries_per_round = queries_per_round
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

    def _budgets(self) -> dict | None:
        """Return each group's zCDP budget (None: no differential privacy)."""
        if self.individuals is None:
            return None
        rho = rho_of_epsilon(float(self.epsilon), float(self.delta))
        # A record replaced by any other can move both groups' subsamples
        # (its group changes): the two releases compose, each half. With
        # its group kept it moves one group's only (parallel composition).
        each = rho if self.neighbours == "same-group" else rho / 2
        return dict.fromkeys(_GROUPS, each)

    def _fewest(self, budgets, marginals: int, rounds: int, per_round: int,
                cells: int) -> int:
        """Return the fewest records a group needs: noise sd at most 1 a cell.

        A group smaller than this would get Gaussian noise wider than a
        share's whole range on every cell (its marginals noise, not data).
        """
        if budgets is None:
            return 1
        each = (min(budgets.values()) / marginals if rounds == 1
                else min(budgets.values()) / (2 * rounds * per_round))
        # The sd falls as 1 / s: its value at s = 1 is the least s with sd <= 1.
        return max(1, int(np.ceil(marginal_sd(each, cells, 1) - 1e-12)))

    # -------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Subsample each group to its public size, release it, fit its table.

        Parameters
        ----------
        X : DataFrame
            The private data, with every column of ``categories``.
        y : None
            Ignored.

        Returns
        -------
        self : AttributePrivateRAP

        Raises
        ------
        InvalidParameterError
            A secret under which a group could hold too few records on
            ``len(X)`` records (naming an n that works), before any value
            is read.
        DataValidationError
            A group of the data smaller than its public size: nothing is
            released (under distributional privacy a chance counted in
            ``delta``).
        """
        domain, inside_cats = self._check(X)
        name = type(self).__name__
        rng = check_random_state(self.random_state, owner=name)
        workload = self._workload(domain, rng)
        T, K = check_rounds(self.rounds, self.queries_per_round, len(workload))
        budgets = self._budgets()
        n = len(X)
        check_privacy_level(None if budgets is None else self.epsilon,
                            self.delta, n, allow=None)
        # Every size is public: refused here, before a value is read.
        fewest = self._fewest(budgets, len(workload), T, K, 2)
        try:
            sizes = public_sizes(self.secret, n, self.privacy,
                                 delta=float(self.delta), least=fewest)
        except InvalidParameterError as exc:
            if fewest == 1:
                raise
            raise InvalidParameterError(
                f"{exc} (Below {fewest} records, a group's noise at epsilon="
                f"{self.epsilon:g} on {len(workload)} marginals is wider than "
                "a share's whole range on every cell: raise epsilon, answer "
                "fewer marginals, or use more records.)") from None
        # The table's share is stated, not certified: the secret's values as
        # stated (0.35 for 0.3 vs 0.4, whatever n), not their grid reading.
        share = self._share(stated_shares(self.secret))
        if self.individuals is None:
            warnings.warn(UNPROTECTED, PrivacyLeakWarning,
                          stacklevel=caller_stacklevel())
        codes = domain.codes(X)                 # refuses unseen values
        kept = subsample_positions(X[[self.secret.column]], self.secret,
                                   sizes, rng)
        parts = _split(domain, domain.onehot_of_codes(codes[kept]),
                       inside_cats, self.secret.column)
        bar = progress_bar(self.progress, total=2 * T * int(self.iterations),
                           desc=name, unit="step")
        fitted = {}
        half = int(self.n_synthetic) // 2
        rows = {"inside": int(self.n_synthetic) - half, "outside": half}
        try:
            for g in _GROUPS:
                fitted[g] = private_projection(
                    domain, parts[g], workload,
                    None if budgets is None else budgets[g], rounds=T,
                    queries_per_round=K, accounting="marginal",
                    start=self._start(domain, rng, rows[g]),
                    iterations=int(self.iterations),
                    learning_rate=float(self.learning_rate), rng=rng, bar=bar)
        finally:
            bar.close()
        self.certificate_ = share_certificate(self.secret, sizes)
        self.records_certificate_ = self._records_certificate(
            sizes, budgets, len(workload), T, K)
        self.domain_ = domain
        self.workload_ = workload
        self.group_sizes_ = {"inside": sizes.inside, "outside": sizes.outside}
        self.left_out_ = sizes.left_out
        self.answered_ = {g: fitted[g].answered for g in _GROUPS}
        self.noisy_answers_ = {g: fitted[g].noisy for g in _GROUPS}
        self.sigma_ = {g: float(fitted[g].sigma.max(initial=0.0))
                       for g in _GROUPS}
        self.rho_ = None if budgets is None else dict(budgets)
        self.share_ = share
        self.inside_categories_ = inside_cats
        self.logits_ = {g: fitted[g].logits for g in _GROUPS}
        # From the categories (public): the data's dtype depends on its values.
        self.dtypes_ = domain.dtypes()
        self.n_records_ = n
        return self

    def _records_certificate(self, sizes, budgets, marginals: int, T: int,
                             K: int) -> Certificate | None:
        if budgets is None:
            return None
        total = sum(budgets.values()) if self.neighbours == "any" else max(
            budgets.values())
        composition = (
            "added (a record replaced by one of the other group moves both "
            "groups' subsamples)" if self.neighbours == "any" else
            "the larger taken (a record moves its own group's subsample "
            "only: parallel composition)")
        rounds = ("one round" if T == 1 else
                  f"{T} rounds of {K} chosen by report-noisy-max, sensitivity "
                  "1 / s")
        neighbours = neighbours_assumption(sizes, self.neighbours)
        return Certificate(
            epsilon=float(epsilon_of_rho(total, float(self.delta))),
            delta=float(self.delta),
            sensitivity=float(np.sqrt(2.0) / min(sizes.inside, sizes.outside)),
            certified_by=Method((MethodStep.of(
                "zcdp.group-histograms", marginals=marginals, rounds=rounds,
                rho_inside=budgets["inside"], rho_outside=budgets["outside"],
                composition=composition),)),
            assumed=(neighbours,),
            guarantee="differential privacy", calibration="zcdp")

    # -------------------------------------------------------------- words
    def in_plain_words(self) -> str:
        """Return both guarantees in plain words, each with what it assumes.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from skattr import Secret
        >>> from skattr.synth import AttributePrivateRAP
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"sex": rng.choice(["F", "M"], 2000),
        ...                    "job": rng.choice(["a", "b"], 2000)})
        >>> rap = AttributePrivateRAP(
        ...     categories={"sex": ["F", "M"], "job": ["a", "b"]},
        ...     secret=Secret.proportion("sex", "F", pairs=[(0.4, 0.6)]),
        ...     k=1, n_synthetic=50, iterations=50, random_state=0).fit(df)
        >>> words = rap.in_plain_words()
        >>> print(words[:words.index("):") + 1])  # doctest: +NORMALIZE_WHITESPACE
        The share of the records with sex == 'F' is hidden exactly (dataset
        attribute privacy, epsilon 0, delta 0)
        """
        check_is_fitted(self, "logits_")
        return plain_subsampled(
            self.secret.label, self.certificate_, self.records_certificate_,
            sizes=self.group_sizes_, n=self.n_records_,
            neighbours=self.neighbours, share_in_table=self.share_,
            hidden=self.secret.share_label)

    @property
    def noise_sd(self) -> dict:
        """Each group's Gaussian noise sd on every cell (shares of the group)."""
        return dict(self.sigma_)

    def summary_lines(self) -> list[str]:
        """Return the record's lines: the marginals fitted, both certificates."""
        check_is_fitted(self, "logits_")
        share, records = self.certificate_, self.records_certificate_
        lines = [
            f"It was fitted to each group's {len(self.workload_)} marginals "
            f"(shares of the group in each cell), computed from "
            f"{self.group_sizes_['inside']} records of the group and "
            f"{self.group_sizes_['outside']} others.",
            *certificate_lines("The share", share)]
        if records is None:
            lines.append("Each record: not protected (individuals=None).")
        else:
            sd = ", ".join(f"{g} the group {v:.3g}"
                           for g, v in self.noise_sd.items())
            lines += certificate_lines(
                "Each record", records, precision=".6g",
                detail=f"; noise Gaussian, sd {sd} (shares of the group, on "
                       "every cell)")
        return lines

    def released_cells(self) -> ReleasedCells:
        """Return each group's released cells against its relaxed table's."""
        check_is_fitted(self, "logits_")
        cert, records = self.certificate_, self.records_certificate_
        guarantee = (f"the share: ({cert.epsilon:g}, {cert.delta:g})-"
                     f"{cert.guarantee}; " + (
                         "no record protected" if records is None else
                         f"each record: ({records.epsilon:.3g}, "
                         f"{records.delta:g})-DP"))
        return ReleasedCells(
            {f"{g} the group": self._cells(self.logits_[g], self.answered_[g],
                                           self.noisy_answers_[g])
             for g in _GROUPS},
            f"{type(self).__name__}: {len(self.workload_)} marginals, "
            f"{guarantee}")

    # ------------------------------------------------------------ sample
    def sample(self, n: int | None = None, *, random_state=None) -> pd.DataFrame:
        """Draw synthetic records, the group's at the share ``share_``.

        Each group's records come from its relaxed table (randomized
        rounding). Post-processing: no privacy is spent. The secret's column
        of a group's records takes only that group's categories.

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


def _split(domain: OneHotDomain, real: list, inside_categories,
           column) -> dict:
    """Return each group's one-hot blocks, refusing a group with no record."""
    j = domain.columns.index(column)
    member = real[j] @ np.asarray(inside_categories, dtype=float) > 0.5
    out = {}
    for g, rows in zip(_GROUPS, (member, ~member), strict=True):
        if not rows.any():
            raise NotCertifiableError(
                f"The data has no record {g} the secret's group, so that "
                "group's marginals are not defined; the certificate covers "
                "data with both groups present.")
        out[g] = [block[rows] for block in real]
    return out


def group_answers(domain: OneHotDomain, real: list, inside_categories,
                  column, workload) -> dict:
    """Return each group's histograms: its records' shares in each marginal's cells.

    ``real`` is the data's one-hot blocks; a record is inside the group when
    its category of ``column`` is one of ``inside_categories`` (a mask).
    Refuses data without a record in a group (its histograms undefined).

    Examples
    --------
    >>> import pandas as pd
    >>> from skattr.synth import OneHotDomain
    >>> d = OneHotDomain({"sex": ["F", "M"], "job": ["a", "b"]})
    >>> df = pd.DataFrame({"sex": ["F", "F", "M"], "job": ["a", "b", "b"]})
    >>> out = group_answers(d, d.onehot(df), [True, False], "sex", [(1,)])
    >>> out["inside"][0].tolist(), out["outside"][0].tolist()
    ([0.5, 0.5], [0.0, 1.0])
    """
    parts = _split(domain, real, inside_categories, column)
    return {g: [answer(parts[g], m) for m in workload] for g in _GROUPS}
