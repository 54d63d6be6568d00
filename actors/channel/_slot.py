"""``Slot``: one answer, filled once by a waker and awaited once by one task.

Every request/reply in the package parks on a slot: the local ask (the
runtime's ``Ask`` envelope), the remote ask (the remote layer's pending ask)
and the NATS client's request. The slot is the one place that knows the
three ways an answer meets its waiter:

* the waiter is parked: the waker resolves its wait handle
  (``Backend.resolve``), and the waiter takes the outcome when it runs;
* the waiter has not parked yet: the outcome waits in the slot, and the
  waiter finds it without parking (the usual case for a ready actor);
* the waiter has left (timed out, cancelled, or on asyncio cancelled
  natively after the hand-over, before it resumed): the answer is *late*.
  Exactly one side learns it: the waker, when ``fill`` returns False (the
  waiter had left before the answer came), or the waiter, when ``leave``
  returns True (an answer had been handed over and will not be taken). Each
  user counts a late answer where it learns of it (a dead letter, a counter).

The wait handle is the backend's (``Backend.new_handle``: an asyncio future,
or a Trio task parked with ``wait_task_rescheduled``): resolving one whose
task was cancelled raises ``Stale``, so a cancellation never races a wake.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ._waiters import Backend, Stale, Waiter, ki_protected

__all__ = ["EMPTY", "Slot"]

#: ``Slot.state`` before the answer (subclasses number their outcomes > 0).
EMPTY: Final = 0


class Slot(Waiter):
    """One answer awaited by one task.

    Attributes:
        state: ``EMPTY`` until ``fill``; then the filler's state (an int > 0
            that subclasses give a meaning: replied, failed, ...).
        outcome: what ``fill`` was given.
        waiting: the waiter is parked on ``handle``.
        abandoned: the waiter left without the outcome; a ``fill`` from now
            on returns False.
        on_done: None, or called with the slot once it is filled while no
            task parks on it (an answer delivered through a callback).
    """

    # Subclasses on hot paths set these in their own __init__ (no super()
    # call: a Python call saved per request).
    __slots__ = ("abandoned", "on_done", "outcome", "state", "waiting")

    state: int
    outcome: Any
    waiting: bool
    abandoned: bool
    on_done: Callable[[Any], None] | None

    def __init__(self) -> None:
        self.handle = None
        self.state = EMPTY
        self.outcome = None
        self.waiting = False
        self.abandoned = False
        self.on_done = None

    @property
    def done(self) -> bool:
        """Whether the slot was filled."""
        return self.state != EMPTY

    @ki_protected
    def fill(self, state: int, outcome: object, backend: Backend | None) -> bool:
        """Fill the slot with ``outcome`` (``state`` > 0 says what it is) and
        wake its waiter. Nothing if it is filled already.

        Returns:
            True when the outcome reached the waiter (or will, when it
            waits); False when nobody will take it (filled already, or the
            waiter left): the caller counts it as late.
        """
        if self.state != EMPTY:
            return False
        self.state = state
        self.outcome = outcome
        return self._wake(backend)

    @ki_protected
    def _wake(self, backend: Backend | None) -> bool:
        # Every False goes with abandoned = True: the waker counts what
        # nobody takes, so the waiter's leave() does not count it again.
        if self.waiting:
            self.waiting = False
            if backend is not None:
                try:
                    backend.resolve(self.handle, None)
                    return True
                except Stale:
                    # A cancellation won (Task.cancel() on asyncio, a cancel
                    # scope on Trio), or an expired deadline.
                    pass
            self.abandoned = True
            return False
        # Not parked: either not yet (it takes the outcome when it waits),
        # gone already, or answered through on_done.
        if self.abandoned:
            return False
        on_done = self.on_done
        if on_done is not None:
            on_done(self)
        return True

    def leave(self) -> bool:
        """The waiter leaves without the outcome (it timed out, was
        cancelled, or gave up); a later ``fill`` returns False.

        Returns:
            True when an answer had been handed over and is now lost (on
            asyncio, a native ``Task.cancel()`` between the hand-over and
            the waiter's resumption): the caller counts it, once. False
            otherwise (also on a second call).
        """
        self.waiting = False
        if self.abandoned:
            return False
        self.abandoned = True
        return self.state != EMPTY

    def lost(self) -> None:
        """Called by ``park`` and ``park_for`` when their waiter leaves after
        an answer was handed over (``leave`` returned True): count it. The
        default does nothing."""

    @ki_protected
    async def park(self, backend: Backend) -> None:
        """Wait until the slot is filled (at once if it is). A checkpoint
        only when it waits.

        Raises:
            Cancelled: the wait was cancelled; the slot is left (``leave``,
                and ``lost`` when an answer was lost).
        """
        if self.state == EMPTY:
            self.waiting = True
            handle = self.handle = backend.new_handle()
            try:
                await handle
            except BaseException:
                if self.leave():
                    self.lost()
                raise

    @ki_protected
    async def park_for(self, backend: Backend, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds until the slot is filled (at once
        if it is), with a timer of its own.

        Returns:
            True when it was filled; False when the timeout expired first
            (the slot is left then: a later ``fill`` returns False).

        Raises:
            Cancelled: as ``park``.
        """
        if self.state != EMPTY:
            return True
        self.waiting = True
        handle = self.handle = backend.new_handle()
        try:
            woken = await backend.wait_handle(handle, timeout)
        except BaseException:
            if self.leave():
                self.lost()
            raise
        if woken is False:
            self.leave()  # expired: nothing was handed over
            return False
        return True
