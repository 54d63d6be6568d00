"""Tasks started with the event loop's own primitive, inside a task group.

anyio's ``TaskGroup.start_soon`` is general: each task gets a handle, a
cancel scope of its own, a finished event and weak references (about 3 KB
and tens of Python calls per task on asyncio). A runtime that starts a task
per actor, and another each time an idle actor gets mail, wants the loop's
own primitive instead, without leaving structured concurrency. A
``TaskSpawner`` is that: ``serve()`` runs as one task of the caller's task
group (started with ``task_group.start``), and every task ``start``
starts lives inside it:

* Trio: a nursery opened by ``serve``; ``start`` is ``nursery.start_soon``
  (in the given ``contextvars.Context``), so cancellation, shielding and
  errors are Trio's own: cancelling the task group cancels them, an error
  propagates through ``serve`` into the task group.
* asyncio (and uvloop): ``loop.create_task`` (with the given context), each
  task inside an anyio ``CancelScope`` of its own (so shields inside it keep
  anyio's semantics), counted; ``cancel()`` cancels those scopes (and the
  ones of tasks not started yet, at their start), and ``serve`` returns only
  once every task has ended: cancelled itself (the task group was), it
  cancels them and waits, shielded. A task's error (anything but a
  cancellation) cancels the others and is raised from ``serve``.

``serve`` ends once ``close()`` was called and every task has ended.
"""

from __future__ import annotations

from asyncio import Future, get_running_loop
from collections.abc import Awaitable, Callable
from contextvars import Context
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskStatus

__all__ = ["TaskSpawner", "task_spawner"]

T = TypeVar("T")


class TaskSpawner:
    """Starts tasks with the loop's own primitive (see the module docstring)."""

    __slots__ = ()

    def start(
        self, fn: Callable[[T], Awaitable[Any]], arg: T, context: Context | None
    ) -> None:
        """Start ``fn(arg)`` as a new task, in ``context`` (None: a copy of
        the current one). Never waits.

        Raises:
            RuntimeError: ``serve`` has ended (nothing starts any more).
        """
        raise NotImplementedError

    def cancel(self) -> None:
        """Cancel every task started (and every one started from now on)."""
        raise NotImplementedError

    def close(self) -> None:
        """Nothing more will be started: ``serve`` returns once every task ended."""
        raise NotImplementedError

    async def serve(self, *, task_status: TaskStatus[None]) -> None:
        """Host the tasks; for ``task_group.start(spawner.serve)``.

        Raises:
            Exception: the first error a task raised (the others are cancelled).
        """
        raise NotImplementedError


class _AsyncioSpawner(TaskSpawner):
    __slots__ = (
        "_cancelled",
        "_closed",
        "_create_task",
        "_ended",
        "_error",
        "_live",
        "_scopes",
        "_wakeup",
    )

    def __init__(self) -> None:
        self._create_task = get_running_loop().create_task
        self._live = 0
        self._scopes: set[anyio.CancelScope] = set()
        self._cancelled = False
        self._closed = False
        self._ended = False
        self._error: BaseException | None = None
        self._wakeup: Future[None] | None = None

    def start(
        self, fn: Callable[[T], Awaitable[Any]], arg: T, context: Context | None
    ) -> None:
        if self._ended:
            raise RuntimeError("the task spawner has ended")
        self._live += 1
        self._create_task(self._run(fn, arg), context=context)

    async def _run(self, fn: Callable[[T], Awaitable[Any]], arg: T) -> None:
        scope = anyio.CancelScope()
        if self._cancelled:
            scope.cancel()
        scopes = self._scopes
        scopes.add(scope)
        try:
            with scope:
                await fn(arg)
        except anyio.get_cancelled_exc_class():
            pass  # a cancellation from outside its scope: cancel() or the loop's
        except BaseException as exc:
            if self._error is None:
                self._error = exc
            self.cancel()
            self._wake()  # serve ends with it
        finally:
            scopes.discard(scope)
            self._live -= 1
            if not self._live:
                # A set keeps its table when emptied: a new one lets the
                # peak's go (a burst of tasks, then none).
                self._scopes = set()
                self._wake()

    def _wake(self) -> None:
        wakeup = self._wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    def cancel(self) -> None:
        self._cancelled = True
        for scope in list(self._scopes):
            scope.cancel()

    def close(self) -> None:
        self._closed = True
        self._wake()

    async def serve(self, *, task_status: TaskStatus[None]) -> None:
        task_status.started()
        loop = get_running_loop()
        try:
            try:
                while (self._live or not self._closed) and self._error is None:
                    wakeup = self._wakeup = loop.create_future()
                    await wakeup
                # A task failed: the others are cancelled (by it); wait for
                # them, then the error goes to the task group.
                while self._live:
                    wakeup = self._wakeup = loop.create_future()
                    await wakeup
            except anyio.get_cancelled_exc_class():
                # The task group is cancelled: so is every task; they still
                # end before this does (structured concurrency).
                self.cancel()
                with anyio.CancelScope(shield=True):
                    while self._live:
                        wakeup = self._wakeup = loop.create_future()
                        await wakeup
                raise
        finally:
            self._ended = True
            self._wakeup = None
        if self._error is not None:
            raise self._error


class _TrioSpawner(TaskSpawner):
    __slots__ = ("_closed", "_ended", "_nursery")

    def __init__(self) -> None:
        self._nursery: Any = None
        self._closed = anyio.Event()
        self._ended = False

    def start(
        self, fn: Callable[[T], Awaitable[Any]], arg: T, context: Context | None
    ) -> None:
        nursery = self._nursery
        if nursery is None:
            raise RuntimeError("the task spawner is not serving")
        if context is None:
            nursery.start_soon(fn, arg)
        else:  # Trio starts a task in a copy of the current context
            context.run(nursery.start_soon, fn, arg)

    def cancel(self) -> None:
        nursery = self._nursery
        if nursery is not None:
            nursery.cancel_scope.cancel()

    def close(self) -> None:
        self._closed.set()

    async def serve(self, *, task_status: TaskStatus[None]) -> None:
        import trio

        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                await self._closed.wait()
        finally:
            self._nursery = None


def task_spawner(library: str) -> TaskSpawner:
    """A new spawner for the running loop of ``library`` (``"asyncio"`` or
    ``"trio"``: ``Backend.name``); made in the loop's thread."""
    if library == "trio":
        return _TrioSpawner()
    return _AsyncioSpawner()
