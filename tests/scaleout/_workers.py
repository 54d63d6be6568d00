"""Actor classes the scale-out tests host on nodes (``--module
tests.scaleout._workers``)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec

from actors import Actor, ActorRef


class Point(msgspec.Struct, frozen=True):
    """A registered message class (registered on both sides by module)."""

    x: int
    y: int


@dataclass(frozen=True)
class Result:
    """What a Reporter tells its recorder about a job it handled."""

    job: int
    pid: int
    node: str
    worker: str


#: Gates by node name (tests in one process only): a Reporter on that node
#: holds each job until its gate is set.
GATES: dict[str, anyio.Event] = {}


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
    """Handles int jobs: tells ``recorder`` a Result and replies with the
    job. On the nodes named in ``delays`` (``"*"``: any other) it first
    sleeps that many seconds;
    on a node with a gate in GATES it first waits for the gate. A ``"hello"``
    (a broadcast) is reported as job -1."""

    def __init__(
        self, recorder: ActorRef[Any], delays: dict[str, float] | None = None
    ) -> None:
        self.recorder = recorder
        self.delays = delays or {}

    def on_start(self) -> None:
        self.node = self.context.system.remote.node.node
        self.delay = self.delays.get(self.node, self.delays.get("*", 0.0))

    async def receive(self, message: Any) -> Any:
        if message == "hello":
            message = -1
        if isinstance(message, int):
            gate = GATES.get(self.node)
            if gate is not None:
                await gate.wait()
            if self.delay:
                await anyio.sleep(self.delay)
            self.recorder.tell(
                Result(message, os.getpid(), self.node, self.context.path)
            )
            return message
        if message == "pid":
            return os.getpid()
        if message == "fail":
            raise ValueError("asked to fail")
        return None


class Recorder(Actor):
    """Collects Results; ``"get"`` returns them. Each milestone
    ``(count, event)`` has its event set once ``count`` distinct jobs were
    reported."""

    def __init__(self, *milestones: tuple[int, anyio.Event]) -> None:
        self.results: list[Result] = []
        self.jobs: set[int] = set()
        self.milestones = list(milestones)

    def receive(self, message: Any) -> Any:
        if message == "get":
            return list(self.results)
        if isinstance(message, Result):
            self.results.append(message)
            self.jobs.add(message.job)
            for count, event in self.milestones:
                if len(self.jobs) >= count:
                    event.set()
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
