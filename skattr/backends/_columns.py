"""The columns a release reads, taken from the private and reference frames alike.

A hospital's table and last year's public table rarely have the same
columns in the same order: one has a ``notes`` column, the other lists
``age`` first. A release reads only its statistic's columns and the
secret's, so the convenience paths (``df.attrpriv``, the ledger,
``describe``, the command line) take just those from each frame, in one
order, before anything is fitted: the other columns' values are never read,
and the caller's frames are never modified (a selection is a new frame).

The scikit-learn estimators keep their convention: one fitted on a frame's
columns is given the same columns (``BaseMechanism.release``).
"""

from __future__ import annotations

import pandas as pd

from skattr.backends._protocol import backend_of
from skattr.exceptions import DataValidationError

__all__ = ["check_same_kinds", "needed_columns", "release_frames",
           "select_columns"]

#: How the two frames are named in messages.
_PRIVATE, _REFERENCE = "the private data", "the reference data"


def select_columns(frame, columns):
    """Return ``frame``'s ``columns``, in that order; the frame itself if equal.

    Reads no values: a pandas frame's selection is a new frame (the caller's
    is not modified), a lazy frame's a lazy one.
    """
    columns = list(columns)
    if list(frame.columns) == columns:
        return frame
    return backend_of(frame).select(frame, columns)


def _secret_columns(secret) -> list | None:
    """Return the secrets' columns, or None when a secret names no column."""
    secrets = secret if isinstance(secret, (list, tuple)) else [secret]
    columns = [getattr(s, "column", None) for s in secrets]
    if not secrets or any(c is None for c in columns):
        return None
    return list(dict.fromkeys(columns))


def needed_columns(query, secret, data, *, bounds=None, reference=None):
    """Return the columns a release of ``query`` reads, in ``data``'s order.

    The statistic's columns (when it names none, every column of the private
    data ``data`` but the secret's, or all of them for a function of the
    whole frame), the secret's, and the columns a ``bounds`` dict names that
    both frames have (their labels are checked against the data; no value of
    them is read). None when the query or secret names no columns (a bad
    parameter, refused by the fit).
    """
    secrets = _secret_columns(secret)
    if secrets is None or not hasattr(query, "resolve_columns"):
        return None
    named = getattr(query, "columns", None)
    if named is None:
        named = query.resolve_columns(data, exclude=secrets)
    needed = list(dict.fromkeys([*named, *secrets]))
    if isinstance(bounds, dict):
        present = set(data.columns) if reference is None else (
            set(data.columns) & set(reference.columns))
        needed += [c for c in bounds if c in present and c not in needed]
    order = {c: i for i, c in enumerate(data.columns) if c in set(needed)}
    # The private data's order; a column it lacks after them (refused).
    return sorted(needed, key=lambda c: order.get(c, len(order)))


def _check_has(frame, columns, what: str, other, released, secrets) -> None:
    """Refuse a frame that lacks a needed column, or holds one twice.

    ``other`` is the other frame (None when there is none), to say whether
    the column is spelt otherwise or missing from one frame only.
    """
    labels = list(frame.columns)
    missing = [c for c in columns if c not in set(labels)]
    if missing:
        column = missing[0]
        role = ("the secret's column" if column in secrets
                else "a released column" if column in released
                else "a column the release reads")
        also = f" (nor {missing[1:]})" if missing[1:] else ""
        if other is None or column not in set(other.columns):
            raise DataValidationError(
                f"{what.capitalize()} has no column {column!r}, {role}{also}; "
                f"its columns are {labels[:12]}"
                f"{' ...' if len(labels) > 12 else ''}. Check the spelling, "
                "or name columns it has.")
        where = _REFERENCE if what == _PRIVATE else _PRIVATE
        fix = ("hide a property of a column both frames have"
               if column in secrets else "release other columns")
        raise DataValidationError(
            f"{what.capitalize()} has no column {column!r}, {role}{also}, "
            f"which {where} has. Add it to {what} (under the same name: "
            f"rename it if it is spelt otherwise), or {fix}. Other columns "
            "may differ between the two frames: a release takes from each "
            "only the columns it reads.")
    twice = [c for c in columns if labels.count(c) > 1]
    if twice:
        raise DataValidationError(
            f"{what.capitalize()} has duplicate column names {twice}, which "
            "this release reads; rename or drop all but one of each.")


def _is_number(dtype) -> bool:
    """Whether a column of ``dtype`` holds numbers (bools, numeric categories)."""
    if isinstance(dtype, pd.CategoricalDtype):
        dtype = dtype.categories.dtype
    return pd.api.types.is_numeric_dtype(dtype)


def check_same_kinds(data, reference, columns) -> None:
    """Refuse a column holding numbers in one frame and text in the other.

    Integers against floats (or bools) are the same numbers, and a category
    against text the same labels: those are read alike in both frames. A
    number and its text never compare equal, so a share, a secret's group
    or a mean would silently differ between the frames: refused.
    """
    private = backend_of(data).schema(data).dtypes
    public = backend_of(reference).schema(reference).dtypes
    for c in columns:
        if _is_number(private[c]) != _is_number(public[c]):
            raise DataValidationError(
                f"Column {c!r} holds {private[c]} values in the private data "
                f"but {public[c]} in the reference data: a number and its "
                "text never compare equal, so the two frames would not be "
                "read alike. Convert one, e.g. reference[column] = "
                "pd.to_numeric(reference[column]), or "
                "reference[column].astype(str).")


def release_frames(query, secret, data, reference, *, bounds=None):
    """Return (private, reference) holding only the columns the release reads.

    Both frames get the same columns in the same order (the private data's):
    the statistic's, the secret's and those a ``bounds`` dict names that
    both have (:func:`needed_columns`). A needed column one frame lacks, or
    holds twice, is refused naming the frame and the column; so is one
    holding numbers in one frame and text in the other. ``reference`` that
    is not a frame (None, ``"self"``, a bad value refused later) is
    returned as it is. Nothing is read but the frames' labels and dtypes;
    neither frame is modified.
    """
    frames = [(data, _PRIVATE)]
    has_reference = (reference is not None and not isinstance(reference, str)
                     and hasattr(reference, "columns"))
    if has_reference:
        frames.append((reference, _REFERENCE))
    columns = needed_columns(query, secret, data, bounds=bounds,
                             reference=reference if has_reference else None)
    if columns is None:
        return data, reference
    secrets = _secret_columns(secret)
    released = [c for c in columns if c not in secrets]
    for i, (frame, what) in enumerate(frames):
        other = frames[1 - i][0] if len(frames) == 2 else None
        _check_has(frame, columns, what, other, released, secrets)
    if has_reference:
        check_same_kinds(data, reference, columns)
        reference = select_columns(reference, columns)
    return select_columns(data, columns), reference
