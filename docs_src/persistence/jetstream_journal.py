"""Durable actors on NATS JetStream: events in a stream, snapshots and
durable states in key-value buckets, all on files of the nats-server.

A shopping cart is event-sourced with snapshots every 3 events; a visit
counter is a durable state actor. The nats-server is killed (SIGKILL) and
started again on the same store directory; a new system recovers both.
"""

import os
import tempfile
from dataclasses import dataclass, field

import anyio
import anyio.to_thread

from actors import ActorSystem, Request
from actors.nats import embedded_nats_server
from actors.persistence import (
    Codec,
    DurableStateActor,
    Effect,
    EventSourcedActor,
    JetStreamJournal,
    Snapshots,
    StateEffect,
)


@dataclass
class AddItem(Request[list[str]]):
    item: str


@dataclass
class ItemAdded:
    item: str


@dataclass
class Cart:
    items: list[str] = field(default_factory=list)


class CartActor(EventSourcedActor[AddItem, ItemAdded, Cart]):
    codec = Codec(ItemAdded, Cart)
    snapshots = Snapshots(every=3, keep=2, delete_events=True)

    def __init__(self, owner: str) -> None:
        self.persistence_id = f"cart-{owner}"

    def empty_state(self) -> Cart:
        return Cart()

    def on_command(self, state: Cart, command: AddItem) -> Effect[ItemAdded, Cart]:
        return Effect.persist(ItemAdded(command.item)).then_reply(lambda s: s.items)

    def on_event(self, state: Cart, event: ItemAdded) -> Cart:
        return Cart([*state.items, event.item])


@dataclass
class Visit(Request[int]):
    pass


@dataclass
class Visits:
    count: int = 0


class VisitCounter(DurableStateActor[Visit, Visits]):
    codec = Codec(Visits)

    def __init__(self, page: str) -> None:
        self.persistence_id = f"visits-{page}"

    def empty_state(self) -> Visits:
        return Visits()

    def on_command(self, state: Visits, command: Visit) -> StateEffect[Visits]:
        return StateEffect.persist(Visits(state.count + 1)).then_reply(
            lambda s: s.count
        )


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        store = os.path.join(directory, "jetstream")
        # A nats-server with JetStream on a store directory of its own (in
        # production: your NATS server or cluster, started with -js).
        async with embedded_nats_server(store_dir=store) as server:
            async with (
                JetStreamJournal(server.url, stream="SHOP") as journal,
                ActorSystem(journal=journal) as system,
            ):
                cart = system.spawn(CartActor, "alice")
                for item in ("apple", "bread", "cheese", "dates", "eggs"):
                    await cart.ask(AddItem(item))
                counter = system.spawn(VisitCounter, "home")
                for _ in range(3):
                    await counter.ask(Visit())
                snapshot = await journal.latest_snapshot("cart-alice")
                assert snapshot is not None
                print(f"latest snapshot at event {snapshot.sequence_nr}")
                highest = await journal.highest_sequence_nr("cart-alice")
                print(f"highest event: {highest}")
            # kill -9 the server, then start it again on the same files.
            await anyio.to_thread.run_sync(lambda: server.stop(kill=True))
            await anyio.to_thread.run_sync(server.start)
            async with (
                JetStreamJournal(server.url, stream="SHOP") as journal,
                ActorSystem(journal=journal) as system,
            ):
                cart = system.spawn(CartActor, "alice")
                print(f"recovered cart: {await cart.ask(AddItem('figs'))}")
                counter = system.spawn(VisitCounter, "home")
                print(f"recovered visits: {await counter.ask(Visit())}")


if __name__ == "__main__":
    anyio.run(main)
