"""Turn user data into a checked DataFrame and its columns into float arrays."""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Iterable

import numpy as np
import pandas as pd

from skattr.exceptions import DataValidationError, InvalidParameterError


def as_frame(X, *, what: str = "X") -> pd.DataFrame:
    """Return ``X`` as a DataFrame without copying or mutating the caller's data.

    Arrays become frames with integer column labels 0..m-1, which is how a secret
    or query names a column of a NumPy array (and of scikit-learn's checks).
    Other backends' frames go through :func:`skattr.backends.frame_of`.
    """
    if isinstance(X, pd.DataFrame):
        frame = X
    elif isinstance(X, pd.Series):
        frame = X.to_frame()
    else:
        if hasattr(X, "toarray") or hasattr(X, "tocsr"):
            raise TypeError(
                f"{what} is a sparse matrix; skattr needs dense data. "
                "Convert it with .toarray() first."
            )
        array = np.asarray(X)
        if array.ndim == 1:
            raise DataValidationError(
                f"{what} must be 2-dimensional (rows x columns); got a 1-d array. "
                "Reshape your data with array.reshape(-1, 1) if it has a single "
                "feature or array.reshape(1, -1) if it contains a single sample."
            )
        if array.ndim != 2:
            raise DataValidationError(
                f"{what} must be 2-dimensional; got {array.ndim} dimensions."
            )
        if np.iscomplexobj(array):
            raise DataValidationError(
                f"Complex data not supported: {what} holds complex numbers; pass "
                "real-valued data."
            )
        frame = pd.DataFrame(array)
    return check_frame(frame, what=what)


def check_frame(frame, *, what: str = "X", counted: bool = True):
    """Refuse a frame with no rows or columns, complex data or bad labels.

    ``counted=False`` for a lazy frame, whose rows are not counted without a
    pass: an empty one is refused by the pass that reads it.
    """
    if counted and frame.shape[0] == 0:
        raise DataValidationError(
            f"Found array with 0 sample(s) (shape={frame.shape}) while a minimum of "
            f"1 is required: {what} has 0 rows. Pass a non-empty frame."
        )
    if len(frame.columns) == 0:
        raise DataValidationError(
            f"Found array with 0 feature(s) (shape={frame.shape}) while a minimum of "
            f"1 is required: {what} has no columns to release."
        )
    if any(pd.api.types.is_complex_dtype(d) for d in frame.dtypes):
        raise DataValidationError(
            f"Complex data not supported: {what} holds complex columns; pass "
            "real-valued data."
        )
    check_unique_labels(frame, what=what)
    # scikit-learn's feature-name check raises a TypeError on labels that mix
    # strings with other types; refused here, with skattr's error.
    kinds = sorted({type(c).__qualname__ for c in frame.columns})
    if len(kinds) > 1 and "str" in kinds:
        raise DataValidationError(
            f"{what} has column labels of several types {kinds}; name every "
            "column with a string (df.columns = df.columns.astype(str)) or "
            "none."
        )
    return frame


def check_unique_labels(frame, *, what: str = "X") -> None:
    """Refuse a frame that names a column twice, naming the labels.

    Reads the labels only (no rows): the first check of every call.
    """
    if not frame.columns.is_unique:
        repeated = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
        raise DataValidationError(
            f"{what} has duplicate column names {repeated}; a column must be "
            "named once to be released or used as a secret. Rename or drop the "
            "duplicates (e.g. df.loc[:, ~df.columns.duplicated()])."
        )


def column_labels(columns, *, name: str = "columns") -> tuple | None:
    """Return ``columns`` as a tuple of column labels (None: every column).

    One label (a str, a number) or a sequence of them (a list, tuple, array,
    Index or range) is accepted; a tuple inside a list is one label (of a
    MultiIndex). Anything else (a dict, a set, a slice, a function, a frame,
    a nested list, a label named twice) is refused before any work, with
    what to pass instead.

    Raises
    ------
    InvalidParameterError
        ``columns`` names no column, or not as labels.

    Examples
    --------
    >>> column_labels("age"), column_labels(["age", "bmi"]), column_labels(None)
    (('age',), ('age', 'bmi'), None)
    >>> column_labels({"age": 1})
    Traceback (most recent call last):
    ...
    skattr.exceptions.InvalidParameterError: columns= must be a column label or ...
    """
    if columns is None:
        return None
    if isinstance(columns, (str, bytes, numbers.Number, np.generic)):
        return (columns,)
    shown = f"a {type(columns).__name__}"
    if isinstance(columns, (dict, set, frozenset, slice, pd.DataFrame, pd.Series,
                            type(Ellipsis))) or callable(columns) or not (
            isinstance(columns, Iterable)):
        unordered = (" (a set has no order: the statistics would come out in "
                     "any order)" if isinstance(columns, (set, frozenset))
                     else "")
        raise InvalidParameterError(
            f"{name}= must be a column label or a list of labels "
            f"(['age', 'bmi']); got {shown}{unordered}. Pass the columns' "
            "names as a list, or None for every column.")
    columns = tuple(columns)
    bad = [c for c in columns if not isinstance(c, Hashable)
           or isinstance(c, (slice, type(Ellipsis), np.ndarray))]
    if bad:
        raise InvalidParameterError(
            f"{name}= must list column labels (str, numbers, or a tuple for a "
            f"MultiIndex column); got {bad[0]!r:.60} among them. Pass a flat "
            "list of the columns' names, such as ['age', 'bmi'].")
    if not columns:
        raise InvalidParameterError(
            f"{name}= names no column: a statistic needs at least one column "
            "(['age']); pass None for every column.")
    seen, twice = set(), []
    for c in columns:
        try:
            if c in seen and c not in twice:
                twice.append(c)
            seen.add(c)
        except TypeError:     # a tuple holding a list: not a label
            raise InvalidParameterError(
                f"{name}= must list column labels; {c!r:.60} is not one."
            ) from None
    if twice:
        raise InvalidParameterError(
            f"{name}= names {twice} more than once; name each column once.")
    return columns


