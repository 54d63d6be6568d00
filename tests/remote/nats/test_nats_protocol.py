"""The wire: the parser on partial frames, and servers that misbehave (fake
TCP servers sending junk, never answering, pinging) or refuse a permission."""

from __future__ import annotations

import json
from collections.abc import Callable

import anyio
import pytest
from anyio.abc import SocketStream
from hypothesis import given
from hypothesis import strategies as st

from actors.nats import (
    ConnectionClosedError,
    DisconnectedError,
    NatsServer,
    NoServersError,
    PermissionsViolation,
    ProtocolError,
    StaleConnectionError,
    connect,
)
from actors.nats._protocol import (
    OK,
    PING,
    PONG,
    ErrLine,
    Msg,
    Parser,
    ServerInfo,
    encode_headers,
    parse_headers,
)

from .conftest import INFO, fake_server, read_until

STREAM = (
    INFO
    + b"MSG foo.bar 1 5\r\nhello\r\n"
    + b"PING\r\n"
    + b"MSG foo 22 reply.to 0\r\n\r\n"
    + b"HMSG foo 3 _INBOX.x 24 26\r\nNATS/1.0\r\nA: 1\r\nA: 2\r\n\r\nhi\r\n"
    + b"HMSG foo 4 16 16\r\nNATS/1.0 503\r\n\r\n\r\n"
    + b"+OK\r\nPONG\r\n-ERR 'Permissions Violation for Publish to \"x\"'\r\n"
    + b"MSG bin 5 4\r\n\r\n\r\n\r\n"
)


def _check(ops: list[object]) -> None:
    assert type(ops[0]) is ServerInfo and ops[0]["max_payload"] == 1048576
    first, second, third, fourth = ops[1], ops[3], ops[4], ops[5]
    assert isinstance(first, Msg) and (first.subject, first.sid, first.data) == (
        "foo.bar",
        1,
        b"hello",
    )
    assert ops[2] is PING
    assert isinstance(second, Msg) and (second.reply, second.data) == ("reply.to", b"")
    assert isinstance(third, Msg)
    assert third.headers == {"A": "1, 2"} and third.data == b"hi"
    assert third.reply == "_INBOX.x" and third.status is None
    assert isinstance(fourth, Msg) and fourth.status == 503 and fourth.data == b""
    assert ops[6] is OK and ops[7] is PONG
    assert ops[8] == ErrLine('Permissions Violation for Publish to "x"')
    last = ops[9]
    assert isinstance(last, Msg) and last.data == b"\r\n\r\n"
    assert len(ops) == 10


def test_the_parser_reads_every_operation_of_a_stream() -> None:
    _check(Parser().parse(STREAM))  # type: ignore[arg-type]


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_the_parser_gives_the_same_operations_however_the_stream_is_split(
    cuts: list[int],
) -> None:
    parser = Parser()
    ops: list[object] = []
    start = 0
    for cut in [*sorted(cuts), len(STREAM)]:
        ops += parser.parse(STREAM[start:cut])
        start = cut
    _check(ops)


@pytest.mark.parametrize(
    "junk",
    [
        b"HELLO WORLD\r\n",
        b"MSG foo\r\n",
        b"MSG foo 1 -3\r\n",
        b"MSG foo 1 1_0\r\n",
        b"MSG foo x 3\r\n",
        b"MSG \xff\xfe 1 2\r\nhi\r\n",
        b"MSG foo 1 r \xff 2\r\nhi\r\n",
        b"MSG foo 1 3\r\nabcXY",
        b"HMSG foo 1 10 5\r\n",
        b"HMSG foo 1 5 5\r\nHTTP/\r\n",
        b"INFO {not json}\r\n",
        b"INFO [1]\r\n",
        b"x" * (70 * 1024),
    ],
)
def test_the_parser_rejects_junk_with_a_protocol_error(junk: bytes) -> None:
    with pytest.raises(ProtocolError):
        Parser().parse(junk)


def test_headers_encode_and_parse_back() -> None:
    raw = encode_headers({"Trace": "a b", "Empty": ""})
    assert raw == b"NATS/1.0\r\nTrace: a b\r\nEmpty: \r\n\r\n"
    assert parse_headers(raw) == ({"Trace": "a b", "Empty": ""}, None, "")
    assert parse_headers(b"NATS/1.0 408 Request Timeout\r\n\r\n") == (
        {},
        408,
        "Request Timeout",
    )


async def _handshake(stream: SocketStream) -> dict[str, object]:
    await stream.send(INFO)
    buffer = bytearray()
    await read_until(stream, b"PING\r\n", buffer)
    await stream.send(b"PONG\r\n")
    line = bytes(buffer).split(b"\r\n", 1)[0]
    assert line.startswith(b"CONNECT ")
    connect_options: dict[str, object] = json.loads(line[8:])
    return connect_options


async def _wait_for_close(stream: SocketStream) -> None:
    with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
        while True:
            await stream.receive()


@pytest.mark.anyio
async def test_junk_instead_of_info_fails_the_connect_at_once() -> None:
    async def handler(stream: SocketStream) -> None:
        await stream.send(b"SSH-2.0-OpenSSH_9.6\r\n")
        await _wait_for_close(stream)

    async with fake_server(handler) as url:
        with anyio.fail_after(5), pytest.raises(NoServersError) as caught:
            async with connect(url, connect_timeout=30):
                pass
        assert isinstance(caught.value.__cause__, ProtocolError)


