"""The actors the ``scale`` rows run in node processes (``--module
benchmarks.rows._scale_workers``); no side effects on import."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import anyio

from actors import Actor, ActorRef


def analyze(path: str) -> tuple[int, int, int, str]:
    """The main job's work on one file (examples/fan_out.py): lines, words,
    bytes and SHA-256 (blocking)."""
    data = Path(path).read_bytes()
    return (
        data.count(b"\n"),
        len(data.split()),
        len(data),
        hashlib.sha256(data).hexdigest(),
    )


class Analyzer(Actor):
    """Analyzes each path in a worker thread (as fan_out's Worker) and tells
    ``counter`` its digest."""

    def __init__(self, counter: ActorRef[Any]) -> None:
        self.counter = counter

    async def receive(self, message: Any) -> None:
        if isinstance(message, str):
            stats = await anyio.to_thread.run_sync(analyze, message)
            self.counter.tell(stats[3])


class Tiny(Actor):
    """Does nothing with its messages (the cost of the transfer itself);
    answers ``"sync"``."""

    def __init__(self) -> None:
        self.count = 0

    def receive(self, message: Any) -> Any:
        self.count += 1
        return self.count if message == "sync" else None


class Uneven(Actor):
    """Blocks ``delays[node]`` seconds per job (``delays["*"]`` on other
    nodes): a node that is slower than the others. Answers ``"sync"``."""

    def __init__(self, delays: dict[str, float]) -> None:
        self.delays = delays

    def on_start(self) -> None:
        node = self.context.system.remote.node.node
        self.delay = self.delays.get(node, self.delays.get("*", 0.0))

    def receive(self, message: Any) -> Any:
        if message == "sync":
            return "sync"
        time.sleep(self.delay)
        return None


class Counter(Actor):
    """Counts what it is told in ``tally[0]`` (a local actor: the list is
    shared with the sample); sets ``done`` at ``expected``."""

    def __init__(self, expected: int, done: anyio.Event, tally: list[int]) -> None:
        self.expected = expected
        self.done = done
        self.tally = tally

    def receive(self, message: Any) -> None:
        self.tally[0] += 1
        if self.tally[0] == self.expected:
            self.done.set()


class InlineAnalyzer(Actor):
    """As Analyzer, on the event loop's thread (no thread hop), as
    ``examples/fan_out.py`` runs in node processes."""

    def __init__(self, counter: ActorRef[Any]) -> None:
        self.counter = counter

    def receive(self, message: Any) -> None:
        if isinstance(message, str):
            self.counter.tell(analyze(message)[3])
