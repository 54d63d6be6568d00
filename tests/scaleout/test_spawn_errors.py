"""A remote spawn that cannot be done says what was wrong: the node's
system, the missing class, the class that is no actor."""

from __future__ import annotations

import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.remote import NodeUnreachable, SpawnError

from . import _workers
from ._workers import Echo
from .conftest import node, remote

pytestmark = pytest.mark.anyio


async def test_a_node_in_another_system_is_unreachable_naming_the_system(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name + "x", "a"),  # started with another --system
    ):
        with pytest.raises(NodeUnreachable, match=f"--system {system_name}"):
            await main.remote.spawn("a", Echo)


async def test_a_class_the_module_lacks_or_that_is_no_actor_is_named(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    module = _workers.__name__
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a"),
    ):
        with pytest.raises(SpawnError, match="has no 'Nope'"):
            await main.remote.spawn("a", f"{module}:Nope")
        with pytest.raises(SpawnError, match="not an Actor subclass"):
            await main.remote.spawn("a", f"{module}:NotAnActor")
