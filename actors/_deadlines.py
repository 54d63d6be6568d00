"""Ask timeouts without a timer or a cancel scope per ask, on every backend.

A loop timer per ask (``loop.call_later`` then ``cancel``) costs about a quarter
of an ask round trip on asyncio, and a cancel scope with a deadline per ask is
the most expensive part of an ask on Trio. Here the asks of one system that
share a timeout value sit in a doubly linked list in deadline order (the
envelopes are the nodes, so nothing is allocated per ask), and one timer per
list is armed for its oldest deadline. A reply unlinks its ask; the timer, when
it fires, expires what is due (``Backend.resolve(handle, False)`` on the
asker's wait handle: it resumes with False) and re-arms for the next deadline,
or goes away when the list is empty. Sequential asks with the default timeout
thus share one timer firing per timeout period.

The timer is the backend's cheapest: on asyncio a loop timer per list
(``Deadlines``); on Trio one task per system (``TrioDeadlines``,
started in the system's task group by the first ask, ended when no list is
left or the system exits) that sleeps until the earliest armed deadline. A
system with a clock of its own (``ActorSystem(clock=...)``, such as
``actors.testing.ManualClock``) arms its lists on that clock instead
(``ClockDeadlines``), on every backend; the choice is made once, when the
system is entered, so the event loop's path costs nothing more per ask.

Resources: a list with no ask in it is *idle*. The last few lists to go idle
(``IDLE_KEPT``) keep their timer and their place, so sequential asks with
one timeout value, or alternating between a few, reuse them at no cost. When
one more list goes idle, the one idle longest is released at once (its timer
cancelled, the list dropped); a timer that fires on an idle list releases it
too. Asks with ever-new timeout values (every ``system.from_thread.ask`` has
its own remaining time) thus leave no armed timers behind them but those few:
the armed timers are those of the lists with asks in flight, plus at most
``IDLE_KEPT``. When the system exits (``AskDeadlines.close``) the idle
lists are released at once, the others as they empty, and an ask that still
has to park waits with a timer of its own.

An asker yields once before it parks (``AskDeadlines.wait``): a reply made
during that yield (the actor was ready) is found without linking the ask, so
request/response traffic with a ready actor arms no timer at all; only asks
that park are linked.
"""

from __future__ import annotations

import math
from asyncio import AbstractEventLoop, BaseEventLoop, TimerHandle, get_running_loop
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from time import monotonic
from typing import TYPE_CHECKING, Any, Final

from ._envelope import EXPIRED, PENDING, REPLIED, Ask, abandon
from .channel.lowlevel import ASYNCIO_BACKEND, Backend, Stale, ki_protected

if TYPE_CHECKING:
    from ._clock import Clock
    from ._runtime import Runtime

__all__ = [
    "DEADLINE_TASK_NAME",
    "IDLE_KEPT",
    "AskDeadlines",
    "ClockDeadlines",
    "Deadlines",
    "TrioDeadlines",
    "ask_deadlines",
]

#: How many idle lists (no ask in them) keep their timer for reuse.
IDLE_KEPT = 4

#: The name of the Trio deadline task (``anyio.get_running_tasks()`` shows it).
DEADLINE_TASK_NAME: Final = "actors.ask-deadlines"

# Every method that links, unlinks or wakes an ask is ki_protected: on Trio a
# Ctrl-C half-way (an ask unlinked but never woken) would leave it hanging.

# asyncio may run a timer up to its clock resolution early; a deadline that
# close counts as due, so a timer never re-arms for the same instant.
_EARLY = 1e-6


