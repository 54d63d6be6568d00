"""Reconnection: a server restarted on the same port, failover across the
server list, the disconnected buffer's bound, giving up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from actors.nats import (
    ConnectionClosedError,
    DisconnectedError,
    NatsServer,
    OutboundBufferFullError,
    connect,
)

pytestmark = pytest.mark.anyio

FAST = {"reconnect_wait": 0.01, "max_reconnect_wait": 0.1, "reconnect_jitter": 0.01}


class Disconnects:
    """An ``error_callback`` that lets a test wait for the next disconnection."""

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.errors: list[Exception] = []

    def __call__(self, error: Exception) -> None:
        self.errors.append(error)
        if isinstance(error, DisconnectedError | OSError | anyio.BrokenResourceError):
            self.event.set()

    async def wait(self) -> None:
        with anyio.fail_after(10):
            await self.event.wait()
        self.event = anyio.Event()


async def _stop(server: NatsServer) -> None:
    await anyio.to_thread.run_sync(server.stop)


async def _start(server: NatsServer) -> None:
    await anyio.to_thread.run_sync(server.start)


async def test_a_restart_restores_subscriptions_and_delivers_buffered_publishes(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    server = nats_server_factory()
    disconnects = Disconnects()
    async with connect(server.url, error_callback=disconnects, **FAST) as nc:
        before = await nc.subscribe(subject)
        await nc.flush()
        port = server.port
        await _stop(server)
        await disconnects.wait()
        assert not nc.is_connected
        during = await nc.subscribe(subject)  # made while disconnected
        for i in range(10):
            await nc.publish(subject, bytes([i]))
        await _start(server)
        assert server.port == port
        await nc.flush(timeout=10)  # waits for the reconnection
        assert nc.is_connected
        assert nc.statistics().reconnects == 1
        expected = [bytes([i]) for i in range(10)]
        assert [(await before.next_msg(timeout=5)).data for _ in range(10)] == expected
        assert [(await during.next_msg(timeout=5)).data for _ in range(10)] == expected
        assert before.sid != during.sid
        # The restored subscriptions keep working for new messages.
        await nc.publish(subject, b"after")
        assert (await before.next_msg(timeout=5)).data == b"after"


async def test_a_pending_unsubscribe_max_is_restored_with_the_remaining_count(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    server = nats_server_factory()
    disconnects = Disconnects()
    async with (
        connect(server.url, error_callback=disconnects, **FAST) as nc,
    ):
        sub = await nc.subscribe(subject)
        await sub.unsubscribe(max_msgs=5)
        await nc.flush()
        await nc.publish(subject, b"0")
        await nc.publish(subject, b"1")
        assert (await sub.next_msg(timeout=5)).data == b"0"
        assert (await sub.next_msg(timeout=5)).data == b"1"
        await _stop(server)
        await disconnects.wait()
        await _start(server)
        await nc.flush(timeout=10)
        async with connect(server.url) as other:
            for i in range(2, 10):
                await other.publish(subject, b"%d" % i)
        got = [msg.data async for msg in sub]
        assert got == [b"2", b"3", b"4"]


async def test_the_client_fails_over_to_the_next_server_of_its_list(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    first, second = nats_server_factory(), nats_server_factory()
    disconnects = Disconnects()
    async with connect(
        [first.url, second.url], error_callback=disconnects, **FAST
    ) as nc:
        assert nc.connected_url == first.url
        sub = await nc.subscribe(subject)
        await nc.flush()
        await _stop(first)
        await disconnects.wait()
        await nc.flush(timeout=10)
        assert nc.connected_url == second.url
        async with connect(second.url) as other:
            await other.publish(subject, b"via second")
        assert (await sub.next_msg(timeout=5)).data == b"via second"


async def test_publishing_while_disconnected_beyond_the_bound_raises(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    server = nats_server_factory()
    disconnects = Disconnects()
    async with connect(
        server.url, error_callback=disconnects, max_pending_bytes=1000, **FAST
    ) as nc:
        await _stop(server)
        await disconnects.wait()
        with pytest.raises(OutboundBufferFullError, match="disconnected"):
            for _ in range(100):
                await nc.publish(subject, b"x" * 100)
        with pytest.raises(OutboundBufferFullError, match="disconnected"):
            nc.publish_nowait(subject, b"x" * 100)
        assert nc.statistics().pending_bytes <= 1000


async def test_a_client_that_gives_up_reconnecting_closes_with_the_cause(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    server = nats_server_factory()
    options: dict[str, Any] = dict(FAST, max_reconnect_attempts=2)
    async with connect(server.url, **options) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        await _stop(server)
        with anyio.fail_after(10):
            await nc.wait_closed()
        assert nc.is_closed
        assert isinstance(nc.last_error, OSError)
        with pytest.raises(ConnectionClosedError):
            await sub.next_msg()
        with pytest.raises(ConnectionClosedError):
            await nc.publish(subject, b"")
        await anyio.lowlevel.checkpoint()  # the owner's body is not cancelled
        reached_the_end = True
    assert reached_the_end


async def test_without_reconnect_a_lost_connection_closes_the_client(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    server = nats_server_factory()
    async with connect(server.url, allow_reconnect=False) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        await _stop(server)
        with anyio.fail_after(10):
            await nc.wait_closed()
        with pytest.raises(ConnectionClosedError):
            async for _ in sub:
                pass
        await anyio.lowlevel.checkpoint()
        reached_the_end = True
    assert reached_the_end


async def test_requests_in_flight_across_a_restart_end_one_way_or_the_other(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    server = nats_server_factory()
    disconnects = Disconnects()
    outcomes: list[str] = []
    async with connect(server.url, error_callback=disconnects, **FAST) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()

        async def ask() -> None:
            try:
                await nc.request(subject, b"", timeout=0.5)
                outcomes.append("reply")
            except TimeoutError:
                outcomes.append("timeout")

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(ask)
            for _ in range(5):
                await sub.next_msg(timeout=5)  # received, never answered
            await _stop(server)
            await disconnects.wait()
            await _start(server)
        assert outcomes == ["timeout"] * 5


async def test_a_restart_never_duplicates_or_reorders_a_senders_messages(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    server = nats_server_factory()
    pub_down, sub_down = Disconnects(), Disconnects()
    async with (
        connect(server.url, error_callback=pub_down, **FAST) as pub,
        connect(server.url, error_callback=sub_down, **FAST) as sub_client,
    ):
        sub = await sub_client.subscribe(subject, max_pending=10_000)
        await sub_client.flush()
        got: list[int] = []

        async def receive_until(last: int) -> None:
            with anyio.fail_after(10):
                while not got or got[-1] < last:
                    got.append(int((await sub.next_msg()).data))

        for i in range(1000):
            await pub.publish(subject, b"%d" % i)
        await receive_until(999)
        await _stop(server)
        await pub_down.wait()
        await sub_down.wait()
        for i in range(1000, 2000):  # buffered while down: delivered or lost
            await pub.publish(subject, b"%d" % i)
        await _start(server)
        await pub.flush(timeout=10)
        await sub_client.flush(timeout=10)
        for i in range(2000, 3000):
            await pub.publish(subject, b"%d" % i)
        await receive_until(2999)
    assert got == sorted(set(got)), "a message came twice or out of order"
    assert got[:1000] == list(range(1000))
    assert got[-1000:] == list(range(2000, 3000))
