"""How a :class:`~skattr.Statistic` of each kind is checked and computed.

A kernel computes its statistic on a stack of row subsets at once: the whole
data is the stack of one subset, so the exact value and the resampled laws
are one computation. :class:`VectorisedKernel` is a NumPy function of a
block of subsets (the built-in kinds); :class:`CallableKernel` calls a user's
function once a subset. A kind (:mod:`skattr._kinds`) holds its kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np
import pandas as pd

from skattr._validation import check_columns, numeric_block
from skattr.exceptions import DataValidationError, InvalidParameterError
from skattr.utils._param_validation import validate_parameter_constraints

__all__ = ["CallableKernel", "VectorisedKernel", "largest_std", "numpy_lerp",
           "quantile_position"]

# Values gathered at once by evaluate_rows (32 MB of float64): m subsets of n rows
# of k columns would otherwise be one m * n * k copy.
_CHUNK = 2**22


def _kind_outputs(stat, columns) -> int:
    # The kind says how many values (one source for the kind and the kernel);
    # one a column for a kind that does not say (as before kinds said it).
    found = stat.kind.n_outputs(stat, columns)
    return len(columns) if found is None else found


def _column_labels(stat, columns) -> list[str]:
    return [str(c) for c in columns]


def _kind_rows(stat, columns) -> int:
    # The kind says the fewest rows (one source for the kind and the kernel).
    return stat.kind.min_rows(stat, columns)


@dataclass(frozen=True)
class VectorisedKernel:
    """A built-in kind: a NumPy function of a block of row subsets.

    ``compute(stat, block)`` maps an (m, n, k) float64 block (m subsets of n rows
    of the k columns) to the (m, d) statistics. The whole data is the stack of
    one subset, so the exact value and the resampled laws are one computation.
    """

    compute: Callable[[Any, np.ndarray], np.ndarray]
    n_outputs: Callable[[Any, Any], int | None] = _kind_outputs
    names: Callable[[Any, Any], list[str]] = _column_labels
    min_rows: Callable[[Any, Any], int] = _kind_rows
    validate: Callable[[Any, str], None] | None = None

    reads_whole_frame: ClassVar[bool] = False

    def check(self, stat, caller: str) -> None:
        """Validate (and normalise) the kind's fields; named columns' labels."""
        if self.validate is not None:
            self.validate(stat, caller)
        if stat.columns is not None:
            stat.names(stat.columns)  # raises on duplicate labels

    def prepare(self, stat, frame: pd.DataFrame, columns, *,
                what: str) -> np.ndarray:
        """Return the columns as a checked float64 (n, k) block."""
        block = numeric_block(frame, columns, what=what)
        need = self.min_rows(stat, columns)
        if len(block) < need:
            raise DataValidationError(
                f"{what} has {len(block)} row(s); the {stat.statistic} of "
                f"{list(columns)} needs at least {need}. Pass more rows.")
        return block

    def on_rows(self, stat, block: np.ndarray,
                index: np.ndarray) -> np.ndarray:
        """Compute the statistic on the rows ``index[i]`` of ``block``, chunked."""
        need = self.min_rows(stat, range(block.shape[1]))
        if index.shape[1] < need:
            raise DataValidationError(
                f"Each subset has {index.shape[1]} row(s); the {stat.statistic} "
                f"needs at least {need}. Draw larger subsets.")
        step = max(1, _CHUNK // (index.shape[1] * block.shape[1]))
        values = np.concatenate([self._on_subsets(stat, block[index[i:i + step]])
                                 for i in range(0, len(index), step)])
        self._check_finite(stat, values, what="a subset of rows")
        return values

    def exact(self, stat, block: np.ndarray, columns, *,
              what: str) -> tuple[np.ndarray, list[str]]:
        """Compute the statistic on the whole block, with its labels."""
        # The whole data is a stack of one subset: one code path for both.
        values = self._on_subsets(stat, block[np.newaxis])[0]
        self._check_finite(stat, values, what=what)
        return values, stat.names(columns)

    def _on_subsets(self, stat, block: np.ndarray) -> np.ndarray:
        # An overflow is reported by _check_finite, with what to do about it.
        with np.errstate(over="ignore", invalid="ignore"):
            return self.compute(stat, block)

    @staticmethod
    def _check_finite(stat, values: np.ndarray, *, what: str) -> None:
        # The columns were checked finite, so only the arithmetic can overflow.
        if not np.all(np.isfinite(values)):
            raise DataValidationError(
                f"The {stat.statistic} overflows float64 on {what}; rescale the "
                "columns (e.g. to thousands).")


@dataclass(frozen=True)
class CallableKernel:
    """The function kind: a user's callable of DataFrames, once per subset.

    An arbitrary callable cannot be vectorised, so m subsets cost m calls; its
    output's labels are known once it runs, unless named.
    """

    reads_whole_frame: ClassVar[bool] = True

    def check(self, stat, caller: str) -> None:
        """Validate ``func``; normalise the labels and refuse duplicates."""
        validate_parameter_constraints(
            {"func": ["callable"]}, {"func": stat.func}, caller)
        if stat.labels is not None:
            labels = (stat.labels,) if isinstance(stat.labels, str) else tuple(
                str(name) for name in stat.labels)
            object.__setattr__(stat, "labels", labels)
            stat.names(stat.columns)  # raises on duplicate labels

    def n_outputs(self, stat, columns) -> int | None:
        """Return the number of labels; None for an unnamed function."""
        return None if stat.labels is None else len(stat.labels)

    def names(self, stat, columns) -> list[str]:
        """Return the labels, or raise while they are unknown."""
        if stat.labels is None:
            raise InvalidParameterError(
                "The labels of a function's outputs are known once it runs: "
                "pass names=[...] to Statistic.function, or fix them with "
                "stat.with_names(stat.evaluate(frame).index).")
        return list(stat.labels)

    def min_rows(self, stat, columns) -> int:
        """Return 1: what a function needs is its own affair."""
        return 1

    def prepare(self, stat, frame: pd.DataFrame, columns, *,
                what: str) -> pd.DataFrame:
        """Return the frame restricted to ``columns``, with a fresh index."""
        check_columns(frame, columns, what=what)
        # A fresh index: a function reads positions, never the labels of the
        # reference (or private) rows.
        return frame[list(columns)].reset_index(drop=True)

    def on_rows(self, stat, frame: pd.DataFrame,
                index: np.ndarray) -> np.ndarray:
        """Call the function on the rows ``index[i]`` of ``frame``, one by one."""
        outputs = [
            self._output(stat, stat.func(frame.take(row).reset_index(drop=True)))[0]
            for row in index]
        lengths = sorted({len(v) for v in outputs})
        if len(lengths) > 1:
            raise InvalidParameterError(
                f"The function returned vectors of varying lengths {lengths} on "
                "different subsets of rows; it must return the same number of "
                "values on every frame.")
        return np.vstack(outputs)

    def exact(self, stat, frame: pd.DataFrame, columns, *,
              what: str) -> tuple[np.ndarray, list[str]]:
        """Call the function on the whole frame; label its output."""
        return self._output(stat, stat.func(frame), what=what)

    @staticmethod
    def _output(stat, output, *, what: str = "a subset of rows"):
        """Check a function's output; return it as a float vector, with labels."""
        if isinstance(output, pd.DataFrame):
            raise InvalidParameterError(
                "The function must return a scalar, a 1-d array or a Series; it "
                f"returned a DataFrame of shape {output.shape}.")
        try:
            values = np.asarray(output, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                "The function must return numbers (a scalar, a 1-d array or a "
                f"Series); it returned {type(output).__name__}: {exc}") from exc
        values = values.reshape(-1) if values.ndim == 0 else values
        if values.ndim != 1 or values.size == 0:
            raise InvalidParameterError(
                "The function must return a scalar, a 1-d array or a Series; it "
                f"returned shape {values.shape}.")
        if isinstance(output, pd.Series):
            names = [str(name) for name in output.index]
        elif stat.labels is not None:
            names = list(stat.labels)
        else:
            names = [f"f{i}" for i in range(len(values))]
        if stat.labels is not None and len(values) != len(stat.labels):
            raise InvalidParameterError(
                f"The function returned {len(values)} value(s) but is named with "
                f"{len(stat.labels)} label(s) {list(stat.labels)}; make them "
                "agree.")
        if not np.all(np.isfinite(values)):
            raise DataValidationError(
                f"The function returned NaN or infinite values on {what}; make it "
                "return finite numbers on every frame (e.g. guard empty groups).")
        return values, names


