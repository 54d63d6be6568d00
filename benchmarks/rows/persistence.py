"""Persistence rows: durable actors beside what a user would write instead.

* ``persistence/sqlite/tell/64``: 64 event-sourced actors on a
  ``SqliteJournal`` (``synchronous=FULL``) are told ``count / 64`` commands
  each at once; each actor persists one event per command, in order, each
  stored before it handles the next; timed until an ask queued behind the
  commands of every actor is answered. The other, ``sqlite3 executemany``:
  64 tasks each store their ``count / 64`` events one after the other (each
  waits until its event is stored), handing them (encoded with msgspec) to
  one writer task, which commits everything pending with one ``executemany``
  in one transaction per batch in a worker thread (the same WAL file
  settings) and wakes the tasks whose events it stored: group commit written
  by hand. Unit: one stored event. The writes wait on fsync, which the
  default CPU clock does not count: run it with ``--clock wall`` too.
* ``persistence/sqlite/ask/64``: the same, but each command is an ask, by a
  task of its own per actor, answered once its event is stored (an
  acknowledged write per round trip: two more task switches per event than
  the baseline's); the same baseline.
* ``persistence/recovery/sqlite``: one event-sourced actor recovers
  ``count`` events from a ``SqliteJournal`` (spawn to first reply). The other,
  ``sqlite3 + msgspec``: one ``SELECT`` of the same rows in a worker thread,
  each payload decoded with a typed msgspec decoder and folded with the same
  event handler. Unit: one event replayed.
* ``persistence/command/memory``: one task asks an event-sourced actor on a
  ``MemoryJournal`` ``count`` times in turn (each ask persists one event: the
  codec, the journal's checkpoint, the fold, the reply). The other,
  ``plain actor``: the same state change in a plain actor's ``receive``
  (nothing stored). Unit: one command: the ratio is what persisting costs.

Opening journals, spawning and recovering the actors (for the write rows) and
writing the events to recover are not timed; every sample uses a new file.
"""

from __future__ import annotations

import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from actors import Actor, ActorSystem, Request
from actors.persistence import (
    Codec,
    Effect,
    EventSourcedActor,
    MemoryJournal,
    SqliteJournal,
    StoredEvent,
)

from .._clock import now
from .._registry import Impl, Row, Sample, SampleFn, register

__all__: list[str] = []

ACTORS = 64
WRITES, QUICK_WRITES = ACTORS * 150, ACTORS * 2
RECOVERED, QUICK_RECOVERED = 50_000, 500
COMMANDS, QUICK_COMMANDS = 20_000, 500


@dataclass
class Add(Request[int]):
    pass


@dataclass
class Added:
    n: int


class Ledger(EventSourcedActor[Any, Added, int]):
    """Counts its events; ``Add`` persists the next one."""

    codec = Codec(Added)

    def __init__(self, persistence_id: str) -> None:
        self.persistence_id = persistence_id

    def empty_state(self) -> int:
        return 0

    def on_command(self, state: int, command: Any) -> Effect[Added, int]:
        if command is None:
            return Effect.reply(state)
        return Effect.persist(Added(state + 1)).then_reply(_itself)

    def on_event(self, state: int, event: Added) -> int:
        return fold(state, event)


def fold(state: int, event: Added) -> int:
    return state + 1 if event.n == state + 1 else state


def _itself(state: int) -> int:
    return state


class PlainLedger(Actor):
    """The same state change without storing anything."""

    def __init__(self) -> None:
        self.state = 0

    def receive(self, message: Any) -> int:
        self.state = fold(self.state, Added(self.state + 1))
        return self.state


# -- persistence/sqlite/actors -------------------------------------------------


def ours_sqlite(asks: bool) -> SampleFn:
    async def sample(count: int) -> Sample:
        per = count // ACTORS
        stored = 0
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "journal.db"
            async with (
                SqliteJournal(path, synchronous="FULL") as journal,
                ActorSystem(journal=journal) as system,
            ):
                refs = [system.spawn(Ledger, f"ledger-{i}") for i in range(ACTORS)]
                for ref in refs:
                    await ref.ask(None)  # recovered

                async def drive(ref: Any) -> None:
                    nonlocal stored
                    for _ in range(per):
                        await ref.ask(Add())
                        stored += 1

                start = now()
                if asks:
                    async with anyio.create_task_group() as tg:
                        for ref in refs:
                            tg.start_soon(drive, ref)
                else:
                    command = Add()
                    for ref in refs:
                        tell = ref.tell
                        for _ in range(per):
                            tell(command)
                    for ref in refs:  # answered after its actor's commands
                        stored += await ref.ask(None, timeout=300.0)
                elapsed = now() - start
        return Sample(elapsed, stored)

    return sample


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute(
        "CREATE TABLE IF NOT EXISTS events (persistence_id TEXT NOT NULL,"
        " sequence_nr INTEGER NOT NULL, payload BLOB NOT NULL,"
        " PRIMARY KEY (persistence_id, sequence_nr)) WITHOUT ROWID"
    )
    return connection


