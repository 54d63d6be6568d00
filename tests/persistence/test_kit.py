"""The event-sourced test kit and the plugin's fixtures."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from actors import ActorSystem
from actors.persistence import (
    Codec,
    Effect,
    EventSourcedActor,
    JournalError,
    MemoryJournal,
    SqliteJournal,
    StoredEvent,
)
from actors.persistence.testing import EventSourcedTestKit

from ._model import Account, Balance, BankAccount, Deposit, Deposited, DepositMany

pytestmark = pytest.mark.anyio


async def test_a_command_shows_its_events_state_and_reply(
    actor_system: ActorSystem,
) -> None:
    async with EventSourcedTestKit(actor_system, BankAccount, "kit") as kit:
        result = await kit.run_command(DepositMany([2, 3]))
        assert result.events == [Deposited(2), Deposited(3)]
        assert result.state == Account(5, [2, 3])
        assert (result.reply, result.sequence_nr) == (5, 2)
        query = await kit.run_command(Balance())
        assert query.events == [] and query.reply == 5
        assert kit.persistence_id == "account-kit"
        assert kit.events() == [Deposited(2), Deposited(3)]
        assert await kit.state() == Account(5, [2, 3])


async def test_a_restart_recovers_the_same_state(actor_system: ActorSystem) -> None:
    async with EventSourcedTestKit(actor_system, BankAccount) as kit:
        for amount in (1, 2, 3):
            before = await kit.run_command(Deposit(amount))
        restarted = await kit.restart()
        assert (restarted.state, restarted.sequence_nr) == (before.state, 3)


async def test_a_write_failure_is_injected_through_the_journal(
    actor_system: ActorSystem,
) -> None:
    async with EventSourcedTestKit(actor_system, BankAccount) as kit:
        await kit.run_command(Deposit(1))
        kit.journal.faults.fail_next_write()
        with pytest.raises(JournalError):
            await kit.run_command(Deposit(10))
        assert await kit.state() == Account(1, [1])


@dataclass
class Loose:
    """A state whose Any field does not survive the codec as it was."""

    items: Any


class LooseActor(EventSourcedActor[Any, Deposited, Loose]):
    codec = Codec(Deposited, Loose)

    def __init__(self) -> None:
        self.persistence_id = "loose"

    def empty_state(self) -> Loose:
        return Loose(())

    def on_command(self, state: Loose, command: Any) -> Effect[Deposited, Loose]:
        return Effect.persist(Deposited(1))

    def on_event(self, state: Loose, event: Deposited) -> Loose:
        return Loose((*state.items, event.amount))  # a tuple: back as a list


async def test_a_state_that_does_not_survive_the_codec_fails_the_command_check(
    actor_system: ActorSystem,
) -> None:
    async with EventSourcedTestKit(actor_system, LooseActor) as kit:
        with pytest.raises(AssertionError, match="does not survive the codec"):
            await kit.run_command("go")


async def test_the_kit_runs_only_event_sourced_actors(
    actor_system: ActorSystem,
) -> None:
    from ._model import Counter

    kit = EventSourcedTestKit(actor_system, Counter)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="EventSourcedActor"):
        await kit.start()


async def test_the_kit_fixture_starts_a_kit_on_the_memory_journal(
    event_sourced_kit: Any, memory_journal: MemoryJournal
) -> None:
    kit = await event_sourced_kit(BankAccount, "fixture")
    await kit.run_command(Deposit(3))
    assert [e.sequence_nr for e in memory_journal.events("account-fixture")] == [1]


async def test_the_sqlite_fixture_is_a_journal_in_tmp_path(
    sqlite_journal: SqliteJournal, tmp_path: Path
) -> None:
    assert Path(sqlite_journal.path).parent == tmp_path
    async with ActorSystem(journal=sqlite_journal) as system:
        account = system.spawn(BankAccount)
        assert await account.ask(Deposit(4)) == 4
    async with SqliteJournal(sqlite_journal.path) as again:
        assert await again.highest_sequence_nr("account-alice") == 1


class _CancellingJournal(MemoryJournal):
    """Cancels ``scope`` at the recovery's first read (then reads as usual):
    the kit's start is cancelled while its actor recovers."""

    def __init__(self, scope: anyio.CancelScope) -> None:
        super().__init__()
        self._scope = scope

    async def read_events(
        self,
        persistence_id: str,
        from_sequence_nr: int,
        to_sequence_nr: int | None = None,
        limit: int | None = None,
    ) -> list[StoredEvent]:
        self._scope.cancel()
        return await super().read_events(
            persistence_id, from_sequence_nr, to_sequence_nr, limit
        )


async def test_a_kit_whose_start_fails_leaves_no_actor_running(
    actor_system: ActorSystem,
) -> None:
    scope = anyio.CancelScope()
    kit = EventSourcedTestKit(
        actor_system, BankAccount, "cancelled", journal=_CancellingJournal(scope)
    )
    with scope:
        async with kit:
            pytest.fail("entered a kit whose start was cancelled")
    assert scope.cancelled_caught
    assert not kit.ref.is_alive  # stopped before the error left the start
