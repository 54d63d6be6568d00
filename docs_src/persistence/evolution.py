"""Schema evolution: events written by an older class recover with the new one.

Release 1 stored ``Deposited(amount)``. Release 2 adds a required ``currency``:
it registers the class at version 2 and an adapter from version 1, which turns
an old event's plain value (a dict) into the new one. Both codecs use the same
tag, "Deposited", so the stored manifest ("Deposited@1") finds the new class.
"""

from dataclasses import dataclass, field
from typing import Any

import anyio

from actors import ActorSystem, Request
from actors.persistence import Codec, Effect, EventSourcedActor, MemoryJournal

# -- release 1 ----------------------------------------------------------------


@dataclass
class DepositedV1:
    amount: int


release_1 = Codec()
release_1.register(DepositedV1, tag="Deposited")  # version 1

# -- release 2 ----------------------------------------------------------------


@dataclass
class Deposited:
    amount: int
    currency: str


release_2 = Codec()
release_2.register(Deposited, tag="Deposited", version=2)


@release_2.adapter("Deposited", version=1)
def _in_euros(old: dict[str, Any]) -> dict[str, Any]:
    return {**old, "currency": "EUR"}  # release 1 only knew euros


@dataclass
class Deposit(Request[dict[str, int]]):
    event: Any


@dataclass
class Balances:
    totals: dict[str, int] = field(default_factory=dict)


class Wallet(EventSourcedActor[Deposit, Any, Balances]):
    def __init__(self) -> None:
        self.persistence_id = "wallet-1"

    def empty_state(self) -> Balances:
        return Balances()

    def on_command(self, state: Balances, command: Deposit) -> Effect[Any, Balances]:
        return Effect.persist(command.event).then_reply(lambda s: s.totals)

    def on_event(self, state: Balances, event: Any) -> Balances:
        currency = getattr(event, "currency", "EUR")
        totals = dict(state.totals)
        totals[currency] = totals.get(currency, 0) + event.amount
        return Balances(totals)


class WalletV1(Wallet):
    codec = release_1


class WalletV2(Wallet):
    codec = release_2


async def main() -> None:
    journal = MemoryJournal()  # any journal: the codec is the actor's
    async with ActorSystem(journal=journal) as system:
        wallet = system.spawn(WalletV1)
        await wallet.ask(Deposit(DepositedV1(10)))
        print(f"release 1 stored: {await wallet.ask(Deposit(DepositedV1(5)))}")
    async with ActorSystem(journal=journal) as system:
        wallet = system.spawn(WalletV2)  # recovers the version 1 events
        totals = await wallet.ask(Deposit(Deposited(7, "USD")))
        print(f"release 2 recovered and stored: {totals}")
    manifests = [event.manifest for event in journal.events("wallet-1")]
    print(f"manifests in the journal: {manifests}")


if __name__ == "__main__":
    anyio.run(main)