class _Queue:
    """Asks with one timeout value, oldest deadline first.

    ``timer`` is what its owner armed for it (an asyncio ``TimerHandle``; on
    Trio the deadline itself), None when unarmed.
    """

    __slots__ = ("head", "kept", "key", "owner", "tail", "timer")

    def __init__(self, owner: AskDeadlines, key: float) -> None:
        self.owner = owner
        self.key = key
        self.head: Ask | None = None
        self.tail: Ask | None = None
        self.timer: Any = None
        self.kept = False  # among the owner's idle lists kept for reuse

    @ki_protected
    def push(self, ask: Ask, deadline: float) -> None:
        ask.deadline = deadline
        ask.next = None
        tail = ask.prev = self.tail
        if tail is None:
            self.head = ask
        else:
            tail.next = ask
        self.tail = ask
        if self.timer is None:
            self.timer = self.owner.arm(self, deadline)

    def unlink(self, ask: Ask) -> None:
        prev, after = ask.prev, ask.next
        if prev is None:
            if self.head is not ask:
                return  # not linked (expired already)
            self.head = after
        else:
            prev.next = after
        if after is None:
            self.tail = prev
        else:
            after.prev = prev
        ask.prev = ask.next = None

    @ki_protected
    def done(self, ask: Ask) -> None:
        """An ask left this list (answered, cancelled): unlink it, and if it
        was the last one, keep the list among the idle ones."""
        # unlink() inlined: this runs once per ask, a call saved.
        prev, after = ask.prev, ask.next
        if prev is None:
            if self.head is not ask:
                return  # not linked (expired already)
            self.head = after
        else:
            prev.next = after
        if after is None:
            self.tail = prev
        else:
            after.prev = prev
        ask.prev = ask.next = None
        # Sequential asks with one timeout: the list is kept already, and this
        # is one attribute test, no call.
        if self.head is None and not self.kept:
            self.owner.idled(self)

    @ki_protected
    def fire(self) -> None:
        """The list's timer is due: expire what is due, then re-arm for the
        next deadline or release the list."""
        owner = self.owner
        self.timer = None
        now = owner.now() + _EARLY
        resolve = owner.resolve
        head = self.head
        while head is not None and head.deadline <= now:
            self.unlink(head)
            # The asker sees EXPIRED, unless it was replied to or cancelled
            # first (Stale).
            with suppress(Stale):
                resolve(head.handle, False)
            head = self.head
        if head is not None:
            self.timer = owner.arm(self, head.deadline)
        else:
            owner.release(self)


