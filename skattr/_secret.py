"""The secret: a sensitive column, its global property g, and the pairs to hide."""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from skattr._persistence import persistable
from skattr._query import indicator
from skattr._validation import numeric_block
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.utils._param_validation import OneOrMore

__all__ = ["DISTRIBUTIONAL", "SECRETS", "Secret", "as_secrets", "check_grid_record",
           "either_count", "grid_counts", "grid_neighbours", "grid_sides",
           "grid_tolerance", "grid_text", "PRIVACY_HELP"]

_READINGS = ("pointwise", "paper", "conditional-mean")
# Grid values k/n closer than this to a bound count as inside it.
_GRID_TOL = 1e-9

#: The way out of the grid of dataset privacy, in the library's words (the
#: command line says privacy='distributional' as --privacy distributional).
DISTRIBUTIONAL = ("use privacy='distributional', which hides the share of the "
                  "population the records were drawn from and needs no grid")

#: --privacy's help, the same for every command that takes it.
PRIVACY_HELP = ("hide the realised share (dataset: pairs on the grid k/n) or "
                "the chance of a record to be in the group (distributional)")


def grid_tolerance(n: int) -> float:
    """How far a*n may be from a whole number and still count as one.

    A share a stated in floating point is off by half a unit in the last place,
    so a*n is off by about n * 2^-53 (3.7e-9 for 0.55 * 5e7): the tolerance
    grows with n, above a floor for small n.
    """
    return _GRID_TOL + 8 * n * np.finfo(float).eps


def grid_counts(value: float, n: int) -> tuple[int, ...]:
    """Return the whole numbers of records around a share ``value`` of n records.

    ``(k,)`` when ``value * n`` is the whole number k (within
    :func:`grid_tolerance`), else the two around it, ``(floor, ceil)``.

    Examples
    --------
    >>> grid_counts(0.4, 747), grid_counts(0.4, 50)
    ((298, 299), (20,))
    """
    x = float(value) * n
    k = round(x)
    if abs(x - k) <= grid_tolerance(n):
        return (int(k),)
    return (math.floor(x), math.ceil(x))


def either_count(counts) -> str:
    """Return whole numbers of records in words: (298, 299) is "298 or 299"."""
    return " or ".join(map(str, counts))


def grid_sides(pairs, n: int) -> tuple:
    """Return the whole numbers of records around each side of each pair.

    Examples
    --------
    >>> grid_sides([(0.4, 0.6), (0.25, 0.5)], 52)
    (((20, 21), (31, 32)), ((13,), (26,)))
    """
    return tuple((grid_counts(a, n), grid_counts(b, n)) for a, b in pairs)


def grid_neighbours(sides) -> list[tuple[int, int]]:
    """Return every (k_a, k_b) of :func:`grid_sides` with k_a != k_b, each once.

    In the pairs' order; a pair (k_b, k_a) repeats (k_a, k_b).

    Examples
    --------
    >>> grid_neighbours((((20, 21), (31, 32)), ((13,), (26,))))
    [(20, 31), (20, 32), (21, 31), (21, 32), (13, 26)]
    """
    return _distinct((ka, kb) for x, y in sides for ka in x for kb in y
                     if ka != kb)


def _is_count(k) -> bool:
    return isinstance(k, numbers.Integral) and not isinstance(k, bool)


