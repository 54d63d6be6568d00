"""The nats-server launcher: a free loopback port, the same port across a
restart, a clear error when the server cannot start."""

from __future__ import annotations

import socket

import pytest

from actors.nats import NatsServer, connect, embedded_nats_server, find_nats_server


def test_a_server_listens_on_loopback_and_restarts_on_the_same_port() -> None:
    with NatsServer() as server:
        assert server.running
        assert server.url == f"nats://127.0.0.1:{server.port}"
        socket.create_connection(("127.0.0.1", server.port), timeout=5).close()
        port, pid = server.port, server.pid
        server.stop()
        assert not server.running
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        server.start()
        assert server.port == port and server.pid != pid
    assert not server.running


def test_a_server_that_cannot_start_says_why() -> None:
    with pytest.raises(RuntimeError, match="exited"):
        NatsServer(config="this is { not a config").start()


def test_bad_arguments_raise_naming_the_argument(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match="port"):
        NatsServer(port=0)
    with pytest.raises(TypeError, match="args"):
        NatsServer(args="--user x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="startup_timeout"):
        NatsServer(startup_timeout=0)
    monkeypatch.setenv("ACTORS_NATS_SERVER", "/nonexistent/nats-server")
    with pytest.raises(FileNotFoundError, match="ACTORS_NATS_SERVER"):
        find_nats_server()


@pytest.mark.anyio
async def test_an_embedded_server_runs_inside_an_async_with(subject: str) -> None:
    async with embedded_nats_server() as server, connect(server.url) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        await nc.publish(subject, b"embedded")
        assert (await sub.next_msg(timeout=5)).data == b"embedded"
    assert not server.running
