"""Pools in node processes on this machine (``processes=N``): both processes
work, none outlives the pool, the system or even a killed parent, and a node
killed with ``kill -9`` mid-run has its jobs done by the other."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from actors import ActorSystem
from actors.nats import NatsServer
from actors.remote import PhiAccrualFailureDetector
from actors.testing import await_assert, dilated
from actors.testing.remote import FAST_HEARTBEAT_INTERVAL

from ._process import child_env, pid_alive
from ._workers import Echo, Recorder, Reporter
from .conftest import remote

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and /proc"),
]


@pytest.fixture
def anyio_backend() -> Any:
    return "asyncio"  # the nodes are other processes: one backend is enough


async def gone(pids: list[int], timeout: float = 10.0) -> None:
    """Wait until no process of ``pids`` is alive (reaped or not)."""

    def none_alive() -> None:
        assert not [pid for pid in pids if pid_alive(pid)]

    await await_assert(none_alive, timeout=timeout, interval=0.02)


async def test_a_pool_in_two_processes_uses_both_and_stopping_it_ends_them(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        pool = main.remote.spawn_pool(Echo, processes=2, workers=2)
        await pool.wait_ready(timeout=30)
        pids = pool.pids
        assert len(pids) == 2 and os.getpid() not in pids
        answered: set[int] = set()

        async def ask() -> None:
            answered.add(await pool.ask("pid", timeout=10))

        async with anyio.create_task_group() as tg:
            for _ in range(64):
                tg.start_soon(ask)
        assert answered == set(pids)
        pool.stop()
        with anyio.fail_after(20):
            await pool.join()
        assert not any(pid_alive(pid) for pid in pids)


async def test_leaving_the_system_ends_the_node_processes(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        pool = main.remote.spawn_pool(Echo, processes=2)
        await pool.wait_ready(timeout=30)
        pids = pool.pids
    assert not any(pid_alive(pid) for pid in pids)


class Boom(Exception):
    pass


async def test_leaving_the_system_by_an_exception_ends_the_node_processes(
    nats_server: NatsServer, system_name: str
) -> None:
    pids: list[int] = []
    with pytest.raises(Boom):
        async with ActorSystem(
            remote=remote(nats_server.url, system_name, "main")
        ) as main:
            pool = main.remote.spawn_pool(Echo, processes=2)
            await pool.wait_ready(timeout=30)
            pids = pool.pids
            raise Boom
    assert pids
    assert not any(pid_alive(pid) for pid in pids)


async def test_a_node_killed_mid_run_has_its_jobs_done_by_the_other(
    nats_server: NatsServer, system_name: str
) -> None:
    jobs = 300

    def patient() -> PhiAccrualFailureDetector:
        # The survivor must never be taken for dead: while the victim's jobs
        # move over, both cores are busy with it (and with whatever else the
        # machine runs), so a pause of 2 s (times the time factor) is
        # acceptable; the victim, silent for good, is still found in seconds.
        return PhiAccrualFailureDetector(
            first_heartbeat_estimate=FAST_HEARTBEAT_INTERVAL,
            acceptable_heartbeat_pause=dilated(2.0),
            min_std_deviation=FAST_HEARTBEAT_INTERVAL,
        )

    main_remote = remote(nats_server.url, system_name, "main", failure_detector=patient)
    async with ActorSystem(remote=main_remote) as main:
        started, finished = anyio.Event(), anyio.Event()
        recorder = main.spawn(Recorder, (40, started), (jobs, finished))
        pool = main.remote.spawn_pool(
            Reporter, recorder, {"*": 0.005}, processes=2, name="p"
        )
        await pool.wait_ready(timeout=30)
        for job in range(jobs):
            pool.tell(job)
        with anyio.fail_after(30):
            await started.wait()
        victim = pool.pids[0]
        os.kill(victim, signal.SIGKILL)  # no goodbye of any kind
        with anyio.fail_after(30):
            await finished.wait()
        seen = await recorder.ask("get")
        assert {r.job for r in seen} == set(range(jobs))
        assert len(pool.members) == 1
        assert pool.redispatched >= 1


async def test_node_processes_leave_when_their_parent_is_killed(
    nats_server: NatsServer, system_name: str
) -> None:
    parent = await anyio.open_process(
        [sys.executable, "-m", f"{__package__}._parent", nats_server.url, system_name],
        env=child_env(),
        stderr=None,
    )
    try:
        assert parent.stdout is not None
        with anyio.fail_after(30):
            out = BufferedByteReceiveStream(parent.stdout)
            line = await out.receive_until(b"\n", 4096)
        pids = [int(word) for word in line.split()]
        assert len(pids) == 2 and all(pid_alive(pid) for pid in pids)
    finally:
        parent.kill()  # SIGKILL: nothing of the parent runs any more
        await parent.aclose()
    # Their standard input ended with the parent: they leave on their own.
    await gone(pids)


async def test_a_node_process_that_leaves_on_sigterm_hands_its_work_back(
    nats_server: NatsServer, system_name: str
) -> None:
    # A clean leave loses nothing and repeats nothing: the jobs it had not
    # started go back to the pool, the running ones finish and are reported.
    jobs = 200
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        started, finished = anyio.Event(), anyio.Event()
        recorder = main.spawn(Recorder, (30, started), (jobs, finished))
        pool = main.remote.spawn_pool(
            Reporter, recorder, {"*": 0.005}, processes=2, workers=2, prefetch=8
        )
        await pool.wait_ready(timeout=30)
        for job in range(jobs):
            pool.tell(job)
        with anyio.fail_after(30):
            await started.wait()
        leaving = pool.pids[0]
        os.kill(leaving, signal.SIGTERM)
        with anyio.fail_after(30):
            await finished.wait()
        await gone([leaving])
        seen = await recorder.ask("get")
        assert sorted(r.job for r in seen) == list(range(jobs))  # each once
        assert pool.redispatched >= 1  # what it had not started came back


async def test_a_node_process_that_cannot_start_makes_wait_ready_raise(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        pool = main.remote.spawn_pool("no_such_module_anywhere:Worker", processes=1)
        with pytest.raises(RuntimeError, match="exited"):
            await pool.wait_ready(timeout=30)


async def test_a_pool_name_that_is_no_subject_token_still_names_its_processes(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        pool = main.remote.spawn_pool(Echo, processes=1, name="my.pool")
        await pool.wait_ready(timeout=30)
        assert pool.members == ["main-my-pool-0"]
