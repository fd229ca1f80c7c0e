"""The data-backend protocol: every pass skattr makes over rows, and its registry.

A backend is a kind of frame skattr reads (pandas, Dask; next Polars or
Spark). It answers the few questions skattr ever asks of rows: the row
count, a release's statistic (the totals of a linear statistic in one pass,
or a median, quantile or standard deviation exactly), the per-group
sufficient statistics a moment Theta needs, each column's range and the
clipped frame (``bounds=``), the used columns collected to the driver (for a
Theta that reads records), and fingerprints of columns (a ledger's file).
Nothing else in skattr reads rows or asks which library a frame belongs to:
:func:`backend_of` finds the backend, and the rest of skattr calls it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import pandas as pd

from skattr.exceptions import InvalidParameterError

__all__ = ["DataBackend", "backend_of", "register_backend", "registered_backends"]


class DataBackend(ABC):
    """A kind of frame skattr reads, and how it reads it.

    Subclasses implement every abstract method; ``what`` names the data in
    error messages ("the private data", "the reference data"). The pandas
    backend (:mod:`skattr.backends._pandas`) is the reference
    implementation: another backend must give the same numbers (to the
    rounding of sums in another order), raise the same errors, and read the
    data in as few passes as it can.
    """

    #: The backend's name (``"pandas"``, ``"dask"``).
    name: ClassVar[str] = ""
    #: A row count needs a pass over the data (it is counted once per call).
    lazy: ClassVar[bool] = False

    @abstractmethod
    def recognizes(self, obj) -> bool:
        """Whether ``obj`` is this backend's frame or one-column series.

        Must not import the backend's library (importing skattr imports no
        optional dependency).
        """

    def as_frame(self, obj, *, what: str):
        """Return ``obj`` as this backend's frame (a series as one column)."""
        return obj

    @abstractmethod
    def schema(self, frame) -> pd.DataFrame:
        """Return a pandas frame with the columns and dtypes (no rows needed).

        scikit-learn's checks of feature names read it.
        """

    @abstractmethod
    def row_count(self, frame, *, what: str | None = None) -> int:
        """Return the number of rows; with ``what``, refuse an empty frame."""

    @abstractmethod
    def check_releasable(self, frame, query) -> None:
        """Refuse, before any fit, a statistic this backend does not compute."""

    @abstractmethod
    def check_secrets(self, frame, secrets, *, what: str) -> None:
        """Refuse missing values in a numeric secret column, when cheap now.

        A lazy backend checks them in the release's own pass instead
        (:meth:`statistic`'s ``secrets``).
        """

    @abstractmethod
    def statistic(self, frame, query, columns, *, secrets=(), clip=None,
                  what: str = "the private data") -> tuple[int, object]:
        """Return (n, the exact statistic F(X)) of the frame, columns clipped.

        ``clip`` maps columns to (low, high): their values are clipped first
        (every value, so the time taken does not depend on how many lie
        outside). A linear statistic is its totals times w(n); a median,
        quantiles or standard deviation are exact. The value is added to
        noise and never kept. A lazy backend checks ``secrets`` (as
        :meth:`check_secrets`) in the same pass.
        """

    @abstractmethod
    def column_totals(self, frame, query, columns, *, what: str,
                      check=None) -> tuple[int, object]:
        """Return (n, the totals of a linear query's contributions), checked.

        ``check`` (a function of a pandas frame) is applied to every chunk
        of rows as to a whole pandas frame: what a fit checks of data whose
        values it does not learn.
        """

    @abstractmethod
    def group_statistics(self, frame, query, columns, secrets, *,
                         what: str = "the reference data") -> tuple[int, list]:
        """Return (n, per-secret :class:`skattr._data.GroupStatistics`)."""

    @abstractmethod
    def column_ranges(self, frame, columns, *, what: str = "the reference data"):
        """Return (least, largest) value of each column (numeric, finite)."""

    @abstractmethod
    def clip(self, frame, clip: dict, *, what: str = "the private data"):
        """Return the frame with each column of ``clip`` clipped (checked first)."""

    def select(self, frame, columns):
        """Return a new frame of the named columns, in order; no value is read.

        The caller's frame is not modified (``frame[columns]`` for pandas
        and Dask; another library overrides it).
        """
        return frame[list(columns)]

    @abstractmethod
    def collect(self, frame, columns) -> pd.DataFrame:
        """Return the named columns in memory, as a pandas frame, rows in order."""

    @abstractmethod
    def hash_sums(self, frame, columns) -> tuple[int, list]:
        """Return (rows, a 128-bit hex digest per column and one of the rows).

        Sums modulo 2^64 of 64-bit hashes of each value (see
        :func:`skattr._data.hash_sums`): independent of the rows' order and
        partitioning, equal across backends for the same rows.
        """

    def from_pandas(self, frame: pd.DataFrame, *, chunks: int = 1):
        """Return a pandas frame as this backend's frame (in ``chunks`` parts)."""
        return frame

    def like(self, frame: pd.DataFrame, model):
        """Return a pandas frame as this backend's frame, shaped like ``model``."""
        return frame

    def register_accessor(self, name: str, accessor: type) -> None:  # noqa: B027
        """Register a DataFrame accessor on this backend's frames, if it has them.

        Optional: a backend whose frames take no accessors does nothing.
        """


_BACKENDS: list[DataBackend] = []


def register_backend(backend: DataBackend) -> DataBackend:
    """Add a backend; frames are matched against the backends in order.

    The pandas backend, registered first, matches pandas frames (and, after
    conversion, arrays); a later backend recognises its own frames.
    """
    if not isinstance(backend, DataBackend):
        raise TypeError(f"{backend!r} is not a skattr DataBackend.")
    if any(b.name == backend.name for b in _BACKENDS):
        raise TypeError(f"A backend named {backend.name!r} is registered.")
    _BACKENDS.append(backend)
    return backend


def registered_backends() -> tuple[DataBackend, ...]:
    """Return the registered backends, pandas first."""
    return tuple(_BACKENDS)


def backend_of(frame) -> DataBackend:
    """Return the backend of a frame (pandas for a pandas frame or series).

    Raises
    ------
    InvalidParameterError
        No registered backend reads this kind of object.
    """
    for backend in _BACKENDS:
        if backend.recognizes(frame):
            return backend
    raise InvalidParameterError(
        f"skattr reads pandas DataFrames, NumPy arrays and "
        f"{', '.join(b.name for b in _BACKENDS[1:]) or 'no other'} frames; "
        f"got {type(frame).__name__}.")
