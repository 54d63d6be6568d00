"""The application of the sharding process tests' node processes::

    python -m actors.node --connect URL --system S --name n0 \\
        --app tests/sharding/_sharded_node.py:serve

Its configuration comes from the environment: ``SHARDING_TEST_BUCKET`` (the
JetStream KV bucket of the placement store), ``SHARDING_TEST_STREAM`` (the
JetStream stream of the entities' journal, shared by the nodes: an entity
recovers its events on whichever node it starts next),
``SHARDING_TEST_LEASE`` (seconds), ``SHARDING_TEST_LOG`` (a file of JSON
lines). It hosts the ``counter`` entities (role ``worker``), event-sourced
counters, and writes to the log, flushed line by line (a SIGKILL loses
nothing written): every increment an entity handled (``{"e": "h", "k": key,
"n": n, "t": wall time}``) and every lease event of the node (``{"e": kind,
"s": shard, "t": wall time, "u": valid until}``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import IO, Any

import msgspec

from actors import ActorSystem
from actors.nats import connect
from actors.persistence import Codec, Effect, EventSourcedActor, JetStreamJournal
from actors.persistence import Journal as JournalType
from actors.sharding import Entity, KeyValuePlacementStore, LeaseEvent, Sharding

#: The messages' tags on every node's codec.
ADD_TAG = "sharding-test.Add"
READ_TAG = "sharding-test.Read"
SHARDS = 24


class Add(msgspec.Struct, frozen=True):
    """Add 1; ``n`` numbers the sender's increments of the entity, from 0
    (the reply: the total after it, ``n + 1``: a retry of an increment
    stored already is not stored again)."""

    n: int


class Read(msgspec.Struct, frozen=True):
    """The reply: the entity's total."""


class Added(msgspec.Struct, frozen=True):
    """The event: increment ``n`` was stored."""

    n: int


class Tally(msgspec.Struct, frozen=True):
    """The state: the total, and the number of the last increment stored
    (-1: none)."""

    total: int = 0
    last: int = -1


def _wall(at: float) -> float:
    """A time of the leases' clock (``time.monotonic``) as wall-clock time."""
    return time.time() - (time.monotonic() - at)


class Counter(EventSourcedActor[Add | Read, Added, Tally]):
    """An event-sourced counter (persistence id ``counter-<key>``, on the
    nodes' shared journal): wherever it starts it recovers its total."""

    codec = Codec(Added, Tally)

    def __init__(self, key: str, log: IO[str], journal: JournalType) -> None:
        self.key = key
        self.log = log
        self.journal = journal
        self.persistence_id = f"counter-{key}"

    def empty_state(self) -> Tally:
        return Tally()

    def on_command(self, state: Tally, command: Add | Read) -> Effect[Added, Tally]:
        if type(command) is Read:
            return Effect.reply(state.total)
        assert type(command) is Add
        self.log.write(
            json.dumps({"e": "h", "k": self.key, "n": command.n, "t": time.time()})
            + "\n"
        )
        self.log.flush()
        if command.n <= state.last:
            return Effect.reply(state.total)  # a retry of one stored already
        return Effect.persist(Added(command.n)).then_reply(lambda s: s.total)

    def on_event(self, state: Tally, event: Added) -> Tally:
        return Tally(state.total + 1, event.n)


def entity(
    log: IO[str] | None = None, journal: JournalType | None = None
) -> Entity[Add | Read]:
    """The counter type (a factory that needs a log and the journal only
    where it is hosted)."""

    def make(key: str) -> Counter:
        assert log is not None and journal is not None, (
            "a node without the worker role hosts nothing"
        )
        return Counter(key, log, journal)

    return Entity("counter", make, shards=SHARDS, role="worker", passivate_after=None)


@asynccontextmanager
async def serve(system: ActorSystem) -> AsyncIterator[Sharding]:
    """Sharding on this node until it leaves (``--app``)."""
    remote: Any = system.remote
    remote.register_type(Add, ADD_TAG)
    remote.register_type(Read, READ_TAG)
    urls, options = remote.connect_options
    ttl = float(os.environ["SHARDING_TEST_LEASE"])
    with open(os.environ["SHARDING_TEST_LOG"], "a", encoding="utf-8") as log:

        def on_lease(event: LeaseEvent) -> None:
            until = None if event.valid_until is None else _wall(event.valid_until)
            line = {"e": event.kind, "s": event.shard, "t": _wall(event.at), "u": until}
            log.write(json.dumps(line) + "\n")
            log.flush()

        # The journal on a connection of its own: the leases' renewals never
        # wait in the client's queue behind a burst of appends and replays.
        async with (
            connect(urls, **options) as nc,
            connect(urls, **options) as journal_nc,
            JetStreamJournal(
                client=journal_nc,
                stream=os.environ["SHARDING_TEST_STREAM"],
                storage="memory",
            ) as journal,
        ):
            store = await KeyValuePlacementStore.open(
                nc.jetstream(), os.environ["SHARDING_TEST_BUCKET"], ttl=ttl
            )
            async with Sharding(
                system,
                [entity(log, journal)],
                store=store,
                node=remote.node.node,
                roles={"worker"},
                on_lease=on_lease,
            ) as sharding:
                yield sharding
