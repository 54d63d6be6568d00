"""The pytest plugin of ``actors.persistence.testing`` (entry point
``pytest11``: ``actors_persistence``).

Fixtures (mark async tests with ``@pytest.mark.anyio``):

* ``memory_journal``: a new [``MemoryJournal``][actors.persistence.MemoryJournal]
  (``memory_journal.faults`` injects failures);
* ``sqlite_journal``: a [``SqliteJournal``][actors.persistence.SqliteJournal]
  on a file in the test's ``tmp_path``, closed after the test
  (``sqlite_journal.path``; a second journal on the same path reads what the
  first wrote);
* ``jetstream_journal``: a
  [``JetStreamJournal``][actors.persistence.JetStreamJournal] with a stream
  (and buckets) of its own on the runtime kit's ``jetstream_server`` (a
  session's ``nats-server -js``), closed after the test;
* ``event_sourced_kit``: ``await event_sourced_kit(Account, "alice")`` starts
  an [``EventSourcedTestKit``][actors.persistence.testing.EventSourcedTestKit]
  in ``actor_system`` on ``memory_journal``.

Like the runtime's plugin, it imports only what the base install declares
(sqlite3 is the standard library's; msgspec is needed only once a codec is
made).
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from ... import ActorSystem
from ...nats import NatsServer
from .._jetstream_journal import JetStreamJournal
from .._memory import MemoryJournal
from .._sqlite import SqliteJournal
from ._kit import EventSourcedTestKit

__all__ = ["event_sourced_kit", "jetstream_journal", "memory_journal", "sqlite_journal"]


@pytest.fixture
def memory_journal() -> MemoryJournal:
    """A new MemoryJournal."""
    return MemoryJournal()


@pytest.fixture
async def sqlite_journal(tmp_path: Path) -> AsyncIterator[SqliteJournal]:
    """A SqliteJournal on ``tmp_path / "journal.db"``, closed after the test."""
    async with SqliteJournal(tmp_path / "journal.db") as journal:
        yield journal


@pytest.fixture
async def jetstream_journal(
    jetstream_server: NatsServer,
) -> AsyncIterator[JetStreamJournal]:
    """A JetStreamJournal on ``jetstream_server`` with a stream of its own
    (``jetstream_journal.stream``), closed after the test."""
    stream = f"TEST_{secrets.token_hex(6)}"
    async with JetStreamJournal(jetstream_server.url, stream=stream) as journal:
        yield journal


@pytest.fixture
async def event_sourced_kit(
    actor_system: ActorSystem, memory_journal: MemoryJournal
) -> AsyncIterator[Callable[..., Awaitable[EventSourcedTestKit[Any, Any, Any]]]]:
    """``await event_sourced_kit(factory, *args)``: a started kit on
    ``memory_journal`` in ``actor_system`` (stopped after the test)."""
    kits: list[EventSourcedTestKit[Any, Any, Any]] = []

    async def start(factory: Any, *args: Any) -> EventSourcedTestKit[Any, Any, Any]:
        kit: EventSourcedTestKit[Any, Any, Any] = EventSourcedTestKit(
            actor_system, factory, *args, journal=memory_journal
        )
        kits.append(kit)
        return await kit.start()

    yield start
    for kit in kits:
        await kit.stop()
