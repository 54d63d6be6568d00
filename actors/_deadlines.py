"""Ask timeouts on asyncio without a loop timer per ask.

A loop timer per ask (``loop.call_later`` then ``cancel``) costs about a quarter
of an ask round trip on asyncio. Here the asks of one system that share a
timeout value sit in a doubly linked list in deadline order (the envelopes are
the nodes, so nothing is allocated per ask), and one loop timer per list is armed
for its oldest deadline. A reply unlinks its ask; the timer, when it fires,
expires what is due and re-arms for the next deadline, or goes away when the list
is empty. Sequential asks with the default timeout thus share one timer firing
per timeout period.

Resources: a list with no ask in it is *idle*. The last few lists to go idle
(:data:`IDLE_KEPT`) keep their timer and their place, so sequential asks with
one timeout value, or alternating between a few, reuse them at no cost. When
one more list goes idle, the one idle longest is released at once (its timer
cancelled, the list dropped); a timer that fires on an idle list releases it
too. Asks with ever-new timeout values (every ``system.from_thread.ask`` has
its own remaining time) thus leave no armed timers behind them but those few:
the armed timers are those of the lists with asks in flight, plus at most
:data:`IDLE_KEPT`.

Trio keeps its own cancel scopes (``Backend.park_for``), which are cheap there.
"""

from __future__ import annotations

from asyncio import AbstractEventLoop, CancelledError, TimerHandle
from collections import deque
from typing import Any

from ._envelope import EXPIRED, Ask, abandon

__all__ = ["IDLE_KEPT", "Deadlines"]

#: How many idle lists (no ask in them) keep their timer for reuse.
IDLE_KEPT = 4

# asyncio may run a timer up to its clock resolution early; a deadline that
# close counts as due, so a timer never re-arms for the same instant.
_EARLY = 1e-6


class _Queue:
    """Asks with one timeout value, oldest deadline first."""

    __slots__ = ("head", "kept", "key", "owner", "tail", "timer")

    def __init__(self, owner: Deadlines, key: float) -> None:
        self.owner = owner
        self.key = key
        self.head: Ask | None = None
        self.tail: Ask | None = None
        self.timer: TimerHandle | None = None
        self.kept = False  # among the owner's idle lists kept for reuse

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
            self.timer = self.owner.loop.call_at(deadline, self.fire)

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

    def fire(self) -> None:
        owner = self.owner
        loop = owner.loop
        self.timer = None
        now = loop.time() + _EARLY
        head = self.head
        while head is not None and head.deadline <= now:
            self.unlink(head)
            fut = head.handle
            if not fut.done():
                fut.set_result(False)  # expired: the asker sees EXPIRED
            head = self.head
        if head is not None:
            self.timer = loop.call_at(head.deadline, self.fire)
        else:
            owner.release(self)


class Deadlines:
    """The ask timeouts of one system on one asyncio loop."""

    __slots__ = ("idle", "loop", "queues")

    def __init__(self, loop: AbstractEventLoop) -> None:
        self.loop = loop
        self.queues: dict[float, _Queue] = {}
        #: The lists kept for reuse, idle longest first (at most IDLE_KEPT);
        #: every other list is dropped once it is empty.
        self.idle: deque[_Queue] = deque()

    def idled(self, queue: _Queue) -> None:
        """``queue`` has just emptied: keep it, and release the list idle
        longest if that makes one too many."""
        queue.kept = True
        idle = self.idle
        idle.append(queue)
        if len(idle) > IDLE_KEPT:
            oldest = idle.popleft()
            oldest.kept = False
            if oldest.head is None:
                self.release(oldest)
            # else: in use again; it is kept anew when it empties

    def release(self, queue: _Queue) -> None:
        """Drop an empty list and cancel its timer."""
        if self.queues.get(queue.key) is queue:
            del self.queues[queue.key]
        if queue.kept:
            queue.kept = False
            self.idle.remove(queue)
        timer = queue.timer
        if timer is not None:
            queue.timer = None
            timer.cancel()

    async def wait(self, ask: Ask, timeout: float) -> Any:
        """:meth:`Ask.wait` with a timeout in seconds, on this loop.

        Returns:
            The reply, or :data:`EXPIRED` when the timeout expired first (the
            ask is then abandoned).

        Raises:
            Exception: the handler's exception.
        """
        if not ask.done:
            loop = self.loop
            fut = ask.handle = loop.create_future()
            ask.waiting = True
            queues = self.queues
            queue = queues.get(timeout)
            if queue is None:
                queue = queues[timeout] = _Queue(self, timeout)
            queue.push(ask, loop.time() + timeout)
            try:
                await fut
            except CancelledError:
                # Cancelled while parked, or (natively) after the reply was
                # handed over: abandon() counts a handed-over reply.
                queue.done(ask)
                abandon(ask)
                raise
            if fut.result() is False:
                abandon(ask)  # the timer unlinked it already
                return EXPIRED
            queue.done(ask)
        return ask.outcome_or_raise()
