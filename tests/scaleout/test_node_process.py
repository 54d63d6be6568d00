"""``python -m actors.node``: a node process hosts remote spawns and leaves
cleanly on SIGTERM and SIGINT."""

from __future__ import annotations

import signal
import sys
from typing import Any

import anyio
import pytest

from actors import ActorSystem, StopReason, Terminated
from actors.nats import NatsServer
from actors.remote import SpawnError

from ._process import node_process
from ._workers import Echo
from .conftest import remote
from .test_remote_spawn import Watcher

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]


@pytest.fixture
def anyio_backend() -> Any:
    return "asyncio"  # the child is another process: one backend is enough here


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_node_process_hosts_spawned_actors_and_leaves_on_a_signal(
    nats_server: NatsServer, system_name: str, signum: int
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "spawner")) as spawner,
        node_process(url, system_name, "child") as child,
    ):
        ref = await spawner.remote.spawn("child", Echo, "in a process")
        assert await ref.ask("args", timeout=10) == [["in a process"], {}]
        assert await ref.ask("pid", timeout=10) == child.process.pid
        with pytest.raises(SpawnError):
            await spawner.remote.spawn("child", "os:system")
        seen: list[Terminated] = []
        got = anyio.Event()
        watcher = spawner.spawn(Watcher, seen, got)
        assert await watcher.ask(ref) == "watching"
        assert await ref.ask(1, timeout=10) == 1  # the watch is in place
        child.process.send_signal(signum)
        with anyio.fail_after(20):
            assert await child.process.wait() == 0
            await got.wait()
        [terminated] = seen
        # It left cleanly: the death notice came before it went.
        assert terminated.reason == StopReason.SYSTEM


async def test_a_node_process_with_a_module_it_cannot_import_fails_to_start(
    nats_server: NatsServer, system_name: str
) -> None:
    process = await anyio.run_process(
        [
            sys.executable,
            "-m",
            "actors.node",
            "--connect",
            nats_server.url,
            "--module",
            "no_such_module_anywhere",
        ],
        check=False,
    )
    assert process.returncode != 0
    assert b"no_such_module_anywhere" in process.stderr
