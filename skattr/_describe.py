"""``df.attrpriv.describe``: count, means and quartiles in one certified ledger.

The private counterpart of ``DataFrame.describe()`` (issue 28): the row count
(public in skattr's model: ``n`` is never hidden), the columns' means and
their quartiles (or other percentiles), released through one
:class:`~skattr.Ledger` whose budget is the ``epsilon`` asked for, so the
whole table is certified jointly: half the budget on the means, the rest on
the percentiles (``epsilon="remaining"``). Several percentiles take Gaussian
noise (``apgm``) for every cell, certified over the bands' one coupling;
one percentile alone Laplace noise.
"""

from __future__ import annotations

import math
import textwrap
import warnings
from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd

from skattr._secret import Secret
from skattr._statistic import Statistic
from skattr.exceptions import (
    BudgetExceededError,
    DataValidationError,
    InvalidParameterError,
)
from skattr.utils._stack import warnings_once

__all__ = ["Description", "describe", "described_columns"]

#: What the summary says when percentiles were put in increasing order.
REARRANGED = (
    "Each column's percentiles are shown in increasing order, as the true "
    "ones are: a free post-processing of the released values, never further "
    "from the true percentiles taken together (the releases in the ledger "
    "keep them as drawn). The sd shown is the noise of the release at that "
    "level; a cell whose value was moved has an error that is not exactly "
    "that noise.")


@dataclass(frozen=True)
class Description:
    """A private ``describe()``: the released table and the ledger behind it.

    Attributes
    ----------
    table : DataFrame
        Rows ``count``, ``mean`` and each percentile (``25%``, ...), a column
        per described column, as ``DataFrame.describe()`` lays them out.
    noise_std : DataFrame
        The standard deviation of the noise on each cell (0 for the count).
    ledger : Ledger
        The ledger of the releases: ``ledger.spent`` is the table's joint
        guarantee, ``ledger.releases`` each release with its certificate.
    rearranged : bool
        Whether some column's percentiles were put in increasing order
        (:func:`describe`); the releases keep them as drawn.
    """

    table: pd.DataFrame
    noise_std: pd.DataFrame
    ledger: object
    rearranged: bool = False

    def to_frame(self) -> pd.DataFrame:
        """Return a copy of the table (percentiles in increasing order)."""
        return self.table.copy()

    def in_plain_words(self) -> str:
        """Return the table's joint guarantee in plain sentences."""
        return self.ledger.in_plain_words()

    def summary(self) -> str:
        """Return the plain words, then each cell as value +/- noise sd.

        The plain words are the ledger's joint guarantee, then which cells
        are mostly noise (:func:`skattr._plain.mostly_noise`), if any.
        """
        from skattr._plain import plain_noise_of

        # Series.map: DataFrame.map needs pandas 2.1.
        cells = self.table.apply(lambda c: c.map(lambda v: f"{v:.6g}"))
        spread = self.noise_std.apply(
            lambda c: c.map(lambda v: "" if v == 0 else f" +/- {v:.3g}"))
        shown = cells + spread
        words = " ".join(filter(None, (self.in_plain_words(), plain_noise_of(
            e.release for e in self.ledger.releases), REARRANGED
            if self.rearranged else "")))
        return "\n".join([*textwrap.wrap(words, 88, break_on_hyphens=False), "",
                          "value +/- noise sd:", shown.to_string()])

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        import html

        words = " ".join(filter(None, (self.in_plain_words(), REARRANGED
                                      if self.rearranged else "")))
        return f"<p>{html.escape(words)}</p>\n" + self.table.to_html()


