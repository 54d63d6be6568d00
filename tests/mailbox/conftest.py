"""Fixtures for the mailbox tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import pytest
from anyio import wait_all_tasks_blocked
from anyio.abc import TaskGroup


class Tasks:
    """Starts tasks in a task group, counting those that have not finished."""

    __slots__ = ("_group", "running")

    def __init__(self, group: TaskGroup) -> None:
        self._group = group
        self.running = 0

    def start_soon(self, func: Callable[..., Awaitable[Any]], *args: Any) -> None:
        self.running += 1

        async def run() -> None:
            try:
                await func(*args)
            finally:
                self.running -= 1

        self._group.start_soon(run)


@asynccontextmanager
async def _finishing_task_group() -> AsyncIterator[Tasks]:
    stuck = 0
    async with anyio.create_task_group() as group:
        tasks = Tasks(group)
        yield tasks
        # The body is over, so nothing else will happen: once every task is
        # blocked, one still running never finishes (a lost wakeup, a sender
        # never admitted). Fail the test rather than hang it.
        await wait_all_tasks_blocked()
        stuck = tasks.running
        if stuck:
            group.cancel_scope.cancel()
    if stuck:
        pytest.fail(f"deadlock: {stuck} task(s) still blocked after the test body")


@pytest.fixture
def task_group() -> Callable[[], AbstractAsyncContextManager[Tasks]]:
    """A task group whose tasks must all be able to finish when its body ends;
    a test that would hang on a deadlock fails instead."""
    return _finishing_task_group
