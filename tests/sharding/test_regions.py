"""Several regions of one type (nodes) sharing a placement store: shards
allocated least-shards-first, messages routed to the shard's holder, hand-off
to the other nodes on a graceful leave with nothing lost and each sender's
order kept, and rebalance towards a node that joins, a bounded number of
shards at a time."""

from __future__ import annotations

import itertools

import anyio
import pytest

from actors import ActorSystem
from actors.sharding import (
    Entity,
    LeastShardAllocation,
    MemoryPlacementStore,
    Sharding,
    shard_of,
)
from actors.testing import ManualClock

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio


async def test_shards_are_spread_over_the_nodes_least_shards_first() -> None:
    store = MemoryPlacementStore(10)
    log = Log()
    entity = Entity("t", recorders(log), shards=10)
    async with (
        ActorSystem() as system,
        Sharding(system, [entity], store=store, node="a") as a,
        Sharding(system, [entity], store=store.connect(), node="b") as b,
    ):
        await anyio.wait_all_tasks_blocked()  # both have joined
        for i in range(100):
            assert await a.entity_ref("t", str(i)).ask(i) == 1
        hosted_a = a.statistics().shards_per_node["t"]["a"]
        hosted_b = b.statistics().shards_per_node["t"]["b"]
        assert hosted_a + hosted_b == 10
        assert abs(hosted_a - hosted_b) <= 1
        for i in range(100):  # from either node, the same entity
            assert await b.entity_ref("t", str(i)).ask("get") == [i]


async def test_a_graceful_leave_hands_shards_off_losing_nothing_and_keeping_order() -> (
    None
):
    store = MemoryPlacementStore(10)
    log = Log()
    entity = Entity("t", recorders(log), shards=8)
    keys = [str(i) for i in range(16)]
    async with ActorSystem() as system:
        a = Sharding(system, [entity], store=store, node="a")
        b = Sharding(system, [entity], store=store.connect(), node="b")
        async with a:
            await b.__aenter__()
            await anyio.wait_all_tasks_blocked()
            for key in keys:
                await b.entity_ref("t", key).ask("get")
            assert b.statistics().shards_per_node["t"]["b"] > 0
            sent = 300

            async def sender(key: str) -> None:
                ref = a.entity_ref("t", key)
                for i in range(sent):
                    ref.tell(i)
                    if i % 10 == 0:
                        await anyio.sleep(0)

            async with anyio.create_task_group() as tg:
                for key in keys:
                    tg.start_soon(sender, key)
                await anyio.sleep(0)
                await b.leave()  # under load
            for key in keys:
                assert await a.entity_ref("t", key).ask("get") is not None
            assert a.statistics().shards_per_node["t"]["a"] == 8
        assert b.statistics().hand_offs > 0
        for key in keys:
            assert log.handled[key] == list(range(sent)), key
        assert a.statistics().dropped == b.statistics().dropped == 0


async def test_shards_move_to_a_joining_node_a_bounded_number_at_a_time() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    log = Log()
    entity = Entity(
        "t",
        recorders(log),
        shards=20,
        passivate_after=None,
        stop_message="stop-yourself",
    )
    strategy = LeastShardAllocation(absolute_limit=2, relative_limit=1.0)
    async with ActorSystem(clock=clock) as system:
        async with Sharding(
            system, [entity], store=store, node="a", strategy=strategy
        ) as a:
            await clock.advance(0)
            for i in range(200):
                a.entity_ref("t", str(i)).tell(i)
            await a.entity_ref("t", "0").ask("get")
            await clock.advance(0)
            assert a.statistics().shards_per_node["t"]["a"] == 20
            async with Sharding(
                system, [entity], store=store.connect(), node="b", strategy=strategy
            ) as b:
                await clock.advance(0)
                counts = [a.statistics().shards_per_node["t"]["a"]]
                for _ in range(12):
                    await clock.advance(2.5)  # one rebalance round per tick
                    for i in range(200):  # moved shards are placed again
                        a.entity_ref("t", str(i)).tell("after")
                    await clock.advance(0)
                    counts.append(a.statistics().shards_per_node["t"]["a"])
                assert all(0 <= x - y <= 2 for x, y in itertools.pairwise(counts))
                assert counts[-1] == 10
                assert b.statistics().shards_per_node["t"]["b"] == 10
                assert a.statistics().hand_offs == 10
        for i in range(200):
            handled = log.handled[str(i)]
            assert handled[0] == i and set(handled[1:]) == {"after"}
            assert len(handled) == 13


async def test_a_node_without_the_types_role_proxies_it_to_the_nodes_that_host_it() -> (
    None
):
    store = MemoryPlacementStore(10)
    log = Log()
    entity = Entity("t", recorders(log), shards=4, role="db")
    async with (
        ActorSystem() as system,
        Sharding(system, [entity], store=store, node="host", roles={"db"}) as host,
        Sharding(system, [entity], store=store.connect(), node="web") as web,
    ):
        assert host.hosts("t") and not web.hosts("t")
        await anyio.wait_all_tasks_blocked()
        for i in range(20):
            assert await web.entity_ref(entity, str(i)).ask(i) == 1
        assert web.statistics().shards_per_node["t"]["web"] == 0
        assert web.statistics().activations == 0
        assert host.statistics().activations == 20
        assert [e.key for e in await store.list("regions/")] == ["regions/t/host"]


async def test_roles_must_be_strings() -> None:
    async with ActorSystem() as system:
        entity = Entity("t", recorders(Log()))
        with pytest.raises(TypeError, match="roles"):
            Sharding(system, [entity], roles="db")
        with pytest.raises(TypeError, match="roles"):
            Sharding(system, [entity], roles=[1])  # type: ignore[list-item]


def _key_per_shard(shards: int) -> list[str]:
    found: dict[int, str] = {}
    i = 0
    while len(found) < shards:
        found.setdefault(shard_of(str(i), shards), str(i))
        i += 1
    return [found[s] for s in range(shards)]


async def test_shards_rebalance_to_a_new_node_in_rounds_of_the_default_limit() -> None:
    # With the default limits (20 per round: min(20, 0.1 x 200)) 100 of 200
    # shards move in 5 rounds, one per renewal interval (2.5 s with 10 s
    # leases); 1,000 shards move in 25 rounds, 62.5 s.
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    remembered = MemoryPlacementStore(clock=clock)
    entity = Entity("t", recorders(Log()), shards=200, remember=True)
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(
            system, [entity], store=store, remember_store=remembered, node="a"
        ) as a,
    ):
        for key in _key_per_shard(200):
            await a.entity_ref("t", key).ask("start")
        assert a.statistics().shards_per_node["t"]["a"] == 200
        async with Sharding(
            system,
            [entity],
            store=store.connect(),
            remember_store=remembered,
            node="b",
        ) as b:
            await clock.advance(0)
            rounds = 0
            while b.statistics().shards_per_node["t"]["b"] < 100:
                await clock.advance(2.5)
                rounds += 1
                assert rounds <= 10
            assert rounds == 5
            assert a.statistics().shards_per_node["t"]["a"] == 100
            # the moved shards' remembered entities run on b
            assert b.statistics().activations == 100
