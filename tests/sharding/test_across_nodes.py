"""Sharding across actor systems joined by ``actors.remote`` (nodes of one
NATS server, in one test process): an entity addressed from any node runs on
the node holding its shard's lease, tells and asks reach it over the wire,
a graceful leave hands its shards to the other nodes with nothing lost and
each sender's order kept, a node that joins takes shards (rebalance), and a
node that is killed has its shards started elsewhere once its leases
expired, never on two nodes at once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest

from actors import ActorSystem
from actors.nats import NatsServer, connect
from actors.nats._protocol import new_nuid
from actors.sharding import (
    Entity,
    KeyValuePlacementStore,
    MemoryPlacementStore,
    PlacementStore,
    Sharding,
    ShardingError,
    shard_of,
)
from actors.testing.remote import Cluster

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio

KEYS = [f"k{i}" for i in range(30)]


def _entity(log: Log, shards: int = 12, **options: Any) -> Entity[Any]:
    return Entity("t", recorders(log), shards=shards, **options)


@asynccontextmanager
async def _kv_stores(
    url: str, n: int, ttl: float
) -> AsyncIterator[list[PlacementStore]]:
    """``n`` connections (one per node) to one new KV bucket."""
    bucket = f"S{new_nuid(10)}"
    async with AsyncExitStack() as stack:
        stores: list[PlacementStore] = []
        for _ in range(n):
            nc = await stack.enter_async_context(connect(url))
            stores.append(
                await KeyValuePlacementStore.open(nc.jetstream(), bucket, ttl=ttl)
            )
        yield stores


async def _start(
    system: ActorSystem, entity: Entity[Any], store: PlacementStore, node: str
) -> Sharding:
    sharding = Sharding(system, [entity], store=store, node=node)
    await sharding.__aenter__()
    return sharding


async def _wait_members(shardings: list[Sharding], n: int) -> None:
    """Until every node's region lists ``n`` members of the type."""
    with anyio.fail_after(10):
        for sharding in shardings:
            while len(await sharding.store.list("regions/t/")) < n:
                await anyio.sleep(0.02)


async def test_an_entity_is_reached_from_every_node_where_its_shard_lives(
    jetstream_server: NatsServer,
) -> None:
    logs = [Log() for _ in range(3)]
    async with (
        Cluster(jetstream_server.url, 3) as cluster,
        _kv_stores(jetstream_server.url, 3, ttl=10.0) as stores,
    ):
        nodes = [
            await _start(cluster[i], _entity(logs[i]), stores[i], f"n{i}")
            for i in range(3)
        ]
        await _wait_members(nodes, 3)
        for i, key in enumerate(KEYS):
            assert await nodes[i % 3].entity_ref("t", key).ask("key") == key
        for key in KEYS:
            for value in range(3):
                nodes[value].entity_ref("t", key).tell(value)
        for i, key in enumerate(KEYS):
            got = await nodes[(i + 1) % 3].entity_ref("t", key).ask("get")
            assert sorted(got) == [0, 1, 2]
        # Each entity ran on exactly one node, and the shards are spread.
        started = [set(log.started) for log in logs]
        assert sorted(k for s in started for k in s) == sorted(KEYS)
        assert all(started), started
        hosted = [
            n.statistics().shards_per_node["t"][f"n{i}"] for i, n in enumerate(nodes)
        ]
        assert sum(hosted) <= 12 and min(hosted) > 0
        # A tell from one sender keeps its order across the wire.
        ref = nodes[0].entity_ref("t", KEYS[0])
        for value in range(100, 200):
            ref.tell(value)
        got = await ref.ask("get")
        assert got[-100:] == list(range(100, 200))
        for node in reversed(nodes):
            await node.leave()
        assert await stores[0].list("shards/") == []


async def test_an_entitys_error_reaches_a_remote_asker_as_itself(
    jetstream_server: NatsServer,
) -> None:
    log = Log()
    async with (
        Cluster(jetstream_server.url, 2) as cluster,
        _kv_stores(jetstream_server.url, 2, ttl=10.0) as stores,
    ):
        # Only node 1 hosts the type (a role): every entity runs there.
        entity = _entity(log, role="db")
        host = Sharding(cluster[1], [entity], store=stores[1], node="h", roles={"db"})
        proxy = Sharding(cluster[0], [entity], store=stores[0], node="p")
        async with host, proxy:
            await _wait_members([host], 1)
            with pytest.raises(RuntimeError, match="on purpose"):
                await proxy.entity_ref("t", "x").ask("fail")
            assert await proxy.entity_ref("t", "y").ask("key") == "y"
            assert proxy.statistics().activations == 0
            assert host.statistics().activations == 2


async def test_a_graceful_leave_across_nodes_loses_nothing_and_keeps_order(
    jetstream_server: NatsServer,
) -> None:
    handled: dict[str, list[Any]] = {}  # one record for the three nodes
    logs = [Log(handled=handled) for _ in range(3)]
    sent = 200
    async with (
        Cluster(jetstream_server.url, 3) as cluster,
        _kv_stores(jetstream_server.url, 3, ttl=10.0) as stores,
    ):
        nodes = [
            await _start(cluster[i], _entity(logs[i], shards=9), stores[i], f"n{i}")
            for i in range(3)
        ]
        await _wait_members(nodes, 3)
        for key in KEYS:
            await nodes[0].entity_ref("t", key).ask("get")
        assert logs[2].started, "node 2 hosts some entities before it leaves"

        async def sender(key: str) -> None:
            ref = nodes[0].entity_ref("t", key)
            for i in range(sent):
                ref.tell(i)
                if i % 20 == 0:
                    await anyio.sleep(0)

        async with anyio.create_task_group() as tg:
            for key in KEYS:
                tg.start_soon(sender, key)
            await anyio.sleep(0)
            await nodes[2].leave()  # under load
        for key in KEYS:  # the entity's last message: all of them were handled
            await nodes[1].entity_ref("t", key).ask("get", timeout=10)
            assert handled[key] == list(range(sent)), key
        assert nodes[2].statistics().hand_offs > 0
        assert all(n.statistics().dropped == 0 for n in nodes)
        for node in nodes[:2]:
            await node.leave()


