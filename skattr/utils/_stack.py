"""Where a warning points: the user's line, not skattr's."""

from __future__ import annotations

import inspect

__all__ = ["caller_stacklevel"]


def caller_stacklevel() -> int:
    """Return the stacklevel of the first frame outside skattr (the user's).

    Examples
    --------
    >>> caller_stacklevel() >= 1
    True
    """
    frame, level = inspect.currentframe(), 0
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
            "skattr."):
        frame, level = frame.f_back, level + 1
    return max(level, 1)
