"""The mailbox: one consumer's FIFO of quota-counted messages and uncounted signals.

Its receive paths are written out rather than shared (no extra coroutine
frame per message); the actor runtime's own per-wake paths
(``receive_many_unchecked``, ``take_ready``, ``wait_ready``) are a base class
of their own, in ``_runtime_receive``; what a mailbox says of itself
(``statistics``, ``capacity``, ``closed``, ``len``, ``repr``) another, in
``_inspection``.
"""

from __future__ import annotations

import math
from collections import deque
from itertools import repeat, starmap
from typing import Any, Final, NoReturn, TypeVar

from anyio import WouldBlock

from ..channel.lowlevel import (
    DELIVERED,
    Backend,
    SendWaiter,
    Stale,
    Waiter,
    check_limit,
    ki_protected,
)
from ..channel.lowlevel import current_backend as _current_backend
from ._errors import EndOfMailbox, MailboxClosed, MailboxFull
from ._inspection import MailboxInspection, MailboxStatistics
from ._quota import Quota, check_capacity
from ._runtime_receive import NO_QUEUE
from ._signal import SIGNAL_CLASSES, Signal

__all__ = ["Mailbox", "MailboxStatistics"]

M = TypeVar("M")

#: A waiting send checks for a cancellation before every this many parks of
#: its mailbox (see Mailbox.send).
PARKS_PER_CHECK = 16


def _never(mailbox: object, value: object = None) -> None:
    return None


#: ``Mailbox.direct`` of a subclass that overrides ``try_send`` or ``send``:
#: always None (what the mailbox's own code stores there is dropped).
_NO_DIRECT_PATH: Final = property(_never, _never)


