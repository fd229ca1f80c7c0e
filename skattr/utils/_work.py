"""A guard on long computations: project the time from the work done so far.

Loops whose cost grows with their input and cannot be counted in advance (a
Python function run on every drawn dataset) time their first chunks and
refuse, with the projection and the option that makes the work cheaper, as
soon as the whole would take longer than the limit. Nothing is released by a
refused computation.
"""

from __future__ import annotations

import math
import os
import time

from skattr.exceptions import InvalidParameterError, WorkLimitError

__all__ = ["DEFAULT_MAX_SECONDS", "TimeGuard", "work_seconds"]

#: The limit of a computation without a limit parameter of its own.
DEFAULT_MAX_SECONDS = 300.0


def work_seconds() -> float | None:
    """Return the limit of computations without a parameter of their own.

    ``SKATTR_MAX_SECONDS`` in the environment (a number of seconds, or
    ``none`` for no limit), else :data:`DEFAULT_MAX_SECONDS`.

    Examples
    --------
    >>> import os
    >>> from skattr.utils._work import work_seconds
    >>> os.environ.get("SKATTR_MAX_SECONDS") or work_seconds()
    300.0
    """
    value = os.environ.get("SKATTR_MAX_SECONDS", "").strip()
    if not value:
        return DEFAULT_MAX_SECONDS
    if value.lower() == "none":
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise InvalidParameterError(
            f"SKATTR_MAX_SECONDS must be a positive number of seconds or "
            f"'none'; got {value!r}.")
    return seconds


class TimeGuard:
    """Projects a loop's total time from its progress; refuses beyond a limit.

    A loop of several phases per unit (drawing datasets, then evaluating a
    function on them) marks each phase's units as they are done: the time
    since the previous mark is the phase's, and the projection is the time
    spent plus each phase's units left at its latest seconds per unit.

    Parameters
    ----------
    total : int
        Units of work in the whole loop (datasets, pairs, ...).
    max_seconds : float or None
        The limit; None never refuses.
    what : str
        The work, for the message ("drawing 20,000 datasets of 100,000 records").
    cheaper : str
        The options that make it cheaper, for the message.

    Examples
    --------
    >>> from skattr.utils._work import TimeGuard
    >>> guard = TimeGuard(10, None, what="ten steps", cheaper="fewer steps")
    >>> guard.advance(5)          # no limit: never refuses
    """

    def __init__(self, total: int, max_seconds: float | None, *, what: str,
                 cheaper: str):
        self.total = max(int(total), 1)
        self.max_seconds = max_seconds
        self.what = what
        self.cheaper = cheaper
        self._done: dict = {}          # phase -> units done
        self._rate: dict = {}          # phase -> seconds a unit, lately
        self._start = self._mark = time.perf_counter()

    def expect(self, seconds: float, basis: str) -> None:
        """Refuse now if an estimate made before any work exceeds the limit.

        ``basis`` says how it was made, for the message ("at least 5 ns a
        row position drawn"); the estimate should be on the low side, so
        that only work certain to overrun is refused unseen.
        """
        if self.max_seconds is not None and seconds > self.max_seconds:
            raise WorkLimitError(
                f"{self.what[:1].upper()}{self.what[1:]} would take at least "
                f"{_duration(seconds)} ({basis}), more than the limit of "
                f"{_duration(self.max_seconds)}. To make it cheaper, "
                f"{self.cheaper}.")

    @property
    def remaining(self) -> int:
        """Units not yet done (of the phase furthest behind)."""
        done = min(self._done.values(), default=0)
        return max(self.total - done, 0)

    def advance(self, units: int, phase: str = "work") -> None:
        """Count ``units`` more of ``phase`` done; refuse if the whole would overrun.

        The projection is the time spent so far plus the units left at each
        phase's latest rate (so a one-time start, such as a generator's
        set-up, is not charged to every unit once later units are timed). It
        is acted on once a tenth of the limit (at most 5 s) has passed.
        """
        now = time.perf_counter()
        units = int(units)
        if units > 0:
            self._rate[phase] = (now - self._mark) / units
            self._done[phase] = self._done.get(phase, 0) + units
        self._mark = now
        if self.max_seconds is None:
            return
        elapsed = now - self._start
        if elapsed < min(5.0, self.max_seconds / 10):
            return
        projected = elapsed + sum(
            max(self.total - self._done[p], 0) * rate
            for p, rate in self._rate.items())
        done = min(self._done.values(), default=0)
        if projected > self.max_seconds and done < self.total:
            raise WorkLimitError(
                f"{self.what[:1].upper()}{self.what[1:]} would take about "
                f"{_duration(projected)} (measured on the first "
                f"{done:,} of {self.total:,}), more than the limit of "
                f"{_duration(self.max_seconds)}. To make it cheaper, "
                f"{self.cheaper}.")


def _duration(seconds: float) -> str:
    """Return a duration in plain words (``"4 minutes"``)."""
    if seconds < 1.5:
        return "1 second" if seconds >= 0.5 else f"{seconds:.2g} seconds"
    if seconds < 120:
        return f"{seconds:.0f} seconds"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"
