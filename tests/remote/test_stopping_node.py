"""Tells sent to a node whose system is exiting are counted, never lost
unseen: a dead letter on the receiving node ("actor not found" once its
actors have stopped, "node stopping" while its remote layer leaves), or on
the sender ("node unreachable" once the node's inbox is gone)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, DeadLetter
from actors.nats import NatsServer
from actors.testing import dilated
from actors.testing.remote import Cluster

pytestmark = pytest.mark.anyio


class _Answerer(Actor[Any]):
    """Answers an ask once released (tells are dropped as handled)."""

    def __init__(self, entered: anyio.Event, release: anyio.Event) -> None:
        self._entered = entered
        self._release = release

    async def receive(self, message: Any) -> Any:
        if message == "ask":
            self._entered.set()
            await self._release.wait()
            return "answered"
        return None


async def test_tells_to_a_node_whose_system_is_exiting_are_dead_letters(
    nats_server: NatsServer,
) -> None:
    tells = 3
    counted: dict[str, int] = {}
    all_counted = anyio.Event()

    def count(where: str) -> Any:
        def letter(dead: DeadLetter) -> None:
            if type(dead.message) is int and dead.message < tells:
                key = f"{where}: {dead.reason}"
                counted[key] = counted.get(key, 0) + 1
                if sum(counted.values()) >= tells:
                    all_counted.set()

        return letter

    async with Cluster(nats_server.url, 2) as cluster:
        a, b = cluster[0], cluster[1]
        a.dead_letters.subscribe(count("a"))
        b.dead_letters.subscribe(count("b"))
        entered, release = anyio.Event(), anyio.Event()
        b.spawn(_Answerer, entered, release, name="target")
        ref = await a.remote.lookup(cluster.names[1], "/user/target")
        async with anyio.create_task_group() as tg:

            async def stop_b_while_it_answers() -> None:
                await entered.wait()
                b.stop()
                release.set()  # the ask is answered by a stopping actor

            tg.start_soon(stop_b_while_it_answers)
            assert await ref.ask("ask", timeout=dilated(10)) == "answered"
            for i in range(tells):
                ref.tell(i)
        with anyio.fail_after(dilated(10)):
            await cluster.wait_down(1)
            await all_counted.wait()
    assert sum(counted.values()) == tells, counted  # each once
