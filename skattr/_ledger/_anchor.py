"""A ledger's anchor: the most releases its store has held, kept elsewhere.

A store replaced by an older copy (a backup restored) forgets the releases
made since; a process that opens the copy afresh cannot tell from the copy
alone. The anchor is a small file kept apart from the store (beside the
private data, on another volume, or where only the custodian writes) that
records how many releases the store has held and the digest of the last of
them. Opening the store, and every release, checks the store against it:
fewer releases, or another release in the anchored place, is refused. The
count only grows: after each release the anchor is rewritten (atomically,
under a lock) only if the store now holds more.

With a key the anchor carries an HMAC, so it cannot be edited or forged;
without one, a plain hash catches accidents only. The kind of seal also
records that the store is keyed: an anchor sealed with an HMAC is refused
without the key, so a store edited to look unkeyed (its HMACs removed) is
never opened without its key by a process that passes the anchor.
Replacing the store and the anchor together by older copies is not
detected, nor is a deleted anchor (it is created afresh at the store's
count, as when an anchor is first given to an existing store): keep them
apart.

The anchor is rewritten through a temporary file beside it, renamed over
it, all under the lock: ``.NAME.PID-TOKEN.skattr-tmp``, a name of its own
for every rewrite (the process and a random token: threads of one process
never share one). A process killed in between leaves that file behind; the
next rewrite removes such files (under the lock, where no other rewrite can
be under way), and no other file: only names of this exact form. Only the
anchor itself is ever read. Both files, and the lock file, are created
readable and writable by their owner only (0600); an anchor others can
read or write (made by an older skattr) is named in a warning by
:meth:`skattr.Ledger.open`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import warnings
from pathlib import Path

from skattr.exceptions import InvalidParameterError, PersistenceError
from skattr.utils._private import create_private
from skattr.utils._stack import caller_stacklevel

__all__ = ["Anchor"]

_FORMAT = "skattr ledger anchor"
_VERSION = 1
# An anchor is about 300 bytes; anything much larger is not one.
_MAX_BYTES = 4096


def _body(count: int, last: str) -> str:
    return json.dumps({"format": _FORMAT, "version": _VERSION,
                       "count": count, "last": last}, sort_keys=True)


@contextlib.contextmanager
def _locked(path: Path):
    """Hold an exclusive lock on ``path``'s lock file (POSIX; else nothing).

    Yields whether the lock is held.
    """
    try:
        import fcntl
    except ImportError:                 # Windows: rewrites are still atomic
        yield False
        return
    lock = path.with_name(path.name + ".lock")
    created = create_private(lock)
    if created is not None:
        os.close(created)
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_TEMPORARY_SUFFIX = ".skattr-tmp"


def _temporary(path: Path) -> Path:
    """Return a new temporary file name to rewrite ``path`` through.

    One per rewrite: the process's id and a random token, so that neither
    another process nor another thread of this one uses the same name.
    """
    return path.with_name(f".{path.name}.{os.getpid()}-"
                          f"{secrets.token_hex(8)}{_TEMPORARY_SUFFIX}")


def _remove_stale(path: Path) -> None:
    """Remove temporary files of rewrites that never finished (killed).

    Called under the lock only, where no other rewrite is under way; only
    names :func:`_temporary` makes match, so no file of the user's does.
    """
    stale = re.compile(rf"\.{re.escape(path.name)}\.[0-9]+-[0-9a-f]{{16}}"
                       rf"{re.escape(_TEMPORARY_SUFFIX)}")
    with contextlib.suppress(OSError):
        for found in path.parent.iterdir():
            if stale.fullmatch(found.name):
                with contextlib.suppress(OSError):
                    found.unlink()


class Anchor:
    """The anchor file of one ledger store (see the module's docstring).

    Parameters
    ----------
    path : str or Path
        The anchor's file; created at the first check when it does not exist.
    key : bytes or None
        The store's HMAC key (already resolved), or None.
    """

    def __init__(self, path, key: bytes | None):
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise InvalidParameterError(
                f"anchor={str(self.path)!r} is a directory; pass a file path.")
        if not self.path.parent.is_dir():
            raise InvalidParameterError(
                f"anchor={str(self.path)!r} is in a folder that does not "
                "exist; create it, or pass a path in an existing folder.")
        self._key = key

    def __repr__(self) -> str:
        return f"Anchor({str(self.path)!r})"

    def _seal(self, body: str) -> str:
        if self._key is None:
            return "sha256:" + hashlib.sha256(body.encode()).hexdigest()
        return "hmac:" + hmac.new(self._key, body.encode(),
                                  hashlib.sha256).hexdigest()

    def read(self) -> tuple[int, str]:
        """Return (count, digest of the last release); (0, "") when absent."""
        try:
            if self.path.stat().st_size > _MAX_BYTES:
                raise PersistenceError(
                    f"The anchor {self.path} is not a ledger anchor (it is "
                    f"over {_MAX_BYTES} bytes).")
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return 0, ""
        except (OSError, UnicodeDecodeError) as exc:
            raise PersistenceError(
                f"The anchor {self.path} cannot be read ({exc}).") from None
        try:
            record = json.loads(text)
            body = _body(int(record["count"]), str(record["last"]))
            seal = str(record["seal"])
            valid = (record.get("format") == _FORMAT
                     and record.get("version") == _VERSION
                     and int(record["count"]) >= 0)
        except (ValueError, TypeError, KeyError, AttributeError):
            valid = False
        if not valid:
            raise PersistenceError(
                f"The anchor {self.path} is not a ledger anchor of this "
                "version (it is malformed). Restore it, or pass the anchor "
                "this store was opened with.")
        if self._key is None and seal.startswith("hmac:"):
            raise PersistenceError(
                f"The anchor {self.path} is sealed with an HMAC key: its store "
                "was written with one, and a store that was ever keyed is "
                "opened with its key only (key=, SKATTR_LEDGER_KEY, or skattr "
                "release --ledger-key-file). Nothing was loaded.")
        if not hmac.compare_digest(seal, self._seal(body)):
            raise PersistenceError(
                f"The anchor {self.path} was altered after skattr wrote it "
                "(its seal does not match"
                + (", or the key is not the store's" if self._key else "")
                + "). Nothing is released until it is restored.")
        return int(record["count"]), str(record["last"])

    def check(self, store, count: int, digest_at) -> int:
        """Refuse a store that holds fewer releases than anchored, or others.

        ``count`` is the store's number of releases and ``digest_at(i)`` the
        digest of its release i. Returns the number of releases anchored.
        """
        anchored, last = self.read()
        if anchored > count:
            raise PersistenceError(
                f"The store {store!r} holds {count} releases; its anchor "
                f"{self.path} records {anchored}: the store was replaced by "
                "an older copy (or another ledger's). Nothing is released "
                "until the store is restored; its budget would otherwise be "
                "spent again.")
        if anchored and digest_at(anchored - 1) != last:
            raise PersistenceError(
                f"The store {store!r} does not hold the release its anchor "
                f"{self.path} records as number {anchored}: it is another "
                "ledger's store, or was rewritten. Pass the anchor this store "
                "was opened with, or another anchor file for another ledger.")
        return anchored

    def advance(self, count: int, last: str) -> None:
        """Record ``count`` releases ending with ``last``, if more than anchored."""
        try:
            with _locked(self.path) as alone:
                anchored, _ = self.read()
                if count <= anchored:
                    return
                if alone:
                    _remove_stale(self.path)
                body = _body(count, last)
                record = {**json.loads(body), "seal": self._seal(body)}
                temporary = _temporary(self.path)
                try:
                    self._write(temporary, json.dumps(record, sort_keys=True))
                    os.replace(temporary, self.path)
                except BaseException:
                    # Under the lock, and this rewrite's own name only.
                    with contextlib.suppress(OSError):
                        temporary.unlink()
                    raise
        except OSError as exc:
            # The release is committed: it is returned, not lost.
            warnings.warn(
                f"The anchor {self.path} could not be written ({exc}). The "
                "release is recorded in the store; the anchor catches up "
                "at the next release.", UserWarning,
                stacklevel=caller_stacklevel())

    @staticmethod
    def _write(temporary: Path, text: str) -> None:
        """Write ``text`` to a new private file and flush it to the disk."""
        handle = create_private(temporary)
        if handle is None:
            raise FileExistsError(f"{temporary} already exists")
        with open(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