class AskDeadlines:
    """The ask timeouts of one running system: the lists, whatever the timer.

    Subclasses say what a timer is: ``arm``, ``disarm``, ``now``.
    """

    __slots__ = (
        "backend",
        "checkpoint",
        "closed",
        "idle",
        "new_handle",
        "now",
        "queues",
        "recheck",
        "resolve",
    )

    def __init__(self, backend: Backend, now: Callable[[], float]) -> None:
        self.backend = backend
        # Bound once: the wait handles of the backend, and its clock.
        self.new_handle = backend.new_handle
        self.resolve = backend.resolve
        self.checkpoint = backend.checkpoint
        self.recheck = backend.recheck
        self.now = now
        #: The system is exiting and the timer can no longer run (Trio's
        #: task): an ask that must wait does so with ``wait_alone``.
        self.closed = False
        self.queues: dict[float, _Queue] = {}
        #: The lists kept for reuse, idle longest first (at most IDLE_KEPT);
        #: every other list is dropped once it is empty.
        self.idle: deque[_Queue] = deque()

    def arm(self, queue: _Queue, deadline: float) -> Any:
        """Arm a timer that calls ``queue.fire()`` at ``deadline`` (on
        ``now``'s clock); return it (stored in ``queue.timer``)."""
        raise NotImplementedError

    def disarm(self, queue: _Queue) -> None:
        """Cancel ``queue``'s armed timer (it is not None)."""
        raise NotImplementedError

    def close(self) -> None:
        """The system is exiting: stop any timer task (asks made later still
        time out, each with a timer of its own)."""

    async def wait_alone(self, ask: Ask, timeout: float) -> Any:
        """Wait for one ask's outcome with a timer of its own (after
        ``close``): the reply, or ``EXPIRED``."""
        raise NotImplementedError

    @ki_protected
    def idled(self, queue: _Queue) -> None:
        """``queue`` has just emptied: keep it, and release the list idle
        longest if that makes one too many."""
        if self.closed:  # the system is exiting: keep nothing for reuse
            self.release(queue)
            return
        queue.kept = True
        idle = self.idle
        idle.append(queue)
        if len(idle) > IDLE_KEPT:
            oldest = idle.popleft()
            oldest.kept = False
            if oldest.head is None:
                self.release(oldest)
            # else: in use again; it is kept anew when it empties

    @ki_protected
    def release(self, queue: _Queue) -> None:
        """Drop an empty list and cancel its timer."""
        if self.queues.get(queue.key) is queue:
            del self.queues[queue.key]
        if queue.kept:
            queue.kept = False
            self.idle.remove(queue)
        if queue.timer is not None:
            self.disarm(queue)
            queue.timer = None

    @ki_protected
    async def wait(self, ask: Ask, timeout: float) -> Any:
        """``Ask.wait`` with a timeout in seconds.

        Returns:
            The reply, or ``EXPIRED`` when the timeout expired first (the
            ask is then abandoned).

        Raises:
            Exception: the handler's exception.
        """
        if ask.state == PENDING:  # not ask.done: a property call saved
            # Yield once before parking: an actor that is running or ready
            # (it checkpoints before it takes) answers during the yield, and
            # the reply is then found here, with no wait handle, no deadline
            # linked, nobody woken. The deadline counts from the ask.
            deadline = self.now() + timeout
            try:
                await self.checkpoint()
                if ask.state == PENDING and self.recheck:
                    await self.checkpoint()  # Trio: see Backend.recheck
            except BaseException:
                abandon(ask)  # a reply handed over meanwhile is counted
                raise
            state = ask.state
            if state == REPLIED:  # outcome_or_raise() inlined: a call saved
                return ask.outcome
            if state == PENDING:
                return await self.park(ask, timeout, deadline)
        return ask.outcome_or_raise()

    @ki_protected
    async def park(self, ask: Ask, timeout: float, deadline: float) -> Any:
        """The second half of ``wait``, for a caller that made the yield
        itself and found the ask still pending: link it at ``deadline`` (on
        ``now``'s clock) and park until the reply or the deadline.

        Returns:
            The reply, or ``EXPIRED``.

        Raises:
            Exception: the handler's exception.
        """
        if ask.state == PENDING:
            if self.closed:
                return await self.wait_alone(ask, timeout)
            handle = ask.handle = self.new_handle()
            ask.waiting = True
            queues = self.queues
            queue = queues.get(timeout)
            if queue is None:
                queue = queues[timeout] = _Queue(self, timeout)
            queue.push(ask, deadline)
            try:
                expired = await handle is False
            except BaseException:
                # Cancelled while parked, or (natively) after the reply was
                # handed over: abandon() counts a handed-over reply.
                queue.done(ask)
                abandon(ask)
                raise
            if expired:
                abandon(ask)  # the timer unlinked it already
                return EXPIRED
            queue.done(ask)
        return ask.outcome_or_raise()


    @ki_protected
    async def park_slot(self, slot: Any, timeout: float) -> bool:
        """Park on ``slot`` until it is filled or ``timeout`` seconds pass,
        linked in the list of that timeout as a parked ask is (no timer of
        its own). For an extension's own one-answer slots (the remote
        layer's pending asks): a ``channel.lowlevel.Slot`` with the
        ``prev``, ``next`` and ``deadline`` attributes an ``Ask`` has.

        Returns:
            True when it was filled (at once if it was already); False when
            the timeout expired first (the slot is left: a later ``fill``
            returns False).

        Raises:
            Cancelled: the wait was cancelled; the slot is left (``leave``,
                and ``lost`` when an answer had been handed over).
        """
        if slot.state != PENDING:
            return True
        if self.closed:  # the system is exiting: a timer of its own
            woken: bool = await slot.park_for(self.backend, timeout)
            return woken
        handle = slot.handle = self.new_handle()
        slot.waiting = True
        queues = self.queues
        queue = queues.get(timeout)
        if queue is None:
            queue = queues[timeout] = _Queue(self, timeout)
        queue.push(slot, self.now() + timeout)
        try:
            expired = await handle is False
        except BaseException:
            queue.done(slot)
            if slot.leave():
                slot.lost()
            raise
        if expired:
            slot.leave()  # the timer unlinked it already; nothing handed over
            return False
        queue.done(slot)
        return True


class Deadlines(AskDeadlines):
    """The ask timeouts of one system on one asyncio loop: a loop timer per
    list."""

    __slots__ = ("loop",)

    def __init__(self, loop: AbstractEventLoop, backend: Backend | None = None) -> None:
        now = loop.time
        if getattr(now, "__func__", None) is BaseEventLoop.time:
            # asyncio's own loop.time() is time.monotonic() in a Python
            # method: the C function itself is a call saved per ask. (uvloop's
            # time() is its own clock, in C already: kept as it is.)
            now = monotonic
        super().__init__(backend or ASYNCIO_BACKEND, now)
        self.loop = loop

    def arm(self, queue: _Queue, deadline: float) -> TimerHandle:
        return self.loop.call_at(deadline, queue.fire)

    def disarm(self, queue: _Queue) -> None:
        queue.timer.cancel()

    @ki_protected
    def close(self) -> None:
        # The system is exiting: the idle lists' timers are cancelled now
        # (not left armed on the loop until they fire), lists with asks in
        # flight go as they empty, and an ask that has to park from now on
        # waits with a timer of its own (wait_alone).
        self.closed = True
        for queue in list(self.idle):
            self.release(queue)

    async def wait_alone(self, ask: Ask, timeout: float) -> Any:
        handle = ask.handle = self.new_handle()
        ask.waiting = True
        timer = self.loop.call_later(timeout, _expire, handle)
        try:
            expired = await handle is False
        except BaseException:
            timer.cancel()
            abandon(ask)
            raise
        timer.cancel()
        if expired:
            abandon(ask)
            return EXPIRED
        return ask.outcome_or_raise()


