"""``wait_all_blocked``: wait until every other task is parked, without sleeping."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import anyio.lowlevel

from ..channel.lowlevel import current_async_library

__all__ = ["wait_all_blocked"]


def _parked(task: asyncio.Task[Any]) -> bool:
    # Parked: awaiting a future that is not done (the test anyio's own
    # wait_all_tasks_blocked makes, without its 0.1 s sleeps).
    waiter = task._fut_waiter  # type: ignore[attr-defined]
    return waiter is not None and not waiter.done()


async def wait_all_blocked(max_steps: int = 100_000) -> None:
    """Return once every other task of the event loop is parked.

    On Trio this is ``trio.testing.wait_all_tasks_blocked``. On asyncio (and
    uvloop) it steps the loop one checkpoint at a time until every other task
    awaits an unfinished future: deterministic, and it never sleeps on the
    clock. Use it to synchronise a test with actors that have nothing left to
    do, instead of sleeping.

    Args:
        max_steps: asyncio only: give up after this many checkpoints.

    Raises:
        AssertionError: asyncio only: the tasks kept running for ``max_steps``
            checkpoints (something busy-loops).
    """
    if current_async_library() != "asyncio":
        import trio.testing

        await trio.testing.wait_all_tasks_blocked()
        return
    me = asyncio.current_task()
    for _ in range(max_steps):
        await anyio.lowlevel.checkpoint()
        if all(t is me or t.done() or _parked(t) for t in asyncio.all_tasks()):
            return
    raise AssertionError("tasks kept running: the loop never became idle")
