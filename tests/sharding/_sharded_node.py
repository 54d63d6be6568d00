"""The application of the sharding process tests' node processes::

    python -m actors.node --connect URL --system S --name n0 \\
        --app tests/sharding/_sharded_node.py:serve

Its configuration comes from the environment: ``SHARDING_TEST_BUCKET`` (the
JetStream KV bucket of the placement store), ``SHARDING_TEST_LEASE``
(seconds), ``SHARDING_TEST_LOG`` (a file of JSON lines). It hosts the
``counter`` entities (role ``worker``) and writes to the log, flushed line by
line (a SIGKILL loses nothing written): every message an entity handled
(``{"e": "h", "k": key, "n": n, "t": wall time}``) and every lease event of
the node (``{"e": kind, "s": shard, "t": wall time, "u": valid until}``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import IO, Any

import msgspec

from actors import Actor, ActorSystem
from actors.nats import connect
from actors.sharding import Entity, KeyValuePlacementStore, LeaseEvent, Sharding

#: The message's tag on every node's codec.
ADD_TAG = "sharding-test.Add"
SHARDS = 24


class Add(msgspec.Struct, frozen=True):
    """Add 1; ``n`` numbers the sender's messages (the reply: how many this
    incarnation of the entity handled)."""

    n: int


def _wall(at: float) -> float:
    """A time of the leases' clock (``time.monotonic``) as wall-clock time."""
    return time.time() - (time.monotonic() - at)


class Counter(Actor[Add]):
    def __init__(self, key: str, log: IO[str]) -> None:
        self.key = key
        self.log = log
        self.count = 0

    def receive(self, message: Add) -> int:
        self.count += 1
        self.log.write(
            json.dumps({"e": "h", "k": self.key, "n": message.n, "t": time.time()})
            + "\n"
        )
        self.log.flush()
        return self.count


def entity(log: IO[str] | None = None) -> Entity[Add]:
    """The counter type (a factory that needs a log only where it is hosted)."""

    def make(key: str) -> Counter:
        assert log is not None, "a node without the worker role hosts nothing"
        return Counter(key, log)

    return Entity("counter", make, shards=SHARDS, role="worker", passivate_after=None)


@asynccontextmanager
async def serve(system: ActorSystem) -> AsyncIterator[Sharding]:
    """Sharding on this node until it leaves (``--app``)."""
    remote: Any = system.remote
    remote.register_type(Add, ADD_TAG)
    urls, options = remote.connect_options
    ttl = float(os.environ["SHARDING_TEST_LEASE"])
    with open(os.environ["SHARDING_TEST_LOG"], "a", encoding="utf-8") as log:

        def on_lease(event: LeaseEvent) -> None:
            until = None if event.valid_until is None else _wall(event.valid_until)
            line = {"e": event.kind, "s": event.shard, "t": _wall(event.at), "u": until}
            log.write(json.dumps(line) + "\n")
            log.flush()

        async with connect(urls, **options) as nc:
            store = await KeyValuePlacementStore.open(
                nc.jetstream(), os.environ["SHARDING_TEST_BUCKET"], ttl=ttl
            )
            async with Sharding(
                system,
                [entity(log)],
                store=store,
                node=remote.node.node,
                roles={"worker"},
                on_lease=on_lease,
            ) as sharding:
                yield sharding
