"""Waiting primitives: park a task until another task wakes it, per backend.

A channel picks its backend once, on its first async operation, and from then on
parks and wakes tasks with that backend's own primitive:

* asyncio (and uvloop): a future of the running loop. The parked task awaits it;
  a waker resolves it with ``set_result(None)``.
* Trio: ``trio.lowlevel.wait_task_rescheduled`` with an abort function; a waker
  calls ``trio.lowlevel.reschedule``.

Both honour anyio's cancellation semantics: anyio cancel scopes (and Trio's own)
cancel a parked task only while it has not been woken. One race is left on
asyncio: a native ``Task.cancel()`` can land after a waker resolved the future
but before the task resumed. ``park`` reports that case to the caller through its
``restore`` callback, so the caller can put back whatever it was handed.

The runtime's per-message waits (an idle actor's mailbox, an asker waiting for
its reply) use a lighter primitive, the *wait handle*, with the same code on
every backend and no method call of ours around it:
``handle = backend.new_handle()``, then ``await handle``; a waker calls
``backend.resolve(handle, value)`` and the task resumes with ``value`` (None:
woken; False: expired). Both are callables chosen once per backend and bound
into a slot: on asyncio the future class itself and ``Future.set_result``
(C code, no Python frame), on Trio a small handle class around
``wait_task_rescheduled``/``reschedule``. A handle resolves once:
resolving it again, or after its task was cancelled, raises ``Stale``, and
the parked task's own ``except`` clause undoes its queueing (on Trio too, so
the two backends share one protocol).
"""

from __future__ import annotations

import itertools
import sys
from asyncio import CancelledError, Future, InvalidStateError, get_running_loop
from collections.abc import Awaitable, Callable, Generator
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from anyio.lowlevel import checkpoint_if_cancelled as _checkpoint_if_cancelled

from ._library import current_async_library

__all__ = [
    "ASYNCIO_BACKEND",
    "BROKEN",
    "DELIVERED",
    "PENDING",
    "WITHDRAWN",
    "Backend",
    "Key",
    "ReceiveWaiter",
    "SendWaiter",
    "Stale",
    "Waiter",
    "current_backend",
    "ki_protected",
]

T = TypeVar("T")
W = TypeVar("W", bound="Waiter")
F = TypeVar("F", bound=Callable[..., Any])

# -- Ctrl-C on Trio ------------------------------------------------------------
#
# Trio raises KeyboardInterrupt at whatever bytecode runs when SIGINT arrives,
# unless that code is KI-protected: then it delivers the interrupt to the main
# task at its next checkpoint. An operation interrupted half-way (a waiter
# queued but never parked, an item taken but never handed on, a flag set but
# the task not woken) would later make Trio reschedule a task that is not
# waiting: TrioInternalError or a hang. So, as Trio's own channels do, every
# operation that touches a channel's or a mailbox's waiters is protected.

_ki_protected: list[Callable[..., Any]] = []  # marked, for Trio to learn late
_enable_ki_protection: Callable[[Any], Any] | None = None  # Trio's, once known


def ki_protected(function: F) -> F:
    """Mark ``function`` as one Ctrl-C must not interrupt half-way on Trio.

    Returns ``function`` itself. Trio (0.28 and later) records the function's
    code object as protected: no wrapper, no cost per call, on Trio or asyncio.
    The record is made as soon as Trio is imported (now, if it already is;
    else when the Trio backend is first used), so an asyncio program never
    imports Trio for it.
    """
    _ki_protected.append(function)
    if _enable_ki_protection is not None:
        _enable_ki_protection(function)
    return function


def _learn_trio_ki_protection() -> None:
    global _enable_ki_protection
    if _enable_ki_protection is None:
        from trio.lowlevel import enable_ki_protection

        for function in _ki_protected:
            enable_ki_protection(function)
        _enable_ki_protection = enable_ki_protection


#: Where an item handed to a receiver stands in send order: (run, index).
Key = tuple[int, int]

#: Raised by ``Backend.resolve`` when the wait handle was resolved already,
#: or its task was cancelled (asyncio's own
#: exception for a done future; the Trio handle raises it too).
Stale: Final = InvalidStateError

#: A waiting sender's outcomes (``SendWaiter.status``).
PENDING: Final = 0
DELIVERED: Final = 1  # its item moved into the buffer or to a receiver
WITHDRAWN: Final = 2  # its own endpoint was closed; the item was not sent
BROKEN: Final = 3  # every receiving endpoint closed; the item was not sent


