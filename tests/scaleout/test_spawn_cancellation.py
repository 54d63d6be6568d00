"""A remote spawn cancelled at any await (or timed out) leaves no actor
behind on the node: either the node never spawned it, or it stops it."""

from __future__ import annotations

import random

import anyio
import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.testing import await_assert

from . import _hostile
from ._hostile import Survivor
from .conftest import equal, node, remote

pytestmark = pytest.mark.anyio


async def test_a_cancelled_remote_spawn_leaves_no_actor_on_the_node(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    rng = random.Random(14)
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a", (_hostile.__name__,)) as a,
    ):
        agent = a.lookup("/user/node-agent")
        first = await main.remote.spawn("a", Survivor)  # the node is known now
        kept = {first.name}
        cancelled = 0
        # Deadlines spread over the lookup, the request and the answer.
        for attempt in range(150):
            with anyio.move_on_after(rng.uniform(0, 0.01)) as scope:
                ref = await main.remote.spawn("a", Survivor, name=f"s{attempt}")
                kept.add(ref.name)
            cancelled += scope.cancelled_caught
        assert cancelled
        # Settled: one more spawn answered means everything before it
        # (FIFO per pair) reached the agent and was handled.
        kept.add((await main.remote.spawn("a", Survivor)).name)
        # Children stopping: no event to wait on.
        await await_assert(lambda: equal(set(agent._cell.children), kept), timeout=10)
