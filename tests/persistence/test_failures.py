"""What a failed or refused write does: the actor never goes on with state
the journal does not have; a refusal fails only its command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from actors import ActorSystem, Directive, OneForOne, StopReason
from actors.persistence import (
    Codec,
    Effect,
    EventsRejected,
    JournalError,
    MemoryJournal,
)

from ._model import Account, Balance, BankAccount, Deposit, Deposited

pytestmark = pytest.mark.anyio


async def test_a_failed_write_fails_the_ask_and_the_restarted_actor_recovers() -> None:
    journal = MemoryJournal()
    log: list[Any] = []
    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(BankAccount, "alice", log)
        await account.ask(Deposit(1))
        journal.faults.fail_next_write()
        with pytest.raises(JournalError):
            await account.ask(Deposit(10))
        assert await account.ask(Balance()) == 1
        assert system.restarts == 1
    assert [e.sequence_nr for e in journal.events("account-alice")] == [1]
    assert ("recovered", 1, 1) in log


async def test_a_write_stored_before_its_failure_is_there_after_the_restart() -> None:
    # A lost acknowledgement: the asker hears of a failure, the journal has
    # the event, and the actor's state follows the journal.
    journal = MemoryJournal()
    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(BankAccount)
        journal.faults.fail_next_write_after_storing()
        with pytest.raises(JournalError):
            await account.ask(Deposit(10))
        assert await account.ask(Balance()) == 10
        assert await account.ask(Deposit(1)) == 11
    assert [e.sequence_nr for e in journal.events("account-alice")] == [1, 2]


async def test_a_resumed_actor_recovers_before_its_next_command() -> None:
    journal = MemoryJournal()
    log: list[Any] = []

    resume = OneForOne(decider=lambda exc: Directive.RESUME)
    async with ActorSystem(
        journal=journal, log_failures=False, strategy=resume
    ) as system:
        account = system.spawn(BankAccount, "alice", log)
        journal.faults.fail_next_write_after_storing()
        with pytest.raises(JournalError):
            await account.ask(Deposit(10))
        assert system.restarts == 0
        assert await account.ask(Deposit(1)) == 11  # recovered the stored 10 first
    assert [entry for entry in log if entry[0] == "recovered"] == [
        ("recovered", 0, 0),
        ("recovered", 10, 1),
    ]


async def test_a_write_the_journal_refuses_fails_only_its_command() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount)
        await account.ask(Deposit(1))
        journal.faults.reject_next_write()
        with pytest.raises(EventsRejected):
            await account.ask(Deposit(10))
        assert await account.ask(Balance()) == 1
        assert system.failures == 0 and system.restarts == 0
        assert system.dead_letters.recent[-1].message == Deposit(10)
        assert system.dead_letters.recent[-1].reason.startswith("write refused")
        assert await account.ask(Deposit(2)) == 3


@dataclass
class Opaque:
    """An event whose field holds whatever it was given (Any)."""

    value: Any


class Holder(BankAccount):
    codec = Codec(Deposited, Opaque, Account)

    def on_command(self, state: Account, command: Any) -> Any:
        if isinstance(command, tuple) and command[0] == "opaque":
            return Effect.persist(Deposited(1), Opaque(command[1])).then_reply(
                lambda s: s.balance
            )
        if command == "unregistered":
            return Effect.persist(Deposited(1), object()).then_reply(
                lambda s: s.balance
            )
        return super().on_command(state, command)

    def on_event(self, state: Account, event: Any) -> Account:
        if isinstance(event, Opaque):
            return state
        return super().on_event(state, event)


@pytest.mark.parametrize(
    ("command", "match"),
    [
        ("unregistered", "not registered with the codec"),
        (("opaque", complex(1, 2)), "cannot encode Opaque"),
        (("opaque", 2**70), "cannot encode Opaque"),
    ],
)
async def test_an_event_the_codec_cannot_encode_fails_the_command_and_nothing_else(
    command: Any, match: str
) -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        holder = system.spawn(Holder)
        await holder.ask(Deposit(5))
        with pytest.raises(EventsRejected, match=match):
            await holder.ask(command)
        # A told one is a dead letter: nobody is left to tell.
        holder.tell(command)
        assert await holder.ask(Balance()) == 5
        assert system.failures == 0
        assert [letter.message for letter in system.dead_letters.recent] == [
            command,
            command,
        ]
        assert await holder.ask(("opaque", [1, 2])) == 6
    assert [e.sequence_nr for e in journal.events("account-alice")] == [1, 2, 3]


async def test_an_event_handler_failing_on_a_new_event_stores_nothing() -> None:
    journal = MemoryJournal()

    class Picky(BankAccount):
        def on_event(self, state: Account, event: Any) -> Account:
            if event == Deposited(13):
                raise ValueError("unlucky")
            return super().on_event(state, event)

    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(Picky)
        await account.ask(Deposit(1))
        with pytest.raises(ValueError, match="unlucky"):
            await account.ask(Deposit(13))
        assert await account.ask(Balance()) == 1
    assert [e.sequence_nr for e in journal.events("account-alice")] == [1]


async def test_a_failing_side_effect_fails_the_actor_after_the_events_are_stored() -> (
    None
):
    journal = MemoryJournal()

    class Noisy(BankAccount):
        def on_command(self, state: Account, command: Any) -> Any:
            if command == "noisy":
                return Effect.persist(Deposited(4)).then_run(_explode)
            return super().on_command(state, command)

    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(Noisy)
        with pytest.raises(RuntimeError, match="side effect"):
            await account.ask("noisy")
        assert await account.ask(Balance()) == 4
        assert system.restarts == 1


def _explode(state: Any) -> None:
    raise RuntimeError("side effect failed")


async def test_a_temporary_actor_whose_write_fails_stops_with_the_failure() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(BankAccount, restart="temporary")
        journal.faults.fail_next_write()
        with pytest.raises(JournalError):
            await account.ask(Deposit(1))
        reason = await account.join()
        assert isinstance(reason, JournalError)
        assert reason is not StopReason.NORMAL
