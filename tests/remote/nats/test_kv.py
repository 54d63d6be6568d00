"""Key-value buckets of the anyio NATS client on a real ``nats-server -js``:
create, get, put, compare-and-set updates on revisions, delete, purge,
listing, TTL, and the layout nats.py shares."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors.nats import (
    BucketNotFoundError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValueConfig,
    NatsServer,
    WrongLastSequenceError,
    connect,
)
from actors.nats._protocol import new_nuid

nats = pytest.importorskip("nats")

pytestmark = pytest.mark.anyio


@pytest.fixture
def bucket() -> str:
    return f"B{new_nuid(10)}"


async def test_values_by_key_with_revisions(
    jetstream_server: NatsServer, bucket: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        kv = await nc.jetstream().create_key_value(KeyValueConfig(bucket, history=5))
        first = await kv.create("colour", b"blue")
        entry = await kv.get("colour")
        assert (entry.key, entry.value, entry.revision, entry.operation) == (
            "colour",
            b"blue",
            first,
            "PUT",
        )
        second = await kv.update("colour", b"green", first)
        assert second > first
        with pytest.raises(WrongLastSequenceError):
            await kv.update("colour", b"stale", first)
        with pytest.raises(KeyExistsError):
            await kv.create("colour", b"again")
        assert (await kv.get("colour")).value == b"green"
        assert (await kv.get("colour", revision=first)).value == b"blue"
        third = await kv.put("colour", b"red")
        assert (await kv.get("colour")).revision == third
        with pytest.raises(KeyNotFoundError) as caught:
            await kv.get("nothing")
        assert caught.value.key == "nothing"


async def test_a_deleted_key_is_gone_and_can_be_created_again(
    jetstream_server: NatsServer, bucket: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        kv = await nc.jetstream().create_key_value(KeyValueConfig(bucket))
        revision = await kv.create("k", b"v")
        with pytest.raises(WrongLastSequenceError):
            await kv.delete("k", last=revision + 100)
        marker = await kv.delete("k", last=revision)
        with pytest.raises(KeyNotFoundError):
            await kv.get("k")
        assert (await kv.entry("k")).operation == "DEL"
        again = await kv.create("k", b"again")
        assert again > marker
        assert (await kv.get("k")).value == b"again"
        await kv.purge("k")
        with pytest.raises(KeyNotFoundError):
            await kv.get("k")


async def test_of_concurrent_creates_of_one_key_one_wins(
    jetstream_server: NatsServer, bucket: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        kv = await nc.jetstream().create_key_value(KeyValueConfig(bucket))
        won: list[bytes] = []

        async def create(value: bytes) -> None:
            try:
                await kv.create("k", value)
            except KeyExistsError:
                return
            won.append(value)

        async with anyio.create_task_group() as tg:
            for value in (b"a", b"b", b"c", b"d"):
                tg.start_soon(create, value)
        assert len(won) == 1
        assert (await kv.get("k")).value == won[0]


async def test_keys_and_entries_by_filter(
    jetstream_server: NatsServer, bucket: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        kv = await nc.jetstream().create_key_value(KeyValueConfig(bucket))
        for key in ("a.1", "a.2", "b.1"):
            await kv.put(key, key.encode())
        await kv.put("a.1", b"newer")
        await kv.delete("a.2")
        assert sorted(await kv.keys()) == ["a.1", "b.1"]
        assert [e.value for e in await kv.entries("a.*")] == [b"newer"]
        with pytest.raises(ValueError):
            await kv.put("bad key", b"")
        with pytest.raises(BucketNotFoundError):
            await nc.jetstream().key_value(f"{bucket}x")
        opened = await nc.jetstream().key_value(bucket)
        assert (await opened.get("b.1")).value == b"b.1"


async def test_a_bucket_s_ttl_is_its_stream_s_max_age(
    jetstream_server: NatsServer, bucket: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        js = nc.jetstream()
        await js.create_key_value(KeyValueConfig(bucket, ttl=30.0))
        info = await js.stream_info(f"KV_{bucket}")
        assert info.config.max_age == 30.0
        assert info.config.duplicate_window == 30.0
        assert info.config.max_msgs_per_subject == 1
        await js.delete_key_value(bucket)


async def test_a_bucket_is_shared_with_nats_py(
    jetstream_server: NatsServer, bucket: str, anyio_backend: Any
) -> None:
    if anyio_backend[0] != "asyncio":
        pytest.skip("nats-py runs on asyncio only")
    async with connect(jetstream_server.url) as nc:
        kv = await nc.jetstream().create_key_value(KeyValueConfig(bucket, history=3))
        ours = await kv.put("from-us", b"hello")
        peer = await nats.connect(jetstream_server.url)
        try:
            theirs = await peer.jetstream().key_value(bucket)
            entry = await theirs.get("from-us")
            assert (entry.value, entry.revision) == (b"hello", ours)
            revision = await theirs.update("from-us", b"changed", last=ours)
            await theirs.put("from-them", b"hi")
        finally:
            await peer.close()
        mine = await kv.get("from-us")
        assert (mine.value, mine.revision) == (b"changed", revision)
        assert (await kv.get("from-them")).value == b"hi"
