"""``--grace`` bounds a node's leave: on SIGTERM a job still running after
the grace does not keep the node (nor fail it): it leaves with status 0,
and the pool runs the job again elsewhere (at-least-once)."""

from __future__ import annotations

import signal
import sys
import time
from typing import Any

import anyio
import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.testing import await_assert

from . import _hostile
from ._hostile import Sleeper
from ._process import node_process
from .conftest import equal, remote

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]


@pytest.fixture
def anyio_backend() -> Any:
    return "asyncio"  # the node is another process: one backend is enough


async def test_a_job_longer_than_the_grace_does_not_hold_or_fail_a_leaving_node(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node_process(
            url, system_name, "slow", "--grace", "0.2", modules=(_hostile.__name__,)
        ) as child,
    ):
        pool = main.remote.spawn_pool(Sleeper, nodes=["slow"], prefetch=1)
        await pool.wait_ready(timeout=30)
        pool.tell(60.0)  # a job far longer than the grace
        # Dispatched: no event to wait on.
        await await_assert(lambda: equal(pool.in_flight.get("slow"), 1), timeout=10)
        started = time.monotonic()
        child.process.send_signal(signal.SIGTERM)
        with anyio.fail_after(20):
            assert await child.process.wait() == 0
        assert time.monotonic() - started < 10
        # Not lost: back in the pool's queue for the next member.
        # The member's end: no event to wait on.
        await await_assert(lambda: equal(pool.queued, 1), timeout=10)
