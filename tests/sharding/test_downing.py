"""Downing, as Akka's: a node a peer's failure detector declared down (a
false downing: a long pause, a partition; the node itself runs on) must not
come back as itself. It stops its entities and hosts nothing more, its
``system.cluster`` reports its own ``MemberDown``, and the node runner
(``actors.node.run``) joins again at once as a new incarnation, which the
mark of the old one does not stop: no waiting for ``gone_ttl``.

The pause is simulated in one process: node ``a``'s remote layer declares
node ``b``'s incarnation down as its failure detector would after missed
heartbeats, while ``b`` runs on."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.nats._protocol import new_nuid
from actors.node import run
from actors.remote import NodeAddress, NodeDown, Remote
from actors.sharding import (
    Entity,
    LeaseEvent,
    Member,
    MemberDown,
    MemberEvent,
    MemoryPlacementStore,
    Sharding,
    ShardingError,
)
from actors.sharding._allocation import LeastShardAllocation
from actors.sharding._coordinator import Coordination
from actors.sharding.lowlevel import down_key

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio

KEYS = [f"k{i}" for i in range(24)]


async def test_a_mark_of_another_incarnation_does_not_down_a_node() -> None:
    store = MemoryPlacementStore(10)
    old = Coordination(store, LeastShardAllocation(), "t", "b", ["b", "0" * 16])
    new = Coordination(store, LeastShardAllocation(), "t", "b", ["b", "1" * 16])
    peer = Coordination(store, LeastShardAllocation(), "t", "a", ["a", "2" * 16])
    assert not await old.join()
    assert await peer.declare_down("b", ["b", "0" * 16])
    mark = await store.get(down_key("t", "b"))
    assert mark is not None
    assert json.loads(mark.value) == {"by": "a", "address": ["b", "0" * 16]}
    assert await old.join()  # its own incarnation's mark: downed
    await old.leave()  # (what a downed region does)
    assert not await new.join()  # a new incarnation joins
    # The peer sees the new incarnation in the membership: it stops renewing.
    assert not await peer.declare_down("b", ["b", "0" * 16])
    await store.create(down_key("t", "c"), b"a")  # a mark naming no incarnation
    third = Coordination(store, LeastShardAllocation(), "t", "c", ["c", "3" * 16])
    assert await third.join()  # marks whoever reads it: the safe side


async def test_a_falsely_downed_node_rejoins_at_once_as_a_new_incarnation(
    nats_server: NatsServer,
) -> None:
    url, system = nats_server.url, f"s{new_nuid(8)}"
    store = MemoryPlacementStore(1.0)  # 1 s leases on the event loop's clock
    log_a, log_b = Log(), Log()
    readies: list[NodeAddress] = []
    ready_again = anyio.Event()
    first_ready = anyio.Event()
    seen: list[list[MemberEvent]] = []  # per incarnation of b
    #: per incarnation of b: the lease events of its shards
    leases: list[list[LeaseEvent]] = []
    #: per incarnation of b: its entities started and stopped when it ended
    started_by: list[tuple[int, int]] = []

    def ready(remote: Remote) -> None:
        readies.append(remote.node)
        (first_ready if len(readies) == 1 else ready_again).set()

    @asynccontextmanager
    async def app(node_system: ActorSystem) -> AsyncIterator[Sharding]:
        events: list[MemberEvent] = []
        lease_events: list[LeaseEvent] = []
        seen.append(events)
        leases.append(lease_events)
        entity = Entity("t", recorders(log_b), shards=6)
        async with Sharding(
            node_system,
            [entity],
            store=store.connect(),
            node="b",
            on_lease=lease_events.append,
        ) as sharding:
            node_system.cluster.subscribe(events.append)
            yield sharding
        started_by.append((len(log_b.started), len(log_b.stopped)))

    stop = anyio.Event()
    remote = Remote(url, system=system, node="a")
    async with (
        ActorSystem(remote=remote) as a_system,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(
            partial(
                run, url, system=system, name="b", apps=[app], ready=ready, stop=stop
            )
        )
        with anyio.fail_after(10):
            await first_ready.wait()
        entity = Entity("t", recorders(log_a), shards=6)
        async with Sharding(a_system, [entity], store=store.connect(), node="a") as a:
            with anyio.fail_after(10):
                while len(await store.list("regions/t/")) < 2:
                    await anyio.sleep(0.02)
            for key in KEYS:
                await _answered(a, key)
            assert log_b.started, "some entities run on b"
            first = readies[0]
            # a's failure detector declares b's incarnation down; b runs on.
            parts: Any = a_system.remote._parts
            parts._on_down(NodeDown(first, math.inf))
            with anyio.fail_after(10):
                await ready_again.wait()
            second = readies[1]
            assert second.node == "b" and second.incarnation != first.incarnation
            # The first incarnation saw itself down, stopped every entity it
            # had started before it left, and gave its leases up.
            assert MemberDown(Member("b", "down", "0", first.incarnation)) in seen[0]
            started, stopped = started_by[0]
            assert stopped == started
            assert {e.kind for e in leases[0]} >= {"acquired", "given-up"}
            # Every entity answers again; the new incarnation hosts some.
            for key in KEYS:
                await _answered(a, key)
            with anyio.fail_after(10):
                while not any(e.kind == "acquired" for e in leases[1]):
                    await _answered(a, KEYS[len(log_b.started) % len(KEYS)])
                    await anyio.sleep(0.05)
            assert len(log_b.started) > started
        stop.set()


async def _answered(sharding: Sharding, key: str) -> None:
    """Ask entity ``key`` until it answers (its shard may be moving)."""
    with anyio.fail_after(10):
        while True:
            try:
                assert await sharding.entity_ref("t", key).ask("key", timeout=1) == key
                return
            except (ShardingError, TimeoutError):
                await anyio.sleep(0.05)