class Mailbox(MailboxInspection[M]):
    """A multi-producer, single-consumer FIFO queue for one actor.

    It holds messages (user messages, counted against the quota) and signals
    (instances of [``Signal``][actors.mailbox.Signal], never counted, never
    blocked by the quota, yet in their FIFO place among the messages). A
    message's quota unit is released inside the receive step that hands it out,
    and the oldest waiting sender's message moves in within that same step.

    Not thread-safe: use it from the tasks of one event loop. On Trio, Ctrl-C
    never stops an operation half-way (they are KI-protected, as Trio's
    channels): ``KeyboardInterrupt`` comes at the main task's next checkpoint.

    Args:
        capacity: the quota, the most messages queued at once; ``None`` (the
            default) for no quota.

    Raises:
        TypeError: ``capacity`` is neither an integer nor None.
        ValueError: ``capacity`` is smaller than 1.
    """

    __slots__ = ()  # the state's slots are declared by RuntimeReceive

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A subclass that takes messages its own way (try_send or send of
        # its own, as the test kit's probe) never has a direct path: every
        # message reaches its method, as for any other mailbox.
        own = cls.__dict__
        if ("try_send" in own or "send" in own) and "direct" not in own:
            type.__setattr__(cls, "direct", _NO_DIRECT_PATH)

    def __init__(self, capacity: int | None = None) -> None:
        self._quota: Quota[M] = Quota(check_capacity(capacity))
        self._capacity = capacity
        # Open and without a quota: try_send's one test for the common
        # mailbox (no unit to count; close() clears it).
        self._free = capacity is None
        self._queue: deque[M | Signal] = deque()
        self.direct = self._queue if capacity is None else None
        self._signals = 0  # signals in the queue, so messages need no wrapper
        self._consumer: Waiter | None = None
        # The one consumer parks on this same waiter every time (re-armed with
        # a fresh handle per park), so waiting allocates no waiter object;
        # made at the first park (an actor that never waits has none).
        self._waiter: Waiter | None = None
        self._backend: Backend | None = None
        self._closed = False
        # The queue only shrinks when items are taken, so its peak is recorded
        # there (and by statistics()), not on every send: a len() saved per
        # tell.
        self._peak = 0
        self._wakeups = 0

    # -- sending -----------------------------------------------------------

    @ki_protected
    def try_send(self, message: M) -> None:
        """Enqueue a message if a unit of quota is free, without waiting.

        Never a checkpoint.

        Raises:
            TypeError: ``message`` is a [``Signal``][actors.mailbox.Signal] (use
                ``send_signal``).
            MailboxClosed: the mailbox is closed (even if it is also full).
            MailboxFull: no unit is free (or senders are waiting for one);
                nothing was enqueued.
        """
        # An open mailbox without a quota counts no unit: one flag, then the
        # class of the message in a set (a signal is refused), no isinstance
        # call. Otherwise one comparison for "open and not full": a closed
        # mailbox's quota has a capacity of -inf (see close), so _refuse
        # sorts out which error it is, in the documented order.
        if not self._free:
            quota = self._quota
            if quota.used >= quota.capacity or type(message) in SIGNAL_CLASSES:
                self._refuse(message)
            quota.used += 1
        elif type(message) in SIGNAL_CLASSES:
            self._refuse(message)
        consumer = self._consumer
        if consumer is None:
            self._queue.append(message)
        else:
            # An idle actor's per-message wakeup: _wake_consumer inlined (a
            # call saved per message). A detached consumer gave its queue
            # back (NO_QUEUE): a new one first. The consumer runs later,
            # whatever wakes it, so the item may go in before or after.
            self._consumer = None
            queue = self._queue
            if queue is NO_QUEUE:
                queue = self._queue = deque()
            if self._free:  # nobody waits now: the direct path is open again
                self.direct = queue
            queue.append(message)
            try:
                self._resolve(consumer.handle, None)
                self._wakeups += 1
            except Stale:  # its task was cancelled first
                pass

    def _refuse(self, message: M) -> NoReturn:
        """Raise what ``try_send`` raises for ``message`` when it is a signal,
        the mailbox is closed or full (in that order)."""
        if isinstance(message, Signal):
            raise TypeError(f"{message!r} is a signal: use send_signal() for signals")
        if self._closed:
            raise MailboxClosed("the mailbox is closed")
        raise MailboxFull(f"the mailbox is full (capacity {self._capacity})")

    @ki_protected
    async def send(self, message: M) -> None:
        """Enqueue a message, waiting for a unit of quota if none is free.

        Returns at once, without yielding, when a unit is free (as
        ``asyncio.Queue.put``); otherwise parks until a receive releases a unit
        to this sender (first come, first served), which is a checkpoint.
        In a cancelled scope a loop of waiting sends ends: on asyncio a park
        there may be handed its unit before the cancellation is delivered, so
        at the latest the ``PARKS_PER_CHECK``-th (16th) park of this mailbox
        raises the cancellation instead of parking.
        Cancellation while parked is atomic: nothing is enqueued. On asyncio, a
        native ``Task.cancel()`` that lands after the message moved in but
        before the task resumed leaves the message enqueued (it will be
        received) and still raises ``CancelledError``: do not resend it.

        Raises:
            TypeError: ``message`` is a [``Signal``][actors.mailbox.Signal].
            MailboxClosed: the mailbox is closed, or closed while waiting; the
                message was not enqueued.
        """
        quota = self._quota
        if (
            quota.used < quota.capacity
            or self._closed
            or type(message) in SIGNAL_CLASSES
        ):
            self.try_send(message)
            return
        backend = self._backend or self._get_backend()
        # No checkpoint comes first, and on asyncio a park in a cancelled
        # scope may be handed a unit before anyio delivers the cancellation,
        # every time: a loop of waiting sends would never end. So every
        # PARKS_PER_CHECK-th park raises a pending cancellation first (the
        # check walks the task's cancel scopes: about a microsecond, too
        # much for every park; see Backend.cancel_check).
        quota.parks += 1
        if not quota.parks % PARKS_PER_CHECK:
            await backend.cancel_check()
        waiter: SendWaiter[M] = SendWaiter(message, self)
        quota.wait(waiter)
        await backend.park(waiter, quota.abort, quota.restore)
        if waiter.status != DELIVERED:
            raise MailboxClosed("the mailbox closed while the sender waited")

    @ki_protected
    def send_signal(self, signal: Signal) -> None:
        """Enqueue a signal: never waits, never counts against the quota.

        Raises:
            TypeError: ``signal`` is not a [``Signal``][actors.mailbox.Signal].
            MailboxClosed: the mailbox is closed.
        """
        if not isinstance(signal, Signal):
            raise TypeError(
                f"send_signal() takes a Signal, not {type(signal).__name__}"
            )
        if self._closed:
            raise MailboxClosed("the mailbox is closed")
        if self._consumer is not None:
            self._wake_consumer()  # first: it restores a detached one's queue
        self._queue.append(signal)
        self._signals += 1

    # -- receiving ---------------------------------------------------------

    @ki_protected
    def receive_nowait(self) -> M | Signal:
        """Take the next item without waiting.

        If it is a message, its unit is released and the oldest waiting sender
        moved in, in this same step.

        Raises:
            EndOfMailbox: the mailbox is empty and closed.
            anyio.WouldBlock: the mailbox is empty.
        """
        queue = self._queue
        if queue:
            if len(queue) > self._peak:
                self._peak = len(queue)
            item = queue.popleft()
            if self._signals and isinstance(item, Signal):
                self._signals -= 1
                return item
            if self._capacity is not None:  # (no quota, no unit to release)
                quota = self._quota
                quota.used -= 1
                if quota.senders:
                    self._admit()
            return item
        if self._closed:
            raise EndOfMailbox("the mailbox is closed and empty")
        raise WouldBlock

    @ki_protected
    def receive_nowait_many(self, limit: int) -> list[M | Signal]:
        """Take up to ``limit`` queued items without waiting.

        Releases all their units and moves up to that many waiting senders in,
        in this one step.

        Args:
            limit: the most items to take; at least 1.

        Returns:
            A non-empty list in FIFO order.

        Raises:
            TypeError: ``limit`` is not an integer.
            ValueError: ``limit`` is smaller than 1.
            EndOfMailbox: the mailbox is empty and closed.
            anyio.WouldBlock: the mailbox is empty.
        """
        check_limit(limit)
        return self._take(limit)

    @ki_protected
    def _take(self, limit: int) -> list[M | Signal]:
        queue = self._queue
        released = len(queue)
        if not released:
            if self._closed:
                raise EndOfMailbox("the mailbox is closed and empty")
            raise WouldBlock
        if released > self._peak:
            self._peak = released
        if released <= limit:
            items = list(queue)
            queue.clear()
        else:
            # popleft called by C (starmap) rather than a comprehension:
            # about 180 instructions less per item taken.
            items = list(starmap(queue.popleft, repeat((), limit)))
            released = limit
        if self._signals:
            signals = 0
            for item in items:
                if isinstance(item, Signal):
                    signals += 1
            self._signals -= signals
            released -= signals
        if self._capacity is not None:  # (no quota, no unit to release)
            quota = self._quota
            quota.used -= released
            if quota.senders:
                self._admit()
        return items

    def _admit(self) -> None:
        backend = self._backend
        assert backend is not None  # a sender parked, so the backend is known
        self._quota.admit(self._queue, backend)

    @ki_protected
    async def receive(self) -> M | Signal:
        """Take the next item, waiting for one if the mailbox is empty.

        Exactly one suspension per call: a checkpoint when an item is ready,
        else the park until one arrives. Atomic under cancellation on every
        path: the consumer is only woken, items are taken after it resumes, so
        a cancelled receive (anyio scope, Trio, or a native
        ``asyncio.Task.cancel()`` racing the wakeup) takes nothing.

        Raises:
            EndOfMailbox: the mailbox is closed and empty (at once, or when it
                closes while the consumer waits).
            RuntimeError: another task is already waiting on this mailbox.
        """
        backend = self._backend or self._get_backend()
        if self._queue or self._closed:
            # A closed, empty mailbox checkpoints too: one suspension per call,
            # and a cancel point as anyio's and Trio's receive.
            await backend.checkpoint()
        if not self._queue:
            # Empty at the start, or drained by another party while this task
            # sat at the checkpoint: wait (returns at once if closed) instead of
            # letting the take below raise WouldBlock out of an async receive.
            await self._wait(backend)
        return self.receive_nowait()

    @ki_protected
    async def receive_many(self, limit: int) -> list[M | Signal]:
        """Take up to ``limit`` items from one wake, waiting if the mailbox is empty.

        The drain-many step: one suspension, then every item taken has its
        unit released and up to that many waiting senders moved in, at once.
        Same cancellation guarantees as [``receive``][actors.mailbox.Mailbox.receive].

        Args:
            limit: the most items to take; at least 1.

        Returns:
            A non-empty list in FIFO order.

        Raises:
            TypeError: ``limit`` is not an integer.
            ValueError: ``limit`` is smaller than 1.
            EndOfMailbox: the mailbox is closed and empty.
            RuntimeError: another task is already waiting on this mailbox.
        """
        check_limit(limit)
        # The body is receive_many_unchecked's, written out, not awaited: no
        # wrapper coroutine per call (the "inlined receive" of the contract).
        backend = self._backend or self._get_backend()
        if self._queue or self._closed:
            await backend.checkpoint()
        if not self._queue:
            await self._wait(backend)
        return self._take(limit)

    @ki_protected
    async def _wait(self, backend: Backend) -> None:
        waiter = self._waiter or self._new_waiter()
        while not self._queue and not self._closed:
            if self._consumer is not None:
                raise RuntimeError(
                    "a mailbox has one consumer: another task is already waiting"
                )
            self._consumer = waiter
            self.direct = None  # a send must wake it
            self._resolve = backend.resolve
            handle = waiter.handle = backend.new_handle()
            try:
                await handle
            except BaseException:
                # Cancelled, woken or not: nothing was taken (see receive).
                if self._consumer is waiter:
                    self._stop_waiting()
                raise

    def _get_backend(self) -> Backend:
        backend = self._backend = _current_backend()
        return backend

    # -- closing -----------------------------------------------------------

    @ki_protected
    def close(self) -> None:
        """Close the mailbox (idempotent).

        Every later send raises [``MailboxClosed``][actors.MailboxClosed];
        senders waiting for quota are woken with it, their messages not
        enqueued. Queued items stay: the consumer can still receive them, then
        gets [``EndOfMailbox``][actors.mailbox.EndOfMailbox]; or
        [``take_all``][actors.mailbox.Mailbox.take_all] takes them all.
        """
        if self._closed:
            return
        self._closed = True
        self._free = False
        self.direct = None
        # No unit is free any more: try_send's one comparison refuses, and
        # admit() moves nobody in (-inf - n stays -inf).
        self._quota.capacity = -math.inf
        self._quota.withdraw_all(self._backend)
        if self._consumer is not None:
            self._wake_consumer()

    @ki_protected
    def take_all(self) -> list[M | Signal]:
        """Take everything still queued (messages and signals), in FIFO order,
        and release their units. Never waits; works open or closed."""
        queue = self._queue
        if len(queue) > self._peak:
            self._peak = len(queue)
        items = list(queue)
        if items:  # (NO_QUEUE, an empty tuple, has no clear)
            queue.clear()
        self._signals = 0
        self._quota.used = 0
        if self._quota.senders:
            self._admit()
        return items

    def __aiter__(self) -> Mailbox[M]:
        return self

    @ki_protected
    async def __anext__(self) -> M | Signal:
        try:
            return await self.receive()
        except EndOfMailbox:
            raise StopAsyncIteration from None
