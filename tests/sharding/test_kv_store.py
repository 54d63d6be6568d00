"""The placement store on a JetStream KV bucket of a real ``nats-server -js``:
the store's contract (create if absent, compare-and-set update, delete by
revision, list by prefix, expiry after the bucket's ttl), and sharding on
it: two nodes share leases and members through the bucket."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from actors import ActorSystem
from actors.nats import NatsServer, connect
from actors.nats._protocol import new_nuid
from actors.sharding import (
    Entity,
    KeyValuePlacementStore,
    PlacementConflict,
    PlacementStore,
    Sharding,
    shard_of,
)

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store(jetstream_server: NatsServer) -> AsyncIterator[KeyValuePlacementStore]:
    async with connect(jetstream_server.url) as nc:
        yield await KeyValuePlacementStore.open(
            nc.jetstream(), f"S{new_nuid(10)}", ttl=10.0
        )


async def test_a_kv_bucket_is_a_placement_store(store: KeyValuePlacementStore) -> None:
    assert isinstance(store, PlacementStore)
    assert store.ttl == 10.0


async def test_the_kv_store_keeps_the_contract(store: KeyValuePlacementStore) -> None:
    first = await store.create("shards/t/1", b"a")
    with pytest.raises(PlacementConflict):
        await store.create("shards/t/1", b"b")
    second = await store.update("shards/t/1", b"a", first)
    assert second > first
    with pytest.raises(PlacementConflict):
        await store.update("shards/t/1", b"b", first)
    entry = await store.get("shards/t/1")
    assert entry is not None and (entry.value, entry.revision) == (b"a", second)
    await store.create("members/n-1", b"{}")
    await store.create("shards/t/0", b"b")
    assert [e.key for e in await store.list("shards/")] == ["shards/t/0", "shards/t/1"]
    with pytest.raises(PlacementConflict):
        await store.delete("shards/t/1", first)
    await store.delete("shards/t/1", second)
    assert await store.get("shards/t/1") is None
    assert await store.create("shards/t/1", b"c") > second  # free again
    assert await store.get("absent") is None


async def test_a_kv_entry_expires_after_the_buckets_ttl(
    jetstream_server: NatsServer,
) -> None:
    async with connect(jetstream_server.url) as nc:
        store = await KeyValuePlacementStore.open(
            nc.jetstream(), f"S{new_nuid(10)}", ttl=1.0
        )
        await store.create("shards/t/1", b"a")
        with anyio.fail_after(10):
            while await store.get("shards/t/1") is not None:
                await anyio.sleep(0.1)  # the server's expiry, on its own clock
        assert await store.create("shards/t/1", b"b") > 0


async def test_two_nodes_share_a_kv_bucket_for_leases_and_members(
    store: KeyValuePlacementStore,
) -> None:
    log = Log()
    entity = Entity("t", recorders(log), shards=4)
    async with (
        ActorSystem() as system,
        Sharding(system, [entity], store=store, node="a") as a,
        Sharding(system, [entity], store=store, node="b") as b,
    ):
        await anyio.wait_all_tasks_blocked()
        for i in range(12):
            assert await a.entity_ref(entity, str(i)).ask(i) == 1
            assert await b.entity_ref(entity, str(i)).ask("get") == [i]
        leases = {e.key: e.value for e in await store.list("shards/t/")}
        assert set(leases) == {f"shards/t/{shard_of(str(i), 4)}" for i in range(12)}
        assert set(leases.values()) <= {b"a", b"b"}
        assert [e.key for e in await store.list("regions/t/")] == [
            "regions/t/a",
            "regions/t/b",
        ]
    assert await store.list("shards/") == []  # given back on leaving
