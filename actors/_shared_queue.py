"""The shared queue of a ``shared_queue`` pool, and its workers' mailboxes.

One queue on the channel core's state (``ChannelState``: buffer, parked
receivers, waiting senders); its buffer size is the pool's quota. The hand-off
rules are the pool's own, for fair sharing among workers whose handlers may be
slow:

* A message goes to the oldest parked (idle) worker, waking it, one message per
  parked worker: a burst spreads over every idle worker and never wakes more
  workers than it feeds. With no worker parked it waits in the buffer.
* A worker taking from the buffer (when it runs, woken or back from its last
  batch) takes up to ``drain`` items but no more than its fair share, the
  waiting items divided by the open workers (rounded up). So one worker never
  sits on a backlog that idle workers could share, while a large backlog is
  still taken ``drain`` at a time.

Every item is handed out exactly once: a worker stopping alone (or with a
restart of the pool) gives what it was handed but never ran back to the queue,
and so does a worker cancelled natively (``Task.cancel()``) after the hand-off;
once the pool has stopped (the queue closed and drained) such items stay with
the worker and become its dead letters.

Each worker's mailbox is a ``WorkerMailbox``: the shared queue plus the
worker's own lane for signals, broadcasts and tells to the worker's own ref.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from .channel.lowlevel import (
    DELIVERED,
    Backend,
    ChannelState,
    ReceiveWaiter,
    SendWaiter,
    ki_protected,
)
from .mailbox import (
    EndOfMailbox,
    MailboxClosed,
    MailboxFull,
    MailboxStatistics,
    Signal,
    check_capacity,
)

__all__ = ["SharedQueue", "WorkerMailbox"]


class SharedQueue:
    """The pool's queue for ``shared_queue`` routing (a channel-core state)."""

    __slots__ = ("closed", "state", "workers")

    def __init__(self, capacity: int | None, backend: Backend) -> None:
        self.state: ChannelState[Any] = ChannelState(check_capacity(capacity))
        self.state.backend = backend
        self.closed = False
        self.workers = 0  # open workers' mailboxes: the fair share's divisor

    @ki_protected
    def try_send(self, message: object) -> None:
        """Hand to an idle worker or queue; never waits."""
        if isinstance(message, Signal):
            raise TypeError(f"{message!r} is a runtime signal, not a message")
        if self.closed:
            raise MailboxClosed("the pool is stopped")
        state = self.state
        if state.receivers and state.offer(message):
            return
        buffer = state.buffer
        if len(buffer) < state.max_buffer_size:
            buffer.append(message)
            if len(buffer) > state.peak:
                state.peak = len(buffer)
            return
        raise MailboxFull(f"the pool's queue is full ({state.max_buffer_size})")

    @ki_protected
    def take(self, room: int) -> list[Any]:
        """Take up to ``room`` items but no more than a fair share: the waiting
        items (buffered, and held by waiting senders) divided by the open
        workers, rounded up."""
        state = self.state
        waiting = len(state.buffer) + len(state.senders)
        return state.take(min(room, -(-waiting // (self.workers or 1))))

    @ki_protected
    async def send(self, message: object) -> None:
        """Like try_send, but waits (first come, first served) while full."""
        state = self.state
        if self.closed or isinstance(message, Signal):
            self.try_send(message)  # raises MailboxClosed or TypeError
            return
        if state.receivers and state.offer(message):
            return
        if len(state.buffer) < state.max_buffer_size and not state.senders:
            self.try_send(message)
            return
        waiter: SendWaiter[Any] = SendWaiter(message, self)
        state.senders.append(waiter)
        backend = state.backend
        assert backend is not None
        await backend.park(waiter, state.abort_send, state.restore_send)
        if waiter.status != DELIVERED:
            raise MailboxClosed("the pool stopped while the sender waited")

    @ki_protected
    def close(self) -> list[Any]:
        """Refuse new messages, fail waiting senders, return what was queued
        (idempotent: later calls return nothing)."""
        self.closed = True
        state = self.state
        state.close_senders_of(None, last=False)  # owner None: every sender
        return state.clear()


class WorkerMailbox:
    """A shared-queue worker's mailbox: its own lane (signals, broadcasts, tells
    to the worker's ref) plus the pool's shared queue. Offers what the actor
    cell uses of a [``Mailbox``][actors.mailbox.Mailbox]."""

    __slots__ = ("_closed", "_own", "_parked", "_shared")

    #: No direct path (``Mailbox.direct``): a tell goes through ``try_send``.
    direct: None = None

    def __init__(self, shared: SharedQueue) -> None:
        self._shared = shared
        self._own: deque[Any] = deque()
        self._parked: ReceiveWaiter[Any] | None = None
        self._closed = False
        shared.workers += 1

    @property
    def closed(self) -> bool:
        return self._closed

    @ki_protected
    def try_send(self, message: object) -> None:
        if isinstance(message, Signal):
            raise TypeError(f"{message!r} is a signal: use send_signal() for signals")
        self._push(message)

    @ki_protected
    async def send(self, message: object) -> None:
        self.try_send(message)

    def send_signal(self, signal: Signal) -> None:
        if not isinstance(signal, Signal):
            raise TypeError(f"send_signal() takes a Signal, not {signal!r}")
        self._push(signal)

    @ki_protected
    def _push(self, item: object) -> None:
        if self._closed:
            raise MailboxClosed("the worker is stopped")
        self._own.append(item)
        self._wake()

    @ki_protected
    def _wake(self) -> None:
        waiter = self._parked
        # Only a waiter still queued needs a wake: one handed a shared item was
        # woken (and unqueued) by the queue, one unqueued otherwise was aborted
        # or already woken here.
        if waiter is not None and waiter.queued:
            state = self._shared.state
            state.unqueue_receiver(waiter)
            backend = state.backend
            assert backend is not None
            if not backend.is_cancelled(waiter):
                backend.wake(waiter)

    @ki_protected
    async def receive_many_unchecked(self, limit: int) -> list[Any]:
        shared = self._shared
        state = shared.state
        backend = state.backend
        assert backend is not None
        own = self._own
        while True:
            # A closed (stopping) worker takes no more shared items: it would
            # only make them dead letters, taken from the workers that go on
            # (a single worker stopping, or a pool restarting its workers).
            if own or (not self._closed and (state.buffer or state.senders)):
                await backend.checkpoint()
                out: list[Any] = []
                while own and len(out) < limit:
                    out.append(own.popleft())
                if (
                    len(out) < limit
                    and not self._closed
                    and (state.buffer or state.senders)
                ):
                    out.extend(shared.take(limit - len(out)))
                if out:
                    return out
                continue
            if self._closed:
                raise EndOfMailbox("the worker is stopped")
            # Parked with a limit of 1: a burst is handed one item per parked
            # worker (the channel's offer rule), and the woken worker takes
            # its share of the rest when it runs.
            waiter: ReceiveWaiter[Any] = ReceiveWaiter(1, self)
            state.receivers.append(waiter)
            self._parked = waiter
            try:
                await backend.park(waiter, state.abort_receive, self._restore)
            finally:
                self._parked = None
            state.unqueue_receiver(waiter)
            if not waiter.items:
                continue  # woken for the own lane, or closed
            if self._closed and not shared.closed:
                # Stopped between the hand-off and now: the workers that go on
                # (or the pool's next ones) handle it, in send order.
                state.restore_receive(waiter)
                continue
            items = waiter.items
            waiter.items = []
            # Own-lane items that came in the same step stay in ``own`` for the
            # next batch: each item leaves its lane exactly once.
            if (
                len(items) < limit
                and not self._closed
                and (state.buffer or state.senders)
            ):
                items.extend(shared.take(limit - len(items)))
            return items

    @ki_protected
    def _restore(self, waiter: ReceiveWaiter[Any]) -> None:
        """Cancelled natively after the hand-off: give the items back."""
        shared = self._shared
        if shared.closed:
            shared.state.unqueue_receiver(waiter)
            items = waiter.items
            waiter.items = []
            # The queue was drained already: the worker's own drain makes them
            # dead letters.
            self._own.extendleft(reversed(items))
        else:  # back in send order, oldest first across give-backs
            shared.state.restore_receive(waiter)

    @ki_protected
    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._shared.workers -= 1
            self._wake()

    @ki_protected
    def take_all(self) -> list[Any]:
        items = list(self._own)
        self._own.clear()
        return items

    def statistics(self) -> MailboxStatistics:
        """The worker's own lane (the shared queue is the pool's)."""
        signals = sum(1 for item in self._own if isinstance(item, Signal))
        queued = len(self._own) - signals
        return MailboxStatistics(queued, signals, None, 0, 0, 0, 0)