def describe(frame, columns, *, secret, reference, epsilon=1.0, delta=1e-3,
             percentiles=(0.25, 0.5, 0.75), theta="auto", bounds="robust",
             allocate="error", random_state=None) -> Description:
    """Release count, means and percentiles of ``columns`` in one ledger.

    Parameters
    ----------
    frame : DataFrame
        The private data (never modified).
    columns : str or list of str
        The numeric columns to describe.
    secret, reference, theta, bounds, random_state
        As for :meth:`AttributePrivacyAccessor.ledger`.
    epsilon, delta : float, default=(1.0, 1e-3)
        The joint guarantee of the whole table (the ledger's budget).
    percentiles : sequence of float in [0, 1], default=(0.25, 0.5, 0.75)
        The quantile levels released; empty for means alone. Each column's
        are shown in increasing order of level (noise can swap them; the
        sorted values are never further from the true ones taken together,
        a free post-processing the summary states).
    allocate : {"error", "relative"}, dict or Series, default="error"
        How each release shares its Gaussian noise among its values
        (:class:`~skattr.mechanisms.AttributePrivateGaussian`): the least
        expected squared error; each value's sd in proportion to its
        value in the reference data (``"relative"``, equal relative errors:
        a column of large values, weight in pounds, takes more noise; one
        far from 0, a temperature, much more than its spread); or a public
        positive scale per column, such as ``reference[columns].std()``
        (each cell's sd in proportion to its column's scale). Anything but
        ``"error"`` needs the default Theta and a secret hiding a
        proportion (Gaussian noise over the reference's bands).

    Returns
    -------
    Description
    """
    from skattr._ledger import Ledger

    columns = [columns] if isinstance(columns, str) else list(columns)
    if not columns:
        raise InvalidParameterError(
            "describe() needs at least one column: describe(['age', ...]).")
    if reference is None and isinstance(theta, str) and theta == "auto":
        raise InvalidParameterError(
            "describe() fits its Theta on reference data: pass reference=<a "
            "DataFrame of public data from the same population> (on the "
            "command line --reference FILE).")
    levels = _levels(percentiles)
    if any(not 0.0 <= q <= 1.0 for q in levels) or len(set(levels)) != len(levels):
        hint = (" Levels are fractions: 0.75 for the 75th percentile."
                if any(1.0 < q <= 100.0 for q in levels) else "")
        raise InvalidParameterError(
            f"percentiles must be distinct levels in [0, 1], such as "
            f"(0.25, 0.5, 0.75); got {tuple(levels)!r}.{hint}")
    if len({f"{100 * q:g}%" for q in levels}) != len(levels):
        raise InvalidParameterError(
            f"percentiles {tuple(percentiles)!r} are distinct but their rows "
            "would read the same (each labelled with 6 digits, e.g. 12.3457%); "
            "give levels that differ in their first six digits.")
    if not (isinstance(epsilon, Real) and not isinstance(epsilon, bool)
            and np.isfinite(epsilon) and epsilon > 0):
        raise InvalidParameterError(
            f"epsilon is the whole table's joint guarantee, a positive number; "
            f"got {epsilon!r}.")
    if isinstance(bounds, dict):
        missing = [c for c in columns if c not in bounds]
        if missing:
            # Said before any work, in describe()'s words (the ledger would
            # name one of its releases).
            raise InvalidParameterError(
                f"bounds names no (low, high) for column(s) {missing}; give "
                "one for every column described (bounds={column: (low, "
                "high), ...}; on the command line --bounds COLUMN=LO,HI for "
                "each), or pass bounds='robust' (the default: each column's "
                "reference range within its far-out fences) or 'reference'.")
    scales = _column_scales(allocate, columns)
    ledger = Ledger(frame, secret=secret, reference=reference,
                    budget=(float(epsilon), delta), theta=theta,
                    bounds=bounds, random_state=random_state)
    share = float(epsilon) / 2 if levels else float(epsilon)
    noise = {"mechanism": "apgm"} if _gaussian(ledger, columns, levels) else {}
    levels_noise = noise
    if not (isinstance(allocate, str) and allocate == "error"):
        if not ledger.gaussian_over_bands:
            raise InvalidParameterError(
                "describe(allocate=...) shares Gaussian noise over the "
                "reference's confidence bands, which this table's Theta or "
                "secret does not give (theta='auto' and a Secret.proportion "
                "do). Drop allocate= (--allocate on the command line).")
        # Each release's values in its order: the means by column, the
        # percentiles column by column, each level of a column its scale.
        noise = {"mechanism": "apgm",
                 "allocate": "relative" if scales is None else scales}
        levels_noise = {"mechanism": "apgm", "allocate": (
            "relative" if scales is None
            else [v for v in scales for _ in levels])}
    rows = float(len(frame))        # public: the table's count
    with warnings_once():   # the means and percentiles clip the same columns
        means = ledger.mean(columns, epsilon=share, delta=delta, **noise)
        try:
            found = (ledger.quantile(columns, levels, epsilon="remaining",
                                     delta=delta, **levels_noise)
                     if levels else None)
        except BudgetExceededError as why:
            raise BudgetExceededError(
                f"describe() released the means with half of epsilon = "
                f"{float(epsilon):g}, and the percentiles fit in no part of "
                f"the rest: with {rows:g} rows, certified together with "
                "the means, they would take the whole table past its "
                "guarantee at any noise. Pass percentiles=[] (count and "
                "means only), a larger epsilon, or describe more rows. "
                f"Nothing was returned. ({why})") from None
    index = ["count", "mean"]
    values = [[rows] * len(columns), list(means.values)]
    noise = [[0.0] * len(columns), list(means.noise_std)]
    rearranged = False
    if levels:
        cells = np.asarray(found.values, dtype=float).reshape(len(columns),
                                                              len(levels))
        sd = np.asarray(found.noise_std, dtype=float).reshape(len(columns),
                                                              len(levels))
        # A column's percentiles rise with their level; noise can swap them.
        # Sorting each column's values over the levels (post-processing) is
        # never further from the true, increasing, percentiles in any L^p
        # norm, p >= 1 (the rearrangement inequality; Chernozhukov,
        # Fernandez-Val and Galichon 2009), and reads as describe() does.
        # (The levels are in increasing order: _levels sorts them.)
        increasing = cells.copy()
        finite = np.all(np.isfinite(cells), axis=1)   # a NaN row stays
        increasing[finite] = np.sort(cells[finite], axis=1)
        rearranged = not np.array_equal(increasing, cells, equal_nan=True)
        cells = increasing
        index += [f"{100 * q:g}%" for q in levels]
        values += cells.T.tolist()
        noise += sd.T.tolist()
    table = pd.DataFrame(values, index=index, columns=columns)
    return Description(table=table,
                       noise_std=pd.DataFrame(noise, index=index,
                                              columns=columns),
                       ledger=ledger, rearranged=rearranged)


