"""The ``timers`` row: the CPU cost of one timer firing.

* ``ours``: 1,000 actors, each with a periodic timer (``start_periodic``,
  every 50 ms); each handles its share of the firings, then cancels its timer.
  All of them run on the system's one timer task.
* ``anyio.sleep``: what a user would write without timers: 1,000 tasks, each
  looping on ``await anyio.sleep(interval)`` for its share.

Both stagger their first firings evenly over one interval (timers started at
different moments, as in a real program) after a pause long enough for every
actor or task to have started, and both do the same bookkeeping per firing (one
:class:`Tally` increment and comparison). The clock runs from when all of them
have started until the last firing has been handled.

This row always times with ``time.process_time()``, whatever ``--clock`` says:
its point is the CPU a firing costs, and the wall time of a sample is mostly the
intervals themselves. Unit: one firing.
"""

from __future__ import annotations

from time import process_time
from typing import Any

import anyio

from actors import Actor, ActorSystem

from .._registry import Impl, Row, Sample, register
from ._actor_tasks import Tally, shares

__all__: list[str] = []

ACTORS = 1_000  #: actors (tasks) with a timer each
INTERVAL = 0.05  #: seconds between two firings of one timer
PAUSE = 0.2  #: seconds before the first firing: every actor or task has started
FIRINGS = 20 * ACTORS  #: firings per sample (20 per timer)
QUICK = 2 * ACTORS  #: firings per sample with --quick


def _first(index: int) -> float:
    """Seconds from its start to the first firing of timer ``index``."""
    return PAUSE + INTERVAL * (index + 1) / ACTORS


class Periodic(Actor):
    """Handles ``firings`` firings of its periodic timer, then cancels it."""

    def __init__(self, index: int, firings: int, tally: Tally, started: Tally) -> None:
        self.index = index
        self.left = firings
        self.tally = tally
        self.started = started

    def on_start(self) -> None:
        self.context.timers.start_periodic(
            "tick", "tick", INTERVAL, initial_delay=_first(self.index)
        )
        started = self.started
        started.count += 1
        if started.count == started.expected:
            started.done.set()

    def receive(self, message: Any) -> None:
        tally = self.tally
        tally.count += 1
        if tally.count == tally.expected:
            tally.done.set()
        self.left -= 1
        if not self.left:
            self.context.timers.cancel("tick")


async def ours_timers(count: int) -> Sample:
    tally, started = Tally(count), Tally(ACTORS)
    async with ActorSystem() as system:
        for index, firings in enumerate(shares(count, ACTORS)):
            system.spawn(Periodic, index, firings, tally, started)
        await started.done.wait()
        start = process_time()
        await tally.done.wait()
        elapsed = process_time() - start
    return Sample(elapsed, tally.count)


async def _sleeper(index: int, firings: int, tally: Tally, started: Tally) -> None:
    started.count += 1
    if started.count == started.expected:
        started.done.set()
    await anyio.sleep(_first(index))
    for left in range(firings, 0, -1):
        tally.count += 1
        if tally.count == tally.expected:
            tally.done.set()
        if left > 1:
            await anyio.sleep(INTERVAL)


async def sleep_timers(count: int) -> Sample:
    tally, started = Tally(count), Tally(ACTORS)
    async with anyio.create_task_group() as tg:
        for index, firings in enumerate(shares(count, ACTORS)):
            tg.start_soon(_sleeper, index, firings, tally, started)
        await started.done.wait()
        start = process_time()
        await tally.done.wait()
        elapsed = process_time() - start
    return Sample(elapsed, tally.count)


register(
    Row(
        "timers",
        f"{ACTORS:,} actors with a periodic timer every {INTERVAL * 1000:.0f} ms; "
        "CPU time (process_time) per firing",
        FIRINGS,
        QUICK,
        (
            Impl("ours", ours_timers),
            Impl("anyio.sleep", sleep_timers),
        ),
        unit="firing",
    )
)