class Waiter:
    """What a task parks on: ``handle`` is the backend's wait handle (an asyncio
    future or a Trio task), set by ``Backend.park``."""

    __slots__ = ("handle",)

    handle: Any


class ReceiveWaiter(Waiter, Generic[T]):
    """A task parked in a receive: it is handed up to ``limit`` items.

    Once handed items it also knows where they stand in send order, so a
    give-back keeps FIFO (see ``_state``): ``stamp`` is its run number, set
    when it is woken with items; ``keys``, set only when a give-back fed it,
    holds the keys of its first items (the rest are ``(stamp, index)``).
    """

    __slots__ = ("items", "keys", "limit", "owner", "queued", "stamp")

    stamp: int
    keys: list[Key]

    def __init__(self, limit: int, owner: object) -> None:
        self.handle = None
        self.items: list[T] = []
        self.limit = limit
        self.owner = owner  # the endpoint that parked, so its close() finds it
        self.queued = True  # still in the channel's queue of waiting receivers


class SendWaiter(Waiter, Generic[T]):
    """A task parked in a send, holding the item it could not yet place."""

    __slots__ = ("item", "owner", "queued", "status")

    def __init__(self, item: T, owner: object) -> None:
        self.handle = None
        self.item = item
        self.owner = owner
        self.queued = True
        self.status = PENDING


class _BareYield(tuple[None]):
    """Awaited, yields None once: asyncio's Task then reschedules itself with
    call_soon, the same schedule-and-cancel point as anyio's checkpoint()
    (``sleep(0)``). Written without a Python frame: ``__await__`` is the
    tuple's own C iterator over its one None, so a checkpoint runs no Python
    code of ours (a ``types.coroutine`` generator would cost a frame, entered
    and resumed)."""

    __slots__ = ()
    if TYPE_CHECKING:

        def __await__(self) -> Generator[None, None, None]: ...

    else:
        __await__ = tuple.__iter__


_BARE_YIELD: Final = _BareYield((None,))
#: ``checkpoint()`` on asyncio: a C callable that returns the one
#: ``_BareYield`` (``repeat(x).__next__`` returns x on every call).
_yield_now: Final = itertools.repeat(_BARE_YIELD).__next__


class Backend:
    """The operations a channel needs from an event loop.

    Besides the methods, three callables bound once per backend (see the module
    docstring): ``new_handle()`` makes a wait handle for the current task,
    ``resolve(handle, value)`` wakes it with ``value`` (None or False) or
    raises ``Stale``; ``checkpoint()`` returns an awaitable that is a
    schedule point and a cancel point (a bare yield on asyncio, Trio's
    ``checkpoint``), bound rather than a method so that a checkpoint costs no
    frame of ours.
    """

    __slots__ = ("checkpoint", "new_handle", "resolve")

    name: str
    new_handle: Callable[[], Any]
    resolve: Callable[[Any, Any], None]
    checkpoint: Callable[[], Awaitable[None]]

    #: Whether a task that found nothing after one checkpoint should make a
    #: second one before it parks (checkpoint, then take: see the mailbox).
    #: True on Trio, whose scheduler runs each batch of runnable tasks in a
    #: random order: the peer may run after this task in the same batch, and
    #: its message is then ready one batch later. False on asyncio, which runs
    #: ready tasks first in, first out.
    recheck: bool

    #: How a channel operation makes its checkpoint. True (asyncio): yield
    #: first, then act on the state after the yield, as anyio does; an operation
    #: that must wait then parks too. False (Trio): check for cancellation
    #: without yielding, act, then yield shielded if the operation completed;
    #: if it must wait, the park is the one schedule point (as Trio's channels).
    yield_first: bool

    def cancel_check(self) -> Awaitable[None]:
        """A cancel point that does not yield unless cancelled: on Trio, of
        every channel operation (see ``yield_first``); on both, of a park
        that no checkpoint comes before (the mailbox's waiting send)."""
        raise NotImplementedError

    def schedule_point(self) -> Awaitable[None]:
        """A schedule point that cannot be cancelled (Trio only)."""
        raise NotImplementedError

    async def park(
        self,
        waiter: W,
        abort: Callable[[W], None],
        restore: Callable[[W], None],
    ) -> None:
        """Suspend the current task until ``wake(waiter)``.

        Args:
            waiter: the waiter the caller already queued.
            abort: called when the task is cancelled before being woken; it must
                unqueue the waiter. The cancellation then propagates.
            restore: called when a native asyncio cancellation arrives after the
                waiter was woken; it must undo or keep what the waker did. The
                cancellation then propagates.
        """
        raise NotImplementedError

    async def park_for(
        self,
        waiter: W,
        timeout: float,
        abort: Callable[[W], None],
        restore: Callable[[W], None],
    ) -> bool:
        """Like ``park``, for at most ``timeout`` seconds.

        Returns:
            True when woken; False when the timeout expired first (``abort`` has
            then been called, as for a cancellation).
        """
        raise NotImplementedError

    def wake(self, waiter: Waiter) -> None:
        """Make a parked task runnable (exactly once per park)."""
        raise NotImplementedError

    async def wait_handle(self, handle: Any, timeout: float) -> Any:
        """Await the wait handle ``handle`` (from ``new_handle``) for at most
        ``timeout`` seconds, with a timer of its own.

        Returns:
            What it was resolved with (None: woken), or False when the
            timeout expired first (a later ``resolve`` raises ``Stale``).
        """
        raise NotImplementedError

    def is_cancelled(self, waiter: Waiter) -> bool:
        """Whether a still-queued waiter's task was cancelled and must be skipped."""
        raise NotImplementedError


