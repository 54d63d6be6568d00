"""A pool's members never outlive its coordinator: when the coordinator's
process is killed (``kill -9``: no goodbye), the members on nodes started by
hand notice it through their failure detector and stop with their workers."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from actors.nats import NatsServer
from actors.testing import await_assert

from ._process import STARTUP, child_env
from .conftest import node

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]


@pytest.fixture
def anyio_backend() -> Any:
    return "asyncio"  # the coordinator is another process: one backend is enough


async def test_members_stop_when_their_coordinator_process_is_killed(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with node(url, system_name, "a") as a:
        agent = a.lookup("/user/node-agent")
        coordinator = await anyio.open_process(
            [
                sys.executable,
                "-m",
                f"{__package__}._coordinator",
                url,
                system_name,
                "a",
            ],
            env=child_env(),
            stderr=None,
        )
        try:
            assert coordinator.stdout is not None
            with anyio.fail_after(STARTUP):
                out = BufferedByteReceiveStream(coordinator.stdout)
                assert await out.receive_until(b"\n", 4096) == b"ready"
            (member,) = agent._cell.children.values()
            workers = list(member.children.values())
            assert len(workers) == 2
        finally:
            coordinator.kill()  # SIGKILL: nothing of it runs any more
            await coordinator.aclose()

        def stopped() -> None:  # no event for "stopped" here to wait on
            assert not agent._cell.children
            assert not [w for w in workers if w.alive]

        await await_assert(stopped, timeout=15, interval=0.02)
