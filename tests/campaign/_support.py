"""Scheduler-exact waits (as tests/runtime/_support.py): no sleeps."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import anyio.lowlevel
import sniffio


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
