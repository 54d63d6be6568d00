"""The lease guard: an entity handles a message only while its node holds the
lease of its shard, valid on its own clock; past it (a process stopped and
resumed after its lease expired, before its fence ran) the message is not
handled: an ask gets a ShardingError, the message counts as dropped."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from actors import Actor, ActorSystem, ErrorReply
from actors.sharding import Entity, MemoryPlacementStore, ShardingError
from actors.sharding._guard import guard
from actors.sharding._state import TypeState
from actors.sharding.lowlevel import Leases
from actors.testing import ManualClock

from ._entities import EventSourcedCounter, Log, Recorder, recorders

pytestmark = pytest.mark.anyio


async def test_an_entity_handles_messages_only_within_its_lease() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    log = Log()
    entity = Entity("t", recorders(log), shards=4)
    types = TypeState(entity, "a", ActorSystem(), clock.now)
    leases = Leases(store, "t", "a", clock.now, 2.5)
    make = guard(entity.factory, types, leases, 1)
    actor: Any = make("k")
    assert isinstance(actor, Recorder)
    refused = actor.receive("before the lease")
    assert isinstance(refused, ErrorReply)
    assert isinstance(refused.error, ShardingError)
    assert await leases.acquire(1)
    assert actor.receive("within") == 1
    await clock.advance(7.4)
    assert actor.receive("still within") == 2
    await clock.advance(0.1)  # valid until 10 - 2.5 = 7.5 s: given up now
    assert isinstance(actor.receive("past it"), ErrorReply)
    assert log.handled["k"] == ["within", "still within"]
    assert types.dropped == 2


async def test_a_durable_entity_is_guarded_too() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    entity = Entity("c", EventSourcedCounter, shards=4)
    types = TypeState(entity, "a", ActorSystem(), clock.now)
    leases = Leases(store, "c", "a", clock.now, 2.5)
    actor: Any = guard(entity.factory, types, leases, 0)("k")
    assert isinstance(actor, EventSourcedCounter)
    refused = await actor.receive("anything")
    assert isinstance(refused, ErrorReply)


class Switching(Actor[Any]):
    """Takes the ``sync`` behaviour in ``__init__``; ``"async"`` switches to
    an async one, ``"push"`` pushes a sync one above it, ``"pop"``
    unbecomes. Each behaviour answers its name and logs the message."""

    def __init__(self, key: str, log: Log) -> None:
        self.log = log
        self.key = key
        self.become(self.sync)

    def _seen(self, name: str, message: Any) -> str:
        self.log.handled.setdefault(self.key, []).append((name, message))
        return name

    def sync(self, message: Any) -> Any:
        if message == "async":
            self.become(self.asynchronous)
        return self._seen("sync", message)

    async def asynchronous(self, message: Any) -> Any:
        await anyio.lowlevel.checkpoint()
        if message == "push":
            self.become(self.pushed, discard_old=False)
        return self._seen("async", message)

    def pushed(self, message: Any) -> Any:
        if message == "pop":
            self.unbecome()
        return self._seen("pushed", message)

    def receive(self, message: Any) -> Any:
        return self._seen("receive", message)


@pytest.mark.parametrize("past", ["sync", "async", "pushed"])
async def test_an_entity_that_switches_behaviour_is_guarded_in_every_behaviour(
    past: str,
) -> None:
    # Spawned as its region's shard would (the guarded factory), without a
    # region (no fence): only the guard stands between a message and a
    # handler once the lease's valid-until has passed.
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    log = Log()
    entity = Entity("t", lambda key: Switching(key, log), shards=4)
    async with ActorSystem(clock=clock) as system:
        types = TypeState(entity, "a", system, clock.now)
        leases = Leases(store, "t", "a", clock.now, 2.5)
        assert await leases.acquire(2)
        make = guard(entity.factory, types, leases, 2)
        ref = system.spawn(make, "k")
        steps = {"sync": [], "async": ["async"], "pushed": ["async", "push"]}[past]
        for message in [*steps, "within"]:
            await ref.ask(message)
        await clock.advance(7.5)  # valid until 10 - 2.5 s: past it now
        ref.tell("told past it")  # handled (refused) before the ask: FIFO
        with pytest.raises(ShardingError, match="lease expired"):
            await ref.ask("past it")
        if past == "pushed":
            with pytest.raises(ShardingError):
                await ref.ask("pop")  # refused: it stays in "pushed"
        assert await leases.renew() == []  # valid again: handled again
        assert await ref.ask("again") == past
        names = [name for name, _ in log.handled["k"]]
        assert set(names) <= {"sync", "async", "pushed"}  # never receive
        assert [m for _, m in log.handled["k"]] == [*steps, "within", "again"]
        assert types.dropped == (3 if past == "pushed" else 2)


async def test_a_behaviour_taken_in_init_is_guarded_outside_the_runtime_too() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    log = Log()
    entity = Entity("t", lambda key: Switching(key, log), shards=4)
    types = TypeState(entity, "a", ActorSystem(), clock.now)
    leases = Leases(store, "t", "a", clock.now, 2.5)
    actor: Any = guard(entity.factory, types, leases, 1)("k")
    assert isinstance(actor.behaviour("before the lease"), ErrorReply)
    assert await leases.acquire(1)
    assert actor.behaviour("within") == "sync"
    assert "k" in log.handled and log.handled["k"] == [("sync", "within")]
