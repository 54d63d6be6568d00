"""Stopping a pool while its asks are in flight (taken by a member, running
on its node) fails each of them clearly and at once: none hangs until its
timeout."""

from __future__ import annotations

import anyio
import pytest

from actors import ActorStopped, ActorSystem
from actors.nats import NatsServer
from actors.testing import await_assert

from . import _hostile
from ._hostile import Sleeper
from .conftest import equal, node, remote

pytestmark = pytest.mark.anyio


async def test_stopping_a_pool_fails_its_asks_in_flight_at_once(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a", (_hostile.__name__,), shutdown_timeout=0.5),
    ):
        pool = main.remote.spawn_pool(Sleeper, nodes=["a"], workers=2, prefetch=4)
        await pool.wait_ready(timeout=10)
        outcomes: list[BaseException] = []

        async def ask() -> None:
            try:
                await pool.ask(60.0, timeout=60)
            except ActorStopped as exc:
                outcomes.append(exc)

        with anyio.fail_after(10):  # far below the asks' timeout
            async with anyio.create_task_group() as tg:
                for _ in range(6):
                    tg.start_soon(ask)
                # Dispatched: no event to wait on.
                await await_assert(lambda: equal(pool.in_flight.get("a"), 6))
                pool.stop()
        assert len(outcomes) == 6
        await pool.join()
