"""One owner at a time (the lease guarantee) on actors: a node cut off from
the placement store stops its entities of a shard before the shard's lease
can expire, and another node starts them only after it has expired; remembered
entities come back; event-sourced entities recover their state wherever they
start."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import ActorSystem
from actors.persistence import MemoryJournal
from actors.sharding import Entity, MemoryPlacementStore, Sharding
from actors.testing import ManualClock

from ._entities import Add, EventSourcedCounter, Log, Total, recorders

pytestmark = pytest.mark.anyio


async def test_a_node_cut_off_from_the_store_stops_its_entities_before_the_lease_expires() -> (  # noqa: E501
    None
):
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    cut = store.connect()
    log_a, log_b = Log(), Log()
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [Entity("t", recorders(log_a))], store=cut, node="a") as a,
        Sharding(
            system, [Entity("t", recorders(log_b))], store=store.connect(), node="b"
        ) as b,
    ):
        assert await a.entity_ref("t", "k").ask(1) == 1
        cut.unavailable = True  # a partition between a and the store
        await clock.advance(7.4)
        assert log_a.stopped == []
        await clock.advance(0.1)  # 7.5 s: 10 s lease - 2.5 s margin
        assert log_a.stopped == ["k"]
        assert a.statistics().entities_per_shard == {}
        # a's node dies now, its lease still in the store: b may take the
        # shard only once that lease has expired.
        a.region("t").stop()
        await a.region("t").join()
        answers: list[Any] = []

        async def ask_b() -> None:
            answers.append(await b.entity_ref("t", "k").ask(2, timeout=10))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask_b)
            await clock.advance(2.4)  # 9.9 s: a's lease still stands
            assert log_b.started == [] and answers == []
            assert b.statistics().buffered == 1
            await clock.advance(0.1)  # 10 s: it has expired; b takes the shard
            await anyio.wait_all_tasks_blocked()
        assert answers == [1]  # b's own, fresh entity
        assert log_b.started == ["k"]
        assert log_a.handled == {"k": [1]} and log_b.handled == {"k": [2]}


async def test_a_node_that_renews_keeps_its_shards_and_gets_the_others_messages() -> (
    None
):
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    log_a, log_b = Log(), Log()
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [Entity("t", recorders(log_a))], store=store, node="a") as a,
        Sharding(
            system, [Entity("t", recorders(log_b))], store=store.connect(), node="b"
        ) as b,
    ):
        assert await a.entity_ref("t", "k").ask(1) == 1
        b.entity_ref("t", "k").tell("from b")
        for _ in range(20):
            await clock.advance(2.5)
        assert log_a.stopped == [] and log_b.started == []
        # b's message went to the shard's owner.
        assert await a.entity_ref("t", "k").ask("get") == [1, "from b"]


async def test_remembered_entities_start_again_when_their_node_comes_back() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    remembered = MemoryPlacementStore(clock=clock)
    first, second = Log(), Log()
    async with ActorSystem(clock=clock) as system:
        entity = Entity("t", recorders(first), remember=True)
        async with Sharding(
            system, [entity], store=store, remember_store=remembered, node="a"
        ) as sharding:
            for key in ("x", "y", "z"):
                await sharding.entity_ref("t", key).ask("get")
            await sharding.entity_ref("t", "z").ask("stop-yourself")
            await clock.advance(0)
        assert sorted(first.stopped) == ["x", "y", "z"]
        entity = Entity("t", recorders(second), remember=True)
        async with Sharding(
            system, [entity], store=store, remember_store=remembered, node="a2"
        ) as sharding:
            with anyio.fail_after(5):
                while sorted(second.started) != ["x", "y"]:
                    await anyio.sleep(0.001)
            assert sharding.statistics().activations == 2


async def test_an_event_sourced_entity_recovers_its_state_after_passivation() -> None:
    clock = ManualClock()
    journal = MemoryJournal()
    async with (
        ActorSystem(clock=clock, journal=journal) as system,
        Sharding(
            system, [Entity("account", EventSourcedCounter, passivate_after=60)]
        ) as s,
    ):
        alice = s.entity_ref("account", "alice")
        assert await alice.ask(Add(10)) == 10
        assert await alice.ask(Add(5)) == 15
        await clock.advance(100)
        assert s.statistics().passivations == 1
        assert await alice.ask(Total()) == 15
        assert await s.entity_ref("account", "bob").ask(Total()) == 0


async def test_an_event_sourced_entity_recovers_on_another_node() -> None:
    journal = MemoryJournal()
    store = MemoryPlacementStore(10)
    async with ActorSystem(journal=journal) as system:
        entity = Entity("account", EventSourcedCounter)
        async with Sharding(system, [entity], store=store, node="a") as a:
            assert await a.entity_ref("account", "alice").ask(Add(7)) == 7
        async with Sharding(system, [entity], store=store, node="b") as b:
            assert await b.entity_ref("account", "alice").ask(Add(1)) == 8
