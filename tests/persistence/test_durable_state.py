"""DurableStateActor: the whole state stored by key with a revision."""

from __future__ import annotations

from typing import Any

import pytest

from actors import ActorSystem, StopReason
from actors.persistence import (
    EventsRejected,
    JournalError,
    MemoryJournal,
    RecoveryFailed,
    RevisionConflict,
    SqliteJournal,
)

from ._model import Add, Count, Counter, Reset

pytestmark = pytest.mark.anyio


async def test_a_persisted_state_is_stored_and_recovered() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        counter = system.spawn(Counter)
        assert await counter.ask(Add(2)) == 2
        assert await counter.ask(Add(3)) == 5
    stored = journal.state("counter-c")
    assert stored is not None and stored.revision == 2
    async with ActorSystem(journal=journal) as system:
        counter = system.spawn(Counter)
        assert await counter.ask("get") == 5
        assert await counter.ask(Add(1)) == 6


async def test_a_delete_goes_back_to_the_empty_state() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        counter = system.spawn(Counter)
        await counter.ask(Add(2))
        assert await counter.ask(Reset()) == 0
        assert journal.state("counter-c") is None
        assert await counter.ask(Add(7)) == 7
    async with ActorSystem(journal=journal) as system:
        counter = system.spawn(Counter)
        assert await counter.ask("get") == 7


async def test_the_revision_follows_the_writes() -> None:
    revisions: list[int] = []

    class Watching(Counter):
        def on_command(self, state: Count, command: Any) -> Any:
            revisions.append(self.revision)
            return super().on_command(state, command)

    async with ActorSystem(journal=MemoryJournal()) as system:
        counter = system.spawn(Watching)
        for _ in range(3):
            await counter.ask(Add(1))
    assert revisions == [0, 1, 2]


async def test_a_stale_writer_stops_with_the_revision_conflict(tmp_path: Any) -> None:
    async with SqliteJournal(tmp_path / "j.db") as journal:
        async with (
            ActorSystem(journal=journal) as one,
            ActorSystem(journal=journal) as two,
        ):
            first = one.spawn(Counter)
            second = two.spawn(Counter)
            assert await first.ask("get") == await second.ask("get") == 0
            assert await first.ask(Add(1)) == 1
            with pytest.raises(RevisionConflict):
                await second.ask(Add(10))
            assert await second.join() is StopReason.NORMAL
            assert await first.ask(Add(1)) == 2
        stored = await journal.get_state("counter-c")
        assert stored is not None and stored.revision == 2


async def test_a_refused_state_fails_only_the_command() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        counter = system.spawn(Counter)
        await counter.ask(Add(1))
        journal.faults.reject_next_write()
        with pytest.raises(EventsRejected):
            await counter.ask(Add(5))
        assert await counter.ask("get") == 1
        assert system.failures == 0


async def test_a_failed_write_restarts_the_actor_from_what_is_stored() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal, log_failures=False) as system:
        counter = system.spawn(Counter)
        await counter.ask(Add(1))
        journal.faults.fail_next_write_after_storing()
        with pytest.raises(JournalError):
            await counter.ask(Add(5))
        assert await counter.ask("get") == 6
        assert system.restarts == 1


async def test_a_state_that_does_not_decode_fails_the_recovery() -> None:
    journal = MemoryJournal()
    await journal.put_state("counter-c", "Count@1", b"not msgpack \xc1", 0)
    async with ActorSystem(journal=journal, log_failures=False) as system:
        counter = system.spawn(Counter, restart="temporary")
        reason = await counter.join()
    assert isinstance(reason, RecoveryFailed)


async def test_a_durable_state_actor_needs_a_state_store() -> None:
    from actors.persistence import Journal

    class EventsOnly(Journal):
        async def append(self, *args: Any) -> None: ...

        async def read_events(self, *args: Any) -> Any: ...

        async def highest_sequence_nr(self, persistence_id: str) -> int:
            return 0

        async def delete_events(self, *args: Any) -> None: ...

    async with ActorSystem(journal=EventsOnly(), log_failures=False) as system:
        # Found as the instance is built: spawn raises, nothing starts.
        with pytest.raises(TypeError, match="DurableStateStore"):
            system.spawn(Counter)
