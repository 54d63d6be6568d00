"""One SQLite file for events, snapshots and durable state.

A shopping cart is event-sourced with snapshots every 3 events (the latest 2
kept, the events before the older one deleted); a visit counter is a durable
state actor (the whole state stored by key, with a revision). Both live in one
SqliteJournal; a second system on the same file recovers them.
"""

import os
import tempfile
from dataclasses import dataclass, field

import anyio

from actors import ActorSystem, Request
from actors.persistence import (
    Codec,
    DurableStateActor,
    Effect,
    EventSourcedActor,
    Snapshots,
    SqliteJournal,
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
        path = os.path.join(directory, "app.db")
        # synchronous="FULL" (the default) syncs every commit to disk: an
        # answered write survives a power cut. "NORMAL" survives a crash of
        # the process, not of the machine, for one fsync less per batch.
        async with (
            SqliteJournal(path, synchronous="FULL") as journal,
            ActorSystem(journal=journal) as system,
        ):
            cart = system.spawn(CartActor, "alice")
            for item in ("apple", "bread", "cheese", "dates", "eggs", "figs", "grapes"):
                await cart.ask(AddItem(item))
            counter = system.spawn(VisitCounter, "home")
            for _ in range(3):
                await counter.ask(Visit())
            snapshot = await journal.latest_snapshot("cart-alice")
            assert snapshot is not None
            events = await journal.read_events("cart-alice", 1)
            print(f"latest snapshot at event {snapshot.sequence_nr}")
            print(f"events kept: {[event.sequence_nr for event in events]}")
            state = await journal.get_state("visits-home")
            assert state is not None
            print(f"visits-home: revision {state.revision}")
        async with (
            SqliteJournal(path) as journal,
            ActorSystem(journal=journal) as system,
        ):
            cart = system.spawn(CartActor, "alice")
            print(f"recovered cart: {await cart.ask(AddItem('honey'))}")
            counter = system.spawn(VisitCounter, "home")
            print(f"recovered visits: {await counter.ask(Visit())}")


if __name__ == "__main__":
    anyio.run(main)
