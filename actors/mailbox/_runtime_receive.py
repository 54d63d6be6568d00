"""The actor runtime's receive paths of a ``Mailbox``: one wake, no frame of
ours per message.

A base class of [``Mailbox``][actors.mailbox.Mailbox] (it declares the
mailbox's slots): ``receive_many_unchecked`` (checkpoint, then take, parking
only when still empty) and the pair the runtime's loop writes out itself,
``take_ready`` / ``wait_ready``. Each is ``Mailbox.receive_many``
written out for a caller that validated its limit once; their bodies repeat
the take and the park on purpose (a call or a coroutine frame saved per
wake: the call-count gates in tests/gates measure it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from ..channel.lowlevel import Backend, Stale, Waiter, ki_protected
from ._errors import EndOfMailbox
from ._signal import Signal

if TYPE_CHECKING:
    from ._quota import Quota

__all__ = ["NO_QUEUE", "RuntimeReceive"]

#: The queue of a mailbox whose consumer waits detached (``wait_detached``)
#: on an empty queue: an empty tuple in place of the deque, so an idle
#: actor keeps no deque (760 bytes); reads see an empty queue, and the
#: first item's wakeup makes a new deque before it is queued.
NO_QUEUE: Final[Any] = ()

M = TypeVar("M")


class RuntimeReceive(Generic[M]):
    """The runtime's receive paths (see the module doc)."""

    __slots__ = (
        "_backend",
        "_capacity",
        "_closed",
        "_consumer",
        "_peak",
        "_queue",
        "_quota",
        "_resolve",
        "_signals",
        "_waiter",
        "_wakeups",
    )

    # The mailbox's state, set by Mailbox.__init__ (declared here, where the
    # slots are, so both classes' methods see one layout).
    _backend: Backend | None
    _closed: bool
    _consumer: Waiter | None
    _peak: int
    _queue: deque[M | Signal]
    _quota: Quota[M]
    #: How a send wakes the consumer: the backend's ``resolve`` while a task
    #: is parked, the callback of ``wait_detached`` while none is.
    _resolve: Callable[[Any, Any], None]
    _signals: int
    _waiter: Waiter | None
    _wakeups: int

    if TYPE_CHECKING:

        def _admit(self) -> None: ...

        def _get_backend(self) -> Backend: ...

    def _new_waiter(self) -> Waiter:
        """The waiter the consumer parks on, made at its first park: only its
        ``handle`` is used (the mailbox hands items over in the receive
        step, never to a waiter), so a bare ``Waiter``, not a channel's
        ``ReceiveWaiter`` with its list of items (about 100 bytes less per
        idle actor)."""
        waiter = self._waiter = Waiter()
        return waiter

    @ki_protected
    async def receive_many_unchecked(self, limit: int) -> list[M | Signal]:
        """[``receive_many``][actors.mailbox.Mailbox.receive_many] for a caller
        that validated ``limit`` once (the actor runtime, per wake): the same
        semantics, no check per call, and one difference: it always checkpoints
        first, also on an empty mailbox, and parks only if the mailbox is still
        empty after that yield (so it can suspend twice; three times on Trio,
        where an empty mailbox gets a second checkpoint, see
        ``Backend.recheck``).

        Checkpoint, then take: in request/response traffic the peer runs
        during the yield and its message is found already queued, so the
        consumer never parks, nobody has to wake it, and no wait handle is
        made (what anyio's memory stream does with its ``checkpoint()``
        before ``receive_nowait()``). An actor that is really idle pays one
        yield more before it parks.
        """
        backend = self._backend or self._get_backend()
        await backend.checkpoint()
        if not self._queue and backend.recheck and not self._closed:
            await backend.checkpoint()  # Trio: the peer may run later in the batch
        if not self._queue:
            # Still empty after the yield (or drained by another party
            # meanwhile): wait (returns at once if closed) instead of letting
            # the take below raise WouldBlock out of an async receive.
            # Inlined rather than calling _wait(): this is an idle actor's
            # per-message path (no extra coroutine frame, no waiter per park).
            waiter = self._waiter or self._new_waiter()
            while not self._queue and not self._closed:
                if self._consumer is not None:
                    raise RuntimeError(
                        "a mailbox has one consumer: another task is already waiting"
                    )
                self._consumer = waiter
                self._resolve = backend.resolve
                # The backend's wait handle, awaited directly: a future on
                # asyncio (no frame of ours), a wait_task_rescheduled on Trio.
                handle = waiter.handle = backend.new_handle()
                try:
                    await handle
                except BaseException:
                    # Woken or not, nothing was taken: the items stay queued.
                    if self._consumer is waiter:
                        self._consumer = None
                    raise
        # _take() written out: a call saved per wake.
        queue = self._queue
        released = len(queue)
        if not released:  # closed (the wait returns at once then)
            raise EndOfMailbox("the mailbox is closed and empty")
        if released > self._peak:
            self._peak = released
        if released == 1:  # request/response traffic: one item per wake
            items = [queue.popleft()]  # cheaper than list(queue) + clear()
        elif released <= limit:
            items = list(queue)
            queue.clear()
        else:
            popleft = queue.popleft
            items = [popleft() for _ in range(limit)]
            released = limit
        if self._signals:
            signals = 0
            for item in items:
                if isinstance(item, Signal):
                    signals += 1
            self._signals -= signals
            released -= signals
        quota = self._quota
        quota.used -= released
        if quota.senders:
            self._admit()
        return items

    @ki_protected
    def take_ready(self, limit: int) -> list[M | Signal]:
        """Take up to ``limit`` queued items without waiting; an empty list
        when none is queued.

        For the actor runtime's loop, which makes the checkpoint itself, then
        takes, and parks ([``wait_ready``][actors.mailbox.Mailbox.wait_ready])
        only when this returns nothing:
        [``receive_many_unchecked``][actors.mailbox.Mailbox.receive_many_unchecked]
        written out by its caller, without a coroutine frame per wake. ``limit``
        is trusted (validated once).

        Raises:
            EndOfMailbox: the mailbox is empty and closed.
        """
        queue = self._queue
        released = len(queue)
        if not released:
            if self._closed:
                raise EndOfMailbox("the mailbox is closed and empty")
            return []
        if released > self._peak:
            self._peak = released
        if released == 1:  # request/response traffic: one item per wake
            items = [queue.popleft()]  # cheaper than list(queue) + clear()
        elif released <= limit:
            items = list(queue)
            queue.clear()
        else:
            popleft = queue.popleft
            items = [popleft() for _ in range(limit)]
            released = limit
        if self._signals:
            signals = 0
            for item in items:
                if isinstance(item, Signal):
                    signals += 1
            self._signals -= signals
            released -= signals
        quota = self._quota
        quota.used -= released
        if quota.senders:
            self._admit()
        return items

    @ki_protected
    def wait_detached(self, callback: Callable[[Any, None], None], arg: Any) -> bool:
        """Wait without a task: have ``callback(arg, None)`` called once, in
        the call that queues the next item (a send, a signal) or closes the
        mailbox, instead of waking a parked consumer (what the actor runtime
        does for an idle actor, which then holds no task: the callback
        schedules its next run). Never waits, never a checkpoint.

        The callback runs inside that sender's call: it must not raise, nor
        call back into this mailbox's receive side.

        While registered, the mailbox holds no deque (``NO_QUEUE``): the
        wakeup makes a new one.

        Returns:
            True if the callback is registered; False, registering nothing,
            when an item is queued already or the mailbox is closed (take
            it, or see the end, instead).

        Raises:
            RuntimeError: a consumer is already waiting on this mailbox.
        """
        if self._queue or self._closed:
            return False
        if self._consumer is not None:
            raise RuntimeError(
                "a mailbox has one consumer: another task is already waiting"
            )
        waiter = self._waiter or self._new_waiter()
        waiter.handle = arg
        self._resolve = callback
        self._consumer = waiter
        self._queue = NO_QUEUE  # the empty deque goes (see NO_QUEUE)
        return True

    @ki_protected
    async def wait_ready(self) -> bool:
        """Wait until an item is queued or the mailbox is closed, taking
        nothing; for a caller whose
        [``take_ready``][actors.mailbox.Mailbox.take_ready] just found nothing
        after its checkpoint.

        On Trio it first checkpoints once more (see ``Backend.recheck``);
        then it parks until a send wakes it. Returns at once if the mailbox
        is closed. A cancelled wait leaves every item queued.

        Returns:
            True when ``interrupt_wait``
            ended the wait (whatever has been queued since); False when an
            item is queued or the mailbox is closed.

        Raises:
            RuntimeError: another task is already waiting on this mailbox.
        """
        backend = self._backend or self._get_backend()
        if backend.recheck and not self._queue and not self._closed:
            await backend.checkpoint()
        # _wait() written out: no extra coroutine frame per park.
        waiter = self._waiter or self._new_waiter()
        while not self._queue and not self._closed:
            if self._consumer is not None:
                raise RuntimeError(
                    "a mailbox has one consumer: another task is already waiting"
                )
            self._consumer = waiter
            self._resolve = backend.resolve
            handle = waiter.handle = backend.new_handle()
            try:
                # A send resumes it with None, interrupt_wait with True: a
                # truth test per wake, no call.
                if await handle:
                    return True
            except BaseException:
                # Cancelled, woken or not: nothing was taken.
                if self._consumer is waiter:
                    self._consumer = None
                raise
        return False

    def park_stamp(self) -> int:
        """Which park the consumer's task is in: -1 when no task is parked on
        this mailbox (it runs, waits elsewhere, or waits detached), else a
        number that stays the same for as long as that task stays parked and
        changes at each wake. Two looks that read the same number (not -1)
        saw one park that lasted from the first to the second: how the actor
        runtime finds the actors that stayed idle between two of its ticks.
        Never waits."""
        backend = self._backend
        if (
            self._consumer is None
            or backend is None
            or self._resolve is not backend.resolve  # detached: no task
        ):
            return -1
        return self._wakeups

    @ki_protected
    def interrupt_wait(self) -> bool:
        """End the wait of the task parked in
        [``wait_ready``][actors.mailbox.Mailbox.wait_ready] with nothing
        queued: it returns True (what the actor runtime does to an actor that
        stayed idle, which then gives up its task). A consumer parked in
        another receive is woken too, and parks again. Never waits.

        Returns:
            True if a parked task was woken; False if none was parked (or
            its task was cancelled first), and nothing changed.
        """
        consumer = self._consumer
        backend = self._backend
        if consumer is None or backend is None or self._resolve is not backend.resolve:
            return False
        self._consumer = None
        try:
            self._resolve(consumer.handle, True)
        except Stale:  # its task was cancelled first: it unqueues itself
            return False
        self._wakeups += 1
        return True
