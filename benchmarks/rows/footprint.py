"""Footprint rows: what an idle actor costs to keep and to make.

* ``footprint/idle``: bytes still allocated (``tracemalloc``) per idle actor:
  2,000 actors of a class with no state of its own are spawned, run their
  ``on_start`` and sit idle with an empty mailbox, their refs kept; after a
  full garbage collection, the growth of allocated memory since before the
  first of them, per actor (one actor spawned before takes what the first
  actor of an event loop pays once). The cells read **bytes per actor**, not
  nanoseconds (a sample reports bytes as its "seconds" times 1e-9; every
  clock is ignored). The other: the lightest hand-written equivalent, an
  anyio task in a task group parked on an ``anyio.Event``, with a
  ``collections.deque`` as its mailbox. Unit: one actor (one task).
* ``footprint/spawn``: the time to spawn 2,000 such actors, from the first
  ``spawn`` until every one has run its ``on_start`` (the last sets an event),
  on the run's clock; the other: starting the same number of those parked
  anyio tasks, until every one has run and parked (the last sets an event).
  Each side does one counter increment and comparison per actor (task).
  Entering and leaving the ActorSystem (the task group) is not timed. Unit:
  one actor (one task).

The gates in ``tests/gates/test_footprint.py`` hold the same figures
(bytes and calls, not time) to their budgets.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections import deque
from typing import Any

import anyio

from actors import Actor, ActorSystem

from .._clock import now
from .._registry import Impl, Row, Sample, register
from ._actor_tasks import Tally

__all__: list[str] = []

ACTORS = 2_000  #: idle actors (tasks) per sample
QUICK = 200  #: with --quick


class Idle(Actor):
    """An actor with no state of its own."""

    def receive(self, message: Any) -> None:
        pass


class Started(Actor):
    """Counts its start on the sample's tally."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def on_start(self) -> None:
        tally = self.tally
        tally.count += 1
        if tally.count == tally.expected:
            tally.done.set()

    def receive(self, message: Any) -> None:
        pass


async def _parked(event: anyio.Event, mailbox: deque[Any]) -> None:
    while True:
        await event.wait()
        mailbox.popleft()


async def _parked_counted(
    event: anyio.Event, mailbox: deque[Any], tally: Tally
) -> None:
    tally.count += 1
    if tally.count == tally.expected:
        tally.done.set()
    while True:
        await event.wait()
        mailbox.popleft()


async def _settle() -> None:
    for _ in range(3):
        await anyio.wait_all_tasks_blocked()


def _bytes_sample(size: int, count: int) -> Sample:
    # Bytes reported as seconds * 1e-9: the table's "ns" cells read bytes.
    return Sample(size * 1e-9, count)


async def ours_idle(count: int) -> Sample:
    async with ActorSystem() as system:
        first = system.spawn(Idle)  # what the first actor of a loop pays once
        await _settle()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            spawn = system.spawn
            refs = [spawn(Idle) for _ in range(count)]
            await _settle()
            gc.collect()
            size = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        alive = sum(ref.is_alive for ref in refs)
        first.stop()
    return _bytes_sample(size, alive)


async def tasks_idle(count: int) -> Sample:
    async with anyio.create_task_group() as tg:
        tg.start_soon(_parked, anyio.Event(), deque[Any]())  # the same once
        await _settle()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            keep = []
            for _ in range(count):
                event, mailbox = anyio.Event(), deque[Any]()
                tg.start_soon(_parked, event, mailbox)
                keep.append((event, mailbox))
            await _settle()
            gc.collect()
            size = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        tg.cancel_scope.cancel()
    return _bytes_sample(size, len(keep))


async def ours_spawn(count: int) -> Sample:
    tally = Tally(count)
    async with ActorSystem() as system:
        spawn = system.spawn
        start = now()
        for _ in range(count):
            spawn(Started, tally)
        await tally.done.wait()
        elapsed = now() - start
    return Sample(elapsed, tally.count)


async def tasks_spawn(count: int) -> Sample:
    tally = Tally(count)
    async with anyio.create_task_group() as tg:
        start = now()
        start_soon = tg.start_soon
        for _ in range(count):
            start_soon(_parked_counted, anyio.Event(), deque[Any](), tally)
        await tally.done.wait()
        elapsed = now() - start
        tg.cancel_scope.cancel()
    return Sample(elapsed, tally.count)


register(
    Row(
        "footprint/idle",
        f"bytes retained per idle actor, {ACTORS:,} spawned and started "
        "(cells: bytes, not ns)",
        ACTORS,
        QUICK,
        (
            Impl("ours", ours_idle),
            Impl("anyio task (Event + deque)", tasks_idle),
        ),
        unit="actor, in bytes",
    )
)
register(
    Row(
        "footprint/spawn",
        f"spawn {ACTORS:,} actors until each has run on_start",
        ACTORS,
        QUICK,
        (
            Impl("ours", ours_spawn),
            Impl("anyio task (Event + deque)", tasks_spawn),
        ),
        unit="actor",
    )
)
