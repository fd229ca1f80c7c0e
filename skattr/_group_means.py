"""Means within each group of a secret: the share hidden exactly, each record by DP.

The mean weight of women and of men, published without revealing how many
women the data holds, and protecting each person: each group of the secret
is subsampled to a public size (:mod:`skattr._subsample`: under the
attribute-privacy model the subsamples have one law whatever the share, so
nothing computed from them reveals it), and each group's clipped means are
released with zCDP Gaussian noise calibrated to that public size. The
argument is the synthetic tables' (``docs/synthetic.md``): the subsamples
coupled between neighbouring datasets, a record that may change group
moving both groups' means (the budget halved) or, with
``neighbours="same-group"``, one (the whole budget each).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from skattr._certificate import Method, MethodStep
from skattr._clipping import robust_ranges
from skattr._data import secret_indicator
from skattr._plain import plain_subsampled
from skattr._random import check_random_state
from skattr._release import Certificate
from skattr._secret import Secret
from skattr._subsample import (
    neighbours_assumption,
    public_sizes,
    share_certificate,
    subsample_groups,
)
from skattr._validation import (
    check_unique_labels,
    column_labels,
    numeric_block,
)
from skattr.dp import check_privacy_level, epsilon_of_rho, rho_of_epsilon
from skattr.exceptions import DataValidationError, InvalidParameterError

__all__ = ["GroupMeans", "group_means"]

_GROUPS = ("inside", "outside")


@dataclass(frozen=True, eq=False)
class GroupMeans:
    """Each group's released means, and what their certificates say.

    Attributes
    ----------
    values : DataFrame
        One row a group (the secret's group, then the rest), one column a
        statistic: the noisy clipped mean of the group's kept records.
    noise_sd : DataFrame
        The Gaussian noise's sd of each value (same layout).
    bounds : dict column -> (low, high)
        The clipping ranges (public).
    group_sizes : dict
        Each group's public size: the records of it the means were read from.
    certificate : Certificate
        The share's guarantee (epsilon 0; delta 0 under dataset privacy,
        the size bound's failure chance under distributional).
    records_certificate : Certificate
        Each record's (epsilon, delta)-differential privacy.
    secret : str
        What is hidden.
    n : int
        The records of the data.
    neighbours : str
        Differential privacy's neighbouring datasets.
    what : str
        The share hidden, in words (``"proportion(sex == 'F')"``).
    """

    values: pd.DataFrame
    noise_sd: pd.DataFrame
    bounds: dict
    group_sizes: dict
    certificate: Certificate
    records_certificate: Certificate
    secret: str
    n: int
    neighbours: str
    what: str = ""

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Return each value's Gaussian interval for its kept records' clipped mean.

        The interval covers the mean of the group's kept (subsampled)
        records, clipped to ``bounds``, with chance 1 - alpha: the noise's
        spread only, not the subsample's nor the clipping's.
        """
        if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
            raise InvalidParameterError(
                f"alpha must be in (0, 1), e.g. 0.05; got {alpha!r}.")
        from scipy.stats import norm

        half = norm.ppf(1 - alpha / 2) * self.noise_sd
        return pd.concat({"lower": self.values - half,
                          "upper": self.values + half}, axis=1)

    def in_plain_words(self) -> str:
        """Return both guarantees in plain words, each with what it assumes."""
        return plain_subsampled(
            self.secret, self.certificate, self.records_certificate,
            sizes=self.group_sizes, n=self.n, neighbours=self.neighbours,
            what="the means", hidden=self.what or None)

    def summary(self) -> str:
        """Return the values, their noise, and what is certified and assumed."""
        share, records = self.certificate, self.records_certificate
        lines = [self.in_plain_words(), "",
                 "Means (noise sd in brackets), clipped to "
                 + ", ".join(f"{c} [{lo:g}, {hi:g}]"
                             for c, (lo, hi) in self.bounds.items()) + ":"]
        for group, row in self.values.iterrows():
            cells = ", ".join(f"{c} {v:.6g} ({self.noise_sd.loc[group, c]:.3g})"
                              for c, v in row.items())
            lines.append(f"  {group}: {cells}")
        lines.append(f"The share: ({share.epsilon:g}, {share.delta:g})-"
                     f"{share.guarantee}. Certified by: {share.method}.")
        lines += [f"  Assumes: {a}." for a in share.assumptions]
        lines.append(f"Each record: ({records.epsilon:.6g}, "
                     f"{records.delta:g})-{records.guarantee}. Certified by: "
                     f"{records.method}.")
        lines += [f"  Assumes: {a}." for a in records.assumptions]
        return "\n".join(lines)


def group_means(data, columns, *, secret, bounds=None, reference=None,
                epsilon=1.0, delta=1e-6, privacy="dataset", neighbours="any",
                random_state=None) -> GroupMeans:
    """Release the means of ``columns`` within each group of ``secret``.

    Each group (the records the secret counts, and the rest) is subsampled
    to a public size, which hides the group's share exactly under the
    attribute-privacy model, and each group's clipped means are released
    with differential privacy for every record. Nothing is spent on the
    share.

    Parameters
    ----------
    data : DataFrame
        The private data (pandas; call ``.compute()`` on a Dask frame).
    columns : str or list of str
        Numeric columns whose means are released.
    secret : Secret
        ``Secret.proportion(column, value, pairs=...)`` (or a window or
        sets): the group, and the share hidden.
    bounds : dict column -> (low, high), optional
        Public clipping ranges. Without them, read from ``reference``.
    reference : DataFrame, optional
        Public data whose robust ranges (Tukey's far-out fences) clip the
        columns without ``bounds``. Never the private data.
    epsilon : float, default=1.0
    delta : float, default=1e-6
        Each record's (epsilon, delta)-differential privacy; under
        distributional privacy ``delta`` is also the share's (the chance a
        group is smaller than its public size, when nothing is released).
    privacy : {"dataset", "distributional"}, default="dataset"
    neighbours : {"any", "same-group"}, default="any"
        "any": a record replaced by any other, its group included (each
        group half the budget); "same-group": a record's group is public
        (each group the whole budget; a recorded assumption).
    random_state : None, int or Generator, default=None
        The subsample and the noise (secure by default).

    Returns
    -------
    GroupMeans

    Examples
    --------
    >>> import numpy as np, pandas as pd, skattr
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"sex": rng.choice(["F", "M"], 5000),
    ...                    "weight": rng.normal(70, 10, 5000)})
    >>> secret = skattr.Secret.proportion("sex", "F", pairs=[(0.4, 0.6)])
    >>> out = df.attrpriv.group_means("weight", secret=secret,
    ...                               bounds={"weight": (30, 150)},
    ...                               random_state=0)
    >>> out.group_sizes
    {'inside': 2000, 'outside': 2000}
    >>> out.noise_sd.round(2)     # (150 - 30) / 2000 / sqrt(2 rho / 2)
                    weight
    sex == 'F'        0.45
    not sex == 'F'    0.45
    """
    columns = _checked(data, columns, secret, epsilon, delta, privacy,
                       neighbours)
    ranges = _ranges(columns, bounds, reference, data)
    n = len(data)
    check_privacy_level(epsilon, delta, n, allow=None)
    # The sizes are public: refused here, before a value is read.
    sizes = public_sizes(secret, n, privacy, delta=float(delta))
    numeric_block(data, columns, what="the private data")   # NaN, inf, text
    rng = check_random_state(random_state, owner="group_means")
    kept = subsample_groups(data[[secret.column, *columns]], secret, sizes,
                            rng)
    member = np.asarray(secret_indicator(kept, secret,
                                         what="the private data")) == 1.0
    block = numeric_block(kept, columns, what="the private data")
    low = np.array([ranges[c][0] for c in columns])
    high = np.array([ranges[c][1] for c in columns])
    block = np.clip(block, low, high)
    rho = rho_of_epsilon(float(epsilon), float(delta))
    each = rho if neighbours == "same-group" else rho / 2
    d = len(columns)
    values, sds = {}, {}
    for g, rows in zip(_GROUPS, (member, ~member), strict=True):
        s = int(rows.sum())
        # One record replaced moves a column's mean by (high - low) / s; the
        # group's budget split evenly over its d means.
        sd = (high - low) / s / math.sqrt(2 * each / d)
        values[g] = block[rows].mean(axis=0) + sd * rng.standard_normal(d)
        sds[g] = sd
    labels = [secret.group_label, f"not {secret.group_label}"]
    frame = pd.DataFrame([values[g] for g in _GROUPS], index=labels,
                         columns=columns)
    noise = pd.DataFrame([sds[g] for g in _GROUPS], index=labels,
                         columns=columns)
    return GroupMeans(
        values=frame, noise_sd=noise,
        bounds={c: (float(ranges[c][0]), float(ranges[c][1])) for c in columns},
        group_sizes={"inside": sizes.inside, "outside": sizes.outside},
        certificate=share_certificate(secret, sizes),
        records_certificate=_records_certificate(
            sizes, each, rho, d, delta, neighbours,
            widest=float(np.max(high - low))),
        secret=secret.label, n=n, neighbours=neighbours,
        what=secret.share_label)


def _checked(data, columns, secret, epsilon, delta, privacy, neighbours):
    """Refuse bad input before any value is read; return the columns as a list."""
    if not isinstance(data, pd.DataFrame):
        raise DataValidationError(
            "group_means reads a pandas DataFrame (call .compute() on a Dask "
            f"frame first); got {type(data).__name__}.")
    if not isinstance(secret, Secret) or secret.property != "proportion":
        raise InvalidParameterError(
            "group_means needs secret=Secret.proportion(column, value, "
            "pairs=...): the group whose members' means are released and "
            "whose share is hidden.")
    if columns is None:
        raise InvalidParameterError(
            "group_means needs the columns whose means are released, e.g. "
            "group_means(df, 'weight', secret=...).")
    columns = list(column_labels(columns))
    check_unique_labels(data, what="the private data")
    absent = [c for c in [*columns, secret.column] if c not in data.columns]
    if absent:
        raise InvalidParameterError(
            f"The data has no column(s) {absent}; its columns: "
            f"{list(data.columns)}.")
    if secret.column in columns:
        raise InvalidParameterError(
            f"{secret.column!r} is the secret's column: within a group its "
            "mean is known; release other columns.")
    for name, value, ok in (
            ("epsilon", epsilon, isinstance(epsilon, (int, float))
             and not isinstance(epsilon, bool) and 0 < epsilon < math.inf),
            ("delta", delta, isinstance(delta, (int, float))
             and not isinstance(delta, bool) and 0 < delta < 1)):
        if not ok:
            raise InvalidParameterError(
                f"{name} must be a number in "
                f"{'(0, inf)' if name == 'epsilon' else '(0, 1)'}; got "
                f"{value!r}.")
    if privacy not in ("dataset", "distributional"):
        raise InvalidParameterError(
            f"privacy must be 'dataset' or 'distributional'; got {privacy!r}.")
    if neighbours not in ("any", "same-group"):
        raise InvalidParameterError(
            f"neighbours must be 'any' (a record replaced by any other, its "
            f"group included) or 'same-group'; got {neighbours!r}.")
    return columns


def _ranges(columns, bounds, reference, data) -> dict:
    """Return each column's public clipping range."""
    if bounds is not None and not isinstance(bounds, dict):
        raise InvalidParameterError(
            f"bounds= is a dict {{column: (low, high)}}; got "
            f"{type(bounds).__name__}.")
    found = {}
    for c, pair in (bounds or {}).items():
        if c not in columns:
            raise InvalidParameterError(
                f"bounds= names {c!r}, not among the columns released "
                f"({columns}).")
        try:
            low, high = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"bounds[{c!r}] is a pair (low, high) of numbers; got "
                f"{pair!r}.") from None
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise InvalidParameterError(
                f"bounds[{c!r}] must be finite with low < high; got "
                f"{pair!r}.")
        found[c] = (low, high)
    missing = [c for c in columns if c not in found]
    if missing and reference is None:
        raise InvalidParameterError(
            f"The clipping ranges of {missing} are public information: state "
            "them with bounds={column: (low, high)}, or pass reference= "
            "(public data) to read them from. The private data's own range "
            "would reveal its records.")
    if missing:
        if reference is data:
            raise InvalidParameterError(
                "reference= must be public data, not the private data itself.")
        if not isinstance(reference, pd.DataFrame):
            raise DataValidationError(
                "reference= is public data as a pandas DataFrame; got "
                f"{type(reference).__name__}.")
        if len(reference) == 0:
            raise DataValidationError(
                "The reference data has no records to read the clipping "
                "ranges from; state them with bounds={column: (low, high)}.")
        absent = [c for c in missing if c not in reference.columns]
        if absent:
            raise InvalidParameterError(
                f"The reference data has no column(s) {absent}; state their "
                "ranges with bounds={column: (low, high)}.")
        low, high = robust_ranges(numeric_block(reference, missing,
                                                what="the reference data"))
        for c, lo, hi in zip(missing, low, high, strict=True):
            if not lo < hi:
                raise InvalidParameterError(
                    f"Column {c!r} takes one value in the reference data; "
                    f"state its range with bounds={{{c!r}: (low, high)}}.")
            found[c] = (float(lo), float(hi))
    return found


def _records_certificate(sizes, each, rho, d, delta, neighbours, widest):
    composition = ("added (a record replaced by one of the other group "
                   "moves both groups' means)" if neighbours == "any" else
                   "the larger taken (a record moves its own group's means "
                   "only: parallel composition)")
    assumed = neighbours_assumption(sizes, neighbours)
    return Certificate(
        epsilon=float(epsilon_of_rho(rho, float(delta))),
        delta=float(delta),
        sensitivity=float(widest / min(sizes.inside, sizes.outside)),
        certified_by=Method((MethodStep.of(
            "zcdp.group-means", columns=d, rho_inside=each, rho_outside=each,
            composition=composition),)),
        assumed=(assumed,),
        guarantee="differential privacy", calibration="zcdp")
