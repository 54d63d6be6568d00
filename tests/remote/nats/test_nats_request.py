"""Request/reply against a real nats-server, on asyncio, uvloop and Trio."""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio
import pytest

from actors.nats import (
    ConnectionClosedError,
    NatsServer,
    NoRespondersError,
    RequestTimeoutError,
    connect,
)
from actors.nats._client import Client

pytestmark = pytest.mark.anyio


async def _echo(
    nc: Client, subject: str, *, task_status=anyio.TASK_STATUS_IGNORED
) -> None:  # type: ignore[no-untyped-def]
    sub = await nc.subscribe(subject)
    await nc.flush()
    task_status.started()
    async for msg in sub:
        assert msg.reply is not None
        await nc.publish(msg.reply, b"echo:" + msg.data, headers=msg.headers)


async def test_a_request_gets_its_reply(nats_server: NatsServer, subject: str) -> None:
    async with (
        connect(nats_server.url) as nc,
        connect(nats_server.url) as responder,
        anyio.create_task_group() as tg,
    ):
        await tg.start(_echo, responder, subject)
        reply = await nc.request(subject, b"ping", headers={"K": "v"})
        assert reply.data == b"echo:ping"
        assert reply.headers == {"K": "v"}
        tg.cancel_scope.cancel()


async def test_concurrent_requests_each_get_their_own_reply(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc, anyio.create_task_group() as tg:
        await tg.start(_echo, nc, subject)
        results: dict[int, bytes] = {}

        async def ask(i: int) -> None:
            results[i] = (await nc.request(subject, b"%d" % i)).data

        async with anyio.create_task_group() as asks:
            for i in range(200):
                asks.start_soon(ask, i)
        assert results == {i: b"echo:%d" % i for i in range(200)}
        assert nc._replies == {}
        tg.cancel_scope.cancel()


async def test_a_request_without_responders_fails_fast(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        started = time.monotonic()
        with pytest.raises(NoRespondersError, match=subject):
            await nc.request(subject, b"anyone?", timeout=30)
        assert time.monotonic() - started < 5
        assert nc._replies == {}


async def test_a_request_nobody_answers_times_out(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        await nc.subscribe(subject)  # listens, never answers
        await nc.flush()
        with pytest.raises(RequestTimeoutError):
            await nc.request(subject, b"", timeout=0.05)
        with pytest.raises(TimeoutError):
            await nc.request(subject, b"", timeout=0.05)
        assert nc._replies == {}


async def test_a_cancelled_request_leaves_nothing_behind_and_its_late_reply_is_counted(
    nats_server: NatsServer, subject: str
) -> None:
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(nc.request, subject, b"")
                request = await sub.next_msg(timeout=5)
                scope.cancel()
        assert nc._replies == {}
        assert request.reply is not None
        await nc.publish(request.reply, b"too late")
        await nc.flush()
        await nc.flush()
        assert nc.statistics().late_replies == 1


async def test_a_request_pending_when_the_client_closes_fails_with_closed(
    nats_server: NatsServer, subject: str
) -> None:
    errors: list[BaseException] = []
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()

        async def ask() -> None:
            try:
                await nc.request(subject, b"", timeout=30)
            except ConnectionClosedError as exc:
                errors.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await sub.next_msg(timeout=5)
            await nc.close()
    assert len(errors) == 1


async def test_a_custom_inbox_prefix_is_enough_for_a_user_scoped_to_it(
    nats_server_factory: Callable[..., NatsServer],
) -> None:
    # As nats.py's inbox_prefix: a user who may only use app.> can request.
    server = nats_server_factory(
        config=(
            "authorization { users = [ {user: app, password: pw, permissions: "
            '{publish: "app.>", subscribe: "app.>"}} ] }\n'
        )
    )
    options = {"user": "app", "password": "pw"}
    async with (
        connect(server.url, inbox_prefix="app.replies", **options) as nc,
        connect(server.url, **options) as responder,
        anyio.create_task_group() as tg,
    ):
        await tg.start(_echo, responder, "app.echo")
        reply = await nc.request("app.echo", b"ping", timeout=5)
        assert reply.data == b"echo:ping"
        assert reply.subject.startswith("app.replies.")
        assert nc.new_inbox().startswith("app.replies.")
        tg.cancel_scope.cancel()
    errors: list[Exception] = []
    async with connect(server.url, error_callback=errors.append, **options) as nc:
        # The default _INBOX prefix is outside the user's scope: no reply.
        with pytest.raises(RequestTimeoutError):
            await nc.request("app.echo", b"ping", timeout=0.3)
    assert any("_INBOX" in str(error) for error in errors), errors


@pytest.mark.parametrize("prefix", ["", "a..b", "a.*", "a.>", "a b", "a."])
def test_a_bad_inbox_prefix_is_refused(prefix: str) -> None:
    with pytest.raises(ValueError, match="inbox_prefix"):
        Client("nats://127.0.0.1:4222", inbox_prefix=prefix)
