"""Actors and helpers shared by the runtime tests: scheduler-exact waits, no sleeps."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import sniffio

from actors import Actor, ActorRef


def on_asyncio() -> bool:
    """Whether the running event loop is asyncio (or uvloop)."""
    return sniffio.current_async_library() == "asyncio"


def _parked(task: asyncio.Task[Any]) -> bool:
    # Parked: awaiting a future that is not done (anyio's own test, minus its
    # 0.1 s sleeps).
    waiter = task._fut_waiter  # type: ignore[attr-defined]
    return waiter is not None and not waiter.done()


async def wait_all_blocked() -> None:
    """Return once every other task is parked, stepping with checkpoints only.

    Trio's ``wait_all_tasks_blocked`` on Trio; on asyncio, one checkpoint at a
    time until every other task awaits an unfinished future. Never sleeps.
    """
    if not on_asyncio():
        import trio.testing

        await trio.testing.wait_all_tasks_blocked()
        return
    me = asyncio.current_task()
    for _ in range(10_000):
        await anyio.lowlevel.checkpoint()
        if all(t is me or t.done() or _parked(t) for t in asyncio.all_tasks()):
            return
    raise AssertionError("tasks kept running: the loop never became idle")


@dataclass(eq=False)
class Hold:
    """A message that keeps its actor inside the handler until released."""

    entered: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)


class Recorder(Actor):
    """Appends every message to ``log`` and replies with the message itself.

    A :class:`Hold` parks it inside its handler (logged as ``"hold"``).
    """

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    async def receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            self.log.append("hold")
            message.entered.set()
            await message.release.wait()
            return "held"
        self.log.append(message)
        return message


async def hold(ref: ActorRef[Any]) -> anyio.Event:
    """Park ``ref`` (a :class:`Recorder`) inside its handler; return the event
    that lets it go on."""
    message = Hold()
    ref.tell(message)
    await message.entered.wait()
    return message.release
