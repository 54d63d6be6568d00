"""The state one channel's endpoints share: buffer, waiting tasks, hand-off rules.

This module holds every rule about where an item goes; the endpoint classes in
``_streams`` only check their own state and call in here.

Rules (anyio's memory object streams, with Trio deciding what anyio leaves open):

* An item goes to the oldest waiting receiver if there is one, else into the
  buffer if it has room, else its sender waits.
* A waiting receiver is handed up to its batch limit. It is woken by the first
  item it is handed and keeps taking items until it is full or it runs; so a
  burst wakes ``ceil(items / limit)`` receivers, never more (coalesced wakeups).
* When a receiver makes room, waiting senders' items move into the buffer, oldest
  first, inside that same step, and those senders are woken.
* Nothing is lost: items handed to a receiver that a native asyncio cancellation
  stops before it resumes are given back (``restore_receive``): to the waiting
  receivers first, then to the buffer.

Give-backs keep FIFO, oldest item first, across any number of them: after any
set of give-backs (several receivers cancelled after hand-off in one step, in
any order, with sends and receives in between), the buffer holds the items
still present in the order they were sent, and waiting receivers are handed
the oldest of them. A given-back item is never put behind a younger one.

How: every item handed to a waiting receiver has a key that sorts in send order
without costing the hot path a per-item counter. A receiver woken by a hand-off
gets a fresh run number (``ReceiveWaiter.stamp``) and holds one contiguous run
of items, so item ``i`` of it has the key ``(stamp, i)``; a receiver fed by a
give-back carries its items' keys (``ReceiveWaiter.keys``). Items appended to
the buffer by senders are younger than every item handed out or given back
before them (a sender only buffers while no receiver waits), so the buffer is
always [given-back items, by key][sent items]. The channel remembers the keys of
its given-back prefix and where it ends (counted in items taken from the
buffer's head, ``taken``), so the next give-back merges into that prefix.

Its size: every rule about where an item goes lives here, in one class, so
the endpoints in ``_streams`` hold none.
"""

from __future__ import annotations

import math
from collections import deque
from heapq import merge
from operator import itemgetter
from typing import Generic, TypeVar

from ._waiters import (
    BROKEN,
    DELIVERED,
    WITHDRAWN,
    Backend,
    Key,
    ReceiveWaiter,
    SendWaiter,
    current_backend,
    ki_protected,
)

__all__ = ["ChannelState", "check_buffer_size", "check_limit"]

T = TypeVar("T")

_by_key = itemgetter(0)


def check_buffer_size(max_buffer_size: float) -> None:
    """Validate a buffer size with anyio's wording.

    Raises:
        ValueError: if it is neither an integer nor ``math.inf``, or negative.
    """
    if max_buffer_size != math.inf and not isinstance(max_buffer_size, int):
        raise ValueError("max_buffer_size must be either an integer or math.inf")
    if max_buffer_size < 0:
        raise ValueError("max_buffer_size cannot be negative")


def check_limit(limit: int, name: str = "limit") -> None:
    """Validate a positive count (a batch limit, a drain, a pool size), named
    ``name`` in the error.

    Raises:
        TypeError: if it is not an integer.
        ValueError: if it is smaller than 1.
    """
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise TypeError(f"{name} must be an integer, not {type(limit).__name__}")
    if limit < 1:
        raise ValueError(f"{name} must be at least 1, got {limit}")


