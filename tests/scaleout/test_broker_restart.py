"""A NATS server restart in the middle of a pool's run: the pool's check
finds jobs and reports lost on the wire and dispatches them again."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import ActorSystem
from actors.node import host
from actors.remote import Remote
from actors.remote._server import NatsServer

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


@pytest.mark.xfail(
    reason="known intermittent stall: about 1 run in 15 under CPU load, the "
    "pool stops making progress after the broker restart and the last jobs "
    "never finish within 30 s (the other runs finish in about 1 s)",
    strict=False,
)
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
            started, finished = anyio.Event(), anyio.Event()
            recorder = main.spawn(Recorder, (40, started), (jobs, finished))
            pool = main.remote.spawn_pool(
                Reporter, recorder, {"*": 0.002}, nodes=["a"], check_interval=0.2
            )
            await pool.wait_ready(timeout=10)
            for job in range(jobs):
                pool.tell(job)
            with anyio.fail_after(20):
                await started.wait()
            await anyio.to_thread.run_sync(server.stop)
            await anyio.to_thread.run_sync(server.start)
            # Jobs and reports lost meanwhile are found by the pool's check
            # and dispatched again: every job runs (at least once). The bound
            # only stops a hang: reconnecting on a loaded machine takes time.
            with anyio.fail_after(30):
                await finished.wait()
            seen = await recorder.ask("get")
            assert {r.job for r in seen} == set(range(jobs))