class _AsyncioBackend(Backend):
    __slots__ = ()
    name = "asyncio"
    recheck = False
    # anyio offers no cheap "raise if cancelled" on asyncio (its cancel scopes
    # deliver Task.cancel() from a loop callback), so the yield comes first.
    yield_first = True

    def __init__(self) -> None:
        # The wait handle is a future of the running loop. Future() finds the
        # loop in C, as loop.create_future() does on asyncio and uvloop, minus
        # a Python call. The unbound set_result is one C call, as fast as the
        # inline method call; a done future (Task.cancel() or an earlier
        # resolve got there first) raises InvalidStateError, that is Stale.
        self.new_handle = Future
        self.resolve = Future.set_result
        self.checkpoint = _yield_now

    def cancel_check(self) -> Awaitable[None]:
        # anyio delivers a cancel scope's cancellation from a loop callback:
        # a task that parks in a cancelled scope can be woken (handed what it
        # waited for) before that callback runs, every time, and a loop of
        # such parks then never sees its cancellation. This raises it first
        # (a walk of the task's scopes; a yield only when cancelled).
        return _checkpoint_if_cancelled()

    async def park(
        self,
        waiter: W,
        abort: Callable[[W], None],
        restore: Callable[[W], None],
    ) -> None:
        fut = get_running_loop().create_future()
        waiter.handle = fut
        try:
            await fut
        except CancelledError:
            if fut.cancelled():
                abort(waiter)
            else:
                # Woken, then cancelled natively before resuming.
                restore(waiter)
            raise

    async def park_for(
        self,
        waiter: W,
        timeout: float,
        abort: Callable[[W], None],
        restore: Callable[[W], None],
    ) -> bool:
        # A loop timer resolves the future with False: cheaper than a cancel
        # scope, and the future stays the one thing the task waits on.
        loop = get_running_loop()
        fut = loop.create_future()
        waiter.handle = fut
        timer = loop.call_later(timeout, _expire, fut)
        try:
            await fut
        except CancelledError:
            timer.cancel()
            if fut.cancelled():
                abort(waiter)
            else:
                restore(waiter)
            raise
        if fut.result() is False:
            abort(waiter)
            return False
        timer.cancel()
        return True

    def wake(self, waiter: Waiter) -> None:
        waiter.handle.set_result(None)

    async def wait_handle(self, handle: Any, timeout: float) -> Any:
        # A loop timer resolves the future with False (see park_for).
        timer = get_running_loop().call_later(timeout, _expire, handle)
        try:
            return await handle
        finally:
            timer.cancel()

    def is_cancelled(self, waiter: Waiter) -> bool:
        # A queued waiter's future is only ever done if Task.cancel() cancelled it.
        return bool(waiter.handle.done())


