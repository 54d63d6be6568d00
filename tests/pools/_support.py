"""Workers and helpers shared by the pool tests: a journal the workers write to,
messages that park a worker or make it fail, and scheduler-exact waits (the
tests never sleep to synchronise)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import pytest
import sniffio

from actors import Actor, PoolRef
from actors.testing import wait_all_blocked as wait_all_blocked

#: Both routings, as a parametrize mark.
ROUTINGS = pytest.mark.parametrize("routing", ["round_robin", "shared_queue"])


class Boom(Exception):
    """The injected failure."""


#: A message that makes a worker raise :class:`Boom`.
BOOM = "boom"


@dataclass(eq=False)
class Hold:
    """A message that keeps its worker inside the handler until released."""

    entered: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)


class Journal:
    """What the workers handled: ``(worker name, message)`` in order, and how
    many worker instances were made (restarts make new ones)."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, Any]] = []
        self.instances = 0

    def messages(self) -> list[Any]:
        """The handled messages, in handling order."""
        return [message for _, message in self.entries]

    def by_worker(self) -> dict[str, list[Any]]:
        """Each worker's messages, in its handling order."""
        out: dict[str, list[Any]] = {}
        for name, message in self.entries:
            out.setdefault(name, []).append(message)
        return out


class Worker(Actor):
    """Journals every message and replies ``(its name, the message)``.

    A :class:`Hold` parks it inside the handler (journalled as ``"hold"``);
    :data:`BOOM` makes it raise :class:`Boom` (not journalled).
    """

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        journal.instances += 1

    async def receive(self, message: Any) -> Any:
        name = self.context.name
        if isinstance(message, Hold):
            self.journal.entries.append((name, "hold"))
            message.entered.set()
            await message.release.wait()
            return (name, "held")
        if message == BOOM:
            raise Boom(f"{name} failed on purpose")
        self.journal.entries.append((name, message))
        return (name, message)


def on_asyncio() -> bool:
    """Whether the running event loop is asyncio (or uvloop)."""
    return sniffio.current_async_library() == "asyncio"


async def hold_worker(pool: PoolRef[Any]) -> Hold:
    """Tell the pool a :class:`Hold` and wait until some worker is inside it."""
    message = Hold()
    pool.tell(message)
    await message.entered.wait()
    return message


async def hold_every_worker(pool: PoolRef[Any]) -> list[Hold]:
    """Park every worker of the pool inside a :class:`Hold`, one each (told to
    each worker's own ref, so no routing decides who gets it)."""
    holds = []
    for worker in pool.workers:
        message = Hold()
        worker.tell(message)
        holds.append(message)
    for message in holds:
        await message.entered.wait()
    return holds


def release(holds: list[Hold]) -> None:
    """Let every held worker go on."""
    for message in holds:
        message.release.set()
