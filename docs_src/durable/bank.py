"""A bank account that survives kill -9.

The account is an event-sourced actor: its commands become events, stored in a
SQLite file before the ask is answered; its state is the fold of its events.
main() runs the account in a child process, which deposits three times and is
then killed with SIGKILL, and recovers the account in this process.
"""

import os
import signal
import sys
import tempfile
from dataclasses import dataclass

import anyio
from anyio.streams.text import TextReceiveStream

from actors import ActorSystem, ErrorReply, Request
from actors.persistence import Codec, Effect, EventSourcedActor, SqliteJournal

# -- commands (what is asked) and events (what happened) ------------------------


@dataclass
class Deposit(Request[int]):  # the reply: the new balance
    amount: int


@dataclass
class Withdraw(Request[int]):
    amount: int


@dataclass
class GetBalance(Request[int]):
    pass


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


Command = Deposit | Withdraw | GetBalance
Event = Deposited | Withdrew


class Account(EventSourcedActor[Command, Event, Balance]):
    codec = Codec(Deposited, Withdrew, Balance)  # what is stored, by tag

    def __init__(self, owner: str) -> None:
        self.persistence_id = f"account-{owner}"

    def empty_state(self) -> Balance:
        return Balance()

    def on_command(self, state: Balance, command: Command) -> Effect[Event, Balance]:
        match command:
            case Deposit(amount):
                return Effect.persist(Deposited(amount)).then_reply(lambda s: s.total)
            case Withdraw(amount) if amount > state.total:
                refused = InsufficientFunds(f"the balance is {state.total}")
                return Effect.reply(ErrorReply(refused))
            case Withdraw(amount):
                return Effect.persist(Withdrew(amount)).then_reply(lambda s: s.total)
            case GetBalance():
                return Effect.reply(state.total)

    def on_event(self, state: Balance, event: Event) -> Balance:
        match event:
            case Deposited(amount):
                return Balance(state.total + amount)
            case Withdrew(amount):
                return Balance(state.total - amount)

    def on_recovery_completed(self, state: Balance) -> None:
        print(f"{self.persistence_id} recovered: balance {state.total}")


async def child(path: str) -> None:
    """The process that is killed: three deposits, then it waits."""
    async with SqliteJournal(path) as journal, ActorSystem(journal=journal) as system:
        account = system.spawn(Account, "alice")
        for amount in (100, 20, 5):
            balance = await account.ask(Deposit(amount))  # stored once answered
            print(f"deposited {amount}: balance {balance}")
        print("waiting to be killed")
        sys.stdout.flush()
        await anyio.sleep_forever()


async def main() -> None:
    path = os.environ.get("BANK_JOURNAL")
    if path:  # we are the child
        await child(path)
        return
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "bank.db")
        command = [sys.executable, __file__]
        env = {**os.environ, "BANK_JOURNAL": path}
        async with await anyio.open_process(command, env=env) as process:
            assert process.stdout is not None
            buffered = ""
            async for text in TextReceiveStream(process.stdout):
                buffered += text
                if "waiting to be killed" in buffered:
                    break
            for line in buffered.splitlines():
                print(f"child: {line}")
            process.send_signal(signal.SIGKILL)  # no goodbye of any kind
            await process.wait()
        print(f"the child was killed (exit status {process.returncode})")
        async with (
            SqliteJournal(path) as journal,
            ActorSystem(journal=journal) as system,
        ):
            account = system.spawn(Account, "alice")
            print(f"balance: {await account.ask(GetBalance())}")
            try:
                await account.ask(Withdraw(500))
            except InsufficientFunds as exc:
                print(f"withdraw 500: refused ({exc})")
            print(f"withdraw 25: balance {await account.ask(Withdraw(25))}")


if __name__ == "__main__":
    anyio.run(main)
