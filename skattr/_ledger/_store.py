"""Where a ledger's releases are kept between processes: a transactional store.

A ledger opened on a store (:meth:`skattr.Ledger.open`) plans a release
outside the store's lock (the fit), then makes it one transaction: the
store is locked, the releases other processes made since are read in, the
joint guarantee checked against the budget (the release planned again if
they moved the store), the noise drawn, the release written and the
transaction committed, and only then is the release returned. A crash at
any point leaves the old state or the new one: never a lost budget, never a
released value the store does not hold. Processes on one store wait for
each other's transactions (the store's lock), not for each other's fits;
threads on one :class:`~skattr.Ledger` object take its lock first.

The file is created readable and writable by its owner only (0600); one
others can read or write (made by an older skattr) is named in a warning
by :meth:`skattr.Ledger.open`: ``chmod 600`` it. An empty file is a store
never initialised (a process killed before the first transaction): the
first transaction initialises it. Any other file that is not a store,
another application's SQLite database included, is refused.

:class:`LedgerStore` is the small interface a store implements: an
exclusive transaction that reads and writes the ledger's header (its
budget, secret, Theta, data fingerprints: a :class:`LedgerFile` without
releases) and its releases, one text a release, in order.
:class:`SQLiteStore` is the default, on one SQLite file (the standard
library's ``sqlite3``; SQLite's own locking and journal make a transaction
atomic and durable). A server database could implement the same interface.

With a key (``key=``, or the environment variable ``SKATTR_LEDGER_KEY``),
every record carries an HMAC-SHA256 over its text, its place and the
previous record's HMAC, so an edited, removed or reordered record is
refused on loading; without one, each record's text is still checked by
its content hash, which detects accidents, not edits (anyone can recompute
it). A keyed store is refused without its key; one edited to look unkeyed
is refused by a process given the key, and, without it, by the store's
anchor (:mod:`skattr._ledger._anchor`), never by the file alone. See
``docs/many_releases.rst``, "Keeping a ledger in a store", for the threat
model: what is and is not detected.
"""

from __future__ import annotations

import abc
import contextlib
import hashlib
import hmac
import os
import sqlite3
from pathlib import Path

from skattr.exceptions import InvalidParameterError, PersistenceError
from skattr.utils._private import create_private

__all__ = ["KEY_VARIABLE", "LedgerStore", "SQLiteStore", "StoreTransaction",
           "resolve_key"]

#: The environment variable a store's HMAC key is read from.
KEY_VARIABLE = "SKATTR_LEDGER_KEY"
# What a store file says it is, and the layout version of its tables.
_FORMAT = "skattr ledger store"
_LAYOUT = "1"
# A record larger than this is refused before it is read (a ledger's header
# or release is a few kilobytes).
MAX_RECORD_BYTES = 16 * 2**20
# Seconds a process waits for another's transaction before giving up.
_BUSY_SECONDS = 60.0


def resolve_key(key) -> bytes | None:
    """Return the HMAC key: ``key``, else ``SKATTR_LEDGER_KEY``, else None."""
    if key is None:
        key = os.environ.get(KEY_VARIABLE) or None
    if key is None:
        return None
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
        raise InvalidParameterError(
            "key must be a str or bytes of at least 16 bytes (a secret kept "
            f"apart from the store, e.g. in {KEY_VARIABLE}).")
    return bytes(key)


class StoreTransaction(abc.ABC):
    """One exclusive transaction on a store: read and write the ledger."""

    @abc.abstractmethod
    def header(self) -> str | None:
        """Return the ledger's header text, or None for an empty store."""

    @abc.abstractmethod
    def set_header(self, text: str) -> None:
        """Write the ledger's header text."""

    @abc.abstractmethod
    def count(self) -> int:
        """Return the number of releases the store holds."""

    @abc.abstractmethod
    def releases(self, start: int) -> list[str]:
        """Return the texts of releases ``start``, ``start + 1``, ... in order."""

    @abc.abstractmethod
    def append(self, index: int, text: str) -> None:
        """Write release ``index`` (the next one)."""