async def test_shards_move_to_a_node_that_joins(jetstream_server: NatsServer) -> None:
    logs = [Log() for _ in range(2)]
    async with (
        Cluster(jetstream_server.url, 2) as cluster,
        _kv_stores(jetstream_server.url, 2, ttl=2.0) as stores,
    ):
        first = await _start(cluster[0], _entity(logs[0], shards=8), stores[0], "a")
        for key in KEYS:
            first.entity_ref("t", key).tell("before")
        for key in KEYS:
            assert await first.entity_ref("t", key).ask("get") == ["before"]
        assert first.statistics().shards_per_node["t"]["a"] == 8
        second = await _start(cluster[1], _entity(logs[1], shards=8), stores[1], "b")
        with anyio.fail_after(15):
            while second.statistics().shards_per_node["t"]["b"] < 4:
                for key in KEYS:  # while the shards move
                    first.entity_ref("t", key).tell("after")
                await anyio.sleep(0.1)
        assert first.statistics().shards_per_node["t"]["a"] == 4
        # A moved shard was offered to b at once: its entities start there
        # at their next message (their state was in memory: it starts
        # afresh), each handled on the one node that holds its shard.
        for key in KEYS:
            got = await second.entity_ref("t", key).ask("get")
            assert all(m in ("before", "after") for m in got), got
        hosted_by_b = {
            int(e.key.rpartition("/")[2])
            for e in await stores[0].list("shards/t/")
            if e.value == b"b"
        }
        assert len(hosted_by_b) == 4
        assert logs[1].started
        assert {shard_of(key, 8) for key in logs[1].started} <= hosted_by_b
        assert first.statistics().dropped == second.statistics().dropped == 0
        await second.leave()
        await first.leave()


async def test_a_killed_nodes_shards_start_elsewhere_after_its_leases_expired(
    nats_server: NatsServer,
) -> None:
    # One store in memory, shared by the three systems of this process,
    # with 1.5 s leases on the event loop's clock.
    store = MemoryPlacementStore(1.5)
    logs = [Log() for _ in range(3)]
    async with Cluster(nats_server.url, 3) as cluster:
        nodes = [
            await _start(
                cluster[i], _entity(logs[i], shards=9), store.connect(), f"n{i}"
            )
            for i in range(3)
        ]
        await _wait_members(nodes, 3)
        for key in KEYS:
            await nodes[0].entity_ref("t", key).ask("key")
        lost = set(logs[2].started)
        assert lost
        owned = {e.key for e in await store.list("shards/t/") if e.value == b"n2"}
        killed_at = anyio.current_time()
        cluster.kill(2)
        await cluster.wait_down(2)
        for key in sorted(lost):  # each answers again, from node 0 or 1
            with anyio.fail_after(15):
                while True:
                    try:
                        assert await nodes[0].entity_ref("t", key).ask("key") == key
                        break
                    except (ShardingError, TimeoutError):
                        await anyio.sleep(0.05)
        assert anyio.current_time() - killed_at >= 1.5 * 0.5
        restarted = set(logs[0].started) | set(logs[1].started)
        assert lost <= restarted
        now_owned = {e.key: e.value for e in await store.list("shards/t/")}
        assert owned <= set(now_owned)
        assert b"n2" not in now_owned.values()
        for node in nodes[:2]:
            await node.leave()


async def test_a_peers_malformed_sharding_message_is_dropped_and_counted(
    nats_server: NatsServer,
) -> None:
    import msgspec

    from actors.sharding._wire import WireForward, WireLocated, WireTakeShard

    log = Log()
    async with Cluster(nats_server.url, 2) as cluster:
        store = MemoryPlacementStore(10)
        async with (
            Sharding(cluster[1], [_entity(log)], store=store, node="b") as b,
            Sharding(cluster[0], [_entity(log)], store=store.connect(), node="a"),
        ):
            region = await cluster[0].remote.lookup("node-1", "/user/sharding-t-b")
            body = msgspec.msgpack.encode(1)
            of_3 = next(k for k in KEYS if shard_of(k, 12) == 3)
            not_of_0 = next(k for k in KEYS if shard_of(k, 12) != 0)
            region.tell(WireForward(12, "k", "int", msgspec.Raw(body)))  # no shard 12
            region.tell(WireForward(0, not_of_0, "int", msgspec.Raw(body)))
            region.tell(WireForward(3, of_3, "no.such.Tag", msgspec.Raw(body)))
            region.tell(WireTakeShard(-1))
            region.tell(WireLocated(77, None, "an answer nobody asked for"))
            with anyio.fail_after(5):
                while b.statistics().dropped < 4:
                    await anyio.sleep(0.01)
            assert b.statistics().dropped == 4
            assert await b.entity_ref("t", "k").ask("get") == []
            assert b.statistics().shards_per_node["t"]["b"] <= 1
