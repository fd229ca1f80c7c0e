"""The ``bounds=`` policy: the ranges released columns are clipped to.

A certificate holds for private data that follows Theta; nothing makes a
record follow it, and one value of 1e300 moves a mean by 1e300 / n. Every
mechanism therefore releases F(clip(X)): each released column's values
clipped to a range, declared (``{column: (low, high)}``) or read off the
reference data, which is public, so deriving it spends nothing:
``"robust"`` (the default) is the reference's range within its far-out
fences (:func:`robust_ranges`: one data-entry code such as 999 does not set
the range), ``"reference"`` its whole range. Theta is computed on the same
clipped columns, so the certificate is one of the statistic actually
released:

- with ``"reference"`` the reference is unchanged (its values lie in its own
  range), so is Theta, and so is every release of data that Theta's
  resampling model draws (its records are reference records);
- with ``"robust"``, or declared ranges narrower than the reference's, the
  reference is clipped too before Theta is fitted;
- an expert's Theta (no reference rows) gives no range to derive: it is
  clipped only to declared ranges, which the release records as the
  expert's statement that the records lie in them.

A range read off the reference is a function of public data, so any rule
is as private as a declared range; what it changes is the statistic
certified (the clipped one) and so its bias, which ``docs/population.md``
states. The reference's confidence bands stay valid for the clipped
population whatever range the reference chose: their event concerns the
records' ranks only, and clipping is monotone (``docs/population.md``).

Counts and proportions need no clipping: each record contributes 0 or 1.
The clipping is recorded on every Plan and Release (:class:`Clipping`); how
many private records were clipped is a function of the private data and is
never computed, recorded or shown (how many reference records were is
public, and recorded).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from skattr._data import numeric_values
from skattr._kinds import counts_records
from skattr._persistence import persistable
from skattr.backends import backend_of
from skattr.exceptions import ClippingWarning, InvalidParameterError
from skattr.utils._stack import warn_once

__all__ = ["FENCE_IQRS", "MOST_CUT", "Clipping", "clip_reference",
           "clipped_columns", "resolve_clipping",
           "resolve_declared", "robust_ranges"]

#: The policies that read ranges off the reference data.
_POLICIES = ("robust", "reference")
#: Tukey's far-out fences: this many interquartile ranges beyond the quartiles.
FENCE_IQRS = 3.0
#: The share of the reference's records the robust range may cut at each end
#: (at least one record): a tail heavier than this is kept as real.
MOST_CUT = 0.01
#: The robust range warns when its cut narrowed a column's range by this
#: share at least: the cut records set the range, and with it the noise.
_SETS_RANGE = 0.2


#: Where a clipping's ranges came from.
_SOURCES = frozenset({"robust", "reference", "declared", "none"})


@persistable
@dataclass(frozen=True)
class Clipping:
    """The ranges a release's columns were clipped to, and where they came from.

    Attributes
    ----------
    ranges : tuple of (label, float, float)
        ``(column, low, high)`` for each clipped column (empty: none).
    source : {"robust", "reference", "declared", "none"}
        ``"robust"``: each column's range in the reference data within its
        far-out fences (:func:`robust_ranges`); ``"reference"``: each
        column's least and largest value in the reference data;
        ``"declared"``: ``bounds=`` as given; ``"none"``: nothing clipped.
    note : str
        Why nothing is clipped, when ``ranges`` is empty; otherwise what the
        ranges are taken to mean (for a stated Theta).
    cut : tuple of (label, int)
        ``"robust"``: ``(column, records)`` for each column whose range cut
        some of the reference's records (public data), in ``ranges``' order.
    records : int
        ``"robust"``: the reference's records the ranges were read from.
    """

    ranges: tuple = ()
    source: str = "none"
    note: str = ""
    cut: tuple = ()
    records: int = 0

    def __post_init__(self):
        # A clipping read back from a file is checked as one written here.
        ranges_ok = all(isinstance(r, tuple) and len(r) == 3
                        and all(isinstance(x, numbers.Real) for x in r[1:])
                        for r in self.ranges)
        cut_ok = all(isinstance(c, tuple) and len(c) == 2
                     and isinstance(c[1], numbers.Integral) and c[1] >= 0
                     for c in self.cut)
        if (not isinstance(self.ranges, tuple) or not isinstance(self.cut, tuple)
                or not ranges_ok or not cut_ok
                or not isinstance(self.records, numbers.Integral)
                or self.records < 0
                or self.source not in _SOURCES
                or not isinstance(self.note, str)):
            raise InvalidParameterError(
                "A clipping needs (column, low, high) ranges, (column, "
                "records) cuts, a record count and a source among "
                f"{sorted(_SOURCES)}; got {self!r}.")

    def as_dict(self) -> dict:
        """Return ``{column: (low, high)}``."""
        return {c: (lo, hi) for c, lo, hi in self.ranges}

    def describe(self) -> str:
        """Return the one line a summary's certificate shows."""
        if not self.ranges:
            return self.note
        text = ", ".join(f"{c!s} to [{lo:.6g}, {hi:.6g}]"
                         for c, lo, hi in self.ranges) + f" ({self._where()})"
        return f"{text}; {self.note}" if self.note else text

    def _where(self) -> str:
        if self.source == "reference":
            return "the reference data's range"
        if self.source != "robust":
            return "declared"
        if not self.cut:
            return ("the reference data's range within its far-out fences; "
                    f"none of its {self.records:,} records cut")
        cut = ", ".join(f"{k:,} in {c!s}" for c, k in self.cut)
        return ("the reference data's range within its far-out fences; of "
                f"its {self.records:,} records, {cut} cut")

    def to_dict(self) -> dict:
        """Return the clipping as plain data (JSON-ready)."""
        record = {"source": self.source, "note": self.note,
                  "ranges": [[str(c), float(lo), float(hi)]
                             for c, lo, hi in self.ranges]}
        if self.source == "robust":
            record.update(cut=[[str(c), int(k)] for c, k in self.cut],
                          records=int(self.records))
        return record

    @classmethod
    def from_dict(cls, record: dict) -> Clipping:
        """Return the clipping :meth:`to_dict` wrote."""
        return cls(ranges=tuple((c, float(lo), float(hi))
                                for c, lo, hi in record.get("ranges", ())),
                   source=record.get("source", "none"),
                   note=record.get("note", ""),
                   cut=tuple((c, int(k)) for c, k in record.get("cut", ())),
                   records=int(record.get("records", 0)))


