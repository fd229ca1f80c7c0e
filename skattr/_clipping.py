"""The ``bounds=`` policy: the ranges released columns are clipped to.

A certificate holds for private data that follows Theta; nothing makes a
record follow it, and one value of 1e300 moves a mean by 1e300 / n. Every
mechanism therefore releases F(clip(X)): each released column's values
clipped to a range, either declared (``{column: (low, high)}``) or the
reference data's own range (``"reference"``, public data, so deriving it
spends nothing). Theta is computed on the same clipped columns, so the
certificate is one of the statistic actually released:

- with ``"reference"`` the reference is unchanged (its values lie in its own
  range), so is Theta, and so is every release of data that Theta's
  resampling model draws (its records are reference records);
- with declared ranges narrower than the reference's, the reference is
  clipped too before Theta is fitted;
- an expert's Theta (no reference rows) gives no range to derive: it is
  clipped only to declared ranges, which the release records as the
  expert's statement that the records lie in them.

Counts and proportions need no clipping: each record contributes 0 or 1.
The clipping is recorded on every Plan and Release (:class:`Clipping`); how
many private records were clipped is a function of the private data and is
never computed, recorded or shown.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import pandas as pd

from skattr._persistence import persistable
from skattr.backends import backend_of
from skattr.exceptions import InvalidParameterError

__all__ = ["Clipping", "clip_reference", "clipped_columns", "reads_reference_rows",
           "resolve_clipping", "resolve_declared"]

_COUNTING = ("count", "proportion")


@persistable
@dataclass(frozen=True)
class Clipping:
    """The ranges a release's columns were clipped to, and where they came from.

    Attributes
    ----------
    ranges : tuple of (label, float, float)
        ``(column, low, high)`` for each clipped column (empty: none).
    source : {"reference", "declared", "none"}
        ``"reference"``: each column's least and largest value in the
        reference data; ``"declared"``: ``bounds=`` as given; ``"none"``:
        nothing clipped.
    note : str
        Why nothing is clipped, when ``ranges`` is empty; otherwise what the
        ranges are taken to mean (for a stated Theta).
    """

    ranges: tuple = ()
    source: str = "none"
    note: str = ""

    def as_dict(self) -> dict:
        """Return ``{column: (low, high)}``."""
        return {c: (lo, hi) for c, lo, hi in self.ranges}

    def describe(self) -> str:
        """Return the one line a summary shows."""
        if not self.ranges:
            return self.note
        where = ("the reference data's range" if self.source == "reference"
                 else "declared")
        text = ", ".join(f"{c!s} to [{lo:.6g}, {hi:.6g}]"
                         for c, lo, hi in self.ranges) + f" ({where})"
        return f"{text}; {self.note}" if self.note else text

    def to_dict(self) -> dict:
        """Return the clipping as plain data (JSON-ready)."""
        return {"source": self.source, "note": self.note,
                "ranges": [[str(c), float(lo), float(hi)]
                           for c, lo, hi in self.ranges]}

    @classmethod
    def from_dict(cls, record: dict) -> Clipping:
        """Return the clipping :meth:`to_dict` wrote."""
        return cls(ranges=tuple((c, float(lo), float(hi))
                                for c, lo, hi in record.get("ranges", ())),
                   source=record.get("source", "none"),
                   note=record.get("note", ""))


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _pair(value, column) -> tuple[float, float]:
    where = "bounds" if column is None else f"bounds[{column!r}]"
    try:
        low, high = value
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"{where} must be a pair (low, high) of finite numbers; got {value!r}."
        ) from None
    if not (_is_real(low) and _is_real(high)):
        raise InvalidParameterError(
            f"{where} must be a pair (low, high) of finite numbers; got {value!r}."
        )
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise InvalidParameterError(
            f"{where} = {value!r} is not finite; declare finite bounds that every "
            "record satisfies."
        )
    if not low < high:
        raise InvalidParameterError(
            f"{where} = {value!r} needs low < high; declare the range every record "
            "of the column lies in."
        )
    return low, high


def _parts(query) -> tuple:
    return tuple(getattr(query, "parts", (query,)))


def clipped_columns(query, columns, frame=None) -> list:
    """Return the columns ``bounds=`` applies to, once each, in order.

    The averaged and summed columns of a linear query (a count or proportion
    reads 0 or 1 per record); every numeric column a non-linear statistic
    reads (``frame`` gives the dtypes; without it, every column).
    """
    if not getattr(query, "is_linear", True):
        return [c for c in dict.fromkeys(columns)
                if frame is None or c not in frame.columns
                or pd.api.types.is_numeric_dtype(frame[c].dtype)]
    out = []
    for part in _parts(query):
        if part.statistic not in _COUNTING:
            out += [c for c in part.columns if c not in out]
    return out


def _counted_columns(query) -> list:
    if not getattr(query, "is_linear", True):
        return []
    return [c for part in _parts(query) if part.statistic in _COUNTING
            for c in part.columns]


def resolve_declared(bounds, columns, *, known=None, counted=()) -> dict:
    """Return ``{column: (low, high)}`` for each of ``columns`` from declared bounds.

    ``bounds`` is a dict ``{column: (low, high)}`` naming every one of
    ``columns`` (it may declare other columns of the data too, not used), a
    sequence of ``(low, high)`` pairs in their order, or one pair for all of
    them. ``known``, when given, are the data's columns: a dict naming
    another column is refused (a misspelling would go unnoticed), and so is
    one naming a column only ``counted`` (a count or proportion, which needs
    none).
    """
    columns = list(columns)
    if isinstance(bounds, dict) and known is not None:
        unknown = [c for c in bounds if c not in set(known)]
        if unknown:
            raise InvalidParameterError(
                f"bounds names column(s) {unknown} that are not in the data; its "
                f"columns are {list(known)[:12]}. Check the spelling."
            )
    if isinstance(bounds, dict):
        only_counted = [c for c in bounds if c in set(counted)
                        and c not in set(columns)]
        if only_counted:
            raise InvalidParameterError(
                f"bounds names column(s) {only_counted} that the query counts; "
                "counts and proportions take no bounds (each record "
                "contributes 0 or 1). Drop them from bounds."
            )
    if not columns:
        if bounds is not None and not isinstance(bounds, dict):
            raise InvalidParameterError(
                "Counts and proportions take no bounds: each record contributes "
                "0 or 1 to them. Omit bounds."
            )
        return {}
    if bounds is None:
        raise InvalidParameterError(
            "Means and sums need declared bounds: pass bounds={column: (low, "
            f"high)}} for each of the columns {columns}, from public knowledge "
            "(never read off the private data). The sensitivity, and so the "
            "guarantee, is computed from them."
        )
    if isinstance(bounds, dict):
        missing = [c for c in columns if c not in bounds]
        if missing:
            raise InvalidParameterError(
                f"bounds has no (low, high) for column(s) {missing}; declare one "
                f"for each of the columns {columns}."
            )
        return {c: _pair(bounds[c], c) for c in columns}
    if isinstance(bounds, (str, bytes)):
        items = None
    else:
        try:
            items = list(bounds)
        except TypeError:
            items = None
    if items is None:
        raise InvalidParameterError(
            "bounds must be a dict {column: (low, high)}, a list of (low, high) "
            f"pairs or one (low, high) pair; got {bounds!r}."
        )
    if len(items) == 2 and all(_is_real(v) for v in items):
        low_high = _pair(items, None)
        return dict.fromkeys(columns, low_high)
    if len(items) != len(columns):
        raise InvalidParameterError(
            f"bounds holds {len(items)} (low, high) pair(s) but the query "
            f"averages or sums {len(columns)} column(s) {columns}; give one pair "
            "per column, in order, or a dict {column: (low, high)}."
        )
    return {c: _pair(v, c) for v, c in zip(items, columns, strict=True)}


def reads_reference_rows(mechanism) -> bool:
    """Whether ``mechanism``'s Theta is computed from the reference's records.

    Only then is the frame ``fit`` sees public reference data whose ranges
    may be read. An expert's Theta (``states_law``), a network or stated
    laws read no rows, and ``fit`` may then have seen the private data.
    """
    if not type(mechanism).needs_reference:
        return False
    theta = getattr(mechanism, "theta", "auto")
    # A name is fitted on the reference; a Theta object says (an array of
    # stated probabilities, or an object that does not say, reads none).
    return isinstance(theta, str) or getattr(theta, "reads_reference", False)


def resolve_clipping(bounds, query, columns, frame, *, reads_reference: bool,
                     needs_declared: bool) -> Clipping:
    """Return the :class:`Clipping` ``bounds=`` means for this query and frame.

    ``frame`` is the data ``fit`` sees; its ranges are read only for
    ``"reference"`` and only when ``reads_reference`` (it is then public
    reference data). ``needs_declared``: the mechanism's certificate is
    computed from declared bounds (the differential-privacy baselines and
    the Markov quilt mechanisms), so ``"reference"`` is refused.
    """
    targets = clipped_columns(query, columns, frame)
    if isinstance(bounds, str):
        if needs_declared:
            raise InvalidParameterError(
                f"bounds={bounds!r} reads each column's range off the data fit "
                "sees, which this mechanism never treats as public (it fits no "
                "Theta on reference data, and its sensitivity rests on the "
                "bounds); declare bounds={column: (low, high)} from public "
                "knowledge.")
        if not targets:
            return Clipping(note="nothing to clip: counts and proportions read "
                                 "0 or 1 per record")
        if not reads_reference:
            return Clipping(source="none", note=(
                "not clipped: Theta is stated, with no reference records to "
                "take ranges from; declare bounds={column: (low, high)} to "
                "clip"))
        low, high = backend_of(frame).column_ranges(frame, targets,
                                                    what="the reference data")
        return Clipping(ranges=tuple(
            (c, float(lo), float(hi))
            for c, lo, hi in zip(targets, low, high, strict=True)),
            source="reference")
    if bounds is None and not needs_declared:
        return Clipping(note="not clipped (bounds=None): an outlier in the "
                             "private data moves the release without bound")
    declared = resolve_declared(bounds, targets, known=frame.columns,
                                counted=_counted_columns(query))
    if not declared:
        return Clipping(note="nothing to clip: counts and proportions read "
                             "0 or 1 per record")
    note = ("" if reads_reference or needs_declared else
            "ASSUMED: the stated Theta's records lie in these ranges, so "
            "clipping leaves its law unchanged")
    return Clipping(ranges=tuple((c, lo, hi) for c, (lo, hi) in declared.items()),
                    source="declared", note=note)


def clip_reference(frame, clipping: Clipping, secrets):
    """Return the reference data with its columns clipped as the private data's.

    With the reference's own ranges nothing changes. Declared ranges
    narrower than the reference's clip it, so that Theta is the law of the
    clipped statistic; a secret's own column cannot be clipped there (the
    secret is a property of its raw values), so that is refused.
    """
    if clipping.source != "declared" or not clipping.ranges:
        return frame
    columns = [c for c, _, _ in clipping.ranges]
    backend = backend_of(frame)
    low, high = backend.column_ranges(frame, columns, what="the reference data")
    narrower = [c for (c, lo, hi), a, b in zip(clipping.ranges, low, high,
                                               strict=True)
                if a < lo or b > hi]
    if not narrower:
        return frame
    secret_columns = {s.column for s in secrets}
    clash = [c for c in narrower if c in secret_columns]
    if clash:
        raise InvalidParameterError(
            f"bounds for {clash} are narrower than the reference data's range, "
            "and the secret is a property of that column's raw values, so the "
            "reference cannot be clipped to them. Declare bounds that hold the "
            "reference's range for the secret's column, or release another "
            "column.")
    return backend.clip(frame, {c: r for c, r in clipping.as_dict().items()
                                if c in narrower}, what="the reference data")
