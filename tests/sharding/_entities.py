"""Entity actors the sharding tests share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio

from actors import Actor


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
