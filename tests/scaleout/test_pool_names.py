"""A pool name already taken is refused before anything starts: no node
processes are started for a pool that cannot be, so the running pool's
node names (made from the pool's name) are never shadowed."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.remote.scaleout import _pool_spawn

from ._workers import Echo
from .conftest import remote

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes"),
]


@pytest.fixture
def anyio_backend() -> Any:
    return "asyncio"  # the nodes are other processes: one backend is enough


async def test_a_second_pool_with_a_taken_name_starts_no_processes(
    nats_server: NatsServer, system_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[object] = []
    real = _pool_spawn.NodeProcesses

    def counting(*args: Any, **kwargs: Any) -> Any:
        started.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(_pool_spawn, "NodeProcesses", counting)
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        first = main.remote.spawn_pool(Echo, processes=1, name="same")
        assert len(started) == 1
        with pytest.raises(ValueError, match="same"):
            main.remote.spawn_pool(Echo, processes=1, name="same")
        assert len(started) == 1
        await first.wait_ready(timeout=30)
        assert await first.ask("args", timeout=10) == [[], {}]
