"""Ask timeouts on asyncio without a loop timer per ask.

A loop timer per ask (``loop.call_later`` then ``cancel``) costs about a quarter
of an ask round trip on asyncio. Here the asks of one system that share a
timeout value sit in a doubly linked list in deadline order (the envelopes are
the nodes, so nothing is allocated per ask), and one loop timer per list is armed
for its oldest deadline. A reply unlinks its ask; the timer, when it fires,
expires what is due and re-arms for the next deadline, or goes away when the list
is empty. Sequential asks with the default timeout thus share one timer firing
per timeout period.

Trio keeps its own cancel scopes (``Backend.park_for``), which are cheap there.
"""

from __future__ import annotations

from asyncio import AbstractEventLoop, CancelledError, TimerHandle
from typing import Any

from ._envelope import EXPIRED, Ask, abandon

__all__ = ["Deadlines"]

# asyncio may run a timer up to its clock resolution early; a deadline that
# close counts as due, so a timer never re-arms for the same instant.
_EARLY = 1e-6


class _Queue:
    """Asks with one timeout value, oldest deadline first."""

    __slots__ = ("head", "key", "owner", "tail", "timer")

    def __init__(self, owner: Deadlines, key: float) -> None:
        self.owner = owner
        self.key = key
        self.head: Ask | None = None
        self.tail: Ask | None = None
        self.timer: TimerHandle | None = None

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

    def fire(self) -> None:
        loop = self.owner.loop
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
            del self.owner.queues[self.key]


class Deadlines:
    """The ask timeouts of one system on one asyncio loop."""

    __slots__ = ("loop", "queues")

    def __init__(self, loop: AbstractEventLoop) -> None:
        self.loop = loop
        self.queues: dict[float, _Queue] = {}

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
                queue.unlink(ask)
                abandon(ask)
                raise
            if fut.result() is False:
                abandon(ask)
                return EXPIRED
            queue.unlink(ask)
        return ask.outcome_or_raise()
