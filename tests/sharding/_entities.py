"""Entity actors the sharding tests share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio

from actors import Actor, Request
from actors.persistence import Codec, Effect, EventSourcedActor


@dataclass
class Log:
    """What the entities of a test did, in order."""

    started: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    #: key -> messages handled
    handled: dict[str, list[Any]] = field(default_factory=dict)
    #: when set, on_stop waits for it (a passivation in progress)
    hold_stop: anyio.Event | None = None
    stopping: anyio.Event = field(default_factory=anyio.Event)


class Recorder(Actor[Any]):
    """Keeps what it was sent; ``"get"`` answers the list, ``"key"`` its key."""

    def __init__(self, key: str, log: Log) -> None:
        self.key = key
        self.log = log
        self.seen: list[Any] = []

    def on_start(self) -> None:
        self.log.started.append(self.key)

    async def on_stop(self) -> None:
        self.log.stopping.set()
        hold = self.log.hold_stop
        if hold is not None:
            await hold.wait()
        self.log.stopped.append(self.key)

    def receive(self, message: Any) -> Any:
        if message == "get":
            return list(self.seen)
        if message == "key":
            return self.key
        if message == "stop-yourself":
            self.context.stop()
            return None
        if message == "fail":
            raise RuntimeError("entity failed on purpose")
        self.seen.append(message)
        self.log.handled.setdefault(self.key, []).append(message)
        return len(self.seen)


def recorders(log: Log) -> Any:
    """A factory of Recorders writing to ``log``."""

    def make(key: str) -> Recorder:
        return Recorder(key, log)

    return make


# -- an event-sourced counter ---------------------------------------------------


@dataclass
class Add(Request[int]):
    """Add ``amount``; the reply is the new total (after the event is stored)."""

    amount: int


@dataclass
class Total(Request[int]):
    """The reply is the total."""


@dataclass
class Added:
    amount: int


class EventSourcedCounter(EventSourcedActor[Any, Added, int]):
    """An event-sourced counter whose persistence id is made from its key."""

    codec = Codec(Added)

    def __init__(self, key: str) -> None:
        self.persistence_id = f"counter-{key}"

    def empty_state(self) -> int:
        return 0

    def on_command(self, state: int, command: Any) -> Effect[Added, int]:
        match command:
            case Add(amount):
                return Effect.persist(Added(amount)).then_reply(lambda s: s)
            case Total():
                return Effect.reply(state)
        return Effect.unhandled()

    def on_event(self, state: int, event: Added) -> int:
        return state + event.amount