def robust_ranges(values, *, integer=None) -> tuple[np.ndarray, np.ndarray]:
    """Return each column's robust range: its range within its far-out fences.

    Parameters
    ----------
    values : array of shape (m, k)
        The reference's values, one column each (finite).
    integer : array of k bools, optional
        Columns of integers: their ranges are rounded outward to integers.

    Returns
    -------
    low, high : arrays of k floats
        ``low <= high``, both within the column's least and largest value.

    Notes
    -----
    Tukey's far-out fences, [Q1 - 3 s, Q3 + 3 s] with s the interquartile
    range, intersected with the column's range [min, max]; each end then
    moved out, where it would cut more, to cut at most c = max(1,
    floor(0.01 m)) of the m records (the (c + 1)-th least or largest value:
    a tail heavier than 1% is taken as real, not as codes). A column whose
    quartiles are equal (a 0/1 column, one value in most records) takes s
    the spread of its 1% and 99% quantiles instead, and if those are equal
    too its range: the fences then never collapse a column onto one value
    (low < high whenever min < max). A normal column loses nothing in
    practice (the fences lie 4.7 standard deviations from the median), a
    LogNormal(0, 1) one its largest 1% (the user guide's "Outliers and
    clipping" states the bias; ``benchmarks/clipping.py`` measures it).

    Examples
    --------
    >>> import numpy as np
    >>> from skattr._clipping import robust_ranges
    >>> codes = np.r_[np.arange(100.0), 999.0]     # 0..99, and one code
    >>> low, high = robust_ranges(codes[:, None])
    >>> float(low[0]), float(high[0])     # Q3 + 3 IQR = 75 + 3 * 50
    (0.0, 225.0)
    >>> low, high = robust_ranges(np.r_[np.zeros(995), np.ones(5)][:, None])
    >>> float(low[0]), float(high[0])     # a rare 1 is kept
    (0.0, 1.0)
    """
    low, high, _, _, _ = _robust_columns(values, integer)
    return low, high


def _robust_columns(values, integer=None) -> np.ndarray:
    """Return rows (low, high, least, most, records cut) of each column's range."""
    values = np.asarray(values, dtype=float)
    # One contiguous copy of each column, reordered in place below.
    columns = np.array(values.reshape(values.shape[0], -1).T, order="C")
    integer = (np.zeros(len(columns), dtype=bool) if integer is None
               else np.asarray(integer, dtype=bool))
    return np.array([_robust_range(x, whole)
                     for x, whole in zip(columns, integer, strict=True)],
                    dtype=float).reshape(-1, 5).T


