"""A NATS server restart in the middle of a pool's run: the pool's check
finds jobs and reports lost on the wire and dispatches them again.

What the pool guarantees is checked through its own replies: the jobs are
asks, and each reply travels in the member's report (``Done``), which the
check covers. The Results the workers tell the recorder are plain remote
tells, at-most-once: one published just before the server stops is lost
while its job's report (published after the reconnection) arrives, so the
recorder only says when the run is under way, never that it is complete."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.node import host
from actors.remote import Remote

from ._workers import Recorder, Reporter
from .conftest import WORKERS

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> Any:
    return "asyncio"  # a restart costs seconds: one backend is enough here


#: Reconnect at once and often: the restart takes a fraction of a second.
FAST_RECONNECT = {
    "reconnect_wait": 0.01,
    "max_reconnect_wait": 0.1,
    "reconnect_jitter": 0.01,
}


async def test_a_nats_server_restart_mid_run_loses_no_job(system_name: str) -> None:
    jobs = 300
    with NatsServer() as server:
        url = server.url

        def node_remote(name: str) -> Any:
            # The default failure detector: a restart of a fraction of a
            # second is not a node down.
            return Remote(
                url, system=system_name, node=name, client_options=FAST_RECONNECT
            )

        async with (
            ActorSystem(remote=node_remote("main")) as main,
            ActorSystem(remote=node_remote("a")) as a,
        ):
            host(a, [WORKERS])
            started = anyio.Event()
            recorder = main.spawn(Recorder, (40, started))
            pool = main.remote.spawn_pool(
                Reporter, recorder, {"*": 0.002}, nodes=["a"], check_interval=0.2
            )
            await pool.wait_ready(timeout=10)
            replies: list[Any] = []

            async def ask(job: int) -> None:
                # The bound only stops a hang: reconnecting on a loaded
                # machine takes time.
                replies.append(await pool.ask(job, timeout=50))

            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg:
                    for job in range(jobs):
                        tg.start_soon(ask, job)
                    await started.wait()
                    await anyio.to_thread.run_sync(server.stop)
                    await anyio.to_thread.run_sync(server.start)
                    # Jobs and reports lost meanwhile are found by the
                    # pool's check and dispatched again: every job runs (at
                    # least once) and every ask gets its reply.
            assert sorted(replies) == list(range(jobs))
