"""Hibernation: an actor that has stayed idle gives up its task (OTP's
``hibernate_after``).

A new actor whose mailbox is empty holds no task from the start (see
``_actor_task``). One that has had mail keeps its task while it is busy
(a task per message would cost a task start per message: the latency rows),
and parks on its mailbox (``Mailbox.wait_ready``) when it runs out of mail.
The first time a run parks it enters this system's table of actors that hold
a task (``enter``); the run leaves it when it ends (``leave``), however it
ends.

One coarse tick per system, never a timer or a task per actor, finds the
ones that stayed idle: every ``after`` seconds it reads each entered actor's
park stamp (``Mailbox.park_stamp``: the same number for as long as one park
lasts), and an actor parked at this tick in the same park as at the last
tick has been idle all along between them: its wait is interrupted
(``Mailbox.interrupt_wait``) and its run ends idle (``Mailbox.wait_detached``,
as a new actor's does), its context variables kept for the next run. So an
actor hibernates once it has been idle between ``after`` and twice
``after`` seconds; the next item, a stop or a control command starts a run
that goes on with the same incarnation. An actor that gets mail more often
than that never hibernates.

The tick runs only while some actor holds a task, on the system's clock
(``ActorSystem(clock=...)``: a callback on that clock, so a test advances it
past the threshold without sleeping), else on the event loop's: a loop timer
on asyncio (no task), one task per system on Trio (``HIBERNATION_TASK_NAME``,
ended as soon as no actor holds a task). ``ActorSystem(hibernate_after=None)``
turns it off: an actor that has had mail then keeps its task until it stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import anyio

if TYPE_CHECKING:
    from ._cell import Cell
    from ._runtime import Runtime

__all__ = ["DEFAULT_HIBERNATE_AFTER", "HIBERNATION_TASK_NAME", "Hibernation"]

#: Seconds an actor that has had mail stays idle, at least, before it gives up
#: its task (at most twice that); ``ActorSystem(hibernate_after=...)``. A
#: task start (what waking a hibernated actor costs) is tens of microseconds:
#: at most once a second per actor it is noise, and an actor busier than that
#: never pays it.
DEFAULT_HIBERNATE_AFTER: Final = 1.0

#: The name of the Trio tick task (``anyio.get_running_tasks()`` shows it).
HIBERNATION_TASK_NAME: Final = "actors.hibernation"


class Hibernation:
    """The actors of one system that hold a task, and the tick that finds the
    idle ones (see the module docstring)."""

    __slots__ = ("_arm", "_closed", "_handle", "_runtime", "after", "tasked", "ticks")

    def __init__(self, runtime: Runtime, after: float) -> None:
        self._runtime = runtime
        #: Seconds between ticks: the least idle time before hibernation.
        self.after = after
        #: Each actor holding a task, with its park stamp at the last tick
        #: (-1: not parked then, or entered since).
        self.tasked: dict[Cell, int] = {}
        #: Ticks run so far (what tests count).
        self.ticks = 0
        self._closed = False
        # The pending tick: a handle with cancel() (a loop timer, a clock's
        # call, the Trio task's cancel scope), None while none is pending.
        self._handle: Any = None
        # How a tick is armed, chosen once.
        clock = runtime.clock
        self._arm: Callable[[], Any]
        if clock is not None:
            self._arm = lambda: clock.call_at(clock.now() + after, self._fire)
        elif runtime.backend is not None and runtime.backend.name == "trio":
            self._arm = self._start_task
        else:
            loop = asyncio.get_running_loop()
            self._arm = lambda: loop.call_later(after, self._fire)

    def enter(self, cell: Cell) -> None:
        """``cell``'s run parks for the first time: it holds a task."""
        self.tasked[cell] = -1
        if self._handle is None and not self._closed:
            self._handle = self._arm()

    def leave(self, cell: Cell) -> None:
        """``cell``'s run has ended (idle, stopped, restarted, cancelled)."""
        tasked = self.tasked
        tasked.pop(cell, None)
        if not tasked:
            # A dict keeps its table when emptied: a new one lets the peak's
            # go (a burst of 100,000 actors that all had mail, then rest).
            self.tasked = {}
            self._disarm()

    def close(self) -> None:
        """The system has stopped: no more ticks."""
        self._closed = True
        self._disarm()

    def _disarm(self) -> None:
        handle = self._handle
        if handle is not None:
            self._handle = None
            handle.cancel()

    def tick(self) -> int:
        """Look at every actor holding a task once: interrupt the wait of
        those parked since the last tick. Returns how many were interrupted
        (they end their runs when they resume)."""
        self.ticks += 1
        tasked = self.tasked
        interrupted = 0
        for cell, seen in tasked.items():
            mailbox = cell.mailbox
            stamp = mailbox.park_stamp()
            if stamp >= 0 and stamp == seen and mailbox.interrupt_wait():
                interrupted += 1
                stamp = -1
            tasked[cell] = stamp  # (values only: the table's size is kept)
        return interrupted

    def _fire(self) -> None:
        # A loop timer's or a clock's callback: one tick, and the next.
        self._handle = None
        if self._closed:
            return
        self.tick()
        if self.tasked:
            self._handle = self._arm()

    def _start_task(self) -> anyio.CancelScope | None:
        tg = self._runtime.tg
        if tg is None:
            return None
        scope = anyio.CancelScope()
        tg.start_soon(self._run_ticks, scope, name=HIBERNATION_TASK_NAME)
        return scope

    async def _run_ticks(self, scope: anyio.CancelScope) -> None:
        """Trio's tick: one task, while some actor holds a task."""
        try:
            with scope:
                while True:
                    await anyio.sleep(self.after)
                    if self._handle is not scope:
                        return  # disarmed meanwhile (the scope's cancel)
                    self.tick()
                    if not self.tasked:
                        return
        finally:
            if self._handle is scope:
                self._handle = None
