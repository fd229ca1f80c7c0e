"""Turn user data into a checked DataFrame and its columns into float arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd

from skattr.exceptions import DataValidationError


def as_frame(X, *, what: str = "X") -> pd.DataFrame:
    """Return ``X`` as a DataFrame without copying or mutating the caller's data.

    Arrays become frames with integer column labels 0..m-1, which is how a secret
    or query names a column of a NumPy array (and of scikit-learn's checks).
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
        frame = pd.DataFrame(array)
    if frame.shape[0] == 0:
        raise DataValidationError(
            f"{what} has 0 rows (0 sample(s) given); a release needs at least one "
            "record. Pass a non-empty frame."
        )
    if frame.shape[1] == 0:
        raise DataValidationError(
            f"{what} has 0 columns (0 feature(s)); pass the columns to release."
        )
    return frame


def check_columns(frame: pd.DataFrame, columns, *, what: str = "X") -> None:
    """Raise if any of ``columns`` is not a column of ``frame``."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        shown = list(frame.columns)[:12]
        raise DataValidationError(
            f"Column(s) {missing} not found in {what}. Its columns are {shown}"
            f"{' ...' if frame.shape[1] > 12 else ''}; check the spelling or pass "
            "the frame that holds them."
        )


def numeric_block(frame: pd.DataFrame, columns, *, what: str = "X") -> np.ndarray:
    """Columns of ``frame`` as a float64 array (rows x columns), checked.

    Non-numeric columns raise; NaN and infinite values raise, naming the column.
    """
    check_columns(frame, columns, what=what)
    for c in columns:
        dtype = frame[c].dtype
        if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(
            dtype
        )):
            raise DataValidationError(
                f"Column {c!r} of {what} is not numeric (dtype {dtype}). Release "
                "numeric columns, or use a proportion/count query with a value to "
                "compare categorical columns with."
            )
    try:
        block = frame[list(columns)].to_numpy(dtype=np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(
            f"Columns {list(columns)} of {what} cannot be read as numbers: {exc}"
        ) from exc
    check_finite(block, columns, what=what)
    return block


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
