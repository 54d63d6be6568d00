"""The quota: how many messages a mailbox may hold, and who waits for a unit.

Units are reserved by senders and released by the consumer inside its receive
step. Waiting senders are served first come, first served: each released unit
goes to the oldest waiting sender, whose message moves into the queue within the
releasing step (so a unit is never free while a sender waits, and nobody barges).
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, Generic, TypeVar

from ..channel.lowlevel import DELIVERED, WITHDRAWN, Backend, SendWaiter, ki_protected

__all__ = ["Quota", "check_capacity"]

M = TypeVar("M")


def check_capacity(capacity: int | None) -> float:
    """Validate a mailbox capacity and return it as a number (inf for None).

    Raises:
        TypeError: ``capacity`` is neither an integer nor None.
        ValueError: ``capacity`` is smaller than 1.
    """
    if capacity is None:
        return math.inf
    if not isinstance(capacity, int) or isinstance(capacity, bool):
        raise TypeError(
            f"capacity must be an integer or None, not {type(capacity).__name__}"
        )
    if capacity < 1:
        raise ValueError(f"capacity must be at least 1 (or None), got {capacity}")
    return capacity


class Quota(Generic[M]):
    """Units in use and the senders waiting for one."""

    __slots__ = ("capacity", "parks", "senders", "used")

    def __init__(self, capacity: float) -> None:
        self.capacity = capacity
        self.used = 0
        #: The waiting senders, oldest first; made by the first one to wait
        #: (``wait``): most mailboxes never have one, and an empty deque is
        #: 760 bytes. Falsy either way, so ``if quota.senders`` reads alike.
        self.senders: deque[SendWaiter[M]] | None = None
        #: Sends that parked (see Mailbox.send: every PARKS_PER_CHECK-th
        #: checks for a cancellation first).
        self.parks = 0

    def wait(self, waiter: SendWaiter[M]) -> None:
        """Queue ``waiter`` behind the senders already waiting."""
        senders = self.senders
        if senders is None:
            senders = self.senders = deque()
        senders.append(waiter)

    @ki_protected
    def admit(self, queue: deque[Any], backend: Backend) -> int:
        """Give free units to the oldest waiting senders, moving their messages
        into ``queue`` and waking them. Returns how many moved in."""
        senders = self.senders
        moved = 0
        while senders and self.used < self.capacity:
            waiter = senders.popleft()
            waiter.queued = False
            if backend.is_cancelled(waiter):
                continue
            queue.append(waiter.item)
            self.used += 1
            waiter.status = DELIVERED
            backend.wake(waiter)
            moved += 1
        return moved

    @ki_protected
    def abort(self, waiter: SendWaiter[M]) -> None:
        """A waiting sender was cancelled before its message moved in."""
        if waiter.queued:
            waiter.queued = False
            assert self.senders is not None  # it was queued there
            self.senders.remove(waiter)

    def restore(self, waiter: SendWaiter[M]) -> None:
        """A sender woken with its message moved in, then natively cancelled:
        the message stays enqueued (documented on ``Mailbox.send``)."""

    @ki_protected
    def withdraw_all(self, backend: Backend | None) -> None:
        """The mailbox closed: wake every waiting sender with its message not
        enqueued."""
        senders = self.senders
        if not senders:
            return
        self.senders = None
        for waiter in senders:
            waiter.queued = False
            if backend is not None and not backend.is_cancelled(waiter):
                waiter.status = WITHDRAWN
                backend.wake(waiter)
