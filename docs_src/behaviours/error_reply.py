"""An account refuses a withdrawal with an error reply: the asker gets the
exception; the actor does not fail."""

from dataclasses import dataclass
from typing import Any

import anyio

from actors import Actor, ActorSystem, ErrorReply


class InsufficientFunds(Exception):
    pass


@dataclass
class Withdraw:
    amount: int


class Account(Actor):
    def __init__(self, balance: int) -> None:
        self.balance = balance

    def receive(self, message: Any) -> Any:
        match message:
            case Withdraw(amount) if amount > self.balance:
                return ErrorReply(InsufficientFunds(f"balance {self.balance}"))
            case Withdraw(amount):
                self.balance -= amount
                return self.balance
        return super().receive(message)


async def main() -> None:
    async with ActorSystem() as system:
        account = system.spawn(Account, 100)
        try:
            await account.ask(Withdraw(500))
        except InsufficientFunds as exc:
            refused = str(exc)
        assert refused == "balance 100"
        assert await account.ask(Withdraw(30)) == 70  # the same instance
        assert (system.failures, system.restarts) == (0, 0)


if __name__ == "__main__":
    anyio.run(main)
