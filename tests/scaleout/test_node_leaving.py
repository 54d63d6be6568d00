"""A node process leaving on SIGTERM while it serves an ask: the asker gets
the ask's failure (``ActorStopped``, its actor was cancelled after the
grace) from the node itself, not ``NodeUnreachable`` from the failure
detector seconds later."""

from __future__ import annotations

import signal
import sys
from typing import Any

import anyio
import pytest

from actors import Actor, ActorStopped, ActorSystem
from actors.nats import NatsServer
from actors.testing import dilated

from . import _leaving
from ._process import node_process
from .conftest import remote

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]


class _Started(Actor[str]):
    def __init__(self, started: anyio.Event) -> None:
        self._started = started

    def receive(self, message: str) -> None:
        self._started.set()


def _backend_of(anyio_backend: Any) -> str:
    """The node's ``--backend`` for the test's loop (the node's own shutdown
    is what is tested: it runs on each loop)."""
    name, options = anyio_backend
    return "uvloop" if options else str(name)


async def test_an_ask_served_by_a_node_leaving_on_sigterm_fails_with_actor_stopped(
    nats_server: NatsServer, system_name: str, anyio_backend: Any
) -> None:
    url = nats_server.url
    backend = _backend_of(anyio_backend)
    async with (
        ActorSystem(remote=remote(url, system_name, "asker")) as system,
        node_process(
            url,
            system_name,
            "leaver",
            *("--grace", "1", "--backend", backend),
            modules=(_leaving.__name__,),
        ) as child,
    ):
        ref = await system.remote.spawn("leaver", _leaving.Announcer)
        started = anyio.Event()
        probe = system.spawn(_Started, started)
        outcome: list[Any] = []
        answered = anyio.Event()

        async def ask() -> None:
            try:
                outcome.append(await ref.ask((probe, 60), timeout=60))
            except Exception as exc:
                outcome.append(exc)
            answered.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            with anyio.fail_after(dilated(10)):
                await started.wait()
            child.process.send_signal(signal.SIGTERM)
            # The grace (1 s), then the node's answer: well before the
            # failure detector would have given up on it.
            with anyio.fail_after(dilated(4)):
                await answered.wait()
        [error] = outcome
        assert isinstance(error, ActorStopped), repr(error)
        with anyio.fail_after(dilated(10)):
            assert await child.process.wait() == 0
