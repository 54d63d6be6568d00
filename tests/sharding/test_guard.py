"""The lease guard: an entity handles a message only while its node holds the
lease of its shard, valid on its own clock; past it (a process stopped and
resumed after its lease expired, before its fence ran) the message is not
handled: an ask gets a ShardingError, the message counts as dropped."""

from __future__ import annotations

from typing import Any

import pytest

from actors import ActorSystem, ErrorReply
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
