"""Durable actors among the runtime's other signals: stops, teardowns,
timers and Terminated during and around persists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorStopped,
    ActorSystem,
    StopReason,
    Terminated,
)
from actors.persistence import Codec, Effect, EventSourcedActor, MemoryJournal
from actors.testing import wait_all_blocked

from ._model import Balance, BankAccount, Deposit, GatedJournal

pytestmark = pytest.mark.anyio


async def test_a_stop_during_a_persist_lets_it_finish_and_answer() -> None:
    journal = GatedJournal()
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount)
        answers: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def deposit() -> None:
                answers.append(await account.ask(Deposit(3)))

            tg.start_soon(deposit)
            await wait_all_blocked()
            account.stop()  # checked between messages: after this persist
            journal.gate.set()
        assert answers == [3]
        assert await account.join() is StopReason.NORMAL
    assert [e.sequence_nr for e in journal.events("account-alice")] == [1]


async def test_leaving_the_system_during_a_persist_cancels_it() -> None:
    journal = GatedJournal()  # the gate never opens
    outcome: list[BaseException] = []
    async with (
        anyio.create_task_group() as outer,
        ActorSystem(
            journal=journal, shutdown_timeout=0.1, log_failures=False
        ) as system,
    ):
        account = system.spawn(BankAccount)

        async def deposit() -> None:
            try:
                await account.ask(Deposit(3), timeout=30)
            except ActorStopped as exc:
                outcome.append(exc)

        outer.start_soon(deposit)
        await wait_all_blocked()
        assert journal.waiting == 1
        # Left: the graceful stop waited 0.1 s, then cancelled the actor.
    assert len(outcome) == 1
    assert journal.events("account-alice") == []  # cancelled before it stored


@dataclass
class Tick:
    pass


@dataclass
class Ticked:
    pass


class Clocked(EventSourcedActor[Any, Ticked, int]):
    """Persists a Ticked per timer firing; records Terminated of a watched
    actor as an event too."""

    codec = Codec(Ticked)

    def __init__(self, watched: Any = None) -> None:
        self.persistence_id = "clocked"
        self.watched = watched

    def on_start(self) -> None:
        self.context.timers.start_single("tick", Tick(), 0.0)
        if self.watched is not None:
            self.context.watch(self.watched)

    def empty_state(self) -> int:
        return 0

    def on_command(self, state: int, command: Any) -> Effect[Ticked, int]:
        if isinstance(command, Tick | Terminated):
            return Effect.persist(Ticked())
        if command == "count":
            return Effect.reply(state)
        return Effect.unhandled()

    def on_event(self, state: int, event: Ticked) -> int:
        return state + 1


class Quiet(Actor):
    pass


async def test_timer_firings_and_terminated_are_commands_too() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        quiet = system.spawn(Quiet)
        clocked = system.spawn(Clocked, quiet)
        quiet.stop()
        await quiet.join()
        with anyio.fail_after(10):
            while await clocked.ask("count") < 2:
                await wait_all_blocked()
    assert len(journal.events("clocked")) == 2


async def test_a_subclass_on_start_that_sets_timers_runs_after_recovery() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        clocked = system.spawn(Clocked)
        with anyio.fail_after(10):
            while await clocked.ask("count") < 1:
                await wait_all_blocked()
    async with ActorSystem(journal=journal) as system:
        clocked = system.spawn(Clocked)  # recovers 1, then its timer adds one
        with anyio.fail_after(10):
            while await clocked.ask("count") < 2:
                await wait_all_blocked()
        assert await clocked.ask("count") == 2


async def test_many_accounts_in_one_system_keep_their_own_logs() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        accounts = [system.spawn(BankAccount, f"a{i}") for i in range(20)]
        async with anyio.create_task_group() as tg:
            for i, account in enumerate(accounts):
                for _ in range(i + 1):
                    tg.start_soon(account.ask, Deposit(1))
        for i, account in enumerate(accounts):
            assert await account.ask(Balance()) == i + 1
    for i in range(20):
        assert [e.sequence_nr for e in journal.events(f"account-a{i}")] == list(
            range(1, i + 2)
        )