def _between(a: float, b: float, fraction: float) -> float:
    """Return numpy's linear interpolation from a to b (``np.quantile``'s)."""
    return float(np.quantile(np.array([a, b]), fraction))


def _robust_range(x: np.ndarray, integer: bool) -> tuple:
    """Return one column's (low, high, least, most, records cut).

    ``x`` is reordered in place. Exact quartiles from two partitions, the
    second on the first's upper part (a sort costs about twice as much);
    every other step a pass or less.
    """
    m = x.size
    h1, h3 = 0.25 * (m - 1), 0.75 * (m - 1)
    i1, i3 = int(h1), int(h3)
    x.partition(i1)
    least = float(x[:i1 + 1].min())
    rest = x[i1 + 1:]                  # the order statistics after i1
    if not rest.size:                  # one record
        value = float(x[0])
        return value, value, value, value, 0
    q1 = _between(x[i1], rest.min(), h1 - i1)
    k = i3 - i1 - 1                    # order statistic i3 is rest's k-th
    if k < 0:
        a3, tail = float(x[i1]), rest
    else:
        rest.partition(k)
        a3, tail = float(rest[k]), rest[k + 1:]
    b3, most = ((float(tail.min()), float(tail.max())) if tail.size
                else (a3, a3))
    q3 = _between(a3, b3, h3 - i3)
    spread = q3 - q1
    if not spread > 0:
        q01, q99 = np.quantile(x, [0.01, 0.99])
        spread = q99 - q01 if q99 > q01 else most - least
    low = max(least, q1 - FENCE_IQRS * spread)
    high = min(most, q3 + FENCE_IQRS * spread)
    if integer:
        low, high = math.floor(low), math.ceil(high)
    # At most c records beyond each end: else the (c + 1)-th least or
    # largest value, found among the records beyond the fence.
    c = max(1, int(MOST_CUT * m))
    below, above = np.count_nonzero(x < low), np.count_nonzero(x > high)
    if below > c:
        values = x[x < low]
        low = float(np.partition(values, c)[c])
        below = np.count_nonzero(values < low)
    if above > c:
        values = x[x > high]
        high = float(np.partition(values, values.size - 1 - c)[-1 - c])
        above = np.count_nonzero(values > high)
    return float(low), float(high), least, most, int(below + above)


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
        if not counts_records(part):
            out += [c for c in part.columns if c not in out]
    return out