class LedgerStore(abc.ABC):
    """A place a ledger is kept: exclusive transactions over its records."""

    @abc.abstractmethod
    def transaction(self) -> contextlib.AbstractContextManager:
        """Return a context manager over one exclusive :class:`StoreTransaction`.

        It commits when the block ends normally and rolls back when it
        raises: all of the block's writes or none.
        """


class SQLiteStore(LedgerStore):
    """A ledger kept in one SQLite file (the default store).

    Parameters
    ----------
    path : str or Path
        The file; created when it does not exist.
    key : str, bytes or None, default=None
        The HMAC key; None reads ``SKATTR_LEDGER_KEY``, and without either
        records carry no HMAC.
    """

    def __init__(self, path, *, key=None):
        self.path = Path(path)
        self._key = resolve_key(key)
        if self.path.exists() and self.path.is_dir():
            raise InvalidParameterError(
                f"{self.path} is a directory; pass a file path for the store.")
        if self.path.exists() and self.path.stat().st_size > 0:
            with open(self.path, "rb") as handle:
                magic = handle.read(16)
            if magic != b"SQLite format 3\x00":
                raise PersistenceError(
                    f"{self.path} is not a ledger store (not an SQLite file). "
                    "A ledger saved with to_json is imported with "
                    "Ledger.from_json(...).store(path).")
        # Created empty and private (0600) before SQLite opens it: SQLite
        # would create it with the umask's mode, often readable by all, and
        # gives its journal the file's mode. An empty file is a store never
        # initialised (a process killed before its first transaction): the
        # first transaction initialises it.
        try:
            handle = create_private(self.path)
        except OSError as exc:
            raise PersistenceError(
                f"The ledger store {self.path} cannot be created "
                f"({exc.strerror}). Give a path in a folder you can write "
                "to.") from None
        if handle is not None:
            os.close(handle)
        # A connection per transaction, closed after it: a connection kept
        # open trusts its page cache when the file's change counter looks
        # unchanged, so a store replaced in place by an older copy and
        # written again could be read from stale pages (found by review).
        self._connect().close()

    def _connect(self):
        try:
            connection = sqlite3.connect(
                str(self.path), timeout=_BUSY_SECONDS, isolation_level=None,
                check_same_thread=False)
            connection.execute("PRAGMA synchronous = FULL")
            return connection
        except sqlite3.Error as exc:
            raise PersistenceError(
                f"The ledger store {self.path} cannot be opened ({exc}).") from exc

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    @contextlib.contextmanager
    def transaction(self):
        connection = self._connect()
        try:
            with contextlib.closing(connection):
                yield from self._transaction(connection)
        except sqlite3.Error as exc:
            raise PersistenceError(
                f"The ledger store {self.path} failed ({exc}).") from None

    def _transaction(self, connection):
        try:
            # BEGIN IMMEDIATE takes the write lock now: another process's
            # transaction waits here until this one ends.
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise PersistenceError(
                f"The ledger store {self.path} could not be locked ({exc}); "
                "another process may hold it.") from exc
        try:
            transaction = _SQLiteTransaction(connection, self._key, self.path)
            yield transaction
            transaction.seal()
        except sqlite3.Error as exc:
            connection.execute("ROLLBACK")
            raise PersistenceError(
                f"The ledger store {self.path} failed ({exc}): it was altered "
                "or replaced outside skattr. Nothing was recorded or "
                "released.") from None
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        try:
            connection.execute("COMMIT")
        except sqlite3.Error as exc:
            connection.execute("ROLLBACK")
            raise PersistenceError(
                f"The ledger store {self.path} could not commit ({exc}); "
                "nothing was recorded or released.") from exc


