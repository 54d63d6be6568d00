"""The remote fast path: an ``EntityRef`` whose shard is homed on another
node (its region found it) sends straight to that node's region, behind
everything its node sent there before, and the region hands the message to
the running entity at once or routes it as any slow-path message (the
entity started, held, or sent on). The order of each sender holds across the
switch between the two paths, a miss on the far side loses nothing, and what
a peer sends on it is checked before anything acts on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pytest

from actors.nats import NatsServer
from actors.sharding import Entity, MemoryPlacementStore, Sharding, shard_of
from actors.testing.remote import Cluster

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio

SHARDS = 12


def _entity(log: Log) -> Entity[Any]:
    return Entity("t", recorders(log), shards=SHARDS, role="host")


@asynccontextmanager
async def _proxy_and_host(
    url: str, log: Log
) -> AsyncIterator[tuple[Sharding, Sharding]]:
    """Node 1 hosts the type (its role), node 0 only sends to it."""
    store = MemoryPlacementStore(600)
    async with Cluster(url, 2) as cluster:
        host = Sharding(
            cluster[1], [_entity(log)], store=store, node="h", roles={"host"}
        )
        async with host:
            with anyio.fail_after(10):
                while not await store.list("regions/t/"):
                    await anyio.sleep(0.01)
            proxy = Sharding(
                cluster[0], [_entity(log)], store=store.connect(), node="p"
            )
            async with proxy:
                yield proxy, host


async def test_a_shard_homed_on_another_node_takes_the_remote_fast_path(
    nats_server: NatsServer,
) -> None:
    log = Log()
    async with _proxy_and_host(nats_server.url, log) as (proxy, host):
        ref = proxy.entity_ref("t", "k")
        types = proxy._types["t"]
        assert types.remote[ref.shard] is None  # not located yet
        assert await ref.ask("get") == []  # the slow path: located, started
        assert types.remote[ref.shard] is not None
        for i in range(100):  # no yield: on the slow path all would wait here
            ref.tell(i)
        assert types.inflight[ref.shard] == 0
        assert proxy.statistics().buffered == 0
        for i in range(100, 200):
            await ref.send(i)
        assert await ref.ask("get") == list(range(200))
        assert host.statistics().dropped == proxy.statistics().dropped == 0


async def test_a_key_not_running_yet_is_started_from_the_fast_path_in_order(
    nats_server: NatsServer,
) -> None:
    # The fast path is a shard's: a tell to another key of the shard goes
    # straight to the host's region, which misses it (not running) and
    # routes it as the slow path does: started, then handed everything in
    # the order it was sent.
    log = Log()
    async with _proxy_and_host(nats_server.url, log) as (proxy, host):
        first = proxy.entity_ref("t", "a0")
        await first.ask("get")
        other = next(
            f"a{i}" for i in range(1, 1000) if shard_of(f"a{i}", SHARDS) == first.shard
        )
        ref = proxy.entity_ref("t", other)
        assert proxy._types["t"].remote[ref.shard] is not None
        for i in range(50):
            ref.tell(i)  # the first one misses; the rest wait behind it
        assert await ref.ask("get") == list(range(50))
        assert log.started == ["a0", other]
        assert host.statistics().dropped == 0


async def test_the_fast_path_closes_when_the_home_leaves_and_nothing_is_lost(
    nats_server: NatsServer,
) -> None:
    handled: dict[str, list[Any]] = {}
    logs = [Log(handled=handled) for _ in range(3)]
    store = MemoryPlacementStore(600)
    keys = [f"k{i}" for i in range(24)]
    async with Cluster(nats_server.url, 3) as cluster:
        hosts = [
            Sharding(
                cluster[i],
                [_entity(logs[i])],
                store=store.connect(),
                node=f"h{i}",
                roles={"host"},
            )
            for i in (1, 2)
        ]
        for sharding in hosts:
            await sharding.__aenter__()
        with anyio.fail_after(10):
            while len(await store.list("regions/t/")) < 2:
                await anyio.sleep(0.01)
        async with Sharding(
            cluster[0], [_entity(logs[0])], store=store.connect(), node="p"
        ) as proxy:
            for key in keys:
                await proxy.entity_ref("t", key).ask("get")
            types = proxy._types["t"]
            leaving = {
                shard_of(key, SHARDS) for key in keys if key in set(logs[2].started)
            }
            assert leaving, "node 2 hosts some of the keys"
            assert all(types.remote[shard] is not None for shard in leaving)
            sent = 300

            async def sender(key: str) -> None:
                ref = proxy.entity_ref("t", key)
                for i in range(sent):
                    ref.tell(i)
                    if i % 25 == 0:
                        await anyio.sleep(0)

            async with anyio.create_task_group() as tg:
                for key in keys:
                    tg.start_soon(sender, key)
                await anyio.sleep(0)
                await hosts[1].leave()  # under load
            for key in keys:  # its last message: all of them were handled
                await proxy.entity_ref("t", key).ask("get", timeout=10)
                assert handled[key] == list(range(sent)), key
            # The leaving node's shards went to node 1; the fast path there
            # opened again after the move.
            assert hosts[1].statistics().hand_offs > 0
            assert all(
                home is None or "h2" not in repr(home.peer) for home in types.remote
            )
            assert all(s.statistics().dropped == 0 for s in (proxy, *hosts))
        await hosts[0].leave()


async def test_a_peers_malformed_fast_path_message_is_dropped_and_counted(
    nats_server: NatsServer,
) -> None:
    from actors.sharding._link import WireTell, WireTells

    log = Log()
    async with _proxy_and_host(nats_server.url, log) as (proxy, host):
        assert await proxy.entity_ref("t", "k").ask("get") == []
        remote = proxy.system.remote
        assert remote is not None
        region = await remote.lookup("node-1", "/user/sharding-t-h")
        body = msgspec.Raw(msgspec.msgpack.encode(1))
        region.tell(WireTells([WireTell("", "int", body)]))  # no key
        region.tell(WireTells([WireTell("x" * 1025, "int", body)]))  # too long
        region.tell(WireTells([WireTell("k", "no.such.Tag", body)]))  # unknown tag
        wrong = msgspec.Raw(msgspec.msgpack.encode("not an int"))
        region.tell(WireTells([WireTell("k", "int", wrong)]))  # not an int
        region.tell(WireTells([WireTell("k", "int", body)]))  # a good one
        assert await proxy.entity_ref("t", "k").ask("get") == [1]
        assert host.statistics().dropped == 4
        assert log.started == ["k"]


async def test_the_receiving_side_keeps_a_shards_order_behind_a_miss(
    nats_server: NatsServer,
) -> None:
    # The receiving region's rule, alone: a message goes straight to its
    # running entity only while nothing of its shard is in flight there;
    # one that misses is routed at once, so what follows for its shard in
    # the same envelope waits behind it.
    from actors import ActorSystem
    from actors.sharding._link import WireTell, WireTells
    from actors.sharding._state import Active, TypeState
    from actors.sharding._wire import RegionWire

    log = Log()
    entity = _entity(log)
    running = "a0"
    shard = shard_of(running, SHARDS)
    cold = next(f"a{i}" for i in range(1, 1000) if shard_of(f"a{i}", SHARDS) == shard)
    elsewhere = next(f"b{i}" for i in range(1000) if shard_of(f"b{i}", SHARDS) != shard)
    async with Cluster(nats_server.url, 1) as cluster:
        system: ActorSystem = cluster[0]
        assert system.remote is not None
        types = TypeState(entity, "n", system, anyio.current_time)
        wire = RegionWire(system.remote, types)
        told: list[Any] = []

        class Box:
            def tell(self, message: Any) -> None:
                told.append(message)

        box: Any = Box()
        active = Active(box, shard)
        types.active[running] = active
        types.active[elsewhere] = Active(box, shard_of(elsewhere, SHARDS))
        routed: list[tuple[str, Any]] = []

        def route(forward: Any) -> None:  # as the region: in flight now
            types.inflight[forward.deliver.shard] += 1
            routed.append((forward.deliver.key, forward.deliver.message))

        def tell(key: str, value: int) -> WireTell:
            body = msgspec.Raw(msgspec.msgpack.encode(value))
            return WireTell(key, "int", body)

        wire.tells_in(WireTells([tell(running, 1), tell(running, 2)]), route)
        assert told == [1, 2] and routed == []
        wire.tells_in(
            WireTells([tell(cold, 3), tell(running, 4), tell(elsewhere, 5)]), route
        )
        # 4 waits behind 3 (its shard has a message in flight); 5's shard
        # has none: straight to its entity.
        assert routed == [(cold, 3), (running, 4)]
        assert told == [1, 2, 5]
        assert active.count == 2


async def test_the_fast_path_waits_behind_what_its_shard_has_on_the_slow_path(
    nats_server: NatsServer,
) -> None:
    # A message of the shard on the slow path (here: sent while the fast
    # path was shut, as during a locate) is in flight on this node until its
    # region forwards it; a later message must not overtake it by the fast
    # path.
    log = Log()
    async with _proxy_and_host(nats_server.url, log) as (proxy, _):
        ref = proxy.entity_ref("t", "k")
        await ref.ask("get")
        types = proxy._types["t"]
        link = types.remote[ref.shard]
        assert link is not None
        types.remote[ref.shard] = None
        ref.tell("slow")
        types.remote[ref.shard] = link
        assert types.inflight[ref.shard] == 1
        ref.tell("after it")
        await ref.send("and after that")
        assert await ref.ask("get") == ["slow", "after it", "and after that"]


async def test_a_restarted_region_shuts_every_fast_path_until_it_finds_the_homes(
    nats_server: NatsServer,
) -> None:
    log = Log()
    async with _proxy_and_host(nats_server.url, log) as (proxy, _):
        ref = proxy.entity_ref("t", "k")
        assert await ref.ask("get") == []
        types = proxy._types["t"]
        assert types.remote[ref.shard] is not None
        region = proxy.region("t")
        region.tell(object())  # not a region message: the region fails
        with anyio.fail_after(10):
            while types.remote[ref.shard] is not None:
                await anyio.sleep(0.01)
        ref.tell("after the restart")  # the slow path: located again
        assert await ref.ask("get", timeout=10) == ["after the restart"]
        assert types.remote[ref.shard] is not None
