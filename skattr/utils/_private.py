"""Files only their owner may read or write: a ledger's store and its anchor.

A ledger's store holds every release and fingerprints of the private data,
and its anchor the count of releases; both are created with mode 0600, as
the command line's ``--output`` files are (``tempfile.mkstemp``), whatever
the process's umask.
"""

from __future__ import annotations

import os

__all__ = ["create_private"]


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
