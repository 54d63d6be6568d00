"""Multi-node set-ups of the remote tests, on the test kit's ``Cluster``:
``two_nodes`` (nodes "a" and "b" of a cluster of their own on the session's
``nats_server``) and ``remote`` (one node's ``Remote``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from actors import ActorSystem
from actors.nats import NatsServer
from actors.remote import Remote
from actors.testing.remote import Cluster

Types = Iterable[type | tuple[type, str]]


def remote(
    url: str, system: str, node: str, types: Types = (), **options: Any
) -> Remote:
    """The ``Remote`` of node ``node`` of ``system`` at ``url``."""
    return Remote(url, system=system, node=node, types=types, **options)


@asynccontextmanager
async def two_nodes(
    server: NatsServer, types: Types = (), **options: Any
) -> AsyncIterator[tuple[ActorSystem, ActorSystem]]:
    """Nodes "a" and "b" joined through ``server`` (``options``: more
    ``Remote`` keyword arguments)."""
    async with Cluster(
        server.url, 2, names=("a", "b"), types=types, remote_options=options
    ) as nodes:
        yield nodes[0], nodes[1]
