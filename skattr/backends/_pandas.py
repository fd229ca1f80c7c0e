"""The pandas backend: the whole frame in memory, read by :mod:`skattr._data`."""

from __future__ import annotations

import pandas as pd

from skattr._data import (
    clip_frame as pandas_clip_frame,
)
from skattr._data import (
    column_ranges as pandas_column_ranges,
)
from skattr._data import (
    column_totals as pandas_column_totals,
)
from skattr._data import (
    digests as pandas_digests,
)
from skattr._data import (
    group_statistics as pandas_group_statistics,
)
from skattr._data import (
    hash_sums as pandas_hash_sums,
)
from skattr._data import (
    statistic_values as pandas_statistic_values,
)
from skattr._query import check_present
from skattr.backends._protocol import DataBackend
from skattr.exceptions import DataValidationError

__all__ = ["PandasBackend"]


class PandasBackend(DataBackend):
    """pandas DataFrames (and Series, as one column): the reference backend."""

    name = "pandas"
    lazy = False

    def recognizes(self, obj) -> bool:
        return isinstance(obj, (pd.DataFrame, pd.Series))

    def as_frame(self, obj, *, what: str):
        return obj.to_frame() if isinstance(obj, pd.Series) else obj

    def schema(self, frame) -> pd.DataFrame:
        return frame

    def row_count(self, frame, *, what: str | None = None) -> int:
        if what is not None and len(frame) == 0:
            raise DataValidationError(
                f"Found array with 0 sample(s) while a minimum of 1 is required: "
                f"{what} has 0 rows. Pass a non-empty frame.")
        return len(frame)

    def check_releasable(self, frame, query) -> None:
        """Every statistic is computed on pandas data."""

    def check_secrets(self, frame, secrets, *, what: str) -> None:
        for secret in secrets:
            # A release does not read the secret's column; a numeric one is
            # still checked (one cheap pass), while checking a categorical
            # one would cost more than the release itself.
            if (secret.column in frame.columns
                    and pd.api.types.is_numeric_dtype(frame[secret.column].dtype)):
                check_present(frame[secret.column], secret.column, what=what)

    def statistic(self, frame, query, columns, *, secrets=(), clip=None,
                  what: str = "the private data"):
        n = len(frame)
        if query.is_linear:
            # Linear: per-column sums without an (n, k) copy of the data.
            totals = pandas_column_totals(frame, query, columns, what=what,
                                         clip=clip)
            return n, totals * query.weight(n)
        return n, pandas_statistic_values(frame, query, columns, what=what,
                                         clip=clip)

    def column_totals(self, frame, query, columns, *, what: str, check=None):
        totals = pandas_column_totals(frame, query, columns, what=what)
        if check is not None:
            check(frame)
        return len(frame), totals

    def group_statistics(self, frame, query, columns, secrets, *,
                         what: str = "the reference data"):
        return len(frame), pandas_group_statistics(frame, query, columns, secrets,
                                                  what=what)

    def column_ranges(self, frame, columns, *, what: str = "the reference data"):
        return pandas_column_ranges(frame, columns, what=what)

    def clip(self, frame, clip: dict, *, what: str = "the private data"):
        return pandas_clip_frame(frame, clip, what=what)

    def collect(self, frame, columns) -> pd.DataFrame:
        columns = list(dict.fromkeys(columns))
        return frame if columns == list(frame.columns) else frame[columns]

    def hash_sums(self, frame, columns):
        return len(frame), pandas_digests(pandas_hash_sums(frame, list(columns)))
