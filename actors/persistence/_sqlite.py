"""``SqliteJournal``: events, snapshots and durable states in one SQLite file,
the embedded default (the standard library's ``sqlite3``).

* Off the event loop: every statement runs in an anyio worker thread.
* Group commit: the writes of all actors (appends, snapshots, states,
  deletions) that arrive while one transaction commits go into the next one
  (``_group_commit``): one ``BEGIN IMMEDIATE ... COMMIT``, so one fsync, per
  batch, and the events of all its appends in one ``executemany``
  (``_sqlite_writes``: the schema and the transaction of a batch).
* WAL mode: readers (recoveries) never wait for the writer, nor it for them.
* The conditional append is checked inside the write transaction, which
  SQLite serialises across connections and processes: an append goes in only
  if its persistence id's highest sequence number is the one it expects, else
  it alone fails with ``SequenceConflict``. The highest numbers come from this
  connection's own commits as long as ``PRAGMA data_version`` shows that no
  other connection committed since (then they are read again), so a batch of
  appends costs no query in the common case; the primary key (persistence id,
  sequence number) is the backstop. Two processes writing one persistence id
  through one file cannot interleave either.

Durability (``synchronous``): with ``"FULL"`` (the default) SQLite syncs the
write-ahead log to disk at every commit, before the journal answers: an
acknowledged write survives a process crash, an OS crash and a power cut (on
a disk that honours fsync). With ``"NORMAL"`` it syncs only at checkpoints:
an acknowledged write survives a crash of the process (SIGKILL included), but
an OS crash or a power cut may lose the last transactions (the file stays
consistent: it rolls back to an earlier commit). NORMAL saves an fsync per
batch; group commit makes FULL's cost per event small under load.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal

import anyio
import anyio.to_thread

from ._errors import JournalClosed, JournalError
from ._group_commit import GroupCommit, Write
from ._journal import (
    DurableStateStore,
    Journal,
    SnapshotStore,
    check_append,
    check_sequence_nr,
)
from ._records import StoredEvent, StoredSnapshot, StoredState, check_persistence_id
from ._sqlite_writes import Append, Change, Writer, check_revision, connect, highest_of

__all__ = ["SqliteJournal"]

_READ: Final = (
    "SELECT sequence_nr, manifest, payload, writer, timestamp FROM events"
    " WHERE persistence_id = ? AND sequence_nr >= ? AND sequence_nr <= ?"
    " ORDER BY sequence_nr LIMIT ?"
)
_REPLAY: Final = (
    "SELECT sequence_nr, manifest, payload FROM events"
    " WHERE persistence_id = ? AND sequence_nr >= ? ORDER BY sequence_nr LIMIT ?"
)
_MAX_INT: Final = 2**63 - 1

Synchronous = Literal["FULL", "NORMAL"]


class SqliteJournal(Journal, SnapshotStore, DurableStateStore):
    """A journal, snapshot store and durable state store in one SQLite file.

    The file (and its tables) is made on first use; the journal opens its
    connections then, in a worker thread, so making one never blocks.
    ``async with SqliteJournal(path) as journal:`` closes it on the way out
    (or call ``aclose()``). Several processes may use one file: SQLite
    serialises their write transactions (each waits up to ``busy_timeout``
    seconds for the others').

    Args:
        path: the database file (made if missing). Not ``":memory:"``: use
            ``MemoryJournal`` for that.
        synchronous: ``"FULL"`` (default) or ``"NORMAL"``: see the module
            docstring for what each survives.
        busy_timeout: seconds a write or read waits for another connection's
            lock before it fails.
        max_batch: the most writes per transaction.

    Raises:
        TypeError: ``path`` is not a str or path.
        ValueError: ``path`` is ``":memory:"`` or empty, ``synchronous`` is
            neither ``"FULL"`` nor ``"NORMAL"``, ``busy_timeout`` < 0, or
            ``max_batch`` < 1.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        busy_timeout: float = 10.0,
        max_batch: int = 1000,
    ) -> None:
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"path must be a str or a path, not {path!r}")
        path = os.fspath(path)
        if path in ("", ":memory:") or path.startswith("file::memory:"):
            raise ValueError(
                f"SqliteJournal needs a file, not {path!r}: use MemoryJournal "
                "for a journal in memory"
            )
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(
                f"synchronous must be 'FULL' or 'NORMAL', not {synchronous!r}"
            )
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, int | float):
            raise TypeError(f"busy_timeout must be seconds, not {busy_timeout!r}")
        if not busy_timeout >= 0:
            raise ValueError(f"busy_timeout must be >= 0 seconds, got {busy_timeout}")
        if isinstance(max_batch, bool) or not isinstance(max_batch, int):
            raise TypeError(f"max_batch must be an int, not {max_batch!r}")
        self.path = path
        self.synchronous: Synchronous = synchronous
        self.busy_timeout = float(busy_timeout)
        self._writer = Writer(path, synchronous, self.busy_timeout)
        self._committer: GroupCommit[Write] = GroupCommit(
            self._writer.commit, max_batch
        )
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"SqliteJournal({self.path!r}, synchronous={self.synchronous!r})"

    @property
    def batches(self) -> int:
        """Write transactions committed so far."""
        return self._committer.batches

    @property
    def writes(self) -> int:
        """Writes (appends, snapshots, states, deletions) in them."""
        return self._committer.writes

    # -- connections (worker threads) -------------------------------------------

    def _read(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run ``work`` on the reader connection (a worker thread)."""
        with self._read_lock:
            if self._closed:
                raise JournalClosed(f"{self!r} is closed")
            connection = self._reader
            if connection is None:
                # The writer makes the file and its tables first.
                with self._writer.lock:
                    self._writer.connection()
                connection = self._reader = connect(
                    self.path, self.synchronous, self.busy_timeout, write=False
                )
            try:
                return work(connection)
            except sqlite3.Error as exc:
                raise JournalError(f"{self.path}: {exc}") from exc

    async def _reading(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        if self._closed:
            raise JournalClosed(f"{self!r} is closed")
        return await anyio.to_thread.run_sync(self._read, work)

    async def _writing(self, write: Write) -> Any:
        if self._closed:
            raise JournalClosed(f"{self!r} is closed")
        return await self._committer.submit(write)

    # -- Journal ---------------------------------------------------------------

    async def append(
        self,
        persistence_id: str,
        events: Sequence[StoredEvent],
        expected_sequence_nr: int,
    ) -> None:
        check_append(persistence_id, events, expected_sequence_nr)
        if self._closed:
            raise JournalClosed(f"{self!r} is closed")
        # A StoredEvent holds the row's values in the columns' order; as a
        # plain tuple sqlite3 binds it faster than as a NamedTuple.
        write = Append(persistence_id, list(map(tuple, events)), expected_sequence_nr)
        await self._committer.submit(write)

    async def read_events(
        self,
        persistence_id: str,
        from_sequence_nr: int,
        to_sequence_nr: int | None = None,
        limit: int | None = None,
    ) -> list[StoredEvent]:
        check_persistence_id(persistence_id)
        check_sequence_nr(from_sequence_nr, "from_sequence_nr")
        last = _MAX_INT if to_sequence_nr is None else to_sequence_nr
        count = -1 if limit is None else check_sequence_nr(limit, "limit")
        if count == 0:
            return []

        def read(connection: sqlite3.Connection) -> list[StoredEvent]:
            rows = connection.execute(
                _READ, (persistence_id, from_sequence_nr, last, count)
            ).fetchall()
            return [
                StoredEvent(persistence_id, seq, manifest, payload, writer, timestamp)
                for seq, manifest, payload, writer, timestamp in rows
            ]

        events: list[StoredEvent] = await self._reading(read)
        return events

    async def replay(
        self, persistence_id: str, from_sequence_nr: int, limit: int
    ) -> Sequence[tuple[int, str, bytes]]:
        check_persistence_id(persistence_id)
        check_sequence_nr(from_sequence_nr, "from_sequence_nr")
        check_sequence_nr(limit, "limit")

        def read(connection: sqlite3.Connection) -> list[tuple[int, str, bytes]]:
            rows: list[tuple[int, str, bytes]] = connection.execute(
                _REPLAY, (persistence_id, from_sequence_nr, limit)
            ).fetchall()
            return rows

        events: list[tuple[int, str, bytes]] = await self._reading(read)
        return events

    async def highest_sequence_nr(self, persistence_id: str) -> int:
        check_persistence_id(persistence_id)
        highest: int = await self._reading(
            lambda connection: highest_of(connection, persistence_id)
        )
        return highest

    async def delete_events(self, persistence_id: str, to_sequence_nr: int) -> None:
        check_persistence_id(persistence_id)
        check_sequence_nr(to_sequence_nr, "to_sequence_nr")

        def delete(connection: sqlite3.Connection) -> None:
            highest = highest_of(connection, persistence_id)
            connection.execute(
                "DELETE FROM events WHERE persistence_id = ? AND sequence_nr <= ?",
                (persistence_id, to_sequence_nr),
            )
            if to_sequence_nr >= highest > 0:
                # Every event is gone: remember the highest number.
                connection.execute(
                    "INSERT INTO deleted VALUES (?, ?) ON CONFLICT (persistence_id)"
                    " DO UPDATE SET sequence_nr = excluded.sequence_nr",
                    (persistence_id, highest),
                )

        await self._writing(Change(delete))

    # -- SnapshotStore ---------------------------------------------------------

    async def save_snapshot(self, snapshot: StoredSnapshot) -> None:
        if type(snapshot) is not StoredSnapshot:
            raise TypeError(f"save_snapshot takes a StoredSnapshot, not {snapshot!r}")
        check_persistence_id(snapshot.persistence_id)
        row = (
            snapshot.persistence_id,
            snapshot.sequence_nr,
            snapshot.manifest,
            snapshot.payload,
            snapshot.timestamp,
        )
        await self._writing(
            Change(
                lambda connection: connection.execute(
                    "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?, ?)", row
                )
            )
        )

    async def latest_snapshot(
        self, persistence_id: str, max_sequence_nr: int | None = None
    ) -> StoredSnapshot | None:
        check_persistence_id(persistence_id)
        bound = _MAX_INT if max_sequence_nr is None else max_sequence_nr

        def read(connection: sqlite3.Connection) -> StoredSnapshot | None:
            row = connection.execute(
                "SELECT sequence_nr, manifest, payload, timestamp FROM snapshots"
                " WHERE persistence_id = ? AND sequence_nr <= ?"
                " ORDER BY sequence_nr DESC LIMIT 1",
                (persistence_id, bound),
            ).fetchone()
            return None if row is None else StoredSnapshot(persistence_id, *row)

        snapshot: StoredSnapshot | None = await self._reading(read)
        return snapshot

    async def delete_snapshots(self, persistence_id: str, to_sequence_nr: int) -> None:
        check_persistence_id(persistence_id)
        check_sequence_nr(to_sequence_nr, "to_sequence_nr")
        await self._writing(
            Change(
                lambda connection: connection.execute(
                    "DELETE FROM snapshots"
                    " WHERE persistence_id = ? AND sequence_nr <= ?",
                    (persistence_id, to_sequence_nr),
                )
            )
        )

    # -- DurableStateStore -------------------------------------------------------

    async def get_state(self, persistence_id: str) -> StoredState | None:
        check_persistence_id(persistence_id)

        def read(connection: sqlite3.Connection) -> StoredState | None:
            row = connection.execute(
                "SELECT revision, manifest, payload FROM states"
                " WHERE persistence_id = ? AND deleted = 0",
                (persistence_id,),
            ).fetchone()
            return None if row is None else StoredState(persistence_id, *row)

        state: StoredState | None = await self._reading(read)
        return state

    async def put_state(
        self,
        persistence_id: str,
        manifest: str,
        payload: bytes,
        expected_revision: int,
    ) -> int:
        check_persistence_id(persistence_id)
        check_sequence_nr(expected_revision, "expected_revision")

        def put(connection: sqlite3.Connection) -> int:
            last = check_revision(connection, persistence_id, expected_revision)
            connection.execute(
                "INSERT INTO states VALUES (?, ?, ?, ?, 0) ON CONFLICT"
                " (persistence_id) DO UPDATE SET revision = excluded.revision,"
                " manifest = excluded.manifest, payload = excluded.payload,"
                " deleted = 0",
                (persistence_id, last + 1, manifest, payload),
            )
            return last + 1

        revision: int = await self._writing(Change(put))
        return revision

    async def delete_state(self, persistence_id: str, expected_revision: int) -> None:
        check_persistence_id(persistence_id)
        check_sequence_nr(expected_revision, "expected_revision")

        def delete(connection: sqlite3.Connection) -> None:
            check_revision(connection, persistence_id, expected_revision)
            # A tombstone: revisions go on increasing after a delete.
            connection.execute(
                "UPDATE states SET revision = revision + 1, manifest = '',"
                " payload = x'', deleted = 1 WHERE persistence_id = ? AND deleted = 0",
                (persistence_id,),
            )

        await self._writing(Change(delete))

    # -- closing -----------------------------------------------------------------

    async def aclose(self) -> None:
        """Wait for the writes in flight, then close the file's connections;
        later calls raise ``JournalClosed``. Closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            await self._committer.wait_idle()
            await anyio.to_thread.run_sync(self._close_connections)

    def _close_connections(self) -> None:
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        self._writer.close()
