"""Actors the persistence tests share: a bank account (event-sourced) and a
counter (durable state)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from actors import ErrorReply, Request
from actors.persistence import (
    Codec,
    DurableStateActor,
    Effect,
    EventSourcedActor,
    MemoryJournal,
    StateEffect,
    StoredEvent,
)

# -- the account -----------------------------------------------------------------


@dataclass
class Deposit(Request[int]):
    amount: int


@dataclass
class Withdraw(Request[int]):
    amount: int


@dataclass
class DepositMany(Request[int]):
    amounts: list[int]


@dataclass
class Balance(Request[int]):
    pass


@dataclass
class Close(Request[None]):
    pass


@dataclass
class Deposited:
    amount: int


@dataclass
class Withdrew:
    amount: int


@dataclass
class Account:
    balance: int = 0
    history: list[int] = field(default_factory=list)


class InsufficientFunds(Exception):
    pass


class BankAccount(EventSourcedActor[Any, Any, Account]):
    """Deposits and withdrawals; a withdrawal beyond the balance is refused."""

    codec = Codec(Deposited, Withdrew, Account)

    def __init__(self, name: str = "alice", log: list[Any] | None = None) -> None:
        self.persistence_id = f"account-{name}"
        self.log = log if log is not None else []

    def empty_state(self) -> Account:
        return Account()

    def on_command(self, state: Account, command: Any) -> Effect[Any, Account]:
        self.log.append(("command", command))
        match command:
            case Deposit(amount):
                return Effect.persist(Deposited(amount)).then_reply(lambda s: s.balance)
            case DepositMany(amounts):
                return Effect.persist(*[Deposited(a) for a in amounts]).then_reply(
                    lambda s: s.balance
                )
            case Withdraw(amount) if amount > state.balance:
                return Effect.reply(_refusal(state.balance))
            case Withdraw(amount):
                return Effect.persist(Withdrew(amount)).then_reply(lambda s: s.balance)
            case Balance():
                return Effect.reply(state.balance)
            case Close():
                return Effect.stop()
        return Effect.unhandled()

    def on_event(self, state: Account, event: Any) -> Account:
        match event:
            case Deposited(amount):
                return Account(state.balance + amount, [*state.history, amount])
            case Withdrew(amount):
                return Account(state.balance - amount, [*state.history, -amount])
        raise AssertionError(f"unknown event {event!r}")

    def on_recovery_completed(self, state: Account) -> None:
        self.log.append(("recovered", state.balance, self.last_sequence_nr))


def _refusal(balance: int) -> Any:
    return ErrorReply(InsufficientFunds(f"the balance is {balance}"))


# -- the counter ----------------------------------------------------------------


@dataclass
class Add(Request[int]):
    n: int


@dataclass
class Reset(Request[int]):
    pass


@dataclass
class Count:
    value: int = 0


class Counter(DurableStateActor[Any, Count]):
    codec = Codec(Count)

    def __init__(self, name: str = "c") -> None:
        self.persistence_id = f"counter-{name}"

    def empty_state(self) -> Count:
        return Count()

    def on_command(self, state: Count, command: Any) -> StateEffect[Count]:
        match command:
            case Add(n):
                return StateEffect.persist(Count(state.value + n)).then_reply(
                    lambda s: s.value
                )
            case Reset():
                return StateEffect.delete().then_reply(lambda s: s.value)
            case "get":
                return StateEffect.reply(state.value)
        return StateEffect.unhandled()


# -- journals the tests hold back ----------------------------------------------


class GatedJournal(MemoryJournal):
    """A MemoryJournal whose appends (and, if ``gate_reads``, reads) wait for
    ``gate`` to open: a write in flight, for as long as a test needs."""

    def __init__(self, gate_reads: bool = False) -> None:
        super().__init__()
        self.gate = anyio.Event()
        self.gate_reads = gate_reads
        self.waiting = 0

    async def _hold(self) -> None:
        self.waiting += 1
        try:
            await self.gate.wait()
        finally:
            self.waiting -= 1

    async def append(
        self, persistence_id: str, events: Sequence[StoredEvent], expected: int
    ) -> None:
        await self._hold()
        await super().append(persistence_id, events, expected)

    async def read_events(
        self,
        persistence_id: str,
        from_sequence_nr: int,
        to_sequence_nr: int | None = None,
        limit: int | None = None,
    ) -> list[StoredEvent]:
        if self.gate_reads:
            await self._hold()
        return await super().read_events(
            persistence_id, from_sequence_nr, to_sequence_nr, limit
        )
