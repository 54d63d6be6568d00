"""A node leaves within its ``stop_timeout`` whatever the broker does: after
a restart of the NATS server in the middle of a flood, and with the server
frozen (SIGSTOP) so that nothing more can be written; and its leaving logs
no traceback (a heartbeat due while it leaves is not sent, quietly)."""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, MailboxFull
from actors.nats import NatsServer
from actors.remote import Remote

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]

STOP_TIMEOUT = 1.0
#: What leaving may take beyond the stop timeout (the actors' own stop, the
#: embedded parts), generous for a loaded machine: the old code took the
#: client's close_timeout (5 s) more, or never ended.
SLACK = 2.5
FAST_RECONNECT = {"reconnect_wait": 0.01, "max_reconnect_wait": 0.1}


class Sink(Actor):
    def receive(self, message: Any) -> Any:
        return message


@pytest.fixture
def server() -> Iterator[NatsServer]:
    with NatsServer() as started:
        yield started


def node(server: NatsServer, name: str, **options: Any) -> ActorSystem:
    return ActorSystem(
        remote=Remote(
            server.url,
            system="brk",
            node=name,
            stop_timeout=STOP_TIMEOUT,
            heartbeat_interval=0.02,
            client_options=FAST_RECONNECT,
            **options,
        )
    )


async def test_a_node_flooding_a_peer_across_a_broker_restart_leaves_in_time(
    server: NatsServer,
) -> None:
    async with node(server, "b") as b:
        b.remote.register("sink", b.spawn(Sink, name="sink"))
        with anyio.fail_after(60):
            async with node(server, "a") as a:
                ref = await a.remote.lookup("b", "sink", timeout=10)
                sent = 0
                enough = anyio.Event()

                async def flood() -> None:
                    nonlocal sent
                    while True:
                        await ref.send(b"x" * 100)
                        sent += 1
                        if sent == 20_000:
                            enough.set()

                async with anyio.create_task_group() as tg:
                    tg.start_soon(flood)
                    await enough.wait()
                    await anyio.to_thread.run_sync(server.stop)
                    await anyio.to_thread.run_sync(server.start)
                    # A loop of waiting sends in a cancelled scope ends
                    # (each park raises the cancellation first, on asyncio
                    # too: the old code went on for seconds or for good).
                    cancelled_at = anyio.current_time()
                    tg.cancel_scope.cancel()
                left_at = anyio.current_time()
                assert left_at - cancelled_at < SLACK
            assert anyio.current_time() - left_at < STOP_TIMEOUT + SLACK


async def test_a_node_leaves_a_frozen_broker_within_its_stop_timeout_quietly(
    server: NatsServer, caplog: pytest.LogCaptureFixture
) -> None:
    pid = server.pid
    assert pid is not None
    frozen = False
    try:
        async with node(server, "b") as b:
            b.remote.register("sink", b.spawn(Sink, name="sink"))
            with anyio.fail_after(60):
                async with node(server, "a") as a:
                    ref = await a.remote.lookup("b", "sink", timeout=10)
                    # Depended on: heartbeats to b every 20 ms, also while a
                    # leaves.
                    watcher = a.spawn(Watcher, ref)
                    assert await watcher.ask("watching", timeout=10) == "watching"
                    os.kill(pid, signal.SIGSTOP)
                    frozen = True
                    # Tell until the outbound buffer is full: nothing can be
                    # written any more.
                    while True:
                        try:
                            for _ in range(1000):
                                ref.tell(b"x" * 1000)
                        except MailboxFull:
                            break
                        await anyio.sleep(0)
                    caplog.clear()
                    caplog.set_level(logging.DEBUG, logger="actors.remote")
                    left_at = anyio.current_time()
                assert anyio.current_time() - left_at < STOP_TIMEOUT + SLACK
                tracebacks = [r for r in caplog.records if r.exc_info]
                assert tracebacks == [], [r.getMessage() for r in tracebacks]
                os.kill(pid, signal.SIGCONT)
                frozen = False
    finally:
        if frozen:
            os.kill(pid, signal.SIGCONT)


class Watcher(Actor):
    def __init__(self, target: Any) -> None:
        self.target = target

    def on_start(self) -> None:
        self.context.watch(self.target)

    def receive(self, message: Any) -> Any:
        return message
