"""The account the testing examples test (the tutorial's, without printing)."""

from dataclasses import dataclass

from actors import ErrorReply, Request
from actors.persistence import Codec, Effect, EventSourcedActor


@dataclass
class Deposit(Request[int]):
    amount: int


@dataclass
class Withdraw(Request[int]):
    amount: int


@dataclass
class Deposited:
    amount: int


@dataclass
class Withdrew:
    amount: int


@dataclass
class Balance:
    total: int = 0


class InsufficientFunds(Exception):
    pass


class Account(EventSourcedActor[Deposit | Withdraw, Deposited | Withdrew, Balance]):
    codec = Codec(Deposited, Withdrew, Balance)

    def __init__(self, owner: str) -> None:
        self.persistence_id = f"account-{owner}"

    def empty_state(self) -> Balance:
        return Balance()

    def on_command(
        self, state: Balance, command: Deposit | Withdraw
    ) -> Effect[Deposited | Withdrew, Balance]:
        match command:
            case Deposit(amount):
                return Effect.persist(Deposited(amount)).then_reply(lambda s: s.total)
            case Withdraw(amount) if amount > state.total:
                return Effect.reply(ErrorReply(InsufficientFunds(f"{state.total}")))
            case Withdraw(amount):
                return Effect.persist(Withdrew(amount)).then_reply(lambda s: s.total)

    def on_event(self, state: Balance, event: Deposited | Withdrew) -> Balance:
        match event:
            case Deposited(amount):
                return Balance(state.total + amount)
            case Withdrew(amount):
                return Balance(state.total - amount)