def check_grid_record(secret, n, stated, sides, certified) -> None:
    """Refuse a ``"secret.grid"`` record that its own pairs and n do not give.

    The record is what :func:`~skattr.laws._base.grid_assumptions` builds:
    the secret's label, n, every stated pair, the records around each side
    (:func:`grid_sides`) and the pairs certified (:func:`grid_neighbours`).
    The last two are recomputed from the stated pairs and n and must match,
    so a record edited in a file cannot say other pairs than it certified.

    Raises
    ------
    ValueError
        Saying what does not hold (a file's loader turns it into a
        PersistenceError).
    """
    brief = reprlib.repr
    if not _is_count(n) or not 1 <= n <= 2**53:
        raise ValueError(f"n must be a positive whole number of records; got "
                         f"{brief(n)}.")
    if not isinstance(stated, tuple) or not stated or not all(
            isinstance(p, tuple) and len(p) == 2 for p in stated):
        raise ValueError(f"stated must be pairs (a, b); got {brief(stated)}.")
    for a, b in stated:
        if not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                   and 0 <= v <= 1 for v in (a, b)) or a == b:
            raise ValueError(f"a stated pair must be two distinct shares in "
                             f"[0, 1]; got {brief((a, b))}.")
    said = ", ".join(f"{a:g} vs {b:g}" for a, b in stated)
    if not isinstance(secret, str) or not secret.endswith(f": pairs {said}"):
        raise ValueError(f"the secret {brief(secret)} does not state the "
                         f"pairs {said}.")
    expected = grid_sides(stated, n)
    if sides != expected or not all(_is_count(k) for x, y in sides
                                    for k in (*x, *y)):
        raise ValueError(f"the records around the pairs' sides on n = {n} "
                         f"are {brief(expected)}, not {brief(sides)}.")
    if all(len(x) == len(y) == 1 for x, y in expected) or any(
            len({*x, *y}) == 1 for x, y in expected):
        raise ValueError("a record of pairs read on the grid has a pair off "
                         "it, and two datasets on both sides of every pair.")
    pairs = tuple(grid_neighbours(expected))
    if certified != pairs or not all(
            isinstance(p, tuple) and all(_is_count(k) for k in p)
            for p in certified):
        raise ValueError(f"the pairs certified around the stated pairs are "
                         f"{brief(pairs)}, not {brief(certified)}.")


def grid_text(secret: str, n: int, stated: tuple, sides: tuple,
              certified: tuple) -> str:
    """Return the text of a ``"secret.grid"`` assumption (its record's table).

    Kept beside :meth:`Secret.grid_pairs`, whose reading it states.
    """
    read = "; ".join(f"{a:g} vs {b:g} as {either_count(x)} vs "
                     f"{either_count(y)}"
                     for (a, b), (x, y) in zip(stated, sides, strict=True))
    return (f"{secret.rpartition(': pairs ')[0]}: on n = {n} records a share is a "
            f"whole number of records, so the stated pairs are read as the "
            f"datasets around them: {read} records, each of the "
            f"{len(certified)} pairs certified")


def _distinct(pairs) -> list[tuple]:
    """Return the pairs without repeats, a pair (b, a) repeating (a, b).

    The first of each is kept, in order. Every certificate is symmetric in a
    pair's two values (each calibration bounds both directions of the
    divergence, as Pufferfish privacy requires), so a repeat, in either
    order, would only repeat the work.
    """
    seen, out = set(), []
    for a, b in pairs:
        key = (a, b) if a <= b else (b, a)
        if key not in seen:
            seen.add(key)
            out.append((a, b))
    return out


def _pair_tuple(pairs) -> tuple:
    try:
        pairs = list(pairs)
    except TypeError as exc:
        raise InvalidParameterError(
            f"'pairs' must be a list of pairs such as [(0.45, 0.55)]; got {pairs!r}."
        ) from exc
    out = []
    for pair in pairs:
        try:
            a, b = (float(v) for v in pair)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"Each discriminative pair must be two numbers (a, b); got {pair!r}. "
                "Give a list of pairs, e.g. pairs=[(0.45, 0.55)]."
            ) from exc
        if not (math.isfinite(a) and math.isfinite(b)):
            raise InvalidParameterError(f"Pair {pair!r} holds a non-finite value.")
        if a == b:
            raise InvalidParameterError(
                f"Pair {pair!r} compares a value with itself; the two secrets of a "
                "pair must differ."
            )
        out.append((a, b))
    if not out:
        raise InvalidParameterError("'pairs' is empty; give at least one (a, b).")
    return tuple(_distinct(out))


