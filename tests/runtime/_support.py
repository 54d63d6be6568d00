"""Actors and helpers shared by the runtime tests: scheduler-exact waits, no sleeps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import sniffio

from actors import Actor, ActorRef, Terminated
from actors.testing import wait_all_blocked as wait_all_blocked


def on_asyncio() -> bool:
    """Whether the running event loop is asyncio (or uvloop)."""
    return sniffio.current_async_library() == "asyncio"


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


class Watcher(Actor):
    """Watches ``target`` from its start; each ``Terminated`` it receives goes
    on ``seen`` (its ref), and ``done`` is set."""

    def __init__(self, target: ActorRef[Any], seen: list[Any], done: anyio.Event):
        self.target = target
        self.seen = seen
        self.done = done

    def on_start(self) -> None:
        self.context.watch(self.target)

    def receive(self, message: Any) -> None:
        if isinstance(message, Terminated):
            self.seen.append(message.ref)
            self.done.set()
