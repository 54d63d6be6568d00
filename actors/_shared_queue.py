"""The shared queue of a ``shared_queue`` pool, and its workers' mailboxes.

One queue on the channel core's state (``ChannelState``): idle workers park on
it as batch receivers, so a woken worker is handed up to ``drain`` items and a
burst never wakes more workers than it feeds (coalesced wakeups). The queue's
buffer size is the pool's quota. Each worker's mailbox is a
:class:`WorkerMailbox`: the shared queue plus the worker's own lane for signals,
broadcasts and tells to the worker's own ref.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from .channel._state import ChannelState
from .channel._waiters import DELIVERED, Backend, ReceiveWaiter, SendWaiter
from .mailbox import EndOfMailbox, MailboxClosed, MailboxFull, Signal
from .mailbox._quota import check_capacity

__all__ = ["SharedQueue", "WorkerMailbox"]


class SharedQueue:
    """The pool's queue for ``shared_queue`` routing (a channel-core state)."""

    __slots__ = ("closed", "state")

    def __init__(self, capacity: int | None, backend: Backend) -> None:
        self.state: ChannelState[Any] = ChannelState(check_capacity(capacity))
        self.state.backend = backend
        self.closed = False

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

    async def send(self, message: object) -> None:
        """Like try_send, but waits (first come, first served) while full."""
        state = self.state
        if (
            self.closed
            or isinstance(message, Signal)
            or state.receivers
            or len(state.buffer) < state.max_buffer_size
        ):
            self.try_send(message)
            return
        waiter: SendWaiter[Any] = SendWaiter(message, self)
        state.senders.append(waiter)
        backend = state.backend
        assert backend is not None
        await backend.park(waiter, state.abort_send, state.restore_send)
        if waiter.status != DELIVERED:
            raise MailboxClosed("the pool stopped while the sender waited")

    def close(self) -> list[Any]:
        """Refuse new messages, fail waiting senders, return what was queued."""
        self.closed = True
        state = self.state
        state.close_senders_of(None, last=False)  # owner None: every sender
        items = list(state.buffer)
        state.buffer.clear()
        return items


class WorkerMailbox:
    """A shared-queue worker's mailbox: its own lane (signals, broadcasts, tells
    to the worker's ref) plus the pool's shared queue. Offers what the actor
    cell uses of a :class:`~actors.mailbox.Mailbox`."""

    __slots__ = ("_closed", "_own", "_parked", "_shared")

    def __init__(self, shared: SharedQueue) -> None:
        self._shared = shared
        self._own: deque[Any] = deque()
        self._parked: ReceiveWaiter[Any] | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def try_send(self, message: object) -> None:
        if isinstance(message, Signal):
            raise TypeError(f"{message!r} is a signal: use send_signal() for signals")
        self._push(message)

    async def send(self, message: object) -> None:
        self.try_send(message)

    def send_signal(self, signal: Signal) -> None:
        if not isinstance(signal, Signal):
            raise TypeError(f"send_signal() takes a Signal, not {signal!r}")
        self._push(signal)

    def _push(self, item: object) -> None:
        if self._closed:
            raise MailboxClosed("the worker is stopped")
        self._own.append(item)
        self._wake()

    def _wake(self) -> None:
        waiter = self._parked
        # Only a waiter still queued and not yet handed shared items needs a
        # wake: one with items was woken by the queue, one unqueued was aborted
        # or already woken here.
        if waiter is not None and waiter.queued and not waiter.items:
            state = self._shared.state
            state.unqueue_receiver(waiter)
            backend = state.backend
            assert backend is not None
            if not backend.is_cancelled(waiter):
                backend.wake(waiter)

    async def receive_batch(self, limit: int) -> list[Any]:
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
                    out.extend(state.take(limit - len(out)))
                if out:
                    return out
                continue
            if self._closed:
                raise EndOfMailbox("the worker is stopped")
            waiter: ReceiveWaiter[Any] = ReceiveWaiter(limit, self)
            state.receivers.append(waiter)
            self._parked = waiter
            try:
                await backend.park(waiter, state.abort_receive, state.restore_receive)
            finally:
                self._parked = None
            state.unqueue_receiver(waiter)
            if waiter.items:
                return [*own, *waiter.items] if own else waiter.items

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._wake()

    def drain(self) -> list[Any]:
        items = list(self._own)
        self._own.clear()
        return items
