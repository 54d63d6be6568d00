"""Calling user code: handlers and lifecycle hooks, sync or async.

A handler's result is awaited when it is awaitable, decided by the value it
returns (an ``async def`` behind an ordinary decorator returns a coroutine from
a sync wrapper), as for the lifecycle hooks. A cancellation exception a user's
code raises while its actor is not being cancelled is stray (it awaited
something another task cancelled) and becomes a
[``StrayCancellation``][actors.StrayCancellation] failure. A user's exception is
user data: never mutated in a way that can fail.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable
from typing import Any

import anyio

from ._errors import StrayCancellation

__all__ = [
    "PLAIN",
    "add_note_once",
    "awaitable_class",
    "being_cancelled",
    "call_handler",
    "call_hook",
    "stray_failure",
]

#: Classes of values a handler returns that are known not to be awaitable, so
#: the message loop tells a plain reply from a coroutine with a set lookup, no
#: call. Filled as results come (bounded: a program that makes classes without
#: end stops caching, it does not grow this set).
PLAIN: set[type] = {type(None), bool, int, float, str, bytes, tuple, list, dict}
_PLAIN_MAX = 4096


def awaitable_class(cls: type) -> bool:
    """Whether results of class ``cls`` are awaited; caches the classes that
    are not (see ``PLAIN``)."""
    if hasattr(cls, "__await__"):
        return True
    if len(PLAIN) < _PLAIN_MAX:
        PLAIN.add(cls)
    return False


async def call_handler(handler: Callable[[Any], Any], message: object) -> Any:
    """Call a sync or async handler (``receive``, ``on_terminated``) and return
    its result, awaited if it is awaitable."""
    result = handler(message)
    if result.__class__ not in PLAIN and awaitable_class(result.__class__):
        result = await result
    return result


async def call_hook(hook: Callable[..., Any], *args: Any) -> None:
    """Call a sync or async lifecycle hook.

    Raises:
        StrayCancellation: the hook raised a cancellation exception while its
            actor was not being cancelled.
        Exception: whatever the hook raised.
    """
    try:
        result = hook(*args)
        # Most hooks are sync and return None: no isawaitable call for them.
        if result is not None and inspect.isawaitable(result):
            await result
    except anyio.get_cancelled_exc_class() as exc:
        failure = stray_failure(exc)
        if failure is None:
            raise
        raise failure from exc


def being_cancelled() -> bool:
    """Whether the current task is being cancelled: an enclosing cancel scope
    was cancelled (anyio's, Trio's) or, on asyncio, ``Task.cancel()`` was
    called. False means a cancellation exception raised now is stray: it came
    from something the task awaited that another task cancelled."""
    if anyio.current_effective_deadline() == -math.inf:
        return True
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no asyncio loop in this thread: Trio
        return False
    return task is not None and task.cancelling() > 0


def stray_failure(exc: BaseException) -> StrayCancellation | None:
    """The failure to report for ``exc`` if it is a stray cancellation, else
    None (a real cancellation of the task, or not a cancellation at all)."""
    if not isinstance(exc, anyio.get_cancelled_exc_class()) or being_cancelled():
        return None
    failure = StrayCancellation(
        f"a handler raised {type(exc).__name__} but its actor was not being "
        "cancelled (it awaited something another task cancelled)"
    )
    failure.__cause__ = exc
    return failure


def add_note_once(exc: BaseException, note: str) -> None:
    """Add ``note`` to a user's exception unless it is there already; never
    fails (a frozen dataclass exception refuses new attributes)."""
    try:
        notes = getattr(exc, "__notes__", None)
        if isinstance(notes, list) and note in notes:
            return
        exc.add_note(note)
    except Exception:
        pass
