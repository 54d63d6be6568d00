"""Helpers shared by the channel tests: scheduler-exact waits, no real sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import sniffio

from actors.testing import wait_all_blocked as wait_all_blocked


def on_asyncio() -> bool:
    """Whether the running event loop is asyncio (or uvloop)."""
    return sniffio.current_async_library() == "asyncio"


@asynccontextmanager
async def task_group() -> AsyncIterator[anyio.abc.TaskGroup]:
    """A task group that cancels whatever is still parked when its body ends.

    Tasks the body left waiting would wait forever; cancelling them turns a
    lost item into a failed assertion (an Outcome not done) instead of a hang.
    """
    async with anyio.create_task_group() as tg:
        yield tg
        await wait_all_blocked()
        tg.cancel_scope.cancel()


class Outcome:
    """What one background operation did: its value or the exception it raised."""

    __slots__ = ("done", "error", "scope_cancelled", "task", "value")

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None  # set on asyncio only
        self.done = False
        self.scope_cancelled = False  # its own cancel scope caught a cancel
        self.value: Any = None
        self.error: BaseException | None = None

    def __repr__(self) -> str:
        if not self.done:
            return "<Outcome pending>"
        if self.scope_cancelled:
            return "<Outcome cancelled by its scope>"
        if self.error is not None:
            return f"<Outcome raised {type(self.error).__name__}>"
        return f"<Outcome {self.value!r}>"

    def cancel_natively(self) -> None:
        """``Task.cancel()`` the task running the operation (asyncio only)."""
        assert self.task is not None, "native cancellation exists on asyncio only"
        self.task.cancel()

    @property
    def cancelled(self) -> bool:
        """Whether the operation raised a cancellation (scope or native)."""
        return self.scope_cancelled or isinstance(
            self.error, anyio.get_cancelled_exc_class()
        )

    @property
    def ok(self) -> bool:
        """Whether the operation returned (``value`` holds what it returned)."""
        return self.done and self.error is None and not self.scope_cancelled


def start(
    tg: anyio.abc.TaskGroup,
    op: Callable[[], Awaitable[Any]],
    scope: anyio.CancelScope | None = None,
) -> Outcome:
    """Run ``op()`` in a new task of ``tg``; the returned Outcome records it.

    Cancellation (from ``scope`` or a native ``Task.cancel()``) is recorded, not
    propagated, so a test can look at it after the fact.
    """
    outcome = Outcome()
    cancel_scope = scope if scope is not None else anyio.CancelScope()

    async def run() -> None:
        if on_asyncio():
            outcome.task = asyncio.current_task()
        try:
            with cancel_scope:
                outcome.value = await op()
                outcome.done = True
                return
        except BaseException as exc:
            outcome.error = exc
            outcome.done = True
            if on_asyncio() and isinstance(exc, asyncio.CancelledError):
                task = asyncio.current_task()
                assert task is not None
                task.uncancel()  # a native cancel the test asked for
            elif not isinstance(exc, Exception | anyio.get_cancelled_exc_class()):
                raise
            return
        # Reached only when the scope swallowed its own cancellation.
        assert cancel_scope.cancelled_caught
        outcome.scope_cancelled = True
        outcome.done = True

    tg.start_soon(run)
    return outcome
