"""The systems the rows set up again and again, set up once here: this
process's ``nats-server`` (one per kind, started at the first use, stopped
at exit), two nodes of a system of their own joined through it (a sender
and a receiver, as the remote and delivery rows run them), and the actor
that counts what it gets into a ``Tally``.
"""

from __future__ import annotations

import atexit
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from actors import Actor, ActorSystem
from actors.nats import NatsServer, find_nats_server
from actors.nats._protocol import new_nuid
from actors.remote import Remote

from ._actor_tasks import Tally

__all__ = ["Counter", "missing", "nats_url", "two_nodes"]

#: This process's servers, by whether they run JetStream.
_servers: dict[bool, NatsServer] = {}


def missing(*, nats_py: str | None = None) -> str | None:
    """Why rows over a ``nats-server`` cannot run here, or None: no server
    binary (the ``server`` extra), or, when ``nats_py`` names what the rows
    compare with it, no nats-py."""
    try:
        find_nats_server()
    except FileNotFoundError as exc:
        return str(exc)
    if nats_py is not None:
        try:
            import nats  # noqa: F401
        except ImportError:
            return (
                f"nats-py ({nats_py}) is not installed: pip install nats-py, "
                'or the test extra: pip install -e ".[test]"'
            )
    return None


def nats_url(*, jetstream: bool = False) -> str:
    """The URL of this process's ``nats-server`` (``-js`` with
    ``jetstream``), started at the first call (untimed), stopped at exit."""
    server = _servers.get(jetstream)
    if server is None:
        server = NatsServer(jetstream=jetstream)
        server.start()
        atexit.register(server.close)
        _servers[jetstream] = server
    return server.url


@asynccontextmanager
async def two_nodes(
    secret: bytes | None = None,
) -> AsyncIterator[tuple[ActorSystem, ActorSystem]]:
    """Two systems with nodes ``a`` (the sender) and ``b`` (the receiver) of
    a system of their own on this process's server, ``Remote(secret=...)``
    on both; yields ``(a, b)``. ``b`` is entered first and left last."""
    url = nats_url()
    system = "bench" + new_nuid(8)
    sender = Remote(url, system=system, node="a", secret=secret)
    receiver = Remote(url, system=system, node="b", secret=secret)
    async with ActorSystem(remote=receiver) as b, ActorSystem(remote=sender) as a:
        yield a, b


class Counter(Actor):
    """Counts what it is told; sets the tally's ``done`` at its ``expected``."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def receive(self, message: Any) -> None:
        tally = self.tally
        tally.count += 1
        if tally.count == tally.expected:
            tally.done.set()
