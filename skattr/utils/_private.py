"""Files only their owner may read or write: a ledger's store and its anchor.

A ledger's store holds every release and fingerprints of the private data,
and its anchor the count of releases; both are created with mode 0600, as
the command line's ``--output`` files are (``tempfile.mkstemp``), whatever
the process's umask. One made by an older skattr (0644, readable by all)
is named in a warning when opened (:func:`warn_if_shared`).
"""

from __future__ import annotations

import os
import stat
import warnings

from skattr.utils._stack import caller_stacklevel

__all__ = ["create_private", "warn_if_shared"]


def create_private(path) -> int | None:
    """Create ``path`` with mode 0600 and return its descriptor, open for writing.

    Returns None, creating nothing, when ``path`` already exists (an existing
    file keeps its mode). The mode is set again once the file is open: a
    umask only takes bits away, and one such as 0o277 would otherwise leave
    a file its owner cannot write.

    Raises
    ------
    OSError
        The folder does not exist or cannot be written.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        handle = os.open(path, flags, 0o600)
    except FileExistsError:
        return None
    try:
        if hasattr(os, "fchmod"):           # POSIX; Windows has no such mode
            os.fchmod(handle, 0o600)
    except OSError:
        os.close(handle)
        raise
    return handle


def warn_if_shared(path, what: str) -> None:
    """Warn when the existing file ``path`` can be read or written by others.

    ``what`` names it in the warning ("The ledger store"). Nothing is said
    of a file that does not exist, or off POSIX (Windows has no such mode).
    """
    if os.name != "posix":
        return
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return
    if mode & 0o077:
        warnings.warn(
            f"{what} {path} can be read or written by others (mode "
            f"{mode:04o}; skattr now creates it 0600): whoever can write it "
            "can make it forget releases. Make it yours alone: chmod 600 "
            f"{path}",
            UserWarning, stacklevel=caller_stacklevel())