class _SQLiteTransaction(StoreTransaction):
    def __init__(self, connection, key, path):
        self._db = connection
        self._key = key
        self._path = path
        self._written = False
        try:
            self._prepare()
        except sqlite3.Error as exc:
            raise PersistenceError(
                f"{path} is not a ledger store ({exc}).") from exc

    def _prepare(self) -> None:
        db = self._db
        tables = {name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT "
            "LIKE 'sqlite_%'")}
        if tables - {"meta", "releases"}:
            # Another application's database: never made into a store.
            raise PersistenceError(
                f"{self._path} is an SQLite file but not a skattr ledger store "
                f"(it holds the table(s) {sorted(tables - {'meta', 'releases'})}"
                "). Give a new file for the store.")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, "
                   "value TEXT NOT NULL)")
        db.execute("CREATE TABLE IF NOT EXISTS releases (idx INTEGER PRIMARY "
                   "KEY, body TEXT NOT NULL, mac TEXT)")
        found = dict(db.execute(
            "SELECT key, value FROM meta WHERE key IN ('format', 'layout', "
            "'keyed')").fetchall())
        if not found:
            if db.execute("SELECT COUNT(*) FROM releases").fetchone()[0]:
                raise PersistenceError(
                    f"{self._path} holds releases but no header: it is not a "
                    "ledger store skattr wrote.")
            db.executemany("INSERT INTO meta VALUES (?, ?)", [
                ("format", _FORMAT), ("layout", _LAYOUT),
                ("keyed", "1" if self._key else "0")])
            return
        if found.get("format") != _FORMAT:
            raise PersistenceError(
                f"{self._path} is an SQLite file but not a skattr ledger store.")
        if found.get("layout") != _LAYOUT:
            raise PersistenceError(
                f"{self._path} is a ledger store of layout "
                f"{found.get('layout')!r}; this skattr reads layout {_LAYOUT}.")
        keyed = found.get("keyed") == "1"
        if not keyed and self._key is None:
            self._check_never_keyed()
        if keyed and self._key is None:
            raise PersistenceError(
                f"{self._path} was written with an HMAC key; pass key= or set "
                f"{KEY_VARIABLE} to open it.")
        if not keyed and self._key is not None:
            raise PersistenceError(
                f"{self._path} was written without an HMAC key, so its records "
                "cannot be checked against one; open it without key=, or "
                "export it (to_json) and store it again with the key.")

    def _check_never_keyed(self) -> None:
        """Refuse a store that says it is unkeyed but carries HMACs.

        Such a store was written with a key and edited to look unkeyed (a
        downgrade). A thorough editor removes every HMAC as well, which the
        file alone cannot reveal: the anchor, kept apart, records that its
        store is keyed (:mod:`skattr._ledger._anchor`), and a process given
        the key refuses an unkeyed store.
        """
        macs = self._db.execute(
            "SELECT (SELECT COUNT(*) FROM releases WHERE mac IS NOT NULL) + "
            "(SELECT COUNT(*) FROM meta WHERE key IN ('header_mac', 'head', "
            "'head_mac'))").fetchone()[0]
        if macs:
            raise PersistenceError(
                f"{self._path} says it was written without an HMAC key, yet "
                "it carries HMACs: it was written with a key and edited "
                "outside skattr to look unkeyed. Open it with its key (key=, "
                f"{KEY_VARIABLE}, or skattr release --ledger-key-file); "
                "nothing was loaded.")

    def _mac(self, label: str, text: str, previous: str) -> str | None:
        if self._key is None:
            return None
        message = f"{label}\x00{previous}\x00{text}".encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def _checked(self, label: str, text, mac, previous: str) -> str:
        if not isinstance(text, str):
            raise PersistenceError(
                f"{self._path}: record {label} is not text; the store was "
                "altered.")
        expected = self._mac(label, text, previous)
        if expected is not None and not (
                isinstance(mac, str) and hmac.compare_digest(expected, mac)):
            raise PersistenceError(
                f"{self._path}: record {label} does not match its HMAC: the "
                "store was edited, or records were removed or reordered, "
                "after skattr wrote it (or the key is not the one it was "
                "written with). Nothing was loaded.")
        return text

    def _sized(self, sql: str, args=()) -> None:
        biggest = self._db.execute(sql, args).fetchone()[0]
        if biggest is not None and biggest > MAX_RECORD_BYTES:
            raise PersistenceError(
                f"{self._path} holds a record of {biggest:,} bytes, over the "
                f"{MAX_RECORD_BYTES:,} a ledger's record can be; it was not "
                "written by skattr. Nothing was loaded.")

    def header(self) -> str | None:
        self._sized("SELECT MAX(LENGTH(value)) FROM meta WHERE key = 'header'")
        row = self._db.execute(
            "SELECT (SELECT value FROM meta WHERE key = 'header'), "
            "(SELECT value FROM meta WHERE key = 'header_mac'), "
            "(SELECT value FROM meta WHERE key = 'head'), "
            "(SELECT COUNT(*) FROM releases)").fetchone()
        if row[0] is None:
            if row[2] is not None or row[3]:
                # Releases, or a seal, without a header: it was deleted, and
                # a new ledger on this file would forget what was spent.
                raise PersistenceError(
                    f"{self._path} holds releases (or their seal) but no "
                    "header: the header was deleted outside skattr. Nothing "
                    "was loaded.")
            return None
        return self._checked("header", row[0], row[1], "")

    def set_header(self, text: str) -> None:
        rows = [("header", text)]
        mac = self._mac("header", text, "")
        if mac is not None:
            rows.append(("header_mac", mac))
        self._db.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", rows)
        self._written = True

    def _head(self, count: int) -> str | None:
        """Return the HMAC binding the header to the releases' count and last."""
        header_mac = self._db.execute(
            "SELECT value FROM meta WHERE key = 'header_mac'").fetchone()
        return self._mac("head", str(count), (header_mac or ("",))[0]
                         + self._previous_mac(count))

    def seal(self) -> None:
        """Bind the header to the releases' count (keyed stores), if written."""
        if self._written and self._key is not None:
            count = self._db.execute(
                "SELECT COUNT(*) FROM releases").fetchone()[0]
            self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
                ("head", str(count)), ("head_mac", self._head(count))])

    def count(self) -> int:
        found = self._db.execute(
            "SELECT COUNT(*), COALESCE(MAX(idx), -1) FROM releases").fetchone()
        if found[1] != found[0] - 1:
            raise PersistenceError(
                f"{self._path}: the releases are not numbered 0 to "
                f"{found[0] - 1}; records were removed. Nothing was loaded.")
        count = int(found[0])
        if self._key is not None and (count or self.header() is not None):
            head = self._db.execute(
                "SELECT (SELECT value FROM meta WHERE key = 'head'), "
                "(SELECT value FROM meta WHERE key = 'head_mac')").fetchone()
            expected = self._head(count)
            if head[0] != str(count) or not (
                    isinstance(head[1], str)
                    and hmac.compare_digest(expected, head[1])):
                raise PersistenceError(
                    f"{self._path}: the number of releases ({count}) does not "
                    "match the one skattr sealed: releases were removed or "
                    "added outside skattr (or the key differs). Nothing was "
                    "loaded.")
        return count

    def _previous_mac(self, index: int) -> str:
        if self._key is None or index == 0:
            return ""
        row = self._db.execute("SELECT mac FROM releases WHERE idx = ?",
                               (index - 1,)).fetchone()
        return row[0] if row and isinstance(row[0], str) else ""

    def releases(self, start: int) -> list[str]:
        self._sized("SELECT MAX(LENGTH(body)) FROM releases WHERE idx >= ?",
                    (start,))
        previous = self._previous_mac(start)
        out = []
        for index, body, mac in self._db.execute(
                "SELECT idx, body, mac FROM releases WHERE idx >= ? ORDER BY "
                "idx", (start,)):
            out.append(self._checked(f"release {index}", body, mac, previous))
            previous = mac if isinstance(mac, str) else ""
        return out

    def append(self, index: int, text: str) -> None:
        mac = self._mac(f"release {index}", text, self._previous_mac(index))
        self._db.execute("INSERT INTO releases VALUES (?, ?, ?)",
                         (index, text, mac))
        self._written = True
