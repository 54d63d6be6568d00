"""Fixtures for the NATS client's tests: fake servers and fresh subjects. The
real ``nats-server`` fixtures (``nats_server``, ``nats_server_factory``) come from
the test kit's pytest plugin (``actors.testing.plugin``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress

import anyio
import pytest
from anyio.abc import SocketAttribute, SocketStream

from actors.nats._protocol import new_nuid


@pytest.fixture
def subject() -> str:
    """A subject no other test uses."""
    return f"test.{new_nuid(12)}"


INFO = (
    b'INFO {"server_id":"FAKE","version":"2.10.0","proto":1,"headers":true,'
    b'"max_payload":1048576}\r\n'
)


@asynccontextmanager
async def fake_server(
    handler: Callable[[SocketStream], Awaitable[None]],
) -> AsyncIterator[str]:
    """A TCP server on a loopback port running ``handler`` per connection;
    yields its URL."""
    async with (
        await anyio.create_tcp_listener(local_host="127.0.0.1") as listener,
        anyio.create_task_group() as tg,
    ):
        port = listener.extra(SocketAttribute.local_port)

        async def serve(stream: SocketStream) -> None:
            async with stream:
                with suppress(anyio.BrokenResourceError, anyio.EndOfStream, OSError):
                    await handler(stream)

        tg.start_soon(listener.serve, serve)
        try:
            yield f"nats://127.0.0.1:{port}"
        finally:
            tg.cancel_scope.cancel()


async def read_until(stream: SocketStream, marker: bytes, buffer: bytearray) -> None:
    """Read from ``stream`` into ``buffer`` until ``marker`` is in it."""
    while marker not in buffer:
        buffer += await stream.receive()
