"""A sharded account service on two nodes of one process.

Accounts are entities: event-sourced actors addressed by key. Two Sharding
nodes share one placement store; each account lives on one of them, started
by its first message. Node "b" then leaves gracefully: its accounts are
handed off to node "a", which recovers them from the journal.
"""

from dataclasses import dataclass
from typing import Any

import anyio

from actors import ActorSystem, Request
from actors.persistence import Codec, Effect, EventSourcedActor, MemoryJournal
from actors.sharding import Entity, MemoryPlacementStore, Sharding


@dataclass
class Deposit(Request[int]):  # the reply: the new balance
    amount: int


@dataclass
class GetBalance(Request[int]):
    pass


@dataclass
class Deposited:
    amount: int


class Account(EventSourcedActor[Any, Deposited, int]):
    codec = Codec(Deposited)

    def __init__(self, key: str) -> None:  # the factory gets the entity's key
        self.persistence_id = f"account-{key}"

    def empty_state(self) -> int:
        return 0

    def on_command(self, state: int, command: Any) -> Effect[Deposited, int]:
        match command:
            case Deposit(amount):
                return Effect.persist(Deposited(amount)).then_reply(lambda s: s)
            case GetBalance():
                return Effect.reply(state)
        return Effect.unhandled()

    def on_event(self, state: int, event: Deposited) -> int:
        return state + event.amount


ACCOUNT = Entity("account", Account, shards=16, passivate_after=60.0)


async def main() -> None:
    store = MemoryPlacementStore(ttl=10.0)  # leases live 10 s unless renewed
    async with (
        ActorSystem(journal=MemoryJournal()) as system,
        Sharding(system, [ACCOUNT], store=store, node="a") as a,
    ):
        b = Sharding(system, [ACCOUNT], store=store.connect(), node="b")
        async with b:
            await anyio.wait_all_tasks_blocked()  # both nodes have joined
            for n in range(10):
                # From either node, the same account: wherever it lives.
                node = a if n % 2 else b
                await node.entity_ref(ACCOUNT, f"acct-{n}").ask(Deposit(10 * n))
            on_b = b.statistics().shards_per_node["account"]["b"]
            print("b hosts shards:", on_b > 0)
        # b has left: its shards were handed off, a recovers their accounts.
        balances = [
            await a.entity_ref(ACCOUNT, f"acct-{n}").ask(GetBalance())
            for n in range(10)
        ]
        print("balances:", balances)
        print("b handed all its shards off:", b.statistics().hand_offs == on_b)


if __name__ == "__main__":
    anyio.run(main)
