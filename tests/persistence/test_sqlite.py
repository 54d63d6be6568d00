"""SqliteJournal: one file in WAL mode, durability as configured, group
commit across actors, errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from actors import ActorSystem
from actors.persistence import (
    EventsRejected,
    JournalError,
    SequenceConflict,
    SqliteJournal,
    StoredEvent,
)
from actors.persistence.testing.tck import events

from ._model import Balance, BankAccount, Deposit

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("synchronous", "level"), [("FULL", 2), ("NORMAL", 1)])
async def test_the_file_is_in_wal_mode_with_the_chosen_durability(
    tmp_path: Path, synchronous: str, level: int
) -> None:
    path = tmp_path / "j.db"
    async with SqliteJournal(path, synchronous=synchronous) as journal:  # type: ignore[arg-type]
        await journal.append("p", events("p", 1, 1), 0)
        writer = journal._writer.connection()  # the writer's own setting
        assert writer.execute("PRAGMA synchronous").fetchone()[0] == level
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 1


async def test_the_writes_of_many_actors_share_transactions(tmp_path: Path) -> None:
    async with SqliteJournal(tmp_path / "j.db") as journal:
        async with ActorSystem(journal=journal) as system:
            accounts = [system.spawn(BankAccount, f"a{i}") for i in range(50)]

            async def deposit_five(account: object) -> None:
                for _ in range(5):
                    await account.ask(Deposit(1))  # type: ignore[attr-defined]

            async with anyio.create_task_group() as tg:
                for account in accounts:
                    tg.start_soon(deposit_five, account)
            for account in accounts:
                assert await account.ask(Balance()) == 5
        assert journal.writes == 250
        # While one transaction commits, the next fills: far fewer than 250.
        assert journal.batches < 100


async def test_a_journal_reopened_on_the_file_recovers_what_was_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.db"
    async with SqliteJournal(path) as journal, ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount)
        for amount in (1, 2, 3):
            await account.ask(Deposit(amount))
    async with SqliteJournal(path) as journal, ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount)
        assert await account.ask(Balance()) == 6


async def test_one_conflicting_append_in_a_batch_fails_alone(tmp_path: Path) -> None:
    async with SqliteJournal(tmp_path / "j.db") as journal:
        await journal.append("taken", events("taken", 1, 1), 0)
        outcomes: dict[str, str] = {}

        async def append(persistence_id: str, expected: int) -> None:
            try:
                await journal.append(
                    persistence_id, events(persistence_id, expected + 1, 2), expected
                )
            except SequenceConflict:
                outcomes[persistence_id] = "conflict"
            else:
                outcomes[persistence_id] = "stored"

        async with anyio.create_task_group() as tg:
            for index in range(10):
                tg.start_soon(append, f"free-{index}", 0)
            tg.start_soon(append, "taken", 0)
        assert outcomes.pop("taken") == "conflict"
        assert set(outcomes.values()) == {"stored"}
        for index in range(10):
            assert await journal.highest_sequence_nr(f"free-{index}") == 2
        assert await journal.highest_sequence_nr("taken") == 1


async def test_a_too_large_event_is_rejected_alone(tmp_path: Path) -> None:
    async with SqliteJournal(tmp_path / "j.db") as journal:
        await journal.append("p", events("p", 1, 1), 0)
        journal._writer.connection().setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 10_000)
        big = StoredEvent("big", 1, "e@1", b"x" * 20_000, "w", 0.0)

        async def small() -> None:
            await journal.append("p", events("p", 2, 1), 1)

        async with anyio.create_task_group() as tg:
            tg.start_soon(small)
            with pytest.raises(EventsRejected, match="too big"):
                await journal.append("big", [big], 0)
        assert await journal.highest_sequence_nr("big") == 0
        assert await journal.highest_sequence_nr("p") == 2


async def test_an_sqlite_error_fails_the_batch_with_a_journal_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.db"
    async with SqliteJournal(path) as journal:
        await journal.append("p", events("p", 1, 1), 0)
        with sqlite3.connect(path) as other:
            other.execute("DROP TABLE events")
        with pytest.raises(JournalError, match="no such table"):
            await journal.append("p", events("p", 2, 1), 1)
        with pytest.raises(JournalError, match="no such table"):
            await journal.read_events("p", 1)


async def test_a_file_of_a_later_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA user_version=99")
    async with SqliteJournal(path) as journal:
        with pytest.raises(JournalError, match="later release"):
            await journal.append("p", events("p", 1, 1), 0)


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"path": ":memory:"}, ValueError),
        ({"path": ""}, ValueError),
        ({"path": 3}, TypeError),
        ({"path": "x.db", "synchronous": "OFF"}, ValueError),
        ({"path": "x.db", "busy_timeout": -1}, ValueError),
        ({"path": "x.db", "busy_timeout": "1"}, TypeError),
        ({"path": "x.db", "max_batch": 0}, ValueError),
    ],
)
def test_bad_arguments_are_refused(arguments: dict[str, object], error: type) -> None:
    with pytest.raises(error):
        SqliteJournal(**arguments)  # type: ignore[arg-type]


async def test_making_a_journal_touches_no_file_until_it_is_used(
    tmp_path: Path,
) -> None:
    path = tmp_path / "later.db"
    journal = SqliteJournal(path)
    assert not path.exists()
    assert await journal.highest_sequence_nr("p") == 0
    assert path.exists()
    await journal.aclose()


async def test_an_append_through_another_connection_is_seen_by_the_next_check(
    tmp_path: Path,
) -> None:
    # The writer knows the highest numbers its own commits left; another
    # connection's commit (PRAGMA data_version) makes it read them again.
    path = tmp_path / "j.db"
    async with SqliteJournal(path) as a, SqliteJournal(path) as b:
        await a.append("p", events("p", 1, 1), 0)
        await b.append("p", events("p", 2, 1, writer="b"), 1)
        with pytest.raises(SequenceConflict) as caught:
            await a.append("p", events("p", 2, 1, writer="a"), 1)
        assert caught.value.actual == 2
        await a.append("p", events("p", 3, 1, writer="a"), 2)
        with sqlite3.connect(path) as other:  # any connection, not a journal
            other.execute("DELETE FROM events WHERE sequence_nr = 3")
        with pytest.raises(SequenceConflict):
            await a.append("p", events("p", 4, 1), 3)
        assert [e.writer for e in await a.read_events("p", 1)] == ["w", "b"]
