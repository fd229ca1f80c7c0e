"""The reference data as Theta reads it: through its backend only."""

from __future__ import annotations

import numpy as np
import pandas as pd

from skattr._data import (
    GroupStatistics,
    record_contributions,
    secret_indicator,
    statistics_of,
)
from skattr.backends._protocol import backend_of

__all__ = ["Reference"]


class Reference:
    """The reference data as Theta reads it: only through this seam.

    Holds the frame, the query and its resolved columns; the records'
    contributions are computed once and shared by every secret. A frame of
    a lazy backend (Dask) is read through it: its sufficient statistics in
    one pass, or the used columns (the query's and the secrets') collected
    once when Theta reads the records.

    Parameters
    ----------
    frame : DataFrame
        The reference data, of any registered backend.
    query : Query or StackedQuery
        The linear query whose contributions Theta models.
    columns : tuple
        The query's resolved columns.
    secrets : sequence of Secret
        The secrets whose columns Theta reads.
    """

    def __init__(self, frame, query, columns, secrets=()):
        self.frame = frame
        self.query = query
        self.columns = tuple(columns)
        self._contributions = None
        self._backend = backend_of(frame)
        # A lazy frame is read through its own backend; once its used
        # columns are collected, the collected frame through pandas'.
        self._source = frame if self._backend.lazy else None
        self._source_backend = self._backend
        self._wanted = tuple(s.column for s in secrets)
        self._rows = None

    def __len__(self) -> int:
        if self._rows is None:
            self._rows = self._backend.row_count(self.frame)
        return self._rows

    def _local(self, also=()) -> pd.DataFrame:
        """Return the frame in memory: a lazy frame's used columns, collected."""
        if self._source is not None:
            wanted = [c for c in dict.fromkeys((*self.columns, *self._wanted,
                                                *also))
                      if c in self._source.columns]
            if self._backend.lazy or not set(wanted) <= set(self.frame.columns):
                self.frame = self._source_backend.collect(self._source, wanted)
                self._backend = backend_of(self.frame)
                self._rows = len(self.frame)
        return self.frame

    def records(self) -> np.ndarray:
        """Return the (n, k) contributions of the records (computed once)."""
        if self._contributions is None:
            self._contributions = record_contributions(self._local(), self.query,
                                                       self.columns)
        return self._contributions

    def groups(self, secret) -> np.ndarray:
        """Return the secret's attribute of each record (0/1: its group)."""
        return secret_indicator(self._local(also=(secret.column,)), secret)

    def group_statistics(self, secrets) -> list[GroupStatistics]:
        """Return each secret's per-group sufficient statistics (one pass)."""
        if self._contributions is None:
            rows, stats = self._backend.group_statistics(
                self.frame, self.query, self.columns, secrets)
            if self._backend.lazy:
                self._rows = rows
            return stats
        return [statistics_of(self._contributions, self.groups(s))
                for s in secrets]
