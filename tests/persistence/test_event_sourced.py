"""EventSourcedActor: commands, effects, and the order of persist, reply and
side effects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, StopReason, UnhandledMessage
from actors.persistence import (
    Codec,
    Effect,
    EventSourcedActor,
    MemoryJournal,
    StateEffect,
)
from actors.testing import wait_all_blocked

from ._model import (
    Account,
    Balance,
    BankAccount,
    Close,
    Deposit,
    Deposited,
    DepositMany,
    GatedJournal,
    InsufficientFunds,
    Withdraw,
)

pytestmark = pytest.mark.anyio


async def test_a_persisted_event_changes_the_state_and_the_reply_sees_it() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount)
        assert await account.ask(Deposit(10)) == 10
        assert await account.ask(Deposit(5)) == 15
        assert await account.ask(Balance()) == 15
    stored = journal.events("account-alice")
    assert [(e.sequence_nr, e.manifest) for e in stored] == [
        (1, "Deposited@1"),
        (2, "Deposited@1"),
    ]
    assert len({e.writer for e in stored}) == 1


async def test_an_ask_is_answered_only_after_its_events_are_stored() -> None:
    journal = GatedJournal()
    async with ActorSystem(journal=journal) as system, anyio.create_task_group() as tg:
        account = system.spawn(BankAccount)
        replies: list[int] = []

        async def deposit() -> None:
            replies.append(await account.ask(Deposit(7)))

        tg.start_soon(deposit)
        await wait_all_blocked()
        assert journal.waiting == 1  # the append is in flight
        assert replies == [] and journal.events("account-alice") == []
        journal.gate.set()
    assert replies == [7]
    assert len(journal.events("account-alice")) == 1


async def test_commands_arriving_during_a_persist_wait_and_keep_their_order() -> None:
    journal = GatedJournal()
    log: list[Any] = []
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount, "alice", log)
        async with anyio.create_task_group() as tg:
            results: dict[str, Any] = {}

            async def ask(key: str, command: Any) -> None:
                results[key] = await account.ask(command)

            tg.start_soon(ask, "first", Deposit(1))
            await wait_all_blocked()
            account.tell(Deposit(2))
            tg.start_soon(ask, "balance", Balance())
            await wait_all_blocked()  # the ask is in the mailbox
            account.tell(Deposit(3))
            await wait_all_blocked()
            # Only the first command was handled: the rest wait.
            assert [entry for entry in log if entry[0] == "command"] == [
                ("command", Deposit(1))
            ]
            journal.gate.set()
        assert results == {"first": 1, "balance": 3}
        assert await account.ask(Balance()) == 6
    commands = [entry[1] for entry in log if entry[0] == "command"]
    assert commands == [Deposit(1), Deposit(2), Balance(), Deposit(3), Balance()]


async def test_the_events_of_one_persist_are_stored_together_and_applied_in_order() -> (
    None
):
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount)
        assert await account.ask(DepositMany([1, 2, 3])) == 6
        assert journal.calls["append"] == 1
        assert await account.ask(Withdraw(4)) == 2
    assert [e.sequence_nr for e in journal.events("account-alice")] == [1, 2, 3, 4]


async def test_a_reply_or_none_stores_nothing() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount)
        assert await account.ask(Balance()) == 0
        with pytest.raises(InsufficientFunds):  # an ErrorReply, no failure
            await account.ask(Withdraw(1))
        assert system.failures == 0
    assert journal.events("account-alice") == []
    assert "append" not in journal.calls


@dataclass
class Log:
    text: str


class Diary(EventSourcedActor[Any, Log, list[str]]):
    """Side effects recorded in ``seen`` with the state they were given."""

    codec = Codec(Log)

    def __init__(self, seen: list[Any]) -> None:
        self.persistence_id = "diary"
        self.seen = seen

    def empty_state(self) -> list[str]:
        return []

    def on_command(self, state: list[str], command: Any) -> Effect[Log, list[str]]:
        seen = self.seen
        if command == "write":
            return (
                Effect.persist(Log("a"), Log("b"))
                .then_run(lambda s: seen.append(("run 1", list(s))))
                .then_reply(lambda s: len(s))
                .then_run(self._async_effect)
            )
        if command == "write and stop":
            return Effect.persist(Log("z")).then_stop()
        if command == "stash":
            if "u" in state:
                return Effect.reply(list(state))
            return Effect.stash()
        if command == "unstash":
            return Effect.persist(Log("u")).then_unstash_all()
        if command == "no effect":
            return "not an effect"  # type: ignore[return-value]
        if command == "state effect":
            return StateEffect.none()  # type: ignore[return-value]
        seen.append(("command", command, list(state)))
        return Effect.reply(list(state))

    async def _async_effect(self, state: list[str]) -> None:
        await anyio.lowlevel.checkpoint()
        self.seen.append(("run 2", list(state)))

    def on_event(self, state: list[str], event: Log) -> list[str]:
        return [*state, event.text]


async def test_side_effects_run_in_order_after_the_persist_with_the_new_state() -> None:
    seen: list[Any] = []
    async with ActorSystem(journal=MemoryJournal()) as system:
        diary = system.spawn(Diary, seen)
        assert await diary.ask("write") == 2
    assert seen == [("run 1", ["a", "b"]), ("run 2", ["a", "b"])]


async def test_persist_then_stop_stores_the_event_and_then_stops() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        diary = system.spawn(Diary, [])
        await diary.ask("write and stop")
        assert await diary.join() is StopReason.NORMAL
    assert [e.sequence_nr for e in journal.events("diary")] == [1]


async def test_stop_effect_stops_without_storing() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount)
        assert await account.ask(Close()) is None
        assert await account.join() is StopReason.NORMAL
    assert journal.events("account-alice") == []


async def test_a_stashed_command_is_handled_after_a_later_unstash() -> None:
    seen: list[Any] = []
    async with ActorSystem(journal=MemoryJournal()) as system:
        diary = system.spawn(Diary, seen)
        async with anyio.create_task_group() as tg:
            answers: list[Any] = []

            async def ask_stashed() -> None:
                answers.append(await diary.ask("stash"))

            tg.start_soon(ask_stashed)
            await wait_all_blocked()
            assert answers == []  # stashed: not answered yet
            diary.tell("unstash")
        # Unstashed after the persist, handled again with the new state.
        assert answers == [["u"]]


async def test_an_unhandled_command_is_a_dead_letter_and_the_asker_learns_it() -> None:
    async with ActorSystem(journal=MemoryJournal()) as system:
        account = system.spawn(BankAccount)
        with pytest.raises(UnhandledMessage):
            await account.ask("what is this")
        assert system.dead_letters.count == 1
        assert system.dead_letters.recent[-1].reason == "unhandled"
        assert system.failures == 0


@pytest.mark.parametrize("command", ["no effect", "state effect"])
async def test_on_command_must_return_an_effect(command: str) -> None:
    async with ActorSystem(journal=MemoryJournal()) as system:
        diary = system.spawn(Diary, [], restart="temporary")
        with pytest.raises(TypeError, match="returns an Effect"):
            await diary.ask(command)
        reason = await diary.join()
        assert isinstance(reason, TypeError)


def test_a_durable_actor_cannot_define_receive() -> None:
    with pytest.raises(TypeError, match="on_command"):

        class Wrong(BankAccount):
            def receive(self, message: Any) -> Any:
                return message


async def test_the_last_sequence_number_follows_the_events() -> None:
    seqs: list[int] = []

    class Numbered(BankAccount):
        def on_event(self, state: Account, event: Any) -> Account:
            seqs.append(self.last_sequence_nr)
            return super().on_event(state, event)

    async with ActorSystem(journal=MemoryJournal()) as system:
        account = system.spawn(Numbered)
        await account.ask(Deposit(1))
        await account.ask(DepositMany([1, 1]))
    # on_event runs before the append returns: it sees the number before.
    assert seqs == [0, 1, 1]


async def test_the_journal_may_be_the_actors_own() -> None:
    own = MemoryJournal()

    class Own(BankAccount):
        journal = own

    async with ActorSystem() as system:
        account = system.spawn(Own)
        assert await account.ask(Deposit(3)) == 3
    assert [e.sequence_nr for e in own.events("account-alice")] == [1]


class _Echo(Actor[Any]):
    def receive(self, message: Any) -> Any:
        return message


class _Missing(EventSourcedActor[Any, Any, int]):
    codec = Codec(Deposited)

    def empty_state(self) -> int:
        return 0


class _NoId(_Missing):
    pass


class _BadId(_Missing):
    def __init__(self) -> None:
        self.persistence_id = "tab\there"


class _NoCodec(EventSourcedActor[Any, Any, int]):
    def __init__(self) -> None:
        self.persistence_id = "x"


class _NoJournal(_Missing):
    def __init__(self) -> None:
        self.persistence_id = "x"


@pytest.mark.parametrize(
    ("cls", "journal", "error", "match"),
    [
        (_NoId, MemoryJournal(), TypeError, "persistence_id"),
        (_BadId, MemoryJournal(), ValueError, "control characters"),
        (_NoCodec, MemoryJournal(), TypeError, "no codec"),
        (_NoJournal, None, TypeError, "ActorSystem\\(journal="),
        (_NoJournal, "a journal", TypeError, "ActorSystem\\(journal="),
    ],
)
async def test_a_durable_actor_missing_what_it_needs_fails_with_a_clear_error(
    cls: type, journal: Any, error: type[Exception], match: str
) -> None:
    # Found as the instance is built, inside spawn (the factory's errors are
    # spawn's): spawn raises, nothing starts, the system goes on.
    async with ActorSystem(journal=journal, log_failures=False) as system:
        with pytest.raises(error, match=match):
            system.spawn(cls)
        with pytest.raises(error, match=match):
            system.spawn(lambda: cls())  # a factory's instance: the same
        assert system.dead_letters.count == 0
        assert await system.spawn(_Echo).ask("still up") == "still up"


async def test_a_durable_actor_built_outside_the_runtime_is_checked_when_spawned() -> (
    None
):
    # Made first, its journal set afterwards (as a test kit does): the check
    # runs once the factory has returned, so the factory's own settings count.
    journal = MemoryJournal()

    def made() -> BankAccount:
        actor = BankAccount("bob")
        actor.journal = journal
        return actor

    async with ActorSystem(log_failures=False) as system:  # no journal
        with pytest.raises(TypeError, match="ActorSystem\\(journal="):
            system.spawn(BankAccount, "bob")
        assert await system.spawn(made).ask(Deposit(2)) == 2
    assert [e.sequence_nr for e in journal.events("account-bob")] == [1]
