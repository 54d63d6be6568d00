from dataclasses import dataclass

import anyio

from actors import Actor, ActorSystem, Request


@dataclass
class Deposit(Request[int]):  # the reply: the new balance
    amount: int


@dataclass
class Withdraw(Request[bool]):  # the reply: whether it went through
    amount: int


@dataclass
class Balance(Request[int]):
    pass


class Account(Actor):
    def __init__(self) -> None:
        self.balance = 0

    def receive(self, message: Deposit | Withdraw | Balance) -> int | bool:
        match message:
            case Deposit(amount):
                self.balance += amount
                return self.balance
            case Withdraw(amount):
                if amount > self.balance:
                    return False  # an answer, not a failure
                self.balance -= amount
                return True
            case Balance():
                return self.balance


async def main() -> None:
    async with ActorSystem() as system:
        account = system.spawn(Account, name="account")
        print("balance after deposit:", await account.ask(Deposit(100)))
        print("withdraw 30:", await account.ask(Withdraw(30)))
        print("withdraw 500:", await account.ask(Withdraw(500)))
        print("balance:", await account.ask(Balance(), timeout=1.0))


if __name__ == "__main__":
    anyio.run(main)