def _column_scales(allocate, columns) -> list | None:
    """Return ``allocate``'s public scale per column, or None for a word.

    Refused before any release: a word other than "error" and "relative",
    or scales that do not name each described column once with a positive
    finite number.
    """
    names = [str(c) for c in columns]
    why = ""
    if isinstance(allocate, str):
        if allocate in ("error", "relative"):
            return None
    elif isinstance(allocate, (dict, pd.Series)):
        # By column: the described ones read, any other left (a Series of
        # every column's spread, reference.std(numeric_only=True), serves).
        given = {str(k): v for k, v in dict(allocate).items()}
        missing = [c for c in names if c not in given]
        if missing:
            why = f" It names no scale for {missing}."
        else:
            return _positive_scales([given[c] for c in names], names)
    elif np.ndim(allocate) == 1 and len(allocate) == len(names):
        # A sequence: one scale per column, in the columns' order.
        return _positive_scales(list(allocate), names)
    raise InvalidParameterError(
        f"describe()'s allocate must be 'error' (the least expected squared "
        f"error), 'relative' (equal relative errors) or a public positive "
        f"scale for each described column ({', '.join(map(str, columns))}), "
        f"as a dict or Series by column, such as reference[columns].std() "
        f"(each cell's noise in proportion to its column's), or a list in "
        f"the columns' order; got {allocate!r}.{why}")


