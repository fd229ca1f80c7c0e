"""A ledger's clipping: the policy it was opened with, and ranges releases fix.

A ledger clips each column one way, whichever release reads it: its joint
certificate takes a column as one statistic, whose law it computes from the
reference clipped as the releases clipped it. The policy (``bounds=`` of
``df.attrpriv.ledger``) covers every column; a later release may name
``bounds=`` for a column the ledger has not released yet, which fixes that
column's range from then on. A column already released keeps its range:
the releases so far were certified with it, and a second range would make
a second statistic whose joint law with the first was never computed.

The ranges releases fixed are read back from the releases themselves (each
records the ranges it was clipped to), so a ledger loaded from a file or a
store keeps them with nothing else stored.
"""

from __future__ import annotations

from skattr._clipping import clipped_columns, resolve_clipping, resolve_declared
from skattr.exceptions import InvalidParameterError
from skattr.theta._spec import theta_reads_reference

__all__ = ["clipping_policy", "fixed_ranges", "release_bounds", "release_ranges"]


def _recorded(entry) -> tuple[str, tuple]:
    """Return the clipping source and ranges a ledger entry records."""
    if entry.release is not None:
        clipping = entry.release.clipping
        return ((clipping.source, clipping.ranges) if clipping is not None
                else ("none", ()))
    clipping = (entry.record or {}).get("clipping") or {}
    return clipping.get("source", "none"), tuple(clipping.get("ranges", ()))


def _released_ranges(ledger) -> dict:
    """Return ``{str(column): (low, high)}`` of every range a release used."""
    ranges = {}
    for entry in ledger.releases:
        for c, lo, hi in _recorded(entry)[1]:
            ranges.setdefault(str(c), (float(lo), float(hi)))
    return ranges


def _opening_gives(policy, column, pair) -> bool:
    """Whether the ledger's declared policy clips ``column`` to ``pair``."""
    if isinstance(policy, dict):
        held = policy.get(column)
        return held is not None and tuple(map(float, held)) == pair
    try:
        pairs = [tuple(map(float, p)) for p in policy]
    except TypeError:                   # one (low, high) for every column
        return tuple(map(float, policy)) == pair
    return pair in pairs


def fixed_ranges(ledger) -> dict:
    """Return ``{str(column): (low, high)}`` releases fixed beyond the policy.

    A range a release declared (``source == "declared"``) that the ledger's
    policy does not give, and the ranges of the release being planned
    (``ledger._pending_bounds``).
    """
    policy = ledger.bounds
    fixed = {}
    for entry in ledger.releases:
        source, ranges = _recorded(entry)
        if source != "declared":
            continue
        for c, lo, hi in ranges:
            pair = (float(lo), float(hi))
            if isinstance(policy, str) or not _opening_gives(policy, c, pair):
                fixed.setdefault(str(c), pair)
    return {**fixed, **{str(c): r for c, r in ledger._pending_bounds.items()}}


def _frame(ledger):
    return ledger._data if ledger.reference is None else ledger.reference


def _where(column) -> str:
    return (f"pass it with this release (ledger.mean([...], "
            f"bounds={{{column!r}: (low, high)}}): fixed from then on; or "
            "open the ledger with it (df.attrpriv.ledger(..., bounds={...}))")


def clipping_policy(ledger, query, columns):
    """Return the ``bounds=`` that clips ``query``'s columns as the ledger does.

    The ledger's policy itself when no column the query clips was fixed by
    a release (so a ledger whose releases name no bounds works as before);
    otherwise the ranges by column: each fixed column's, and the policy's
    for the others (read off the reference for ``"reference"``).
    """
    policy = ledger.bounds
    frame = _frame(ledger)
    targets = clipped_columns(query, columns, frame)
    fixed = fixed_ranges(ledger)
    named = [c for c in targets if str(c) in fixed]
    if isinstance(policy, dict):
        missing = [c for c in targets if c not in policy and str(c) not in fixed]
        if missing:
            raise InvalidParameterError(
                f"The ledger's bounds name no (low, high) for column(s) "
                f"{missing}; {_where(missing[0])}.")
    if not named:
        return policy
    if isinstance(policy, dict):
        ranges = {c: policy[c] for c in targets if c in policy}
    elif isinstance(policy, str):
        reads = theta_reads_reference(ledger.theta)
        ranges = resolve_clipping(policy, query, columns, frame,
                                  reads_reference=reads,
                                  needs_declared=False).as_dict()
    elif policy is None:
        ranges = {}
    else:
        ranges = resolve_declared(policy, targets)
    ranges.update({c: fixed[str(c)] for c in named})
    missing = [c for c in targets if c not in ranges]
    if missing:
        raise InvalidParameterError(
            f"This release reads column(s) {named}, whose bounds a release "
            f"fixed, with {missing}, which the ledger does not clip; declare "
            f"bounds for {missing} too in this release, or release them "
            "apart.")
    return {c: ranges[c] for c in targets}


def release_bounds(ledger, query, given) -> dict:
    """Check a release's own ``bounds=``; return the ranges it fixes, by column.

    Declared ranges only (a dict naming some of the columns the release
    clips, one (low, high) for all, or a pair per column); a column the
    ledger released already must keep the range it was released with.
    """
    if given is None or isinstance(given, str):
        raise InvalidParameterError(
            f"bounds={given!r} is a clipping policy, which a ledger sets for "
            "every column when it is opened: df.attrpriv.ledger(..., "
            f"bounds={given!r}). A release through it may declare ranges, "
            "bounds={'column': (low, high)}, for columns not released yet.")
    if ledger.bounds is None or (
            isinstance(ledger.bounds, str)
            and not theta_reads_reference(ledger.theta)):
        # Its other columns are not clipped, which a range by column cannot
        # say beside a declared one in the joint law.
        raise InvalidParameterError(
            "This ledger clips nothing (opened with bounds=None, or a stated "
            "Theta, which reads no reference ranges), and its releases are "
            "certified so; open another ledger with bounds={'column': (low, "
            "high)} to clip.")
    frame = _frame(ledger)
    columns = query.resolve_columns(frame, exclude=[ledger.secret.column])
    targets = clipped_columns(query, columns, frame)
    if isinstance(given, dict):
        unread = [c for c in given if c not in targets]
        if unread:
            raise InvalidParameterError(
                f"bounds names column(s) {unread}, which this release does "
                f"not clip (it clips {targets}); name those it releases.")
        ranges = resolve_declared(given, list(given), known=frame.columns)
    else:
        ranges = resolve_declared(given, targets, known=frame.columns)
    released = _released_ranges(ledger)
    for column, (low, high) in ranges.items():
        if str(column) not in ledger._columns:
            continue
        was = released.get(str(column))
        if was != (float(low), float(high)):
            held = ("no range (not clipped)" if was is None
                    else f"[{was[0]:g}, {was[1]:g}]")
            raise InvalidParameterError(
                f"Column {column!r} was released through this ledger clipped "
                f"to {held}, so its bounds are fixed: the joint certificate "
                "takes each column as one statistic, clipped one way "
                "whichever release reads it, and certified the releases so "
                f"far with that range. Drop bounds= for {column!r} (its range "
                "is kept), or open another ledger.")
    return ranges


def release_ranges(source) -> dict | None:
    """Return the clipping ranges a release (or fitted estimator) used, by column."""
    clipping = getattr(source, "clipping", None) or getattr(
        source, "clipping_", None)
    return None if clipping is None else clipping.as_dict()
