"""Publish/subscribe against a real nats-server, on asyncio, uvloop and Trio."""

from __future__ import annotations

import anyio
import pytest

from actors.nats import (
    ConnectionClosedError,
    MaxPayloadError,
    Msg,
    NatsServer,
    NoRespondersError,
    OutboundBufferFullError,
    SlowConsumerError,
    connect,
)
from actors.nats._protocol import new_nuid

pytestmark = pytest.mark.anyio


async def test_a_published_message_reaches_a_subscriber(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        await nc.publish(subject, b"hello")
        msg = await sub.next_msg(timeout=5)
        assert (msg.subject, msg.data, msg.reply, msg.headers) == (
            subject,
            b"hello",
            None,
            None,
        )


async def test_messages_arrive_in_publish_order_between_two_clients(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as a, connect(nats_server.url) as b:
        sub = await b.subscribe(subject)
        await b.flush()
        for i in range(1000):
            a.publish_nowait(subject, str(i).encode())
        got = [int((await sub.next_msg(timeout=5)).data) for _ in range(1000)]
        assert got == list(range(1000))


async def test_headers_and_reply_subject_travel_with_the_message(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        headers = {"Trace-Id": "abc 123", "X-Empty": ""}
        await nc.publish(subject, b"body", reply="my.reply", headers=headers)
        msg = await sub.next_msg(timeout=5)
        assert msg.headers == headers
        assert msg.reply == "my.reply"
        assert msg.data == b"body"
        assert msg.status is None


async def test_an_empty_payload_is_delivered(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        await nc.publish(subject)
        assert (await sub.next_msg(timeout=5)).data == b""


async def test_wildcards_and_queue_groups(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        star = await nc.subscribe(f"{subject}.*")
        full = await nc.subscribe(f"{subject}.>")
        q1 = await nc.subscribe(f"{subject}.q", queue="workers")
        q2 = await nc.subscribe(f"{subject}.q", queue="workers")
        await nc.flush()
        await nc.publish(f"{subject}.a.b", b"deep")
        await nc.publish(f"{subject}.a", b"flat")
        for _ in range(10):
            await nc.publish(f"{subject}.q", b"job")
        await nc.flush()
        assert (await star.next_msg(timeout=5)).data == b"flat"
        assert (await full.next_msg(timeout=5)).data == b"deep"
        assert (await full.next_msg(timeout=5)).data == b"flat"
        assert q1.delivered + q2.delivered == 10


async def test_unsubscribe_with_max_ends_the_subscription_after_that_many(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await sub.unsubscribe(max_msgs=3)
        await nc.flush()
        for i in range(10):
            await nc.publish(subject, bytes([i]))
        await nc.flush()
        got = [msg.data async for msg in sub]
        assert got == [b"\x00", b"\x01", b"\x02"]
        assert sub.delivered == 3


async def test_unsubscribe_stops_delivery_and_keeps_what_was_buffered(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        await nc.publish(subject, b"1")
        await nc.flush()
        await sub.unsubscribe()
        await nc.publish(subject, b"2")
        await nc.flush()
        assert [msg.data async for msg in sub] == [b"1"]


async def test_a_callback_subscription_is_called_by_the_reader(
    nats_server: NatsServer, subject: str
) -> None:
    got: list[bytes] = []
    done = anyio.Event()

    def on_msg(msg: Msg) -> None:
        got.append(msg.data)
        if len(got) == 3:
            done.set()

    async with connect(nats_server.url) as nc:
        await nc.subscribe(subject, callback=on_msg)
        await nc.flush()
        for data in (b"a", b"b", b"c"):
            await nc.publish(subject, data)
        with anyio.fail_after(5):
            await done.wait()
        assert got == [b"a", b"b", b"c"]


async def test_a_full_subscription_drops_and_counts_and_reports_a_slow_consumer(
    nats_server: NatsServer, subject: str
) -> None:
    errors: list[Exception] = []
    async with connect(nats_server.url, error_callback=errors.append) as nc:
        sub = await nc.subscribe(subject, max_pending=5)
        await nc.flush()
        for i in range(12):
            await nc.publish(subject, bytes([i]))
        await nc.flush()
        assert sub.dropped == 7
        assert sub.pending == 5
        assert nc.statistics().dropped == 7
        assert [type(e) for e in errors] == [SlowConsumerError]
        assert [(await sub.next_msg()).data for _ in range(5)] == [
            bytes([i]) for i in range(5)
        ]


async def test_a_payload_over_max_payload_raises_at_the_caller_and_the_connection_lives(
    nats_server_factory, subject: str
) -> None:
    server = nats_server_factory(config="max_payload: 1024\n")
    async with connect(server.url) as nc:
        assert nc.max_payload == 1024
        sub = await nc.subscribe(subject)
        await nc.flush()
        with pytest.raises(MaxPayloadError, match="max_payload of 1024"):
            await nc.publish(subject, b"x" * 1025)
        with pytest.raises(ValueError):
            nc.publish_nowait(subject, b"x" * 1000, headers={"K": "v" * 100})
        await nc.publish(subject, b"x" * 1024)
        assert (await sub.next_msg(timeout=5)).data == b"x" * 1024
        assert nc.is_connected


async def test_echo_false_does_not_deliver_own_messages(
    nats_server: NatsServer, subject: str
) -> None:
    async with (
        connect(nats_server.url, echo=False) as nc,
        connect(nats_server.url) as other,
    ):
        sub = await nc.subscribe(subject)
        await nc.flush()
        await nc.publish(subject, b"mine")
        await other.publish(subject, b"theirs")
        assert (await sub.next_msg(timeout=5)).data == b"theirs"


async def test_bad_arguments_raise_naming_the_argument(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        with pytest.raises(ValueError, match="subject"):
            await nc.publish("has space", b"")
        with pytest.raises(ValueError, match="subject"):
            await nc.publish("", b"")
        with pytest.raises(TypeError, match="payload"):
            await nc.publish(subject, "text")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="reply"):
            await nc.publish(subject, b"", reply="a b")
        with pytest.raises(ValueError, match="headers"):
            await nc.publish(subject, b"", headers={"Bad Key": "v"})
        with pytest.raises(ValueError, match="headers"):
            await nc.publish(subject, b"", headers={"K": "line\r\nbreak"})
        with pytest.raises(ValueError, match="max_pending"):
            await nc.subscribe(subject, max_pending=0)
        with pytest.raises(ValueError, match="max_msgs"):
            sub = await nc.subscribe(subject)
            await sub.unsubscribe(max_msgs=0)
        with pytest.raises(ValueError, match="timeout"):
            await nc.request(subject, b"", timeout=-1)
        assert nc.is_connected
    with pytest.raises(ValueError, match="servers"):
        async with connect([]):
            pass
    with pytest.raises(ValueError, match="reconnect_wait"):
        async with connect(nats_server.url, reconnect_wait=-1):
            pass
    with pytest.raises(TypeError, match="tls"):
        async with connect(nats_server.url, tls=True):
            pass


async def test_a_closed_client_refuses_work_and_ends_subscriptions(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        await nc.publish(subject, b"last")
        await nc.flush()
    assert nc.is_closed
    assert [msg.data async for msg in sub] == [b"last"]
    with pytest.raises(ConnectionClosedError):
        await nc.publish(subject, b"")
    with pytest.raises(ConnectionClosedError):
        await nc.subscribe(subject)
    with pytest.raises(ConnectionClosedError):
        await nc.flush()


async def test_leaving_the_block_writes_what_was_queued(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as receiver:
        sub = await receiver.subscribe(subject)
        await receiver.flush()
        async with connect(nats_server.url) as sender:
            for i in range(500):
                sender.publish_nowait(subject, b"%d" % i)
        got = [(await sub.next_msg(timeout=5)).data for _ in range(500)]
        assert got[-1] == b"499"


async def test_drain_delivers_what_is_buffered_then_ends_iteration(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        for i in range(5):
            await nc.publish(subject, bytes([i]))
        await nc.flush()
        await nc.drain()
        assert nc.is_closed
        assert len([msg async for msg in sub]) == 5


async def test_a_publish_waits_while_the_buffer_is_full_and_connected(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url, max_pending_bytes=1000) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        for _ in range(50):
            await nc.publish(subject, b"x" * 100)
        with pytest.raises(OutboundBufferFullError):
            for _ in range(50):
                nc.publish_nowait(subject, b"x" * 100)
        await nc.flush()
        count = 0
        while sub.pending:
            await sub.next_msg()
            count += 1
        assert count >= 50


async def test_next_msgs_takes_a_burst_in_one_call(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        for i in range(10):
            nc.publish_nowait(subject, bytes([i]))
        await nc.flush()
        batch = await sub.next_msgs(100)
        assert [msg.data for msg in batch] == [bytes([i]) for i in range(10)]
        await sub.unsubscribe()
        with pytest.raises(anyio.EndOfStream):
            await sub.next_msgs(100)
        with pytest.raises(ValueError):
            await sub.next_msgs(0)


async def test_drain_delivers_what_the_server_routed_before_and_then_ends(
    nats_server: NatsServer,
) -> None:
    async with connect(nats_server.url) as a, connect(nats_server.url) as b:
        subject = "drain." + new_nuid(10)
        got: list[bytes] = []
        sub = await b.subscribe(subject, callback=lambda msg: got.append(msg.data))
        await b.flush()  # the server knows the subscription
        for i in range(2000):
            a.publish_nowait(subject, b"%d" % i)
        await a.flush()  # the server routed every one to b's connection
        await sub.drain()
        # Every message came, in order, though b may not have read one of
        # them from its socket when the drain began.
        assert got == [b"%d" % i for i in range(2000)]
        # The server took the UNSUB: a request now has no responder.
        with pytest.raises(NoRespondersError):
            await a.request(subject, b"", timeout=5)
        with pytest.raises(ValueError, match="timeout"):
            await sub.drain(0)
