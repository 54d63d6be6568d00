"""The SQLite journal's writes: the schema, the writer connection and the
transaction of one batch (``SqliteJournal`` gives the batches to the group
commit, which calls ``Writer.commit`` in a worker thread).

One transaction per batch: ``BEGIN IMMEDIATE`` (the write lock, which SQLite
serialises across connections and processes), the appends' expected numbers
checked against the highest ones, the events of every accepted append in one
``executemany``, then the other writes (snapshots, states, deletions) each in
a savepoint, then ``COMMIT``. The highest numbers come from this connection's
own commits while ``PRAGMA data_version`` shows that no other connection
committed since; otherwise (and for a persistence id not seen yet) they are
read. A refusal (a conflict, a too large value) fails its write alone; an
SQLite error fails the whole batch with ``JournalError``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any, Final

from ._errors import (
    EventsRejected,
    JournalClosed,
    JournalError,
    PersistenceError,
    RevisionConflict,
    SequenceConflict,
)
from ._group_commit import Write

__all__ = [
    "HIGHEST",
    "SCHEMA_VERSION",
    "Append",
    "Change",
    "Writer",
    "check_revision",
    "connect",
    "highest_of",
]

#: The schema's version, in ``PRAGMA user_version``.
SCHEMA_VERSION: Final = 1

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS events (
    persistence_id TEXT NOT NULL,
    sequence_nr INTEGER NOT NULL,
    manifest TEXT NOT NULL,
    payload BLOB NOT NULL,
    writer TEXT NOT NULL,
    timestamp REAL NOT NULL,
    PRIMARY KEY (persistence_id, sequence_nr)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deleted (
    persistence_id TEXT PRIMARY KEY,
    sequence_nr INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS snapshots (
    persistence_id TEXT NOT NULL,
    sequence_nr INTEGER NOT NULL,
    manifest TEXT NOT NULL,
    payload BLOB NOT NULL,
    timestamp REAL NOT NULL,
    PRIMARY KEY (persistence_id, sequence_nr)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS states (
    persistence_id TEXT PRIMARY KEY,
    revision INTEGER NOT NULL,
    manifest TEXT NOT NULL,
    payload BLOB NOT NULL,
    deleted INTEGER NOT NULL
) WITHOUT ROWID;
"""

#: The highest sequence number ever stored: the last event's, or the one a
#: deletion of every event recorded.
HIGHEST: Final = (
    "coalesce((SELECT max(sequence_nr) FROM events WHERE persistence_id = ?1),"
    " (SELECT sequence_nr FROM deleted WHERE persistence_id = ?1), 0)"
)
#: The events of appends whose expected number was checked in the same
#: transaction (the conditional append: see ``_append_all``).
INSERT: Final = (
    "INSERT INTO events (persistence_id, sequence_nr, manifest, payload, writer,"
    " timestamp) VALUES (?, ?, ?, ?, ?, ?)"
)
#: The most highest numbers the writer keeps (then it forgets them all).
_KNOWN_MAX: Final = 100_000


class Append(Write):
    """An append: its events as rows, and the highest number it expects."""

    __slots__ = ("expected", "last", "persistence_id", "rows")

    def __init__(
        self, persistence_id: str, rows: list[tuple[Any, ...]], expected: int
    ) -> None:
        super().__init__()
        self.persistence_id = persistence_id
        self.rows = rows
        self.expected = expected
        self.last = expected + len(rows)


class Change(Write):
    """Any other write: ``apply(connection)`` inside the batch's transaction."""

    __slots__ = ("apply",)

    def __init__(self, apply: Callable[[sqlite3.Connection], Any]) -> None:
        super().__init__()
        self.apply = apply


def highest_of(connection: sqlite3.Connection, persistence_id: str) -> int:
    row = connection.execute(f"SELECT {HIGHEST}", (persistence_id,)).fetchone()
    return int(row[0])


def connect(
    path: str, synchronous: str, busy_timeout: float, *, write: bool
) -> sqlite3.Connection:
    """A connection to ``path`` (a worker thread): the writer's sets WAL mode
    and ``synchronous`` and makes the tables; a reader's is read-only.

    Raises:
        JournalError: the file was written by a later release, or SQLite
            refused WAL mode.
        sqlite3.Error: SQLite failed.
    """
    connection = sqlite3.connect(
        path,
        timeout=busy_timeout,
        isolation_level=None,
        check_same_thread=False,
    )
    try:
        if write:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise JournalError(
                    f"{path} was written by a later release (schema "
                    f"{version}; this one knows {SCHEMA_VERSION})"
                )
            mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise JournalError(f"{path}: SQLite refused WAL mode ({mode})")
            connection.execute(f"PRAGMA synchronous={synchronous}")
            if version < SCHEMA_VERSION:
                connection.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        connection.execute(statement)
                connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                connection.execute("COMMIT")
        else:
            connection.execute("PRAGMA query_only=1")
    except BaseException:
        connection.close()
        raise
    return connection


