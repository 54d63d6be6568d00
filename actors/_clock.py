"""``Clock``: the one source of time for a system's timers, ask deadlines,
restart intensity and backoff, when it is not the event loop's own.

A system made with ``ActorSystem(clock=...)`` reads and waits on that clock
(``actors.testing.ManualClock`` is the one tests use: time moves only when the
test advances it). Without one (the default) the runtime uses the event loop's
clock directly, through the same code paths as if this module did not exist:
the choice is made once per system, never per ask or per timer.

Trio's ``MockClock`` needs none of this: it *is* the event loop's clock on
Trio, so a system on a Trio run with a MockClock is on virtual time already.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

import anyio

__all__ = ["Clock", "ClockHandle"]


class ClockHandle(Protocol):
    """What [``Clock.call_at``][actors.testing.Clock.call_at] returns: a
    callback that can be cancelled."""

    def cancel(self) -> None:
        """Do not call the callback (nothing happens if it was called)."""


class Clock:
    """A source of time a system's runtime reads and waits on.

    A subclass implements [``now``][actors.testing.Clock.now] and
    [``call_at``][actors.testing.Clock.call_at];
    [``sleep``][actors.testing.Clock.sleep] and
    [``move_on_after``][actors.testing.Clock.move_on_after] are built on them.
    Callbacks run in the event loop's thread, from whatever makes the clock's
    time pass (for ``actors.testing.ManualClock``, its ``advance``).
    """

    __slots__ = ()

    def now(self) -> float:
        """The current time, in seconds (any origin; only differences count)."""
        raise NotImplementedError

    def call_at(self, deadline: float, callback: Callable[[], object]) -> ClockHandle:
        """Call ``callback()`` once the time reaches ``deadline`` (seconds on
        [``now``][actors.testing.Clock.now]'s scale).

        Returns:
            A handle whose ``cancel()`` withdraws the call.
        """
        raise NotImplementedError

    async def sleep(self, seconds: float) -> None:
        """Wait until ``seconds`` have passed on this clock (a checkpoint;
        cancellable)."""
        event = anyio.Event()
        handle = self.call_at(self.now() + seconds, event.set)
        try:
            await event.wait()
        finally:
            handle.cancel()

    @contextmanager
    def move_on_after(self, seconds: float) -> Iterator[anyio.CancelScope]:
        """A cancel scope cancelled once ``seconds`` have passed on this clock
        (``anyio.move_on_after`` on the event loop's clock)."""
        with anyio.CancelScope() as scope:
            handle = self.call_at(self.now() + seconds, scope.cancel)
            try:
                yield scope
            finally:
                handle.cancel()
