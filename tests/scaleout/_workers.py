"""Actor classes the scale-out tests host on nodes (``--module
tests.scaleout._workers``)."""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from typing import Any

import msgspec

from actors import Actor, ActorRef


class Point(msgspec.Struct, frozen=True):
    """A registered message class (registered on both sides by module)."""

    x: int
    y: int


@dataclass(frozen=True)
class Result:
    """What a Recorder is told by a worker."""

    job: int
    pid: int
    node: str


class Echo(Actor):
    """Replies with what it gets; its constructor's arguments on ``"args"``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def receive(self, message: Any) -> Any:
        if message == "args":
            return [list(self.args), self.kwargs]
        if message == "pid":
            return os.getpid()
        if message == "fail":
            raise ValueError("asked to fail")
        if isinstance(message, Point):
            return Point(message.y, message.x)
        return message


class Reporter(Actor):
    """Tells ``recorder`` a Result for each int job and replies with it;
    on the nodes named in ``delays`` it first sleeps that many seconds
    (blocking: a slow node)."""

    def __init__(
        self, recorder: ActorRef[Any], delays: dict[str, float] | None = None
    ) -> None:
        self.recorder = recorder
        self.delays = delays or {}

    def on_start(self) -> None:
        self.node = self.context.system.remote.node.node
        self.delay = self.delays.get(self.node, 0.0)

    def receive(self, message: Any) -> Any:
        if isinstance(message, int):
            if self.delay:
                time.sleep(self.delay)
            self.recorder.tell(Result(message, os.getpid(), self.node))
            return message
        if message == "pid":
            return os.getpid()
        return None


class Hasher(Actor):
    """CPU-bound work: SHA-256 of ``size`` bytes ``rounds`` times."""

    def receive(self, message: Any) -> Any:
        size, rounds = message
        data = b"x" * size
        digest = b""
        for _ in range(rounds):
            digest = hashlib.sha256(data + digest).digest()
        return digest.hex()


class NotAnActor:
    """Not an Actor subclass: a node must refuse to spawn it."""