def _counted_columns(query) -> list:
    if not getattr(query, "is_linear", True):
        return []
    return [c for part in _parts(query) if counts_records(part)
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


def resolve_clipping(bounds, query, columns, frame, *, reads_reference: bool,
                     needs_declared: bool, secret_columns=(),
                     warn: bool = False) -> Clipping:
    """Return the :class:`Clipping` ``bounds=`` means for this query and frame.

    ``frame`` is the data ``fit`` sees; its ranges are read only for
    ``"robust"`` and ``"reference"`` and only when ``reads_reference`` (it
    is then public reference data). ``needs_declared``: the mechanism's
    certificate is computed from declared bounds (the differential-privacy
    baselines and the Markov quilt mechanisms), so a policy is refused.
    ``secret_columns``: ``"robust"`` keeps their whole range (a secret is a
    property of its column's raw values, which clipping the reference would
    change). ``warn``: warn (:class:`~skattr.exceptions.ClippingWarning`)
    when ``"robust"`` cut reference records, once per fit.
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
        if bounds not in _POLICIES:
            raise InvalidParameterError(
                f"bounds={bounds!r} is not a policy; use 'robust' (the "
                "default), 'reference', a dict {column: (low, high)} or None.")
        if not targets:
            return Clipping(note="nothing to clip: counts and proportions read "
                                 "0 or 1 per record")
        if not reads_reference:
            return Clipping(source="none", note=(
                "not clipped: Theta is stated, with no reference records to "
                "take ranges from; declare bounds={column: (low, high)} to "
                "clip"))
        if bounds == "robust":
            return _robust_clipping(frame, targets, secret_columns, warn=warn)
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


def _robust_clipping(frame, targets, secret_columns, *, warn: bool) -> Clipping:
    """Return the ``"robust"`` clipping of the reference's ``targets``.

    The columns are read into memory (a Dask reference's, in one pass):
    exact quantiles need every value.
    """
    secret_columns = set(secret_columns)
    # A secret's own column keeps its whole range (see clip_reference).
    fenced = [c for c in targets if c not in secret_columns]
    whole = dict(zip(targets, zip(*backend_of(frame).column_ranges(
        frame, targets, what="the reference data"), strict=True), strict=True)
        ) if len(fenced) < len(targets) else {}
    found, records = {}, 0
    if fenced:
        block = numeric_values(backend_of(frame).collect(frame, fenced), fenced,
                               what="the reference data")
        records = block.shape[0]
        dtypes = frame.dtypes
        integer = [pd.api.types.is_integer_dtype(dtypes[c])
                   or pd.api.types.is_bool_dtype(dtypes[c]) for c in fenced]
        rows = _robust_columns(block, integer).T
        found = {c: row for c, row in zip(fenced, rows, strict=True)}
    if not records:
        records = backend_of(frame).row_count(frame, what="the reference data")
    ranges = tuple((c, *(found[c][:2] if c in found else whole[c]))
                   for c in targets)
    kept = [c for c in targets if c in secret_columns]
    clipping = Clipping(
        ranges=tuple((c, float(lo), float(hi)) for c, lo, hi in ranges),
        source="robust", records=int(records),
        cut=tuple((c, int(found[c][4])) for c in fenced if found[c][4]),
        note=(f"the whole range of {', '.join(map(str, kept))}: a secret is "
              "a property of its column's raw values" if kept else ""))
    # Warn of the cuts that set the range: a large normal reference has a
    # few records beyond its fences, whose cut changes nothing worth a word.
    setting = [c for c in fenced if found[c][4] and (
        found[c][1] - found[c][0] <= (1 - _SETS_RANGE)
        * (found[c][3] - found[c][2]))]
    if warn and setting:
        _warn_cut(clipping, {c: tuple(found[c][2:4]) for c in setting})
    return clipping


def _rounded_out(low: float, high: float) -> tuple:
    """Return (low, high) rounded outward to two significant digits of the span."""
    span = high - low
    if not span > 0:
        return low, high
    step = 10.0 ** (math.floor(math.log10(span)) - 1)
    out = (math.floor(low / step) * step, math.ceil(high / step) * step)
    return tuple(int(v) if float(v).is_integer() else float(f"{v:.12g}")
                 for v in out)


def _warn_cut(clipping: Clipping, whole: dict) -> None:
    """Say what the robust range cut, and the ``bounds=`` that would say so.

    ``whole`` maps each column to name to the reference's (least, largest).
    """
    ranges = clipping.as_dict()
    cut = "; ".join(
        f"{c!r} to [{ranges[c][0]:.6g}, {ranges[c][1]:.6g}] ({k:,} of "
        f"{clipping.records:,} records; its range is [{whole[c][0]:.6g}, "
        f"{whole[c][1]:.6g}])" for c, k in clipping.cut if c in whole)
    suggested = {c: _rounded_out(*r) for c, r in ranges.items()}
    text = (
        "bounds='robust' (the default) clipped the reference data's values "
        f"beyond their far-out fences: {cut}. The private data are clipped "
        "alike, so the release is a statistic of the clipped values. If those "
        "values are data-entry codes, that is what you want: declare the "
        f"ranges to say so, e.g. bounds={suggested!r}. If they are real, "
        "declare a range that holds them, or pass bounds='reference' for the "
        "reference's whole range (more noise).")
    warn_once(text, ClippingWarning)


def clip_reference(frame, clipping: Clipping, secrets):
    """Return the reference data with its columns clipped as the private data's.

    With the reference's own ranges nothing changes. Robust ranges, or
    declared ranges narrower than the reference's, clip it, so that Theta is
    the law of the clipped statistic; a secret's own column cannot be
    clipped there (the secret is a property of its raw values), so declared
    ranges that would are refused (robust ones keep its whole range).
    """
    if clipping.source not in ("declared", "robust") or not clipping.ranges:
        return frame
    backend = backend_of(frame)
    if clipping.source == "robust":
        # Read off this frame: the columns it cut (never a secret's).
        narrower = [c for c, _ in clipping.cut]
    else:
        columns = [c for c, _, _ in clipping.ranges]
        low, high = backend.column_ranges(frame, columns,
                                          what="the reference data")
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
