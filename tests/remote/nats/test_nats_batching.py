"""The writer drains its outbound channel with receive_many: commands queued
before it wakes go out in one socket write."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from anyio.abc import ByteStream

from actors.nats import NatsServer, connect

pytestmark = pytest.mark.anyio


class CountingStream(ByteStream):
    """A byte stream that counts the writes through it."""

    def __init__(self, inner: ByteStream) -> None:
        self.inner = inner
        self.writes: list[int] = []

    async def send(self, item: bytes) -> None:
        self.writes.append(len(item))
        await self.inner.send(item)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self.inner.receive(max_bytes)

    async def send_eof(self) -> None:
        await self.inner.send_eof()

    async def aclose(self) -> None:
        await self.inner.aclose()

    @property
    def extra_attributes(self) -> Any:
        return self.inner.extra_attributes


async def test_publishes_queued_before_the_writer_wakes_go_out_in_one_write(
    nats_server: NatsServer, subject: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    streams: list[CountingStream] = []
    connect_tcp = anyio.connect_tcp

    async def counting_connect_tcp(*args: Any, **kwargs: Any) -> CountingStream:
        stream = CountingStream(await connect_tcp(*args, **kwargs))
        streams.append(stream)
        return stream

    monkeypatch.setattr(anyio, "connect_tcp", counting_connect_tcp)
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        (stream,) = streams
        before = len(stream.writes)
        for i in range(1000):
            nc.publish_nowait(subject, b"%d" % i)
        await nc.flush()
        # 1,000 PUBs and the flush's PING, queued before the writer ran.
        assert len(stream.writes) - before == 1
        assert nc.statistics().writes == len(stream.writes) - 1  # CONNECT: 1 more
        got = [(await sub.next_msg(timeout=5)).data for _ in range(1000)]
        assert got == [b"%d" % i for i in range(1000)]


async def test_awaited_publishes_in_a_loop_are_batched_too(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject, max_pending=10_000)
        await nc.flush()
        writes = nc.statistics().writes
        for i in range(5000):
            await nc.publish(subject, b"%d" % i)
        await nc.flush()
        assert nc.statistics().writes - writes <= 5
        for i in range(5000):
            assert (await sub.next_msg(timeout=5)).data == b"%d" % i
