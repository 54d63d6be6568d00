"""Membership on the placement store: a node's entry renewed while it runs,
MemberUp when a node appears, MemberLeft when it leaves gracefully,
MemberDown when its entry expires while it is up (a node lost)."""

from __future__ import annotations

import pytest

from actors import ActorSystem
from actors.sharding import (
    Entity,
    Member,
    MemberDown,
    MemberEvent,
    MemberLeft,
    MemberUp,
    MemoryPlacementStore,
    Sharding,
)
from actors.testing import ManualClock

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio


async def test_nodes_see_each_other_come_leave_and_go_down() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    entity = Entity("t", recorders(Log()))
    seen: list[MemberEvent] = []
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [entity], store=store, node="a", version="2") as a,
    ):
        a.subscribe(seen.append)
        b = Sharding(system, [entity], store=store.connect(), node="b", version="1")
        async with b:
            await clock.advance(2.5)
            assert a.members == [Member("a", "up", "2"), Member("b", "up", "1")]
        await clock.advance(2.5)
        assert MemberLeft(Member("b", "leaving", "1")) in seen
        c_store = store.connect()
        c = Sharding(system, [entity], store=c_store, node="c")
        await c.__aenter__()
        await clock.advance(2.5)
        assert MemberUp(Member("c", "up", "0")) in seen
        c_store.unavailable = True  # c is lost: its entry is not renewed
        for _ in range(5):
            await clock.advance(2.5)
        assert seen[-1] == MemberDown(Member("c", "up", "0"))
        assert [m.node for m in a.members] == ["a"]
        assert sum(isinstance(e, MemberDown) for e in seen) == 1
        c_store.unavailable = False
        await c.leave()


async def test_an_unsubscribed_callback_gets_nothing_more() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    seen: list[MemberEvent] = []
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [], store=store, node="a") as a,
    ):
        unsubscribe = a.subscribe(seen.append)
        await clock.advance(2.5)
        assert seen == [MemberUp(Member("a", "up", "0"))]
        unsubscribe()
        async with Sharding(system, [], store=store.connect(), node="b"):
            await clock.advance(2.5)
        assert seen == [MemberUp(Member("a", "up", "0"))]
        with pytest.raises(TypeError, match="callable"):
            a.subscribe(1)  # type: ignore[arg-type]