class Writer:
    """The writer connection of one file and what it knows; every method runs
    in a worker thread, one at a time (``lock``)."""

    def __init__(self, path: str, synchronous: str, busy_timeout: float) -> None:
        self.path = path
        self.synchronous = synchronous
        self.busy_timeout = busy_timeout
        self.lock = threading.Lock()
        self.closed = False
        self._connection: sqlite3.Connection | None = None
        #: The highest sequence numbers this connection's commits left, valid
        #: while ``PRAGMA data_version`` says no other connection committed.
        self._highest: dict[str, int] = {}
        self._version: int | None = None

    def connection(self) -> sqlite3.Connection:
        """The connection, made (with the file and its tables) on first use;
        call under ``lock``.

        Raises:
            JournalClosed: the journal is closed.
        """
        if self.closed:
            raise JournalClosed(f"{self.path} is closed")
        connection = self._connection
        if connection is None:
            connection = self._connection = connect(
                self.path, self.synchronous, self.busy_timeout, write=True
            )
        return connection

    def close(self) -> None:
        """Close the connection (under ``lock``); later commits fail."""
        with self.lock:
            self.closed = True
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def commit(self, batch: list[Write]) -> None:
        """Commit ``batch`` in one transaction (the group commit's call)."""
        with self.lock:
            try:
                connection = self.connection()
                self._transaction(connection, batch)
            except sqlite3.Error as exc:
                error = JournalError(f"{self.path}: {exc}")
                error.__cause__ = exc
                for write in batch:
                    write.error = error

    def _transaction(self, connection: sqlite3.Connection, batch: list[Write]) -> None:
        appends: list[Append] = [w for w in batch if isinstance(w, Append)]
        try:
            connection.execute("BEGIN IMMEDIATE")
            version = connection.execute("PRAGMA data_version").fetchone()[0]
            if version != self._version:
                # Another connection (another journal, another process)
                # committed since our last transaction: what we knew of the
                # highest numbers may be stale.
                self._highest.clear()
                self._version = version
            updates: dict[str, int] = {}
            if appends and not self._append_all(connection, appends, updates):
                connection.execute("ROLLBACK")
                self._highest.clear()
                updates.clear()
                connection.execute("BEGIN IMMEDIATE")
                for append in appends:
                    append.error = None
                    self._in_savepoint(connection, append, self._append_one)
                    if append.error is None:
                        updates[append.persistence_id] = append.last
            for write in batch:
                if type(write) is Change:
                    self._in_savepoint(connection, write, _apply)
            connection.execute("COMMIT")
        except BaseException:
            self._highest.clear()
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        known = self._highest
        if len(known) > _KNOWN_MAX:  # bounded: forget, and read again
            known.clear()
        known.update(updates)

    def _append_all(
        self,
        connection: sqlite3.Connection,
        appends: list[Append],
        updates: dict[str, int],
    ) -> bool:
        """The fast path: check every append's expected number against the
        highest ones (known from this connection's own commits while no other
        connection committed, else read), then insert every accepted event of
        the batch with one executemany. False if the insert raised (a
        rejection, or another writer's events where none were expected):
        start over one write at a time."""
        known = self._highest
        rows: list[tuple[Any, ...]] = []
        for write in appends:
            persistence_id = write.persistence_id
            current = updates.get(persistence_id)
            if current is None:
                current = known.get(persistence_id)
                if current is None:
                    current = highest_of(connection, persistence_id)
            if current != write.expected:
                write.error = SequenceConflict(persistence_id, write.expected, current)
                continue
            updates[persistence_id] = write.last
            rows.extend(write.rows)
        try:
            connection.executemany(INSERT, rows)
        except (sqlite3.DataError, sqlite3.IntegrityError):
            return False
        return True

    @staticmethod
    def _append_one(connection: sqlite3.Connection, write: Write) -> None:
        assert isinstance(write, Append)
        highest = highest_of(connection, write.persistence_id)
        if highest != write.expected:
            raise SequenceConflict(write.persistence_id, write.expected, highest)
        connection.executemany(INSERT, write.rows)

    @staticmethod
    def _in_savepoint(
        connection: sqlite3.Connection,
        write: Write,
        apply: Callable[[sqlite3.Connection, Write], Any],
    ) -> None:
        """Apply one write; a refusal (a conflict, a rejection) undoes it
        alone and becomes its error."""
        connection.execute("SAVEPOINT one")
        try:
            write.result = apply(connection, write)
        except (PersistenceError, sqlite3.DataError) as exc:
            connection.execute("ROLLBACK TO one")
            if isinstance(exc, sqlite3.DataError):
                exc = _rejected(exc)
            write.error = exc
        connection.execute("RELEASE one")


def _apply(connection: sqlite3.Connection, write: Write) -> Any:
    assert isinstance(write, Change)
    return write.apply(connection)


def check_revision(
    connection: sqlite3.Connection, persistence_id: str, expected: int
) -> int:
    """The last revision ever given to the key (0: none); raises
    RevisionConflict unless its current one (0 when deleted) is ``expected``."""
    row = connection.execute(
        "SELECT revision, deleted FROM states WHERE persistence_id = ?",
        (persistence_id,),
    ).fetchone()
    last = 0 if row is None else int(row[0])
    current = 0 if row is None or row[1] else last
    if current != expected:
        raise RevisionConflict(persistence_id, expected, current)
    return last


def _rejected(exc: sqlite3.DataError) -> EventsRejected:
    error = EventsRejected(f"SQLite refused the write: {exc}")
    error.__cause__ = exc
    return error