@pytest.mark.anyio
async def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    async def handler(stream: SocketStream) -> None:
        await stream.send(INFO)
        await _wait_for_close(stream)

    async with fake_server(handler) as url:
        with anyio.fail_after(5), pytest.raises(NoServersError) as caught:
            async with connect(url, connect_timeout=0.2):
                pass
        assert isinstance(caught.value.__cause__, TimeoutError)


@pytest.mark.anyio
async def test_junk_after_the_handshake_closes_the_client_cleanly() -> None:
    async def handler(stream: SocketStream) -> None:
        await _handshake(stream)
        await read_until(stream, b"SUB foo 1\r\n", bytearray())
        await stream.send(b"MSG foo 1 2\r\nhi\r\n\x00\xff\xfe junk \r\n")
        await _wait_for_close(stream)

    ends = 0
    async with fake_server(handler) as url:
        for reconnect in ({"allow_reconnect": False}, {"max_reconnect_attempts": 2}):
            async with connect(url, reconnect_wait=0.01, **reconnect) as nc:  # type: ignore[arg-type]
                sub = await nc.subscribe("foo")
                with anyio.fail_after(5):
                    await nc.wait_closed()
                assert isinstance(nc.last_error, ProtocolError)
                assert nc.is_closed
                with pytest.raises(ConnectionClosedError):  # after what came
                    async for msg in sub:
                        assert msg.data == b"hi"
                await anyio.lowlevel.checkpoint()  # the body is not cancelled
                ends += 1
        assert ends == 2


@pytest.mark.anyio
async def test_the_connect_line_says_what_the_client_needs() -> None:
    seen: list[dict[str, object]] = []

    async def handler(stream: SocketStream) -> None:
        seen.append(await _handshake(stream))
        await _wait_for_close(stream)

    async with (
        fake_server(handler) as url,
        connect(url, name="probe", echo=False, close_timeout=0),
    ):
        pass
    options = seen[0]
    assert options["verbose"] is False and options["pedantic"] is False
    assert options["headers"] is True and options["no_responders"] is True
    assert options["echo"] is False and options["name"] == "probe"
    assert options["protocol"] == 1 and options["tls_required"] is False
    assert "lang" in options and "version" in options


@pytest.mark.anyio
async def test_the_client_answers_a_server_ping_and_reads_split_frames() -> None:
    got_pong = anyio.Event()

    async def handler(stream: SocketStream) -> None:
        await _handshake(stream)
        buffer = bytearray()
        await read_until(stream, b"SUB foo 1\r\n", buffer)
        for byte in b"MSG foo 1 5\r\nsplit\r\n":  # one byte per write
            await stream.send(bytes([byte]))
        await stream.send(b"PING\r\n")
        buffer.clear()
        await read_until(stream, b"PONG\r\n", buffer)
        got_pong.set()
        await _wait_for_close(stream)

    async with fake_server(handler) as url, connect(url, close_timeout=0) as nc:
        sub = await nc.subscribe("foo")
        assert (await sub.next_msg(timeout=5)).data == b"split"
        with anyio.fail_after(5):
            await got_pong.wait()


@pytest.mark.anyio
async def test_unanswered_pings_make_the_connection_stale() -> None:
    async def handler(stream: SocketStream) -> None:
        await _handshake(stream)
        await _wait_for_close(stream)  # never answers a PING again

    errors: list[Exception] = []
    async with (
        fake_server(handler) as url,
        connect(
            url,
            ping_interval=0.02,
            max_outstanding_pings=2,
            allow_reconnect=False,
            error_callback=errors.append,
        ) as nc,
    ):
        with anyio.fail_after(5):
            await nc.wait_closed()
        assert isinstance(nc.last_error, StaleConnectionError)


@pytest.mark.anyio
async def test_a_permissions_violation_is_reported_and_not_fatal(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    server = nats_server_factory(
        config=(
            "authorization { users = [ { user: u, password: p, permissions: "
            '{ publish: { deny: ["forbidden.>"] } } } ] }\n'
        )
    )
    errors: list[Exception] = []
    async with connect(
        server.url, user="u", password="p", error_callback=errors.append
    ) as nc:
        sub = await nc.subscribe(subject)
        await nc.publish("forbidden.x", b"no")
        await nc.flush()
        await nc.publish(subject, b"yes")
        assert (await sub.next_msg(timeout=5)).data == b"yes"
        assert nc.is_connected
        assert [type(e) for e in errors] == [PermissionsViolation]


@pytest.mark.anyio
async def test_servers_from_info_connect_urls_join_the_server_list() -> None:
    async def handler(stream: SocketStream) -> None:
        await stream.send(
            b'INFO {"server_id":"FAKE","max_payload":1024,'
            b'"connect_urls":["127.0.0.1:4999","[::1]:5000"]}\r\n'
        )
        await read_until(stream, b"PING\r\n", bytearray())
        await stream.send(b"PONG\r\n")
        await _wait_for_close(stream)

    async with fake_server(handler) as url, connect(url, close_timeout=0) as nc:
        assert nc.servers == [url, "nats://127.0.0.1:4999", "nats://[::1]:5000"]
        assert nc.max_payload == 1024


@pytest.mark.anyio
async def test_a_flush_whose_connection_breaks_fails_with_disconnected() -> None:
    async def handler(stream: SocketStream) -> None:
        await _handshake(stream)
        await read_until(stream, b"PING\r\n", bytearray())
        # The flush's PING is in; drop the connection without answering.

    async with (
        fake_server(handler) as url,
        connect(url, allow_reconnect=False) as nc,
    ):
        with anyio.fail_after(5), pytest.raises(DisconnectedError):
            await nc.flush()
        await nc.wait_closed()
