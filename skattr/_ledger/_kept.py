"""Keeping a ledger: its JSON file, and the transactional store of Ledger.open.

:class:`Kept` gives :class:`~skattr.Ledger` its persistence: ``to_json`` and
``from_json`` (export and import, :mod:`skattr._ledger._files`), and a store
(:mod:`skattr._ledger._store`) that makes every release one transaction
across processes (``open``, ``store``, ``refresh``), with the lock that
makes one release at a time within a process.
"""

from __future__ import annotations

import contextlib
import secrets

from skattr._ledger._files import (
    from_json,
    open_ledger,
    record_to_store,
    stored_digest,
    sync_from_store,
    to_json,
)
from skattr.exceptions import PersistenceError
from skattr.utils._private import warn_if_shared

__all__ = ["Kept"]

# Plans made outside the store's lock before one is made under it: each is
# redone only because another process committed a release meanwhile.
_PLANS_OUTSIDE_THE_LOCK = 3


class Kept:
    """A ledger's persistence: its file, its store and its lock."""

    @contextlib.contextmanager
    def _exclusive(self):
        """Hold the ledger alone: its lock, and a transaction of its store.

        In the store's transaction the releases other processes made are
        read in first; the new ones are written when the block ends, and
        forgotten if it raises (the store rolls back).
        """
        with self._lock:
            if self._store is None:
                yield
                return
            start, last = len(self.releases), self._last_stored
            anchored = 0
            try:
                with self._store.transaction() as transaction:
                    sync_from_store(self, transaction)
                    if self._anchor is not None:
                        anchored = self._anchor.check(
                            self._store, transaction.count(),
                            lambda i: stored_digest(transaction, i))
                    start, last = len(self.releases), self._last_stored
                    yield
                    record_to_store(self, transaction, start)
            except BaseException:
                del self.releases[start:]
                self._stored_header = None
                self._last_stored = last
                raise
            # Rewritten only when the store holds more than anchored: a new
            # release, or one another process made and could not anchor.
            if self._anchor is not None and len(self.releases) > anchored:
                self._anchor.advance(len(self.releases),
                                     self._last_stored or "")

    def _committed(self, plan, commit):
        """Plan a release outside the store's lock, then commit it under it.

        ``plan()`` fits and plans (seconds, under load minutes); only
        ``commit(planned)``, which checks the budget, draws the noise and
        adds the release, runs in the store's transaction, after the
        releases other processes made meanwhile are read in. When they
        moved the store, the plan is made again (their releases change the
        joint epsilon, and may change the mechanism): outside the lock
        again, and after a few such rounds under it, so that a busy store
        cannot starve a release. Another process thus waits for this one's
        transaction, never for its fit.
        """
        with self._lock:
            self.refresh()
            for _ in range(_PLANS_OUTSIDE_THE_LOCK):
                seen = len(self.releases)
                planned = plan()
                with self._exclusive():
                    if len(self.releases) == seen:
                        return commit(planned)
            with self._exclusive():
                return commit(plan())

    def _nonce(self) -> int | None:
        """Return a fresh nonce for a seeded release of a kept ledger, or None.

        A ledger kept in a store, or loaded from a file, has a history that
        can be rolled back behind its back (an older copy of the store, an
        older file): keyed by its index alone, a release would then draw
        the noise of the release the copy forgot. Its releases mix in a
        nonce from the operating system, kept in their records.
        """
        if self._noise_seed is None or (self._store is None
                                        and not self._loaded):
            return None
        return secrets.randbits(64)

    @classmethod
    def open(cls, path, data, *, secret=None, reference=None, budget=None,
             theta="auto", law=None, random_state=None, bounds="robust",
             key=None, anchor=None, noise="auto") -> Kept:
        """Create or resume a ledger kept in a store (one SQLite file).

        Every release is then planned (fitted) outside the store's lock and
        made in one transaction of the store: the releases other processes
        made on the same store are read in, the joint guarantee checked
        against the budget (the release planned again if they moved the
        store), the noise drawn, the release recorded and committed, and
        only then returned. A crash leaves the store as it was before the
        release or after it; processes and threads on one store wait for
        each other's transactions, so the budget holds across all of them
        (:mod:`skattr._ledger._store`).

        Parameters
        ----------
        path : str or Path
            The store's file; created when it does not exist.
        data : DataFrame
            The private dataset; when resuming, checked against the
            fingerprints the store holds.
        secret, budget :
            Required to create a store; when resuming, the stored ones are
            taken, and one given must be the same.
        reference, theta, law, random_state, bounds, noise :
            As for :class:`Ledger`; when resuming, ``theta``, ``law``,
            ``bounds`` and ``noise`` left at their defaults take the stored
            ones, and one given otherwise must be the same; ``reference``
            must be the data the ledger was opened with.
        key : str, bytes or None, default=None
            An HMAC key (16 bytes or more) that makes edits to the store
            detectable; None reads the environment variable
            ``SKATTR_LEDGER_KEY``. A store written with a key needs it, and
            a store without one is refused with a key (it may be a keyed
            store edited to look unkeyed).
        anchor : str, Path or None, default=None
            A small file kept apart from the store (beside the private data,
            on another volume) recording how many releases the store has
            held and the last of them (:mod:`skattr._ledger._anchor`;
            sealed with the key when there is one). Opening the store and
            every release refuse a store that holds fewer, or others: a
            store replaced by an older copy is then detected even by a
            process that opens it afresh. The anchor of a keyed store
            refuses a process without the key, so a store edited to look
            unkeyed is refused too. Created (0600) when it does not exist,
            in an existing folder; pass the same file every time the store
            is opened.

        Raises
        ------
        InvalidParameterError
            A new store without ``secret`` or ``budget``, or a parameter
            that differs from the stored ledger's; an anchor in a folder
            that does not exist.
        DataValidationError
            ``data`` or ``reference`` is not the dataset of the stored ledger.
        PersistenceError
            The file is not a ledger store, or it was altered; or the store
            holds fewer releases than its anchor records (an older copy), or
            the anchor was altered; or the store (or its anchor) was written
            with a key and none is given, or without one and a key is given.

        Examples
        --------
        >>> import tempfile, pathlib, skattr
        >>> from skattr.datasets import make_hospital
        >>> private = make_hospital(200, random_state=1)
        >>> reference = make_hospital(2000, random_state=0)
        >>> secret = skattr.Secret.proportion("gender", "female",
        ...                                   pairs=[(0.4, 0.6)])
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "hospital.ledger"
        >>> ledger = skattr.Ledger.open(path, private, secret=secret,
        ...                             reference=reference, budget=(2.0, 1e-3))
        >>> _ = ledger.mean(["weight"], epsilon=1.0)
        >>> again = skattr.Ledger.open(path, private, reference=reference)
        >>> len(again.releases), again.spent == ledger.spent
        (1, True)
        """
        from skattr._ledger._anchor import Anchor
        from skattr._ledger._store import LedgerStore, SQLiteStore, resolve_key

        kept = None if anchor is None else Anchor(anchor, resolve_key(key))
        if kept is not None:
            # First: an anchor sealed with a key refuses a process without
            # it before the store (perhaps edited to look unkeyed) is read.
            kept.read()
        store = path if isinstance(path, LedgerStore) else SQLiteStore(
            path, key=key)
        ledger = open_ledger(cls, store, data, reference=reference,
                             random_state=random_state, secret=secret,
                             budget=budget, theta=theta, law=law,
                             bounds=bounds, noise=noise)
        if kept is not None:
            with store.transaction() as transaction:
                anchored = kept.check(store, transaction.count(),
                                      lambda i: stored_digest(transaction, i))
            ledger._anchor = kept
            if len(ledger.releases) > anchored:
                kept.advance(len(ledger.releases), ledger._last_stored or "")
        # Made by an older skattr (0644), or by hand: said once it is open.
        for shared, what in ((getattr(store, "path", None), "The ledger store"),
                             (getattr(kept, "path", None), "The anchor")):
            if shared is not None:
                warn_if_shared(shared, what)
        return ledger

    def store(self, path, *, key=None, anchor=None) -> Kept:
        """Keep this ledger in a new store (one SQLite file) from now on.

        Writes the header and every release so far in one transaction, then
        makes every later release a transaction of the store (as
        :meth:`open`). Use it to move a ledger loaded with
        :meth:`from_json` into a store. ``key`` and ``anchor`` are as for
        :meth:`open` (a new anchor file).

        Raises
        ------
        PersistenceError
            The file already holds a ledger, or the ledger already has a
            store.
        """
        from skattr._ledger._anchor import Anchor
        from skattr._ledger._store import SQLiteStore, resolve_key

        with self._lock:
            if self._store is not None:
                raise PersistenceError(
                    f"This ledger is already kept in {self._store!r}.")
            store = SQLiteStore(path, key=key)
            kept = None if anchor is None else Anchor(anchor, resolve_key(key))
            if kept is not None and kept.read()[0]:
                raise PersistenceError(
                    f"The anchor {kept.path} already records another store's "
                    "releases; pass a new anchor file.")
            with store.transaction() as transaction:
                if transaction.header() is not None:
                    raise PersistenceError(
                        f"{store!r} already holds a ledger; open it with "
                        "Ledger.open, or pass a new file.")
                self._stored_header = None
                record_to_store(self, transaction, 0)
            self._store = store
            if kept is not None:
                self._anchor = kept
                kept.advance(len(self.releases), self._last_stored or "")
        return self

    def refresh(self) -> Kept:
        """Read in the releases other processes made on this ledger's store."""
        with self._exclusive():
            pass
        return self

    def to_json(self) -> str:
        """Serialise the ledger (no data, no pickle) to keep it between sessions.

        The file holds the budget, the secret, Theta (and the seed of the
        joint draws), every release (its record, statistics, noise and joint
        epsilon), fingerprints of the private data (its row count and a hash
        of each released column) and of the reference data, a schema version
        and a content hash; it is written by skattr's one JSON codec
        (:mod:`skattr._persistence`: exact values, skattr's own classes
        only, no code).

        Raises
        ------
        PersistenceError
            The ledger holds a Python function (a lambda predicate: state it
            with :mod:`skattr.predicates`).
        """
        return to_json(self)

    @classmethod
    def from_json(cls, text: str, data, *, reference=None,
                  random_state=None) -> Kept:
        """Load a ledger saved by :meth:`to_json`, on the same private data.

        Files of schemas 1 and 2 (skattr 0.2) still load.

        A JSON file carries a content hash, not an HMAC: no key is read
        (``from_json`` takes none, nor ``SKATTR_LEDGER_KEY``), and whoever
        can write the file can remove releases and recompute the hash, or
        put back an older file. Keep it where only you write, or move it
        into a store (``.store(path, key=..., anchor=...)``). A keyed store
        is opened with :meth:`open` only, which refuses a JSON file: code
        that loads whichever of the two it finds at a path lets a writer of
        the store, without its key, put a JSON ledger with fewer releases in
        its place (``skattr release --ledger`` refuses a JSON file whenever
        a key or an anchor is given).

        Raises
        ------
        PersistenceError
            The file is malformed or altered (its content hash does not
            match).
        DataValidationError
            A file of schema 1 or 2 is malformed or altered, or of another
            schema; or ``data`` (or ``reference``) is not the dataset the
            ledger was opened on: its row count or a released column's hash
            differs.
        """
        ledger = from_json(cls, text, data, reference=reference,
                           random_state=random_state)
        ledger._loaded = True
        return ledger