class ChannelState(Generic[T]):
    """Buffer, waiters and counters shared by all clones of one channel."""

    __slots__ = (
        "back_end",
        "back_keys",
        "backend",
        "buffer",
        "max_buffer_size",
        "open_receive",
        "open_send",
        "peak",
        "receive_wakeups",
        "receivers",
        "runs",
        "send_wakeups",
        "senders",
        "taken",
    )

    def __init__(self, max_buffer_size: float) -> None:
        self.buffer: deque[T] = deque()
        self.max_buffer_size = max_buffer_size
        self.receivers: deque[ReceiveWaiter[T]] = deque()
        self.senders: deque[SendWaiter[T]] = deque()
        self.open_send = 0
        self.open_receive = 0
        self.peak = 0
        self.receive_wakeups = 0
        self.send_wakeups = 0
        self.backend: Backend | None = None
        # FIFO across give-backs (see the module docstring): run numbers of
        # hand-offs, items ever taken from the buffer's head (every path that
        # pops the head adds to it), and the given-back prefix of the buffer:
        # it ends where ``taken`` will reach ``back_end``; ``back_keys`` ends
        # with the keys of what is left of it.
        self.runs = 0
        self.taken = 0
        self.back_end = 0
        self.back_keys: list[Key] = []

    def get_backend(self) -> Backend:
        """Pick the backend on first use; a channel keeps it for life."""
        backend = self.backend
        if backend is None:
            backend = self.backend = current_backend()
        return backend

    # -- hand-off ---------------------------------------------------------

    @ki_protected
    def offer(self, item: T) -> bool:
        """Hand ``item`` to the oldest waiting receiver; False if there is none."""
        receivers = self.receivers
        backend = self.backend
        assert backend is not None  # a task waits, so it chose the backend
        while receivers:
            waiter = receivers[0]
            items = waiter.items
            if not items:
                if backend.is_cancelled(waiter):
                    receivers.popleft()
                    waiter.queued = False
                    continue
                items.append(item)
                backend.wake(waiter)
                self.receive_wakeups += 1
                # A new run: the keys of its items sort after every item
                # handed out or given back so far (see the module docstring).
                self.runs += 1
                waiter.stamp = self.runs
            else:
                # Already woken and not yet running: top up its batch instead of
                # waking another receiver (coalesced wakeup).
                items.append(item)
            if len(items) >= waiter.limit:
                receivers.popleft()
                waiter.queued = False
            return True
        return False

    @ki_protected
    def admit_senders(self) -> None:
        """Move waiting senders' items into the buffer while it has room."""
        senders = self.senders
        buffer = self.buffer
        backend = self.backend
        assert backend is not None
        limit = self.max_buffer_size
        while senders and len(buffer) < limit:
            waiter = senders.popleft()
            waiter.queued = False
            if backend.is_cancelled(waiter):
                continue
            buffer.append(waiter.item)
            waiter.status = DELIVERED
            backend.wake(waiter)
            self.send_wakeups += 1
        if len(buffer) > self.peak:
            self.peak = len(buffer)

    @ki_protected
    def take_from_senders(self, out: list[T], limit: int) -> None:
        """Take items straight from waiting senders (empty buffer) into ``out``."""
        senders = self.senders
        backend = self.backend
        assert backend is not None
        while senders and len(out) < limit:
            waiter = senders.popleft()
            waiter.queued = False
            if backend.is_cancelled(waiter):
                continue
            out.append(waiter.item)
            waiter.status = DELIVERED
            backend.wake(waiter)
            self.send_wakeups += 1

    @ki_protected
    def take(self, limit: int) -> list[T]:
        """Take up to ``limit`` items (buffer first, then waiting senders)."""
        buffer = self.buffer
        if len(buffer) <= limit:
            out = list(buffer)
            buffer.clear()
        else:
            popleft = buffer.popleft
            out = [popleft() for _ in range(limit)]
        self.taken += len(out)
        if self.senders:
            if not buffer and len(out) < limit:
                self.take_from_senders(out, limit)
            self.admit_senders()
        return out

    # -- waiter bookkeeping -----------------------------------------------

    @ki_protected
    def unqueue_receiver(self, waiter: ReceiveWaiter[T]) -> None:
        """Remove a receiver from the waiting queue if it is still there."""
        if waiter.queued:
            waiter.queued = False
            receivers = self.receivers
            if receivers[0] is waiter:
                receivers.popleft()
            else:
                receivers.remove(waiter)

    @ki_protected
    def abort_receive(self, waiter: ReceiveWaiter[T]) -> None:
        """A parked receiver was cancelled before it was handed anything."""
        self.unqueue_receiver(waiter)

    @ki_protected
    def restore_receive(self, waiter: ReceiveWaiter[T]) -> None:
        """A woken receiver was cancelled natively: give its items back.

        The items go, oldest first across every give-back, to the waiting
        receivers (in their queue order, each up to its limit) and then to the
        head of the buffer, merged with the items earlier give-backs left there:
        the buffer stays in send order (see the module docstring). They may
        take the buffer past its capacity; ``peak`` counts them.
        """
        self.unqueue_receiver(waiter)
        if not waiter.items:
            return
        pool = _keyed(waiter)
        waiter.items = []
        buffer = self.buffer
        # What is left of the given-back prefix (a buffer emptied behind the
        # channel's back, as a closing pool's queue is, holds none of it).
        left = min(max(self.back_end - self.taken, 0), len(buffer))
        if left:
            back = self.back_keys[len(self.back_keys) - left :]
            popleft = buffer.popleft
            pool = list(merge(pool, [(key, popleft()) for key in back], key=_by_key))
        # Feed the waiting receivers, oldest first. Only the head of the queue
        # can hold items already (a woken receiver being topped up): they join
        # the merge, so whatever it returns is the oldest of them all.
        backend = self.backend
        assert backend is not None  # a task was woken, so the backend is known
        receivers = self.receivers
        if receivers and receivers[0].items:
            head = receivers[0]
            pool = list(merge(pool, _keyed(head), key=_by_key))
            head.items = []
        else:
            head = None
        fed = 0
        while receivers and fed < len(pool):
            receiver = receivers[0]
            if receiver is not head and backend.is_cancelled(receiver):
                receivers.popleft()
                receiver.queued = False
                continue
            share = pool[fed : fed + receiver.limit]
            fed += len(share)
            receiver.items = [item for _, item in share]
            receiver.keys = [key for key, _ in share]
            # Top-ups after this hand-off are younger than everything here.
            self.runs += 1
            receiver.stamp = self.runs
            if receiver is not head:
                backend.wake(receiver)
                self.receive_wakeups += 1
            if len(share) >= receiver.limit:
                receivers.popleft()
                receiver.queued = False
        rest = pool[fed:]
        if rest:
            buffer.extendleft([item for _, item in reversed(rest)])
            self.back_keys = [key for key, _ in rest]
            self.back_end = self.taken + len(rest)
            # Given-back items may exceed the capacity; peak still counts them.
            if len(buffer) > self.peak:
                self.peak = len(buffer)
        else:
            self.back_keys = []
            self.back_end = self.taken
        self.pump()

    @ki_protected
    def pump(self) -> None:
        """Feed buffered items to waiting receivers (after a give-back)."""
        buffer = self.buffer
        while buffer and self.receivers:
            if not self.offer(buffer[0]):
                break
            buffer.popleft()
            self.taken += 1
        if self.senders:
            self.admit_senders()

    @ki_protected
    def abort_send(self, waiter: SendWaiter[T]) -> None:
        """A parked sender was cancelled before its item was placed."""
        if waiter.queued:
            waiter.queued = False
            self.senders.remove(waiter)

    def restore_send(self, waiter: SendWaiter[T]) -> None:
        """A woken sender was cancelled natively: its item stays delivered."""

    # -- closing ----------------------------------------------------------

    @ki_protected
    def close_receivers_of(self, owner: object, last: bool) -> None:
        """One receive endpoint closed: wake its own waiters; if it was the last,
        fail every waiting sender with BrokenResourceError."""
        backend = self.backend
        if backend is not None and self.receivers:
            keep: deque[ReceiveWaiter[T]] = deque()
            for waiter in self.receivers:
                if waiter.owner is not owner:
                    keep.append(waiter)
                    continue
                waiter.queued = False
                # A waiter already handed items keeps them and returns them
                # (Trio: a completed hand-off is not undone by close).
                if not waiter.items and not backend.is_cancelled(waiter):
                    backend.wake(waiter)
            self.receivers = keep
        if last:
            self._fail_senders(BROKEN, None)

    @ki_protected
    def close_senders_of(self, owner: object, last: bool) -> None:
        """One send endpoint closed: withdraw its waiting senders' items; if it
        was the last, wake every waiting receiver to see the end of stream."""
        self._fail_senders(WITHDRAWN, owner)
        if last and self.receivers:
            backend = self.backend
            assert backend is not None
            receivers = self.receivers
            self.receivers = deque()
            for waiter in receivers:
                waiter.queued = False
                if not waiter.items and not backend.is_cancelled(waiter):
                    backend.wake(waiter)

    def _fail_senders(self, status: int, owner: object | None) -> None:
        backend = self.backend
        if backend is None or not self.senders:
            return
        keep: deque[SendWaiter[T]] = deque()
        for waiter in self.senders:
            if owner is not None and waiter.owner is not owner:
                keep.append(waiter)
                continue
            waiter.queued = False
            if not backend.is_cancelled(waiter):
                waiter.status = status
                backend.wake(waiter)
        self.senders = keep

    @ki_protected
    def clear(self) -> list[T]:
        """Take every buffered item, in FIFO order (closing a queue for good)."""
        items = list(self.buffer)
        self.buffer.clear()
        self.taken += len(items)
        return items

    def waiting_receivers(self) -> int:
        """Receivers parked and not yet handed anything."""
        return sum(1 for waiter in self.receivers if not waiter.items)


def _keyed(waiter: ReceiveWaiter[T]) -> list[tuple[Key, T]]:
    """A woken receiver's items with their keys (see the module docstring)."""
    stamp = waiter.stamp
    keys = getattr(waiter, "keys", None)
    if not keys:
        return [((stamp, i), item) for i, item in enumerate(waiter.items)]
    n = len(keys)
    return [
        (keys[i] if i < n else (stamp, i), item) for i, item in enumerate(waiter.items)
    ]
