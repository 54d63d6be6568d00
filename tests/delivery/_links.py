"""Fault injection between a producer controller and a consumer controller:
``Link`` actors that forward the protocol's messages and lose, duplicate or
reorder some of them, seeded, and an ``Effects`` consumer that records what
its handler saw."""

from __future__ import annotations

import random
from typing import Any

import anyio
import msgspec

from actors import Actor, ActorRef
from actors.delivery import Delivery


class Faults:
    """What a link does to each message: lose it (``drop``), send it twice
    (``duplicate``), or hold it back behind the next one (``reorder``), each
    a probability."""

    def __init__(
        self, seed: int, drop: float = 0.0, duplicate: float = 0.0, reorder: float = 0.0
    ) -> None:
        self.rng = random.Random(seed)
        self.drop = drop
        self.duplicate = duplicate
        self.reorder = reorder
        self.dropped = 0
        self.duplicated = 0
        self.reordered = 0


class Link(Actor[Any]):
    """Forwards to ``target`` with faults; the ref fields named in
    ``rewrite`` are replaced (so that answers come back through the other
    link)."""

    def __init__(self, target: ActorRef[Any], faults: Faults) -> None:
        self.target = target
        self.faults = faults
        self.rewrite: dict[str, ActorRef[Any]] = {}
        self.held: object | None = None

    def receive(self, message: object) -> None:
        if isinstance(message, tuple) and message[0] == "rewrite":
            self.rewrite[message[1]] = message[2]
            return
        changes = {
            field: ref for field, ref in self.rewrite.items() if hasattr(message, field)
        }
        if changes and isinstance(message, msgspec.Struct):
            message = msgspec.structs.replace(message, **changes)
        faults, rng = self.faults, self.faults.rng
        if rng.random() < faults.drop:
            faults.dropped += 1
            return
        if self.held is None and rng.random() < faults.reorder:
            faults.reordered += 1
            self.held = message
            return
        self.target.tell(message)
        if rng.random() < faults.duplicate:
            faults.duplicated += 1
            self.target.tell(message)
        if self.held is not None:
            held, self.held = self.held, None
            self.target.tell(held)


class Effects:
    """What a consumer's handler saw, shared with the test."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, Any]] = []
        self.changed = anyio.Event()
        self.fail_next = 0
        self.gate: anyio.Event | None = None
        #: The handler yields once per message (as one doing I/O would).
        self.yields = False

    def add(self, delivery: Delivery[Any]) -> None:
        self.seen.append((delivery.producer_id, delivery.seq_nr, delivery.message))
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_count(self, count: int) -> None:
        while len(self.seen) < count:
            await self.changed.wait()


class Consumer(Actor[Delivery[Any]]):
    """Records each delivery; fails ``effects.fail_next`` times first; waits
    for ``effects.gate`` when one is set, yields once when ``effects.yields``;
    returns ``("done", message)``."""

    def __init__(self, effects: Effects) -> None:
        self.effects = effects

    async def receive(self, delivery: Delivery[Any]) -> Any:
        effects = self.effects
        if effects.gate is not None:
            await effects.gate.wait()
        if effects.yields:
            await anyio.lowlevel.checkpoint()
        if effects.fail_next > 0:
            effects.fail_next -= 1
            raise RuntimeError("the handler failed")
        effects.add(delivery)
        return ("done", delivery.message)