def check_columns(frame: pd.DataFrame, columns, *, what: str = "X") -> None:
    """Raise if any of ``columns`` is not a column of ``frame``."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        shown = list(frame.columns)[:12]
        raise DataValidationError(
            f"Column(s) {missing} not found in {what}, which has n_features = "
            f"{frame.shape[1]}: {shown}{' ...' if frame.shape[1] > 12 else ''}; "
            "check the spelling or pass the frame that holds them."
        )


def numeric_block(frame: pd.DataFrame, columns, *, what: str = "X") -> np.ndarray:
    """Columns of ``frame`` as a float64 array (rows x columns), checked.

    Non-numeric columns raise; NaN and infinite values raise, naming the column.
    """
    check_columns(frame, columns, what=what)
    # NumPy integers and booleans hold no NaN or infinity (and their float64 sums
    # cannot overflow), so blocks of them skip the finite check's pass over the data.
    exact, plain = True, True
    for c in columns:
        dtype = _numeric_dtype(frame[c], c, what)
        exact &= isinstance(dtype, np.dtype) and dtype.kind in "biu"
        plain &= isinstance(dtype, np.dtype) and dtype.kind in "biuf"
    if plain and len(columns):
        # NumPy columns, each cast to float64 into the block: the same
        # values as the frame's to_numpy, without selecting a sub-frame
        # (about 1 ms a call, which a release of a small dataset pays twice).
        block = np.empty((len(frame), len(columns)), dtype=np.float64)
        for j, c in enumerate(columns):
            block[:, j] = frame[c].to_numpy()
        if not exact:
            check_finite(block, columns, what=what)
        return block
    try:
        block = frame[list(columns)].to_numpy(dtype=np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(
            f"Columns {list(columns)} of {what} cannot be read as numbers: {exc}"
        ) from exc
    if not exact:
        check_finite(block, columns, what=what)
    return block


def _numeric_dtype(col: pd.Series, label, what: str):
    """Return the column's dtype if it holds numbers; raise if it cannot."""
    dtype = col.dtype
    if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        return dtype
    if dtype == np.dtype(object):
        # An object column may hold plain numbers (as scikit-learn accepts);
        # anything else is not numeric.
        try:
            col.to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            pass
        else:
            return dtype
    raise DataValidationError(
        f"Column {label!r} of {what} is not numeric (dtype {dtype}). Release "
        "numeric columns, or use a proportion/count query with a value to "
        "compare categorical columns with."
    )


def column_sums(frame: pd.DataFrame, columns, *, what: str = "X") -> np.ndarray:
    """Float64 sums of numeric columns, checked for NaN and infinite values.

    Each column is summed where it lies (no float64 copy of the block), which keeps
    a release as cheap as ``frame[columns].sum()`` whatever the columns' dtypes.
    """
    check_columns(frame, columns, what=what)
    sums = np.empty(len(columns))
    for j, c in enumerate(columns):
        col = frame[c]
        dtype = _numeric_dtype(col, c, what)
        if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
            values = col.to_numpy()
        else:
            values = col.to_numpy(dtype=np.float64, na_value=np.nan)
        with np.errstate(over="ignore", invalid="ignore"):
            sums[j] = np.add.reduce(values, dtype=np.float64)
    if not np.all(np.isfinite(sums)):
        # Only now pay for the block: it names the offending columns.
        check_finite(numeric_block(frame, columns, what=what), columns, what=what)
    return sums


def check_finite(block: np.ndarray, columns, *, what: str = "X") -> None:
    """Raise if ``block`` holds NaN or infinite values, naming the columns."""
    # One summing pass: a NaN or inf anywhere makes its column's sum non-finite,
    # so the common (clean) case costs no separate scan.
    with np.errstate(over="ignore", invalid="ignore"):
        sums = block.sum(axis=0)
    if np.all(np.isfinite(sums)):
        return
    finite = np.isfinite(block).all(axis=0)
    bad = [c for c, ok in zip(columns, finite, strict=True) if not ok]
    if not bad:
        # The sum overflowed though every value is finite.
        raise DataValidationError(
            f"Columns {list(columns)} of {what} hold values too large to sum in "
            "float64; rescale them (e.g. to thousands) before releasing."
        )
    raise DataValidationError(
        f"{what} contains NaN or infinite values in column(s) {bad}. skattr does "
        "not impute: drop or fill those rows first (the count n must be the "
        "number of records actually used)."
    )