def _expire(handle: Any) -> None:
    # A lone ask's timer: the asker resumes with False, unless the reply or a
    # cancellation got there first.
    with suppress(Stale):
        ASYNCIO_BACKEND.resolve(handle, False)


class TrioDeadlines(AskDeadlines):
    """The ask timeouts of one system on Trio: one task sleeps until the
    earliest armed list deadline and fires the lists that are due.

    The task is started in the system's task group by the first armed list and
    ends when no list is left, or when the system exits (``close``). An
    earlier deadline than the one it sleeps until moves its sleep's deadline;
    no scope is made per ask.
    """

    __slots__ = (
        "_running",
        "_runtime",
        "_scope",
        "_sleep_until",
        "_trio",
        "tasks_started",
    )

    def __init__(self, runtime: Runtime, backend: Backend) -> None:
        import trio

        # The run's clock, bound once: its current_time is one call, where
        # trio.current_time() goes through two more frames (made inside the
        # running system, so the clock is the run's, a MockClock included).
        super().__init__(backend, trio.lowlevel.current_clock().current_time)
        self._trio = trio
        self._runtime = runtime
        self._running = False
        self._scope: Any = None  # the cancel scope of the task's sleep
        self._sleep_until = math.inf
        #: how many deadline tasks this system has started (one at a time)
        self.tasks_started = 0

    @ki_protected
    def arm(self, queue: _Queue, deadline: float) -> float:
        if not self._running:
            tg = self._runtime.tg
            if not self.closed and tg is not None:
                tg.start_soon(self._run, name=DEADLINE_TASK_NAME)
                self._running = True
                self.tasks_started += 1
        elif deadline < self._sleep_until:
            # The task sleeps until later: wake it earlier by moving its
            # sleep's deadline. (_sleep_until is inf while it does not sleep:
            # it then looks at every list before it sleeps again.)
            scope = self._scope
            if scope is not None:
                self._sleep_until = deadline
                scope.deadline = deadline
        return deadline

    def disarm(self, queue: _Queue) -> None:
        pass  # the task skips an unarmed list, and ends when none is left

    @ki_protected
    def close(self) -> None:
        self.closed = True
        scope = self._scope
        if scope is not None:
            scope.cancel()

    @ki_protected
    async def wait_alone(self, ask: Ask, timeout: float) -> Any:
        # The system is exiting (its deadline task ends): this one ask waits
        # under a cancel scope of its own.
        with self._trio.move_on_after(timeout):
            return await ask.wait(self.backend)
        return EXPIRED

    async def _run(self) -> None:
        """The deadline task: sleep until the earliest armed list deadline,
        fire the lists that are due, until no list is armed."""
        trio = self._trio
        queues = self.queues
        current_time = trio.current_time
        try:
            while not self.closed:
                armed = [q for q in queues.values() if q.timer is not None]
                if not armed:
                    break
                earliest = min(q.timer for q in armed)
                if earliest > current_time():
                    with trio.CancelScope(deadline=earliest) as scope:
                        self._scope = scope
                        self._sleep_until = earliest
                        await trio.sleep_forever()
                    self._scope = None
                    self._sleep_until = math.inf
                    continue  # the lists may have changed while it slept
                now = current_time() + _EARLY
                for queue in armed:
                    timer = queue.timer
                    if timer is not None and timer <= now:
                        queue.fire()
        finally:
            self._running = False
            self._scope = None
            self._sleep_until = math.inf


class ClockDeadlines(AskDeadlines):
    """The ask timeouts of a system with a clock of its own: one call on that
    clock per list (as a loop timer per list on asyncio)."""

    __slots__ = ("clock",)

    def __init__(self, clock: Clock, backend: Backend) -> None:
        super().__init__(backend, clock.now)
        self.clock = clock

    def arm(self, queue: _Queue, deadline: float) -> Any:
        return self.clock.call_at(deadline, queue.fire)

    def disarm(self, queue: _Queue) -> None:
        queue.timer.cancel()


def ask_deadlines(runtime: Runtime, backend: Backend) -> AskDeadlines:
    """The ask-deadline service for a system entered on ``backend`` (on the
    system's own clock if it has one)."""
    clock = runtime.clock
    if clock is not None:
        return ClockDeadlines(clock, backend)
    if backend.name == "trio":
        return TrioDeadlines(runtime, backend)
    return Deadlines(get_running_loop(), backend)
