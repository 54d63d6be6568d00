"""``ManualClock``: time that moves only when the test says so, on every backend."""

from __future__ import annotations

import math
from collections.abc import Callable
from heapq import heappop, heappush
from itertools import count

from .._clock import Clock
from .._validation import check_seconds_type
from ._blocked import wait_all_blocked

__all__ = ["ManualClock"]


class _Call:
    """One callback waiting for its time (``ManualClock.call_at``)."""

    __slots__ = ("callback", "cancelled", "clock", "deadline")

    def __init__(
        self, clock: ManualClock, deadline: float, callback: Callable[[], object]
    ) -> None:
        self.clock = clock
        self.deadline = deadline
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            self.clock._live -= 1

    def __repr__(self) -> str:
        state = " cancelled" if self.cancelled else ""
        return f"<call at {self.deadline} s: {self.callback!r}{state}>"


class ManualClock(Clock):
    """A clock whose time moves only in
    [``advance``][actors.testing.ManualClock.advance]: deterministic time for a
    system's timers, ask timeouts, restart intensity and backoff, on asyncio,
    uvloop and Trio alike (``ActorSystem(clock=ManualClock())``; the
    ``manual_time`` fixture gives one to the ``actor_system`` fixture).

    Only the system's own waits run on it; the test's own timeouts
    (``anyio.fail_after``, a probe's ``expect_message``) stay on the event
    loop's clock, so a test never hangs on a clock nobody advances.

    Args:
        start: the time it starts at, in seconds.

    Raises:
        TypeError: ``start`` is not a number.
        ValueError: ``start`` is NaN or infinite.
    """

    __slots__ = ("_heap", "_live", "_now", "_seq")

    def __init__(self, start: float = 0.0) -> None:
        check_seconds_type("start", start)
        if not math.isfinite(start):
            raise ValueError(f"start must be finite, not {start!r}")
        self._now = float(start)
        self._heap: list[tuple[float, int, _Call]] = []
        self._seq = count()  # calls due at one time run in the order made
        self._live = 0

    def now(self) -> float:
        """The clock's current time, in seconds."""
        return self._now

    def call_at(self, deadline: float, callback: Callable[[], object]) -> _Call:
        """Call ``callback()`` when
        [``advance``][actors.testing.ManualClock.advance] reaches ``deadline``
        (at the next advance, even by 0 seconds, if it has passed already).

        Returns:
            A handle whose ``cancel()`` withdraws the call.
        """
        call = _Call(self, deadline, callback)
        heappush(self._heap, (deadline, next(self._seq), call))
        self._live += 1
        return call

    @property
    def pending(self) -> int:
        """How many calls wait for their time (timers, ask deadlines, sleeps)."""
        return self._live

    @property
    def next_deadline(self) -> float:
        """When the earliest waiting call is due, in seconds (``math.inf``:
        none waits)."""
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heappop(heap)
        return heap[0][0] if heap else math.inf

    async def advance(self, seconds: float) -> None:
        """Move the time ``seconds`` forward, firing every call due on the
        way, in deadline order, each at its own time.

        Before each step and at the end it waits until every other task is
        blocked ([``wait_all_blocked``][actors.testing.wait_all_blocked]), so
        what a firing wakes has run, and started its own timers, before the
        clock moves on: a periodic timer fires once per period crossed, an
        actor's reply to a timer's message has arrived when ``advance`` returns.

        Args:
            seconds: how far to move (>= 0; 0 only lets due calls and woken
                tasks run).

        Raises:
            TypeError: ``seconds`` is not a number.
            ValueError: ``seconds`` is negative, NaN or infinite.
        """
        check_seconds_type("seconds", seconds)
        if not (seconds >= 0 and math.isfinite(seconds)):
            raise ValueError(f"seconds must be >= 0 and finite, not {seconds!r}")
        await self.advance_to(self._now + seconds)

    async def advance_to(self, time: float) -> None:
        """Move the time forward to ``time`` (seconds on this clock), as
        [``advance``][actors.testing.ManualClock.advance] does; a time in the
        past only runs what is due.

        Raises:
            TypeError: ``time`` is not a number.
            ValueError: ``time`` is NaN or infinite.
        """
        check_seconds_type("time", time)
        if not math.isfinite(time):
            raise ValueError(f"time must be finite, not {time!r}")
        heap = self._heap
        await wait_all_blocked()
        while True:
            while heap and heap[0][2].cancelled:
                heappop(heap)
            if not heap or heap[0][0] > time:
                break
            self._now = max(self._now, heap[0][0])
            # Everything due at this instant, then let the woken tasks run
            # (they may start calls due at this very instant: the loop sees
            # them next).
            while heap and heap[0][0] <= self._now:
                call = heappop(heap)[2]
                if not call.cancelled:
                    call.cancelled = True
                    self._live -= 1
                    call.callback()
            await wait_all_blocked()
        # Nothing is due up to ``time``: moving there wakes nobody.
        self._now = max(self._now, time)

    def __repr__(self) -> str:
        return f"<ManualClock at {self._now} s, {self._live} pending>"