def _positive_scales(values, names) -> list[float]:
    """Return the scales as floats, each finite and positive, else refuse naming it."""
    scales = []
    for name, value in zip(names, values, strict=True):
        try:
            scale = float(value)
        except (TypeError, ValueError):
            scale = math.nan
        if not (np.isfinite(scale) and scale > 0):
            raise InvalidParameterError(
                f"describe()'s allocate gives column {name!r} the scale "
                f"{value!r}; each must be a positive number (a column whose "
                "spread is 0 in the reference cannot move: give it any "
                "positive scale, e.g. reference[columns].std().replace(0, "
                "1)).")
        scales.append(scale)
    return scales


def _levels(percentiles) -> list[float]:
    """Return the levels asked, in increasing order (None: the quartiles)."""
    if percentiles is None:
        return [0.25, 0.5, 0.75]
    if isinstance(percentiles, Real) and not isinstance(percentiles, bool):
        percentiles = [percentiles]
    try:
        if isinstance(percentiles, (str, bytes)):
            raise TypeError
        levels = [float(q) for q in percentiles]
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"percentiles must be a sequence of levels in [0, 1], such as "
            f"(0.25, 0.5, 0.75) (on the command line --percentiles 0.25 0.5 "
            f"0.75); got {percentiles!r}.") from None
    # Rows in increasing order, as DataFrame.describe() shows them.
    return sorted(levels)


def _gaussian(ledger, columns, levels) -> bool:
    """Whether the table's values take Gaussian noise (apgm), certified jointly.

    When apgm takes its percentiles (several values at once,
    :meth:`~skattr.mechanisms.AttributePrivateGaussian.auto_takes`) and the
    ledger composes Gaussian noise over the reference's bands
    (:attr:`~skattr.Ledger.gaussian_over_bands`): the means and percentiles
    are then one Gaussian block of the ledger's joint certificate, each
    value its own scale. The weight's quartiles of the hospital (n = 200,
    epsilon 4) take noise of sd 36-43, against 148-157 with each value's
    Laplace tail at its share of delta (``docs/performance.md``).
    Otherwise Laplace noise, as a ledger's default.
    """
    from skattr.mechanisms import AttributePrivateGaussian

    return bool(levels) and ledger.gaussian_over_bands and (
        AttributePrivateGaussian.auto_takes(Statistic.quantile(columns, levels),
                                            [ledger.secret]))


def described_columns(frame, secret, reference, caller: str,
                      example: str = "describe(['age', 'income'])") -> list:
    """Return the columns ``describe()`` takes by default: numbers, not secrets.

    As ``DataFrame.describe()`` does (numeric dtypes, booleans left out);
    the secrets' own columns are left out too (their statistics are what
    the noise hides), and, with a warning, those the reference data lacks
    or holds as other than numbers (no release reads them). Refused when
    none is left.
    """
    hidden = {s.column for s in (secret if isinstance(secret, (list, tuple))
                                 else [secret])
              if isinstance(s, Secret)}
    # Real numbers: no durations or complex numbers, which no verb releases.
    numeric = frame.select_dtypes(include="number",
                                  exclude=["timedelta", "complex"]).columns
    labels = [c for c in numeric if c not in hidden]
    public = getattr(reference, "select_dtypes", None)
    if public is not None:
        public = public(include="number",
                        exclude=["timedelta", "complex"]).columns
    if public is not None and any(c not in public for c in labels):
        lacking = [c for c in labels if c not in public]
        labels = [c for c in labels if c in public]
        warnings.warn(
            f"{caller} leaves out {lacking}: the reference data has no such "
            "numeric column (a release reads each column in both frames). "
            "Name the columns to describe, or add them to the reference.",
            UserWarning, stacklevel=3)
    if not labels:
        but = " but the secret's" if hidden & set(numeric) else ""
        raise DataValidationError(
            f"{caller} found no numeric column to describe{but} (the "
            f"data's columns: {list(frame.columns)}); name the columns, "
            f"e.g. {example}, converting text numbers first "
            "(pd.to_numeric).")
    return labels
