"""One writer per persistence id: a write is conditional on the sequence
number the writer last saw, so two live incarnations cannot interleave; the
stale one stops (across processes: test_processes.py)."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

from actors import ActorSystem, StopReason
from actors.nats import NatsServer
from actors.persistence import (
    JetStreamJournal,
    MemoryJournal,
    SequenceConflict,
    SqliteJournal,
)

from ._model import Balance, BankAccount, Deposit

pytestmark = pytest.mark.anyio


async def _two_incarnations(journal: Any) -> None:
    async with (
        ActorSystem(journal=journal) as one,
        ActorSystem(journal=journal, log_failures=False) as two,
    ):
        first = one.spawn(BankAccount)
        second = two.spawn(BankAccount)
        # Both recovered the same (empty) log.
        assert await first.ask(Balance()) == await second.ask(Balance()) == 0
        assert await first.ask(Deposit(1)) == 1
        with pytest.raises(SequenceConflict) as caught:
            await second.ask(Deposit(100))
        assert (caught.value.expected, caught.value.actual) == (0, 1)
        assert await second.join() is StopReason.NORMAL
        assert await first.ask(Deposit(2)) == 3


async def test_the_second_writer_of_an_id_stops_and_its_events_are_not_stored() -> None:
    journal = MemoryJournal()
    await _two_incarnations(journal)
    stored = journal.events("account-alice")
    assert [e.sequence_nr for e in stored] == [1, 2]
    assert len({e.writer for e in stored}) == 1


async def test_the_same_holds_through_two_connections_to_one_sqlite_file(
    tmp_path: Path,
) -> None:
    async with (
        SqliteJournal(tmp_path / "j.db") as a,
        SqliteJournal(tmp_path / "j.db") as b,
    ):
        async with (
            ActorSystem(journal=a) as one,
            ActorSystem(journal=b, log_failures=False) as two,
        ):
            first = one.spawn(BankAccount)
            second = two.spawn(BankAccount)
            assert await first.ask(Balance()) == await second.ask(Balance()) == 0
            await second.ask(Deposit(5))
            with pytest.raises(SequenceConflict):
                await first.ask(Deposit(1))
            assert await first.join() is StopReason.NORMAL
        stored = await a.read_events("account-alice", 1)
    assert [e.sequence_nr for e in stored] == [1]


async def test_a_writer_that_recovers_after_another_goes_on_from_its_events() -> None:
    journal = MemoryJournal()
    await _two_incarnations(journal)
    async with ActorSystem(journal=journal) as system:
        third = system.spawn(BankAccount)
        assert await third.ask(Deposit(4)) == 7


async def test_two_jetstream_journals_on_one_stream_keep_one_writer(
    jetstream_server: NatsServer,
) -> None:
    # Two connections (as two nodes after a partition): the cache of one
    # journal cannot know the other's append; the server's expected last
    # subject sequence refuses the stale writer's.
    stream = f"W{secrets.token_hex(6)}"
    async with (
        JetStreamJournal(jetstream_server.url, stream=stream) as a,
        JetStreamJournal(jetstream_server.url, stream=stream) as b,
    ):
        async with (
            ActorSystem(journal=a) as one,
            ActorSystem(journal=b, log_failures=False) as two,
        ):
            first = one.spawn(BankAccount)
            second = two.spawn(BankAccount)
            assert await first.ask(Balance()) == await second.ask(Balance()) == 0
            assert await first.ask(Deposit(1)) == 1
            # b's last look said "no events": it sends expected last
            # subject sequence 0, which the server refuses.
            with pytest.raises(SequenceConflict) as caught:
                await second.ask(Deposit(5))
            assert caught.value.expected == 0
            assert await second.join() is StopReason.NORMAL
            assert await first.ask(Deposit(2)) == 3
        stored = await b.read_events("account-alice", 1)
    assert [e.sequence_nr for e in stored] == [1, 2]
    assert len({e.writer for e in stored}) == 1
