"""Optional progress bars (tqdm) on the steps that take seconds.

Every long loop in skattr (the datasets a resampling Theta draws, the shadow
datasets of an attack, a benchmark's rounds, and any later loop such as an
empirical audit's) shows its progress through :func:`progress_bar` or
:func:`track`, driven by one ``progress=`` setting:

- ``"auto"`` (the default everywhere): a bar only when tqdm is installed and
  standard error is a terminal, so CI logs, pipes and notebooks without a
  terminal stay clean;
- ``True``: always a bar, and
  :class:`~skattr.exceptions.MissingDependencyError` if tqdm is missing;
- ``False``: never a bar.

A bar only watches: it draws no random number and changes no value, so a
seeded result is the same with or without it. tqdm is imported only when a bar
is shown, never at ``import skattr``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Iterator

from skattr.exceptions import InvalidParameterError, MissingDependencyError
from skattr.utils._param_validation import Options

__all__ = ["PROGRESS_CONSTRAINT", "PROGRESS_DOC", "check_progress",
           "progress_bar", "progress_enabled", "track"]

#: The ``_parameter_constraints`` entry of a ``progress`` parameter.
PROGRESS_CONSTRAINT = [Options(frozenset({"auto"})), bool]

#: The Parameters entry of a ``progress`` parameter, as docstrings show it.
PROGRESS_DOC = """\
progress : "auto" or bool, default="auto"
    Show a progress bar (tqdm) on the steps that take seconds. "auto" shows
    one when tqdm is installed and standard error is a terminal; True always
    (pip install "skattr[progress]"); False never. It changes no result."""

_INSTALL = 'pip install "skattr[progress]"'


def check_progress(progress, owner: str) -> None:
    """Raise InvalidParameterError unless ``progress`` is "auto", True or False.

    Parameters
    ----------
    progress : object
        The value given.
    owner : str
        Who takes it, for the message (a class or function name).

    Examples
    --------
    >>> from skattr.utils._progress import check_progress
    >>> check_progress("auto", "Resample")
    >>> check_progress("yes", "Resample")
    Traceback (most recent call last):
    ...
    skattr.exceptions.InvalidParameterError: The 'progress' parameter of \
Resample must be 'auto' or a bool. Got 'yes' instead.
    """
    if isinstance(progress, bool) or (isinstance(progress, str)
                                      and progress == "auto"):
        return
    raise InvalidParameterError(
        f"The 'progress' parameter of {owner} must be 'auto' or a bool. Got "
        f"{progress!r} instead.")


def _tqdm_installed() -> bool:
    if "tqdm" in sys.modules:       # None there: blocked, as if not installed
        return sys.modules["tqdm"] is not None
    return importlib.util.find_spec("tqdm") is not None


def _stderr_is_terminal() -> bool:
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):     # no isatty, or a closed stream
        return False


def progress_enabled(progress) -> bool:
    """Whether a bar is shown for ``progress``; True without tqdm raises.

    Parameters
    ----------
    progress : "auto" or bool
        The setting (see the module's docstring).

    Returns
    -------
    bool

    Raises
    ------
    MissingDependencyError
        ``progress=True`` and tqdm is not installed.
    InvalidParameterError
        Any other value.
    """
    check_progress(progress, "skattr")
    if progress is False:
        return False
    if progress is True:
        if not _tqdm_installed():
            raise MissingDependencyError(
                f"progress=True shows progress bars with tqdm, which is not "
                f"installed: {_INSTALL} (or pass progress=False).")
        return True
    return _tqdm_installed() and _stderr_is_terminal()


class _Silent:
    """A bar that shows nothing: what :func:`progress_bar` returns when off."""

    total = None
    n = 0

    def update(self, n=1) -> None:
        """Do nothing: no bar is shown."""

    def set_postfix_str(self, s="", refresh=True) -> None:
        """Do nothing: no bar is shown."""

    def close(self) -> None:
        """Do nothing: no bar is shown."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(progress="auto", *, total: int | None = None,
                 desc: str | None = None, unit: str = "it",
                 leave: bool = False, delay: float = 0.0):
    """Return a progress bar to ``update(k)``, or one that shows nothing.

    Parameters
    ----------
    progress : "auto" or bool, default="auto"
        Whether to show it (see the module's docstring).
    total : int or None, default=None
        The number of steps, when known.
    desc : str or None, default=None
        What is counted, shown before the bar.
    unit : str, default="it"
        The name of one step ("dataset", "round").
    leave : bool, default=False
        Keep the finished bar on the terminal. Off by default: a library's
        loops run inside the caller's (a grid search, many releases), whose
        finished bars would pile up.

    Returns
    -------
    tqdm.tqdm or a silent stand-in
        Both have ``update(n)``, ``set_postfix_str(s)`` and ``close()`` and are
        context managers. The bar writes to ``sys.stderr`` as it is when the
        bar is made.

    Examples
    --------
    >>> from skattr.utils._progress import progress_bar
    >>> with progress_bar(False, total=3, desc="rounds") as bar:
    ...     for _ in range(3):
    ...         bar.update(1)
    """
    if not progress_enabled(progress):
        return _Silent()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, leave=leave,
                file=sys.stderr, dynamic_ncols=True, delay=delay)


def track(iterable: Iterable, progress="auto", *, total: int | None = None,
          desc: str | None = None, unit: str = "it",
          leave: bool = False) -> Iterator:
    """Yield the items of ``iterable``, counting them on a progress bar.

    ``total`` defaults to ``len(iterable)`` when it has one. See
    :func:`progress_bar` for the other parameters.

    Examples
    --------
    >>> from skattr.utils._progress import track
    >>> [x * x for x in track(range(3), progress=False, desc="squares")]
    [0, 1, 4]
    """
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    with progress_bar(progress, total=total, desc=desc, unit=unit,
                      leave=leave) as bar:
        for item in iterable:
            yield item
            bar.update(1)
