"""Where and how often a warning is issued: at the user's line, once a call."""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import warnings

__all__ = ["caller_stacklevel", "warn_once", "warnings_once"]

#: The warnings issued within :func:`warnings_once` (None outside).
_ISSUED = contextvars.ContextVar("skattr_warnings_issued", default=None)


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


@contextlib.contextmanager
def warnings_once():
    """Issue each warning of :func:`warn_once` once within: one user's call.

    ``mechanism="auto"`` fits and plans several candidates on the same data,
    a verb builds its estimator then releases with it, and ``describe``
    releases several statistics of the same columns; each step would say
    the same. Nested, the outermost decides.
    """
    token = _ISSUED.set(set()) if _ISSUED.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _ISSUED.reset(token)


def warn_once(text: str, category: type[Warning]) -> None:
    """Warn at the user's line, unless the same was said within this call.

    Outside :func:`warnings_once` every call warns (Python's own filters
    then decide, as for any warning).
    """
    issued = _ISSUED.get()
    if issued is not None:
        if (category, text) in issued:
            return
        issued.add((category, text))
    warnings.warn(text, category, stacklevel=caller_stacklevel())
