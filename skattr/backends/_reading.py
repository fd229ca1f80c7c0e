"""One reading of the data: every pass of a release reads the same rows.

A lazy frame (Dask) is read again at each pass: a mean reads it once, a
median three times or more, and a release through the accessor counts its
rows first. A source that changes between two passes (files rewritten, a
function that returns other data on a later call, a table written to
meanwhile) would mix versions of the data: a median certified at n = 200
from its first pass while later passes read 250 rows, a mean that is the
mean of no version. So each pass of a lazy backend reports, for each
partition, its row count and a sum of the hashes of each column it read,
computed on the same rows in the same pass; a :class:`Reading` keeps the
first report of each frame and checks every later one against it, and
refuses (nothing released) when they differ.

:func:`one_reading` opens a reading for the passes inside it (a release
through the accessor, a mechanism's release, a ledger from its opening
on); a reading opened inside another joins it. A pandas frame is in memory
and read once: it reports nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading

from skattr.exceptions import DataValidationError

__all__ = ["Reading", "current_reading", "one_reading"]


class Reading:
    """What the passes of one reading have read of each lazy frame.

    For each frame (by its name in the task graph): the number of rows of
    each partition, and for each column read so far, one sum modulo 2^64
    of its values' 64-bit hashes per partition. A later pass must find the
    same number of rows and the same sums (added up over its partitions)
    for the columns both read; the columns it reads first are added. The
    partitions may differ (Dask reads a selection of a Parquet frame's
    columns in fewer, fused partitions); when they line up, a refusal names
    the first partition that changed.

    Parameters
    ----------
    since : str, default="during the release"
        When the reading began, for the message of a refusal ("since the
        ledger was opened").

    Notes
    -----
    The sums identify the data, not an adversary's edit: they are not a
    cryptographic digest, and a source that changes a value and another
    so that the hashes still add up is not told apart. They do not depend on
    the order of the rows within a partition, which no released statistic
    depends on either.
    """

    def __init__(self, since: str = "during the release"):
        self.since = since
        self._frames: dict = {}
        self._lock = threading.Lock()

    def check(self, key, partitions: list, columns, *, what: str) -> None:
        """Check one pass's report against the earlier passes', then keep it.

        Parameters
        ----------
        key : hashable
            The frame's identity (the same data source).
        partitions : list of (int, tuple of int)
            Per partition, in order: its row count, and the hash sum of each
            of ``columns``.
        columns : sequence
            The columns this pass read (hashed), in the order of the sums.
        what : str
            The data, for the message ("the private data").

        Raises
        ------
        DataValidationError
            The pass read other rows or values than an earlier pass.
        """
        columns = list(columns)
        rows = [int(r) for r, _ in partitions]
        sums = {c: [int(s[j]) for _, s in partitions]
                for j, c in enumerate(columns)}
        with self._lock:
            seen = self._frames.get(key)
            if seen is None:
                self._frames[key] = {"rows": rows, "columns": sums}
                return
            # The totals decide: a selection of a frame's columns may be read
            # in other partitions than the frame (Dask fuses a Parquet
            # file's row groups when fewer columns are read), and the rows
            # and hash sums add up over partitions (the sums modulo 2^64).
            same_parts = len(rows) == len(seen["rows"])
            if sum(rows) != sum(seen["rows"]):
                self._refuse(what, self._rows_changed(seen["rows"], rows))
            changed = [c for c in columns if c in seen["columns"]
                       and _total(seen["columns"][c]) != _total(sums[c])]
            if changed:
                where = ""
                if same_parts:
                    part = next(i for i, (a, b) in enumerate(zip(
                        seen["columns"][changed[0]], sums[changed[0]],
                        strict=True)) if a != b)
                    where = f" (partition {part}, first)"
                self._refuse(what, f"the values of column(s) {changed} "
                             f"differ between two passes{where}")
            for c in columns:
                seen["columns"].setdefault(c, sums[c])
            if not same_parts:
                # Partitions no longer line up: keep the totals alone.
                seen["rows"] = [sum(rows)]
                seen["columns"] = {c: [_total(v)]
                                   for c, v in seen["columns"].items()}

    @staticmethod
    def _rows_changed(before: list, now: list) -> str:
        said = (f"an earlier pass read {sum(before)} rows, a later one "
                f"{sum(now)}")
        if len(before) != len(now):
            return said
        part = next(i for i, (a, b) in enumerate(zip(before, now, strict=True))
                    if a != b)
        return f"{said} (partition {part}: {before[part]} rows, then {now[part]})"

    def _refuse(self, what: str, why: str):
        raise DataValidationError(
            f"The {what.removeprefix('the ')} changed {self.since}: {why}. "
            "Nothing was released. Release from data that does not change "
            "while it is read: persist it first (ddf = ddf.persist()), or "
            "stop writing to its files or table meanwhile.")


def _total(sums: list) -> int:
    """Return per-partition hash sums added up, modulo 2^64."""
    return sum(sums) % 2**64


_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("skattr_reading",
                                                         default=None)


def current_reading() -> Reading | None:
    """Return the reading the passes now belong to, if one is open."""
    return _ACTIVE.get()


@contextlib.contextmanager
def one_reading(reading: Reading | None = None, *,
                since: str = "during the release"):
    """Make the passes inside one reading: each checked against the earlier.

    Parameters
    ----------
    reading : Reading, optional
        A reading kept across calls (a ledger's, from its opening). None
        joins the reading already open, or opens a new one.
    since : str, default="during the release"
        When a new reading begins, for its messages (see :class:`Reading`).

    Yields
    ------
    Reading
        The reading the passes report to.
    """
    if reading is None:
        reading = _ACTIVE.get() or Reading(since)
    token = _ACTIVE.set(reading)
    try:
        yield reading
    finally:
        _ACTIVE.reset(token)