async def handwritten_sqlite(count: int) -> Sample:
    per = count // ACTORS
    stored = 0
    encode = msgspec.msgpack.Encoder().encode
    with tempfile.TemporaryDirectory() as directory:
        connection = _connect(Path(directory) / "journal.db")
        pending: list[tuple[tuple[str, int, bytes], anyio.Event]] = []
        wake = anyio.Event()

        def commit(rows: list[tuple[str, int, bytes]]) -> None:
            connection.execute("BEGIN")
            connection.executemany("INSERT INTO events VALUES (?, ?, ?)", rows)
            connection.execute("COMMIT")

        async def writer() -> None:
            nonlocal wake, pending
            while True:
                await wake.wait()
                wake = anyio.Event()
                batch, pending = pending, []
                await anyio.to_thread.run_sync(commit, [row for row, _ in batch])
                for _, done in batch:
                    done.set()

        async def client(index: int) -> None:
            nonlocal stored
            persistence_id = f"ledger-{index}"
            for n in range(1, per + 1):
                done = anyio.Event()
                pending.append(((persistence_id, n, encode(Added(n))), done))
                wake.set()
                await done.wait()
                stored += 1

        start = now()
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer)
            async with anyio.create_task_group() as clients:
                for index in range(ACTORS):
                    clients.start_soon(client, index)
            tg.cancel_scope.cancel()
        elapsed = now() - start
        connection.close()
    return Sample(elapsed, stored)


# -- persistence/recovery/sqlite ------------------------------------------------


async def _written(path: Path, count: int) -> None:
    """``count`` events of ``ledger-0`` in a SqliteJournal at ``path``."""
    codec = Ledger.codec
    assert codec is not None
    async with SqliteJournal(path, synchronous="NORMAL") as journal:
        for first in range(1, count + 1, 5000):
            last = min(count, first + 4999)
            events = []
            for n in range(first, last + 1):
                manifest, payload = codec.encode(Added(n))
                events.append(StoredEvent("ledger-0", n, manifest, payload, "w", 0.0))
            await journal.append("ledger-0", events, first - 1)


async def ours_recovery(count: int) -> Sample:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "journal.db"
        await _written(path, count)
        async with (
            SqliteJournal(path) as journal,
            ActorSystem(journal=journal) as system,
        ):
            start = now()
            recovered = await system.spawn(Ledger, "ledger-0").ask(None)
            elapsed = now() - start
    return Sample(elapsed, recovered)


async def handwritten_recovery(count: int) -> Sample:
    decode = msgspec.msgpack.Decoder(Added).decode
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "journal.db"
        await _written(path, count)
        connection = sqlite3.connect(path, check_same_thread=False)

        def read() -> list[tuple[bytes]]:
            return connection.execute(
                "SELECT payload FROM events WHERE persistence_id = ?"
                " ORDER BY sequence_nr",
                ("ledger-0",),
            ).fetchall()

        start = now()
        state = 0
        for (payload,) in await anyio.to_thread.run_sync(read):
            state = fold(state, decode(payload))
        elapsed = now() - start
        connection.close()
    return Sample(elapsed, state)


# -- persistence/command/memory -------------------------------------------------


async def ours_command(count: int) -> Sample:
    async with ActorSystem(journal=MemoryJournal()) as system:
        ref = system.spawn(Ledger, "ledger-0")
        await ref.ask(None)
        ask = ref.ask
        command = Add()
        start = now()
        for _ in range(count):
            last = await ask(command)
        elapsed = now() - start
    return Sample(elapsed, last)


async def plain_command(count: int) -> Sample:
    async with ActorSystem() as system:
        ref = system.spawn(PlainLedger)
        ask = ref.ask
        command = Add()
        start = now()
        for _ in range(count):
            last = await ask(command)
        elapsed = now() - start
    return Sample(elapsed, last)


register(
    Row(
        f"persistence/sqlite/tell/{ACTORS}",
        f"{ACTORS} event-sourced actors persist their told commands at once on "
        "SQLite (FULL), vs hand-written executemany group commit",
        WRITES,
        QUICK_WRITES,
        (
            Impl("ours", ours_sqlite(asks=False)),
            Impl("sqlite3 executemany", handwritten_sqlite),
        ),
        unit="event",
    )
)
register(
    Row(
        f"persistence/sqlite/ask/{ACTORS}",
        f"{ACTORS} event-sourced actors asked in turn, each ask answered once "
        "stored on SQLite (FULL), vs hand-written executemany group commit",
        WRITES,
        QUICK_WRITES,
        (
            Impl("ours", ours_sqlite(asks=True)),
            Impl("sqlite3 executemany", handwritten_sqlite),
        ),
        unit="event",
    )
)
register(
    Row(
        "persistence/recovery/sqlite",
        "one event-sourced actor recovers its events from SQLite, vs a SELECT "
        "and msgspec decoding",
        RECOVERED,
        QUICK_RECOVERED,
        (
            Impl("ours", ours_recovery),
            Impl("sqlite3 + msgspec", handwritten_recovery),
        ),
        unit="event",
    )
)
register(
    Row(
        "persistence/command/memory",
        "ask an event-sourced actor on the memory journal, vs a plain actor "
        "making the same state change",
        COMMANDS,
        QUICK_COMMANDS,
        (
            Impl("ours", ours_command),
            Impl("plain actor", plain_command),
        ),
        unit="command",
    )
)