def largest_std(low: float, high: float, n: int, ddof: int) -> float:
    """Return a bound on the std of n values in [low, high] (n > ddof).

    (high - low) / 2 sqrt(n / (n - ddof)): half of the values at each end.
    """
    return 0.5 * (high - low) * float(np.sqrt(n / (n - ddof)))


def quantile_position(n: int, q: float) -> tuple[int, int, float]:
    """Return where NumPy's q-quantile of n sorted values lies: (below, above, t).

    ``numpy.quantile`` (method "linear") takes the virtual index h = (n - 1) q
    in floating point and returns :func:`numpy_lerp` of the ``below`` =
    floor(h)-th and ``above`` = next smallest values (from 0) at t = h -
    floor(h); at t = 0 that is the ``below``-th value exactly.

    Examples
    --------
    >>> from skattr._kinds import quantile_position
    >>> quantile_position(5, 0.5), quantile_position(6, 0.5)
    ((2, 3, 0.0), (2, 3, 0.5))
    """
    virtual = np.float64(n - 1) * np.float64(q)
    before = int(np.floor(virtual))
    below = min(max(before, 0), n - 1)
    return below, min(below + 1, n - 1), float(virtual - before)


def numpy_lerp(a, b, t: float):
    """Interpolate as ``numpy.quantile`` does, to the last bit (arrays or floats)."""
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