class _TrioBackend(Backend):
    __slots__ = (
        "_cancel_check",
        "_current_task",
        "_move_on_after",
        "_reschedule",
        "_schedule_point",
        "_succeeded",
        "_wait",
    )
    name = "trio"
    recheck = True
    yield_first = False

    def __init__(self) -> None:
        import trio

        _learn_trio_ki_protection()
        lowlevel = trio.lowlevel
        self._current_task = lowlevel.current_task
        self._reschedule = lowlevel.reschedule
        self._wait = lowlevel.wait_task_rescheduled
        self._succeeded = lowlevel.Abort.SUCCEEDED
        self._move_on_after = trio.move_on_after
        self._cancel_check = lowlevel.checkpoint_if_cancelled
        self._schedule_point = lowlevel.cancel_shielded_checkpoint
        handle = _trio_handle_class()
        self.new_handle = handle
        self.resolve = handle.resolve
        self.checkpoint = lowlevel.checkpoint

    def cancel_check(self) -> Awaitable[None]:
        return self._cancel_check()

    def schedule_point(self) -> Awaitable[None]:
        return self._schedule_point()

    @ki_protected
    async def park(
        self,
        waiter: W,
        abort: Callable[[W], None],
        restore: Callable[[W], None],
    ) -> None:
        waiter.handle = self._current_task()
        succeeded = self._succeeded

        def abort_fn(raise_cancel: object) -> Any:
            # Trio calls this only while the task is still parked: a task that
            # was rescheduled can no longer be cancelled here, so there is no
            # woken-then-cancelled race on Trio and ``restore`` is never needed.
            abort(waiter)
            return succeeded

        await self._wait(abort_fn)

    @ki_protected
    async def park_for(
        self,
        waiter: W,
        timeout: float,
        abort: Callable[[W], None],
        restore: Callable[[W], None],
    ) -> bool:
        with self._move_on_after(timeout) as scope:
            await self.park(waiter, abort, restore)
        return not scope.cancelled_caught

    @ki_protected
    def wake(self, waiter: Waiter) -> None:
        self._reschedule(waiter.handle)

    @ki_protected
    async def wait_handle(self, handle: Any, timeout: float) -> Any:
        with self._move_on_after(timeout):
            # Cancelled by the timeout: the handle's abort marks it done, so
            # a later resolve raises Stale.
            return await handle
        return False

    def is_cancelled(self, waiter: Waiter) -> bool:
        return False


def _expire(fut: Any) -> None:
    if not fut.done():
        fut.set_result(False)


def _trio_handle_class() -> type[Any]:
    """Make the Trio wait handle class (Trio is imported only when running)."""
    import outcome
    import trio

    lowlevel = trio.lowlevel
    current_task = lowlevel.current_task
    wait = lowlevel.wait_task_rescheduled
    reschedule = lowlevel.reschedule
    succeeded = lowlevel.Abort.SUCCEEDED
    value = outcome.Value  # one per resolve: an outcome is unwrapped only once

    class TrioHandle:
        """A task parked until resolved (None), expired (False) or cancelled."""

        __slots__ = ("done", "task")

        def __init__(self) -> None:
            self.task = current_task()
            self.done = False

        def __await__(self) -> Generator[Any, None, Any]:
            return wait(self._abort).__await__()

        def _abort(self, raise_cancel: object) -> Any:
            # Trio calls this only while the task is still parked. The waker
            # sees done and gets Stale, as with asyncio's cancelled future;
            # the parked task's except clause unqueues it.
            self.done = True
            return succeeded

        @ki_protected  # done set, then rescheduled: never one without the other
        def resolve(self, result: Any) -> None:
            if self.done:
                raise Stale
            self.done = True
            if result is None:
                reschedule(self.task)  # its default: Value(None)
            else:
                reschedule(self.task, value(result))

    return TrioHandle


#: The asyncio (and uvloop) backend: one for every loop (it keeps no state).
ASYNCIO_BACKEND: Final[Backend] = _AsyncioBackend()
_trio_backend: _TrioBackend | None = None


def current_backend() -> Backend:
    """Return the backend of the running event loop.

    Raises:
        RuntimeError: if no supported event loop is running in this thread.
    """
    global _trio_backend
    try:
        name = current_async_library()
    except RuntimeError:
        raise RuntimeError(
            "no running event loop: channels are used from async code"
        ) from None
    if name == "asyncio":
        return ASYNCIO_BACKEND
    if name == "trio":
        if _trio_backend is None:
            _trio_backend = _TrioBackend()
        return _trio_backend
    raise RuntimeError(f"unsupported async library {name!r}: use asyncio or trio")


if "trio" in sys.modules:  # Trio is in use already: protect from the start
    _learn_trio_ki_protection()