def _interval(interval, name: str) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in interval)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"{name} must be an interval (low, high); got {interval!r}."
        ) from exc
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InvalidParameterError(
            f"{name} must be an interval (low, high) with finite low < high; got "
            f"{interval!r}."
        )
    return lo, hi


def _check_labels(column, value) -> None:
    """Refuse a secret's column or value that no frame could match, when built."""
    if (column is None or isinstance(column, bool)
            or not isinstance(column, Hashable)):
        raise InvalidParameterError(
            f"A secret's column is one column label (its name, or its index "
            f"for an array); got {column!r}.")
    if value is not None and not callable(value) and (
            not isinstance(value, Hashable)
            or isinstance(value, (tuple, frozenset))):
        raise InvalidParameterError(
            f"A secret's value is one category, or a predicate on the column; "
            f"got {value!r}. For several categories at once, pass "
            "skattr.predicates.OneOf([...]).")


@persistable
@dataclass(frozen=True)
class Secret:
    """A global property of a sensitive column, and which values of it to hide.

    The property g is either the proportion of records whose column equals a
    value (or passes a predicate) or the mean of a numeric column. The
    discriminative pairs Q (Zhang et al., Def. 4) are stated in one of three ways:

    - ``pairs``: explicit pairs of values, e.g. ``[(0.45, 0.55)]`` (a pair
      repeated, in either order, is kept once);
    - ``window`` and ``support``: every pair of values closer than ``window``
      inside ``support``;
    - ``sets``: intervals, every one hidden from every other, e.g. below vs above
      50% as ``[(0.25, 0.5), (0.5, 0.75)]``.

    Build one with :meth:`proportion` or :meth:`mean`.

    Parameters
    ----------
    column : column label
        The sensitive column.
    property : {"proportion", "mean"}
        The protected function g of the column.
    value : object, callable or None
        For proportions: the category, or a predicate on the column.
    pairs, window, support, sets
        The discriminative pairs, as above.
    set_reading : {"pointwise", "paper", "conditional-mean"}
        How a pair of sets is compared (see Notes).

    Notes
    -----
    Under dataset privacy a proportion of n records is a whole number of
    records over n. Windows and sets are enumerated on that grid; a stated
    pair off it (0.4 vs 0.6 on 747 records) is certified as every pair of
    grid values around it, 298 or 299 vs 448 or 449 records
    (:meth:`grid_pairs` gives the argument), and the release records them.

    For sets U_a, U_b the secret is the event g(X) in U_a. Three readings:

    ``"pointwise"`` (default, certified)
        every value a in U_a against every value b in U_b. The law of F given
        g in U_a is a mixture over a of the laws given g = a, so by joint
        convexity of the hockey-stick divergence, covering every pointwise pair
        covers the sets.
    ``"paper"``
        Zhang et al.'s hospital experiment (Sec. 4.2): each set is represented
        by its midpoint, so (0.25, 0.5) vs (0.5, 0.75) differ by 0.25.
    ``"conditional-mean"``
        each set is represented by E[F | g in U, theta] and the matching
        covariance (law of total covariance), with g's law under theta
        (Binomial(n, p) / n for i.i.d. records; hypergeometric / n for records
        drawn without replacement from a finite reference; truncated normal
        under the joint Gaussian). Like ``"paper"``, it treats the mixture as a
        Gaussian; the release records this as an assumption.

    Examples
    --------
    >>> from skattr import Secret
    >>> s = Secret.proportion("sex", "Female", pairs=[(0.45, 0.55)])
    >>> s.pair_values(n=100)
    (array([0.45]), array([0.55]))
    >>> a, b = Secret.proportion("sex", "Female", window=0.02,
    ...                          support=(0.3, 0.33)).pair_values(n=100)
    >>> [(float(x), float(y)) for x, y in zip(a, b)]
    [(0.3, 0.31), (0.3, 0.32), (0.31, 0.32), (0.31, 0.33), (0.32, 0.33)]
    """

    column: Any
    property: str
    value: Any = None
    pairs: tuple | None = None
    window: float | None = None
    support: tuple | None = None
    sets: tuple | None = None
    set_reading: str = "pointwise"

    def __post_init__(self):
        if self.property not in ("proportion", "mean"):
            raise InvalidParameterError(
                "A secret's property must be 'proportion' or 'mean'; got "
                f"{self.property!r}. Build secrets with Secret.proportion or "
                "Secret.mean."
            )
        _check_labels(self.column, self.value)
        given = [self.pairs is not None, self.window is not None,
                 self.sets is not None]
        if sum(given) != 1:
            raise InvalidParameterError(
                "State the discriminative pairs in exactly one way: pairs=[(a, b)], "
                "window=w with support=(low, high), or sets=[(low, high), ...]."
            )
        if self.set_reading not in _READINGS:
            raise InvalidParameterError(
                f"set_reading must be one of {_READINGS}; got {self.set_reading!r}."
            )
        domain = (0.0, 1.0) if self.property == "proportion" else None
        if self.support is not None:
            support = _interval(self.support, "support")
            object.__setattr__(self, "support", support)
        elif domain is not None:
            object.__setattr__(self, "support", domain)
        support = self.support
        if domain is not None and (support[0] < 0 or support[1] > 1):
            raise InvalidParameterError(
                f"The support {support} of a proportion must lie inside [0, 1]."
            )
        if self.pairs is not None:
            pairs = _pair_tuple(self.pairs)
            if support is not None:
                outside = [p for p in pairs if not all(
                    support[0] <= v <= support[1] for v in p)]
                if outside:
                    raise InvalidParameterError(
                        f"Pair(s) {outside} lie outside the support {support}; a "
                        "proportion lies in [0, 1], and pairs must lie in the "
                        "declared support."
                    )
            object.__setattr__(self, "pairs", pairs)
        if self.window is not None:
            w = self.window
            if isinstance(w, bool) or not isinstance(w, numbers.Real) or not (
                math.isfinite(w) and w > 0
            ):
                raise InvalidParameterError(
                    f"window must be a positive finite number; got {w!r}."
                )
            if self.support is None:
                raise InvalidParameterError(
                    "A window of pairs needs support=(low, high) for a mean secret: "
                    "the range of values the mean may take."
                )
        if self.sets is not None:
            sets = tuple(_interval(s, "each set") for s in self.sets)
            if len(sets) < 2:
                raise InvalidParameterError(
                    "sets needs at least two intervals to hide from each other, "
                    "e.g. sets=[(0.25, 0.5), (0.5, 0.75)]."
                )
            if support is not None:
                outside = [s for s in sets if s[0] < support[0] or s[1] > support[1]]
                if outside:
                    raise InvalidParameterError(
                        f"Set(s) {outside} lie outside the support {support}."
                    )
            object.__setattr__(self, "sets", sets)
        elif self.set_reading != "pointwise":
            raise InvalidParameterError(
                "set_reading applies to secrets stated with sets=; leave it at "
                "'pointwise' for pairs or a window."
            )

    @classmethod
    def proportion(cls, column, value=None, *, pairs=None, window=None,
                   support=None, sets=None, set_reading="pointwise") -> Secret:
        """Hide the fraction of records whose ``column`` equals ``value``.

        ``value`` may be a category (``"Female"``), a predicate on the column
        (``skattr.predicates.Above(50_000)``, which can be saved with the
        mechanism, or a function such as ``lambda income: income > 50_000``,
        which cannot), or None for a boolean or 0/1 column.
        """
        return cls(column, "proportion", value, pairs, window, support, sets,
                   set_reading)

    @classmethod
    def mean(cls, column, *, pairs=None, window=None, support=None, sets=None,
             set_reading="pointwise") -> Secret:
        """Hide the mean of the numeric ``column``."""
        return cls(column, "mean", None, pairs, window, support, sets, set_reading)

    @property
    def property_label(self) -> str:
        """What is hidden, without the pairs: ``"proportion(sex == 'F')"``."""
        if self.property == "mean":
            return f"mean({self.column})"
        if callable(self.value):
            name = getattr(self.value, "__name__", "predicate")
            return f"proportion({self.column}: {name})"
        if self.value is None:
            return f"proportion({self.column})"
        return f"proportion({self.column} == {self.value!r})"

    @property
    def group_label(self) -> str:
        """The records a proportion secret counts, as a row label: ``"sex == 'F'"``."""
        return self.property_label.removeprefix("proportion(").removesuffix(")")

    @property
    def share_label(self) -> str:
        """Whose share a proportion secret hides: ``"the records with sex == 'F'"``."""
        return f"the records with {self.group_label}"

    @property
    def label(self) -> str:
        """A short human-readable description."""
        what = self.property_label
        if self.pairs is not None:
            how = "pairs " + ", ".join(f"{a:g} vs {b:g}" for a, b in self.pairs)
        elif self.window is not None:
            how = f"every pair within {self.window:g} in {self.support}"
        else:
            how = " vs ".join(f"[{lo:g}, {hi:g}]" for lo, hi in self.sets)
            how += f" ({self.set_reading} reading)"
        return f"{what}: {how}"

    def indicator(self, frame: pd.DataFrame, *, what: str = "X") -> np.ndarray:
        """Per-record z_j whose mean is g: the match indicator, or the column."""
        if self.property == "mean":
            return numeric_block(frame, [self.column], what=what)[:, 0]
        return indicator(frame, self.column, self.value, what=what)

    def value_of(self, frame: pd.DataFrame) -> float:
        """g(X), the protected property of ``frame`` (never released)."""
        return float(self.indicator(frame).mean())

    def _grid(self, lo: float, hi: float, n: int) -> np.ndarray:
        """Return the values g can take inside [lo, hi] on n records."""
        if self.property == "proportion":
            tol = grid_tolerance(n)
            k = np.arange(math.ceil(lo * n - tol), math.floor(hi * n + tol) + 1)
            return k / n
        # A mean moves continuously; under the constant-covariance models a mean
        # secret is used with, the extreme pairs decide, and a grid keeps any
        # curvature in view.
        return np.unique(np.concatenate([np.linspace(lo, hi, 101), [lo, hi]]))

    def grid_pairs(self, n: int, *, alternative: str | None = None
                   ) -> list[tuple[float, float]]:
        """Return the pointwise pairs as shares of whole numbers of records.

        Dataset attribute privacy hides the share of these n records, which
        is some k / n. A window or sets are enumerated on that grid
        (:meth:`pair_values`); a stated pair off it is read as every pair
        of grid values around it, each side rounded down and up (see
        Notes). Repeats (a pair, or its reverse) are kept once. A mean
        secret has no grid: its pairs are taken as stated.

        Parameters
        ----------
        n : int
            The records of the private dataset (public).
        alternative : str or None, default=None
            What else the user can do, named when no pair of distinct
            datasets is left; None names distributional privacy.

        Returns
        -------
        list of (float, float)
            The pairs (k_a / n, k_b / n) certified.

        Raises
        ------
        NotCertifiableError
            A stated pair whose two values round to the same whole number of
            records only (e.g. 0.4 vs 0.4000000001): no two datasets of n
            records differ in it, and nothing would be certified.

        Notes
        -----
        A share of exactly 0.4 is impossible on 747 records (298.8 records);
        whoever states 0.4 means the datasets nearest it, 298 and 299 women.
        The pair 0.4 vs 0.6 is therefore read as the sets U_a = {298, 299}
        and U_b = {448, 449} (of 747), and certified pointwise: every
        (k_a, k_b) in U_a x U_b with k_a != k_b. The law of the release given
        "about 0.4" is a mixture of its laws given 298 and 299, so by joint
        convexity of the hockey-stick divergence every such mixture is covered
        too (the pointwise reading of ``sets=``). Certifying the nearest
        pair alone (299 vs 448) would leave 298 vs 449, which moves three
        more records, uncovered. A pair on the grid is one dataset size a
        side and certified as stated. A pair whose two sides share a cell
        (0.401 vs 0.402 on 747 records: 299 or 300 vs 300 or 301) keeps its
        distinct combinations (299 vs 300, 299 vs 301, 300 vs 301); one with
        none left is refused.

        Examples
        --------
        >>> s = Secret.proportion("sex", "Female", pairs=[(0.4, 0.6)])
        >>> [(round(a * 747), round(b * 747)) for a, b in s.grid_pairs(747)]
        [(298, 448), (298, 449), (299, 448), (299, 449)]
        >>> s.grid_pairs(50)
        [(0.4, 0.6)]
        """
        if self.pairs is None or self.property != "proportion":
            return self._listed(n)
        sides = grid_sides(self.pairs, n)
        for (a, b), (x, y) in zip(self.pairs, sides, strict=True):
            if len({*x, *y}) == 1:
                # Shortest round-trip digits: 0.4 vs 0.4000000000001.
                raise NotCertifiableError(
                    f"On {n} records both values of the pair {float(a)!r} vs "
                    f"{float(b)!r} (hiding "
                    f"{self.label.rpartition(': pairs ')[0]}) are {x[0]} "
                    f"records, so no two datasets differ in it and nothing "
                    f"would be hidden. State values at least 1/{n} apart, or "
                    f"{alternative or DISTRIBUTIONAL}.")
        return [(ka / n, kb / n) for ka, kb in grid_neighbours(sides)]

    def grid_reading(self, n: int) -> tuple:
        """Return how stated pairs off the grid of n records are read.

        One entry per stated pair off the grid k / n: ``((a, b), counts_a,
        counts_b)``, the counts of records around each side
        (:func:`grid_counts`). Empty when every pair is on the grid, or the
        pairs are a window or sets (enumerated on it).

        Examples
        --------
        >>> Secret.proportion("sex", "F", pairs=[(0.4, 0.6)]).grid_reading(747)
        (((0.4, 0.6), (298, 299), (448, 449)),)
        """
        if self.pairs is None or self.property != "proportion":
            return ()
        found = []
        for a, b in self.pairs:
            sides = grid_counts(a, n), grid_counts(b, n)
            if len(sides[0]) > 1 or len(sides[1]) > 1:
                found.append(((a, b), *sides))
        return tuple(found)

    def certified_pairs(self, n: int, privacy: str, *,
                        alternative: str | None = None
                        ) -> list[tuple[float, float]]:
        """Return the pairs of property values to tell apart, on n records.

        Dataset privacy: on the grid k / n (:meth:`grid_pairs`);
        distributional privacy hides a share of the population, any number
        in [0, 1]: the values as stated (:meth:`pair_values`), repeats once.
        """
        if privacy == "dataset":
            return self.grid_pairs(n, alternative=alternative)
        return self._listed(n)

    def _listed(self, n: int) -> list[tuple[float, float]]:
        """Return :meth:`pair_values` as a list, each pair once.

        Explicit pairs are distinct when built; a window's pairs are (i < j)
        by construction; overlapping sets repeat pairs, which are dropped in
        one sort (a window or sets may hold millions of pairs).
        """
        a, b = self.pair_values(n)
        if self.sets is not None:
            keys = np.column_stack([np.minimum(a, b), np.maximum(a, b)])
            first = np.sort(np.unique(keys, axis=0, return_index=True)[1])
            a, b = a[first], b[first]
        return list(zip(a.tolist(), b.tolist(), strict=True))

    def pair_values(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Return the pointwise pairs (a, b) of values of g to hide from each other.

        For a proportion on n records, g only takes values k/n, so windows and
        sets are enumerated exactly on that grid; explicit pairs are taken as
        stated (dataset privacy reads them on the grid: :meth:`grid_pairs`).
        """
        if self.pairs is not None:
            a, b = np.array(self.pairs, dtype=float).T
            return a, b
        if self.window is not None:
            grid = self._grid(*self.support, n)
            diff = grid[None, :] - grid[:, None]
            i, j = np.nonzero((diff > 0) & (diff <= self.window + _GRID_TOL))
            if self.property == "mean":
                w = min(self.window, self.support[1] - self.support[0])
                starts = np.linspace(self.support[0], self.support[1] - w, 101)
                a = np.concatenate([grid[i], starts])
                b = np.concatenate([grid[j], starts + w])
                return a, b
            if i.size == 0:
                raise InvalidParameterError(
                    f"No two proportions of {n} records lie within {self.window} of "
                    f"each other inside {self.support}: a share of {n} records "
                    f"moves in steps of 1/{n} = {1 / n:.3g}. Widen the window to "
                    f"at least that, or the support; or state the pairs "
                    f"themselves with pairs=[(a, b)], which are read on the "
                    f"grid."
                )
            return grid[i], grid[j]
        a_parts, b_parts = [], []
        for u, v in self.set_pairs():
            gu, gv = self._grid(*u, n), self._grid(*v, n)
            if gu.size == 0 or gv.size == 0:
                raise InvalidParameterError(
                    f"No dataset of {n} records has a proportion in "
                    f"{u if gu.size == 0 else v}: a share of {n} records moves "
                    f"in steps of 1/{n} = {1 / n:.3g}. Widen the set to hold "
                    "one, or state pairs=[(a, b)], which are read on the grid."
                )
            aa, bb = np.meshgrid(gu, gv, indexing="ij")
            keep = aa != bb
            a_parts.append(aa[keep])
            b_parts.append(bb[keep])
        a, b = np.concatenate(a_parts), np.concatenate(b_parts)
        if a.size == 0:
            # Fail closed: an empty set of pairs would calibrate no noise.
            raise InvalidParameterError(
                f"On {n} records the sets {list(self.sets)} share their only "
                "attainable values, so they form no pair of distinct values to hide; "
                "widen the sets or use pairs=."
            )
        return a, b

    def set_pairs(self) -> list[tuple[tuple[float, float], tuple[float, float]]]:
        """Every pair of distinct sets (for a secret stated with ``sets=``)."""
        if self.sets is None:
            raise InvalidParameterError("This secret is not stated with sets=.")
        sets = self.sets
        return [(sets[i], sets[j]) for i in range(len(sets))
                for j in range(i + 1, len(sets))]


def as_secrets(secret) -> tuple[Secret, ...]:
    """Return a tuple of secrets from one Secret or a sequence of them."""
    if isinstance(secret, Secret):
        return (secret,)
    if secret is None:
        raise InvalidParameterError(
            "No secret given: say what to hide, e.g. "
            "secret=skattr.Secret.proportion('sex', 'Female', pairs=[(0.45, 0.55)])."
        )
    try:
        secrets = tuple(secret)
    except TypeError:
        secrets = ()
    if not secrets or not all(isinstance(s, Secret) for s in secrets):
        raise InvalidParameterError(
            "secret must be a skattr.Secret or a list of them; got "
            f"{type(secret).__name__}."
        )
    return secrets


#: The ``secret=`` parameter's constraint: one Secret or a non-empty list.
SECRETS = OneOrMore(Secret, "a skattr.Secret (e.g. skattr.Secret.proportion("
                            "'sex', 'Female', pairs=[(0.45, 0.55)]))")
