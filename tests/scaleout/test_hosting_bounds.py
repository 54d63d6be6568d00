"""What the network may make a node construct: only the actor classes a
hosted module defines (the code before took any class the module merely
imported, the node agent included, and built it with the caller's
arguments), with options within bounds (a capacity of 2**62 from a remote
caller was taken as given)."""

from __future__ import annotations

import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.remote import SpawnError
from actors.remote.scaleout import AGENT_NAME
from actors.remote.scaleout._spawn import MAX_REMOTE_CAPACITY, SpawnRequest

from . import _imports
from ._workers import Echo
from .conftest import node, remote

pytestmark = pytest.mark.anyio

MODULE = _imports.__name__


async def test_a_class_a_hosted_module_only_imports_is_not_spawned(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a", modules=(MODULE,)),
    ):
        for name in ("NodeAgent", "Actor"):
            with pytest.raises(SpawnError, match="defined in actors"):
                await main.remote.spawn("a", f"{MODULE}:{name}", None)
        ref = await main.remote.spawn("a", f"{MODULE}:Defined")
        assert await ref.ask(3, timeout=5) == 3


async def test_spawn_options_from_the_network_are_bounded(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a"),
    ):
        target = f"{Echo.__module__}:Echo"
        # At the spawner: refused before anything is sent.
        with pytest.raises(ValueError, match="capacity of a remote spawn"):
            await main.remote.spawn("a", Echo, capacity=2**62)
        ref = await main.remote.spawn("a", Echo, capacity=MAX_REMOTE_CAPACITY)
        assert await ref.ask("args", timeout=5) == [[], {}]
        # A spawner that skips the check (a raw request): the node refuses.
        agent = await main.remote.lookup("a", AGENT_NAME)
        for options in (
            {"capacity": 2**62},
            {"capacity": MAX_REMOTE_CAPACITY + 1},
            {"drain": 2**40},
            {"restart": "forever"},
            {"name": "n" * 10_000},
        ):
            request = SpawnRequest(target, [], {}, **options)  # type: ignore[arg-type]
            answer = await agent.ask(request, timeout=5)
            assert isinstance(answer, SpawnError), (options, answer)
