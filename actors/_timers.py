"""Keyed timers bound to an actor's life, all driven by one task per system.

``self.context.timers`` is the actor's
[``TimerScheduler``][actors.TimerScheduler]. Every timer of a system sits in one
heap owned by the system's ``TimerService``, whose one task sleeps until the
earliest deadline (``anyio.current_time()``, so Trio's ``MockClock`` drives it;
or the system's own clock, ``ActorSystem(clock=...)``, such as
``actors.testing.ManualClock``) and is woken early only when a timer with an
earlier deadline arrives. It never naps for less than ``RESOLUTION`` (1 ms), so
timers due within a millisecond of each other fire in one wake-up, at most that
late. The task is started by the first timer and ends when no timer is left, so
an idle system has no timer task and its exit never waits for one.

A firing is the timer object itself, sent as a mailbox signal: outside the
quota (a full mailbox does not lose it) and without an allocation. Each start
makes a new timer object, so a firing knows its own generation: when it reaches
the actor it is dropped unless its timer is still the current one for its key,
which is how a cancelled or replaced timer never delivers, even when its firing
was already queued (Akka's guarantee).

Its size: the scheduler users see and the one service behind it are one
concept, keyed timers, and share the timer object's life.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Hashable
from heapq import heapify, heappop, heappush
from itertools import count
from typing import TYPE_CHECKING, Any, Final

import anyio

from ._errors import SystemNotRunning
from ._invoke import call_handler
from ._lifecycle import STOPPING
from ._validation import check_duration
from .mailbox import MailboxClosed, Signal

if TYPE_CHECKING:
    from ._cell import Cell
    from ._runtime import Runtime

__all__ = [
    "RESOLUTION",
    "TIMER_TASK_NAME",
    "TimerScheduler",
    "TimerService",
    "check_key",
]

#: The name of each system's timer task (``anyio.get_running_tasks()`` shows it).
TIMER_TASK_NAME: Final = "actors.timers"

#: Compact the heap once it holds more cancelled entries than this and than
#: live ones: keeps memory bounded when a key is restarted again and again.
_COMPACT_AT = 64

#: Seconds: the timer task never sleeps for less. Deadlines closer together
#: than this fire in one wake-up, at most this late; event loops time their
#: sleeps in milliseconds anyway (epoll, libuv), and uvloop wakes a sub-
#: millisecond sleep early, which without this floor spins the task.
RESOLUTION: Final = 0.001


def _incarnation(cell: Cell) -> int:
    # A timer started before the actor's first start belongs to that start.
    return cell.incarnation or 1


class _Timer(Signal):
    """One started timer, and its own firing: the signal put in the mailbox.

    A timer is queued in its actor's mailbox at most once at a time
    (``queued``), so a periodic timer skips firings while the actor lags
    behind instead of piling them up.
    """

    __slots__ = (
        "cancelled",
        "cell",
        "deadline",
        "in_heap",
        "incarnation",
        "interval",
        "key",
        "message",
        "queued",
        "scheduler",
    )

    def __init__(
        self,
        scheduler: TimerScheduler,
        key: Hashable,
        message: object,
        deadline: float,
        interval: float | None,
    ) -> None:
        cell = scheduler._cell
        self.scheduler = scheduler
        self.cell = cell
        self.key = key
        self.message = message
        self.deadline = deadline
        self.interval = interval  # None: a single timer
        self.incarnation = _incarnation(cell)
        self.cancelled = False
        self.queued = False  # its firing waits in the mailbox
        self.in_heap = False  # the service's heap holds an entry for it

    def __repr__(self) -> str:
        kind = "single" if self.interval is None else f"every {self.interval} s"
        return f"<timer {self.key!r} of {self.cell.path}: {kind}>"

    async def deliver(self, cell: Cell, receive: Any) -> None:
        """Called by the actor's task when the firing reaches the front of the
        mailbox: hand the message to ``receive`` unless the timer is stale."""
        self.queued = False
        # (cell.incarnation is >= 1 here: the actor has started.)
        if self.cancelled or self.incarnation != cell.incarnation:
            return  # cancelled or replaced after it was queued: never delivered
        if self.interval is None:  # a single timer ends with its delivery
            self.cancelled = True
            timers = self.scheduler._timers
            if timers.get(self.key) is self:
                del timers[self.key]
        await call_handler(receive, self.message)


class TimerScheduler:
    """An actor's keyed timers: ``self.context.timers``.

    Each timer has a key (any hashable). Starting a key again replaces its
    timer; a message from a cancelled or replaced timer is never received, even
    when it was already queued. Timers end with the actor: its stop and its
    restart cancel them all (start them again in ``on_start``, which a restart
    calls too). At most one firing per key waits in the mailbox at a time: a
    periodic timer skips a firing while the previous one is still queued.
    Firings are signals, so a full mailbox never loses one, and the message
    reaches ``receive`` (sync or async) like a told message; ``receive``'s
    return value is ignored. A firing is never early, and at most about a
    millisecond late beyond what the event loop itself adds.

    Use it from the actor's own event loop (normally from its own handlers).
    """

    __slots__ = ("_cell", "_timers")

    def __init__(self, cell: Cell) -> None:
        self._cell = cell
        self._timers: dict[Hashable, _Timer] = {}

    def start_single(self, key: Hashable, message: object, delay: float) -> None:
        """Send ``message`` to this actor once, ``delay`` seconds from now.

        Replaces any timer with the same key. The timer stays active until its
        message has been delivered. An actor that is stopping starts no timer:
        the call then does nothing (so while the system stops or exits, when
        every actor is stopping).

        Args:
            key: names the timer (hashable).
            message: what ``receive`` gets.
            delay: seconds from now (>= 0, finite; 0 fires as soon as the
                timer task runs, as Akka and Erlang/OTP accept a zero delay).

        Raises:
            TypeError: ``delay`` is not a number, or ``key`` is not hashable.
            ValueError: ``delay`` is negative, NaN or infinite.
        """
        delay = check_duration("delay", delay, zero=True)
        self._start(key, message, delay, None)

    def start_periodic(
        self,
        key: Hashable,
        message: object,
        interval: float,
        *,
        initial_delay: float | None = None,
    ) -> None:
        """Send ``message`` to this actor every ``interval`` seconds.

        Firings keep a fixed rate (a late wake-up does not shift later ones)
        and never pile up: a firing due while the previous one still waits in
        the mailbox is skipped, as are firings missed while the event loop was
        blocked. Replaces any timer with the same key. An actor that is
        stopping starts no timer: the call then does nothing (so while the
        system stops or exits, when every actor is stopping).

        Args:
            key: names the timer (hashable).
            message: what ``receive`` gets at each firing.
            interval: seconds between firings (> 0, finite).
            initial_delay: seconds until the first firing (>= 0, finite;
                default: ``interval``).

        Raises:
            TypeError: a duration is not a number, or ``key`` is not hashable.
            ValueError: ``interval`` is not > 0 and finite, or
                ``initial_delay`` is negative, NaN or infinite.
        """
        interval = check_duration("interval", interval)
        first = (
            interval
            if initial_delay is None
            else check_duration("initial_delay", initial_delay, zero=True)
        )
        self._start(key, message, first, interval)

    def cancel(self, key: Hashable) -> None:
        """Cancel the timer with this key, if any: its message is not received
        after this call, even one already queued."""
        timer = self._timers.pop(key, None)
        if timer is not None:
            _cancel(timer)

    def cancel_all(self) -> None:
        """Cancel every timer of this actor (the runtime calls it on stop and
        restart)."""
        timers = self._timers
        if timers:
            for timer in timers.values():
                _cancel(timer)
            timers.clear()

    def is_active(self, key: Hashable) -> bool:
        """Whether a timer with this key is running: a periodic timer until it
        is cancelled, a single timer until its message has been delivered."""
        timer = self._timers.get(key)
        return timer is not None and timer.incarnation == _incarnation(self._cell)

    def __len__(self) -> int:
        """How many timers are active."""
        return len(self._timers)

    def __repr__(self) -> str:
        return f"<TimerScheduler of {self._cell.path}: {len(self._timers)} active>"

    def _start(
        self, key: Hashable, message: object, delay: float, interval: float | None
    ) -> None:
        check_key(key)  # also when the call does nothing: a bad call is one
        cell = self._cell
        runtime = cell.runtime
        guardian = runtime.guardian
        if (
            cell.stop_requested
            or cell.state >= STOPPING
            or guardian is None
            or not guardian.alive
            or not runtime.running
        ):
            # It could never be delivered: the actor is stopping, or the
            # system is (every actor is, then: system.stop(), the block's
            # exit, a shutdown after a failure, its teardown).
            return
        service = TimerService.of(runtime)
        old = self._timers.get(key)
        timer = _Timer(self, key, message, service.now() + delay, interval)
        if old is not None:
            _cancel(old)
        self._timers[key] = timer
        service.schedule(timer)


def check_key(key: object) -> None:
    """A timer's key: one home for the rule, the runtime's timers and the
    BehaviorTestKit's.

    Raises:
        TypeError: it is not hashable.
    """
    try:
        hash(key)
    except TypeError:
        raise TypeError(f"key must be hashable, not {type(key).__name__}") from None


def _cancel(timer: _Timer) -> None:
    if timer.cancelled:
        return
    timer.cancelled = True
    if timer.in_heap:
        service = timer.cell.runtime.timer_service
        assert service is not None
        service.unschedule()


class TimerService:
    """The heap of every timer of one system, and the one task that fires them.

    Internal: actors use [``TimerScheduler``][actors.TimerScheduler]. Cancelling
    a timer only marks it; its heap entry is dropped when it comes up, or by a
    compaction once cancelled entries outnumber live ones.
    """

    __slots__ = (
        "_dead",
        "_heap",
        "_live",
        "_running",
        "_runtime",
        "_scope",
        "_seq",
        "_sleep",
        "_sleep_until",
        "now",
        "tasks_started",
    )

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        # The clock, chosen once: the event loop's, or the system's own.
        clock = runtime.clock
        #: The current time in seconds on the timers' clock.
        self.now: Callable[[], float] = (
            anyio.current_time if clock is None else clock.now
        )
        self._sleep: Callable[[float], Awaitable[None]] = (
            anyio.sleep if clock is None else clock.sleep
        )
        self._heap: list[tuple[float, int, _Timer]] = []
        self._seq = count()  # ties on a deadline fire in start order
        self._live = 0  # heap entries of timers not cancelled
        self._dead = 0  # heap entries of cancelled timers
        self._running = False
        self._scope: anyio.CancelScope | None = None
        self._sleep_until = math.inf  # the deadline the task sleeps until
        #: how many timer tasks this system has started (one at a time)
        self.tasks_started = 0

    @staticmethod
    def of(runtime: Runtime) -> TimerService:
        """The system's timer service, made on first use.

        Raises:
            SystemNotRunning: the system is not running.
        """
        if not runtime.running:
            raise SystemNotRunning("the actor system is not running")
        service = runtime.timer_service
        if service is None:
            service = runtime.timer_service = TimerService(runtime)
        return service

    @property
    def live(self) -> int:
        """How many timers wait for their next firing."""
        return self._live

    def schedule(self, timer: _Timer) -> None:
        """Add a timer at its deadline; start or wake the task if needed.

        Raises:
            SystemNotRunning: the system is not running (nothing was added).
        """
        if not self._running:
            runtime = self._runtime
            tg = runtime.tg
            if not runtime.running or tg is None:
                raise SystemNotRunning("the actor system is not running")
            tg.start_soon(self._run, name=TIMER_TASK_NAME)
            self._running = True
            self.tasks_started += 1
        heappush(self._heap, (timer.deadline, next(self._seq), timer))
        timer.in_heap = True
        self._live += 1
        if timer.deadline + RESOLUTION < self._sleep_until:
            self._wake()  # worth it: the task would otherwise fire it late

    def unschedule(self) -> None:
        """Account for a timer in the heap that was just cancelled."""
        self._live -= 1
        self._dead += 1
        if not self._live:  # only cancelled entries are left
            self._heap.clear()
            self._dead = 0
            self._wake()  # so the task ends
        elif self._dead > _COMPACT_AT and self._dead > self._live:
            # Dropping cancelled entries never brings the earliest deadline
            # forward, so the sleeping task need not be woken.
            heap = [entry for entry in self._heap if not entry[2].cancelled]
            heapify(heap)
            self._heap[:] = heap
            self._dead = 0

    def _wake(self) -> None:
        scope = self._scope
        if scope is not None:
            scope.cancel()

    async def _run(self) -> None:
        """The timer task: fire what is due, sleep until the next deadline."""
        heap = self._heap
        current_time = self.now
        sleep = self._sleep
        try:
            while self._live:
                # One scope per early wake-up, not per sleep: cancelling it is
                # how an earlier timer (or the last cancel) interrupts the nap.
                with anyio.CancelScope() as scope:
                    self._scope = scope
                    while self._live:
                        now = current_time()
                        while heap and heap[0][0] <= now:
                            timer = heappop(heap)[2]
                            timer.in_heap = False
                            if timer.cancelled:
                                self._dead -= 1
                            else:
                                self._fire(timer, now)
                        if not heap:
                            break
                        delay = max(heap[0][0] - now, RESOLUTION)
                        self._sleep_until = now + delay
                        await sleep(delay)
                self._scope = None
                self._sleep_until = math.inf
        finally:
            self._running = False
            self._scope = None
            self._sleep_until = math.inf

    def _fire(self, timer: _Timer, now: float) -> None:
        cell = timer.cell
        if timer.incarnation != (cell.incarnation or 1):  # _incarnation, inlined
            # Started by an instance that was being replaced (in its on_stop).
            self._drop(timer)
            return
        if not timer.queued:
            try:
                cell.mailbox.send_signal(timer)
            except MailboxClosed:  # the actor is stopping
                self._drop(timer)
                return
            timer.queued = True
        interval = timer.interval
        if interval is None:
            self._live -= 1  # fired; active until delivered
            return
        deadline = timer.deadline + interval
        if deadline <= now:  # the loop was blocked: skip what was missed
            deadline = now + interval
        timer.deadline = deadline
        heappush(self._heap, (deadline, next(self._seq), timer))
        timer.in_heap = True

    def _drop(self, timer: _Timer) -> None:
        timer.cancelled = True
        self._live -= 1
        timers = timer.scheduler._timers
        if timers.get(timer.key) is timer:
            del timers[timer.key]
