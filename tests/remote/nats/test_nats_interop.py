"""Interop with nats-py, an independent implementation of the same protocol
(asyncio only: nats-py runs on asyncio)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from actors.nats import NatsServer, connect

nats = pytest.importorskip("nats")

pytestmark = pytest.mark.anyio


@pytest.fixture
async def peer(anyio_backend: Any, nats_server: NatsServer) -> AsyncIterator[Any]:
    """A connected nats-py client (the test is skipped on Trio)."""
    if anyio_backend[0] != "asyncio":
        pytest.skip("nats-py runs on asyncio only")
    client = await nats.connect(nats_server.url)
    try:
        yield client
    finally:
        await client.close()


async def test_a_nats_py_publish_reaches_our_subscriber(
    nats_server: NatsServer, subject: str, peer: Any
) -> None:
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        await peer.publish(subject, b"from nats-py", headers={"K": "v"})
        await peer.publish(subject, b"plain", reply="r.1")
        await peer.flush()
        first = await sub.next_msg(timeout=5)
        second = await sub.next_msg(timeout=5)
        assert (first.data, first.headers) == (b"from nats-py", {"K": "v"})
        assert (second.data, second.reply, second.headers) == (b"plain", "r.1", None)


async def test_our_publish_reaches_a_nats_py_subscriber(
    nats_server: NatsServer, subject: str, peer: Any
) -> None:
    sub = await peer.subscribe(subject)
    await peer.flush()
    async with connect(nats_server.url) as nc:
        await nc.publish(subject, b"from us", headers={"Trace": "t-1"})
        await nc.publish(subject, b"x" * 100_000)
    first = await sub.next_msg(timeout=5)
    second = await sub.next_msg(timeout=5)
    assert first.data == b"from us" and first.headers == {"Trace": "t-1"}
    assert second.data == b"x" * 100_000


async def test_a_nats_py_request_gets_our_reply(
    nats_server: NatsServer, subject: str, peer: Any
) -> None:
    async with connect(nats_server.url) as nc, anyio.create_task_group() as tg:
        sub = await nc.subscribe(subject)
        await nc.flush()

        async def respond() -> None:
            async for msg in sub:
                assert msg.reply is not None
                await nc.publish(msg.reply, msg.data.upper())

        tg.start_soon(respond)
        for word in (b"alpha", b"beta"):
            reply = await peer.request(subject, word, timeout=5)
            assert reply.data == word.upper()
        tg.cancel_scope.cancel()


async def test_our_request_gets_a_nats_py_reply(
    nats_server: NatsServer, subject: str, peer: Any
) -> None:
    async def respond(msg: Any) -> None:
        await msg.respond(b"re:" + msg.data)

    await peer.subscribe(subject, cb=respond)
    await peer.flush()
    async with connect(nats_server.url) as nc:
        for i in range(20):
            reply = await nc.request(subject, b"%d" % i, timeout=5)
            assert reply.data == b"re:%d" % i
