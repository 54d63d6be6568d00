"""Memory object streams: a drop-in for ``anyio.create_memory_object_stream``.

The endpoints follow anyio's memory object stream contract (names, exceptions,
clone and close semantics, statistics, async iteration, checkpoints) and add
``receive_many`` / ``receive_nowait_many`` (batch hand-off), coalesced wakeups and
one guarantee anyio lacks: an item is never lost to a cancellation.

On Trio, as with Trio's own channels, Ctrl-C never stops an operation half-way:
the operations are KI-protected, and ``KeyboardInterrupt`` comes out of the
run's main task at its next checkpoint.

Its size: both endpoints of one channel, as anyio's ``memory.py`` keeps
them, each method documented in full.
"""

from __future__ import annotations

import math
import warnings
from types import TracebackType
from typing import Any, Generic, NamedTuple, TypeVar

from anyio import BrokenResourceError, ClosedResourceError, EndOfStream, WouldBlock
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from ._state import ChannelState, check_buffer_size, check_limit
from ._waiters import DELIVERED, WITHDRAWN, ReceiveWaiter, SendWaiter, ki_protected

__all__ = [
    "MemoryObjectReceiveStream",
    "MemoryObjectSendStream",
    "MemoryObjectStreamStatistics",
    "create_memory_object_stream",
]

T_Item = TypeVar("T_Item")
T_co = TypeVar("T_co", covariant=True)
T_contra = TypeVar("T_contra", contravariant=True)


class MemoryObjectStreamStatistics(NamedTuple):
    """A snapshot of one channel; the first six fields are anyio's."""

    current_buffer_used: int  #: number of items stored in the buffer
    #: maximum number of items the buffer holds (or ``math.inf``)
    max_buffer_size: float
    open_send_streams: int  #: number of unclosed clones of the send stream
    open_receive_streams: int  #: number of unclosed clones of the receive stream
    tasks_waiting_send: int  #: tasks parked in ``send``
    #: tasks parked in ``receive`` / ``receive_many`` and not yet handed an item
    tasks_waiting_receive: int
    peak_buffer_used: int  #: the most items the buffer has held at once
    receive_wakeups: int  #: parked receivers woken by a hand-off (ever)
    send_wakeups: int  #: parked senders woken because their item was placed


def _statistics(state: ChannelState[Any]) -> MemoryObjectStreamStatistics:
    return MemoryObjectStreamStatistics(
        len(state.buffer),
        state.max_buffer_size,
        state.open_send,
        state.open_receive,
        len(state.senders),
        state.waiting_receivers(),
        state.peak,
        state.receive_wakeups,
        state.send_wakeups,
    )


class MemoryObjectReceiveStream(ObjectReceiveStream[T_co], Generic[T_co]):
    """The receiving end of a memory object stream.

    Clone it for several receivers; the sending side sees the end closed only
    when every clone is closed. Iterating it (``async for``) receives until
    ``anyio.EndOfStream``.
    """

    __slots__ = ("_closed", "_state")

    def __init__(self, state: ChannelState[T_co]) -> None:
        self._state = state
        self._closed = False
        state.open_receive += 1

    @ki_protected
    def receive_nowait(self) -> T_co:
        """Receive the next item if that needs no waiting.

        Returns:
            The oldest item: from the buffer, or straight from the oldest
            waiting sender (who is then woken).

        Raises:
            anyio.ClosedResourceError: this receive stream was closed.
            anyio.EndOfStream: nothing is buffered and every send stream is
                closed.
            anyio.WouldBlock: nothing is buffered and no sender is waiting.
        """
        if self._closed:
            raise ClosedResourceError
        state = self._state
        buffer = state.buffer
        if buffer:
            item = buffer.popleft()
            state.taken += 1  # see ChannelState.restore_receive
            if state.senders:
                state.admit_senders()
            return item
        if state.senders:
            out: list[T_co] = []
            state.take_from_senders(out, 1)
            if out:
                return out[0]
        if not state.open_send:
            raise EndOfStream
        raise WouldBlock

    @ki_protected
    def receive_nowait_many(self, limit: int) -> list[T_co]:
        """Receive up to ``limit`` items that are ready, without waiting.

        Args:
            limit: the most items to return; at least 1.

        Returns:
            A non-empty list of items in FIFO order. Waiting senders whose
            items fit are moved in within this same step.

        Raises:
            TypeError: ``limit`` is not an integer.
            ValueError: ``limit`` is smaller than 1.
            anyio.ClosedResourceError: this receive stream was closed.
            anyio.EndOfStream: nothing is ready and every send stream is closed.
            anyio.WouldBlock: nothing is ready.
        """
        check_limit(limit)
        if self._closed:
            raise ClosedResourceError
        state = self._state
        if state.buffer or state.senders:
            out = state.take(limit)
            if out:
                return out
        if not state.open_send:
            raise EndOfStream
        raise WouldBlock

    @ki_protected
    async def receive(self) -> T_co:
        """Receive the next item, waiting for one if need be.

        Always a checkpoint (a schedule point and a cancel point), even when an
        item is ready. Cancellation is atomic: the call either returns an item
        or raises and takes nothing. If a native ``asyncio.Task.cancel()`` lands
        after an item was handed to this call but before its task resumed, the
        item is given back and the cancellation propagates: it goes to the next
        waiting receiver, or back into the buffer ahead of every younger item.
        Give-backs keep FIFO, oldest item first, across any number of them:
        the buffer always holds the items still present in send order.

        Returns:
            The oldest item.

        Raises:
            anyio.ClosedResourceError: this receive stream was closed (before or
                while waiting).
            anyio.EndOfStream: the buffer is empty and every send stream is
                closed.
        """
        state = self._state
        backend = state.backend or state.get_backend()
        # The checkpoint (see Backend.yield_first). On asyncio: yield first,
        # then act on the state after the yield (anyio's order; parking at once
        # would let a call in an already-cancelled scope be handed an item
        # before anyio delivers the cancellation). On Trio: Trio's own order,
        # so an operation that has to wait suspends only once.
        yield_first = backend.yield_first
        if yield_first:
            await backend.checkpoint()
        else:
            await backend.cancel_check()
        if self._closed:
            raise ClosedResourceError
        buffer = state.buffer
        if buffer:
            item = buffer.popleft()
            state.taken += 1  # see ChannelState.restore_receive
            if state.senders:
                state.admit_senders()
            if not yield_first:
                await backend.schedule_point()
            return item
        if state.senders:
            out: list[T_co] = []
            state.take_from_senders(out, 1)
            if out:
                if not yield_first:
                    await backend.schedule_point()
                return out[0]
        if not state.open_send:
            raise EndOfStream
        waiter: ReceiveWaiter[T_co] = ReceiveWaiter(1, self)
        state.receivers.append(waiter)
        await backend.park(waiter, state.abort_receive, state.restore_receive)
        items = waiter.items
        if items:
            return items[0]
        # Woken empty-handed by a close. Look again rather than raise
        # EndOfStream at once: a receiver cancelled natively after a hand-off
        # may have given items back to the buffer since (asyncio).
        return self.receive_nowait()

    @ki_protected
    async def receive_many(self, limit: int) -> list[T_co]:
        """Receive between 1 and ``limit`` items, waiting for the first if need be.

        A waiting call is handed up to ``limit`` items at once (batch hand-off):
        senders keep topping up a woken receiver until it is full or runs, so a
        burst wakes as few receivers as it can feed. Same checkpoint and
        cancellation guarantees as
        [``receive``][actors.channel.MemoryObjectReceiveStream.receive]; on a
        native cancellation after a hand-off, every handed item is given back,
        oldest first.

        Args:
            limit: the most items to return; at least 1.

        Returns:
            A non-empty list of items in FIFO order.

        Raises:
            TypeError: ``limit`` is not an integer.
            ValueError: ``limit`` is smaller than 1.
            anyio.ClosedResourceError: this receive stream was closed.
            anyio.EndOfStream: the buffer is empty and every send stream is
                closed.
        """
        check_limit(limit)
        state = self._state
        backend = state.backend or state.get_backend()
        yield_first = backend.yield_first  # the checkpoint, as in receive()
        if yield_first:
            await backend.checkpoint()
        else:
            await backend.cancel_check()
        if self._closed:
            raise ClosedResourceError
        if state.buffer or state.senders:
            out = state.take(limit)
            if out:
                if not yield_first:
                    await backend.schedule_point()
                return out
        if not state.open_send:
            raise EndOfStream
        waiter: ReceiveWaiter[T_co] = ReceiveWaiter(limit, self)
        state.receivers.append(waiter)
        await backend.park(waiter, state.abort_receive, state.restore_receive)
        # Not yet full: it is still queued for top-ups, so leave the queue now.
        state.unqueue_receiver(waiter)
        items = waiter.items
        if items:
            return items
        # Woken empty-handed by a close: look again (see receive()).
        return self.receive_nowait_many(limit)

    @ki_protected
    def clone(self) -> MemoryObjectReceiveStream[T_co]:
        """Create another receive stream on the same channel.

        Raises:
            anyio.ClosedResourceError: this receive stream was closed.
        """
        if self._closed:
            raise ClosedResourceError
        return MemoryObjectReceiveStream(self._state)

    @ki_protected
    def close(self) -> None:
        """Close this receive stream (idempotent, never waits).

        Wakes only this stream's own waiting receivers, with
        ``anyio.ClosedResourceError`` (a receiver already handed items still
        returns them). Closing the last receive stream wakes every waiting
        sender with ``anyio.BrokenResourceError``; their items are not sent.
        """
        if not self._closed:
            self._closed = True
            state = self._state
            state.open_receive -= 1
            state.close_receivers_of(self, state.open_receive == 0)

    @ki_protected
    async def aclose(self) -> None:
        """Close this receive stream; same as
        [``close``][actors.channel.MemoryObjectReceiveStream.close]."""
        self.close()

    def statistics(self) -> MemoryObjectStreamStatistics:
        """Return a snapshot of the channel's state."""
        return _statistics(self._state)

    def __enter__(self) -> MemoryObjectReceiveStream[T_co]:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = self._state
        status = "closed" if self._closed else "open"
        return (
            f"<{type(self).__name__} {status} buffered={len(state.buffer)}"
            f" max_buffer_size={state.max_buffer_size}>"
        )

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            warnings.warn(
                f"Unclosed <{type(self).__name__} at {id(self):x}>",
                ResourceWarning,
                stacklevel=1,
                source=self,
            )


class MemoryObjectSendStream(ObjectSendStream[T_contra], Generic[T_contra]):
    """The sending end of a memory object stream.

    Clone it for several senders; receivers see the end of stream only when
    every clone is closed.
    """

    __slots__ = ("_closed", "_state")

    def __init__(self, state: ChannelState[T_contra]) -> None:
        self._state = state
        self._closed = False
        state.open_send += 1

    @ki_protected
    def send_nowait(self, item: T_contra) -> None:
        """Send an item if that needs no waiting.

        The item goes to the oldest waiting receiver, else into the buffer.

        Raises:
            anyio.ClosedResourceError: this send stream was closed.
            anyio.BrokenResourceError: every receive stream is closed.
            anyio.WouldBlock: the buffer is full and no receiver is waiting.
        """
        if self._closed:
            raise ClosedResourceError
        state = self._state
        if not state.open_receive:
            raise BrokenResourceError
        if state.receivers and state.offer(item):
            return
        buffer = state.buffer
        if len(buffer) < state.max_buffer_size:
            buffer.append(item)
            if len(buffer) > state.peak:
                state.peak = len(buffer)
            return
        raise WouldBlock

    @ki_protected
    async def send(self, item: T_contra) -> None:
        """Send an item, waiting for room if the buffer is full.

        Always a checkpoint, even when the item is placed at once. Waiting
        senders are served first come, first served. Cancellation is atomic:
        a send cancelled before its item was placed leaves nothing behind. On
        asyncio a native ``Task.cancel()`` can land after the item was placed
        but before the task resumed; the item then stays delivered and the
        cancellation still propagates (do not resend it).

        Raises:
            anyio.ClosedResourceError: this send stream was closed (before or
                while waiting; the item was not sent).
            anyio.BrokenResourceError: every receive stream is closed (before or
                while waiting; the item was not sent).
        """
        state = self._state
        backend = state.backend or state.get_backend()
        yield_first = backend.yield_first  # the checkpoint, as in receive()
        if yield_first:
            await backend.checkpoint()
        else:
            await backend.cancel_check()
        if self._closed:
            raise ClosedResourceError
        if not state.open_receive:
            raise BrokenResourceError
        if state.receivers and state.offer(item):
            if not yield_first:
                await backend.schedule_point()
            return
        buffer = state.buffer
        if len(buffer) < state.max_buffer_size:
            buffer.append(item)
            if len(buffer) > state.peak:
                state.peak = len(buffer)
            if not yield_first:
                await backend.schedule_point()
            return
        waiter: SendWaiter[T_contra] = SendWaiter(item, self)
        state.senders.append(waiter)
        await backend.park(waiter, state.abort_send, state.restore_send)
        status = waiter.status
        if status == DELIVERED:
            return
        if status == WITHDRAWN:
            raise ClosedResourceError
        raise BrokenResourceError

    @ki_protected
    def clone(self) -> MemoryObjectSendStream[T_contra]:
        """Create another send stream on the same channel.

        Raises:
            anyio.ClosedResourceError: this send stream was closed.
        """
        if self._closed:
            raise ClosedResourceError
        return MemoryObjectSendStream(self._state)

    @ki_protected
    def close(self) -> None:
        """Close this send stream (idempotent, never waits).

        This stream's own waiting senders are woken with
        ``anyio.ClosedResourceError`` and their items withdrawn. Closing the
        last send stream wakes every waiting receiver with
        ``anyio.EndOfStream``; buffered items can still be received.
        """
        if not self._closed:
            self._closed = True
            state = self._state
            state.open_send -= 1
            state.close_senders_of(self, state.open_send == 0)

    @ki_protected
    async def aclose(self) -> None:
        """Close this send stream; same as
        [``close``][actors.channel.MemoryObjectSendStream.close]."""
        self.close()

    def statistics(self) -> MemoryObjectStreamStatistics:
        """Return a snapshot of the channel's state."""
        return _statistics(self._state)

    def __enter__(self) -> MemoryObjectSendStream[T_contra]:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = self._state
        status = "closed" if self._closed else "open"
        return (
            f"<{type(self).__name__} {status} buffered={len(state.buffer)}"
            f" max_buffer_size={state.max_buffer_size}>"
        )

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            warnings.warn(
                f"Unclosed <{type(self).__name__} at {id(self):x}>",
                ResourceWarning,
                stacklevel=1,
                source=self,
            )


class create_memory_object_stream(
    tuple[MemoryObjectSendStream[T_Item], MemoryObjectReceiveStream[T_Item]],
):
    """Create a memory object stream: ``(send_stream, receive_stream)``.

    Annotate the item type as ``create_memory_object_stream[T](...)``.

    Its arguments (a class, as anyio's, so that it can be subscripted):

    - ``max_buffer_size``: how many items the buffer holds before ``send``
      waits: 0 for a rendezvous channel, an integer, or ``math.inf``.
    - ``item_type``: deprecated, as in anyio 4 (it warns and does nothing):
      anyio 3's way to type the stream, kept so calls written for anyio keep
      working.

    It returns a tuple of (send stream, receive stream).

    Raises:
        ValueError: ``max_buffer_size`` is not an integer or ``math.inf``, or is
            negative.
    """

    def __new__(  # type: ignore[misc]
        cls, max_buffer_size: float = 0, item_type: object = None
    ) -> tuple[MemoryObjectSendStream[T_Item], MemoryObjectReceiveStream[T_Item]]:
        check_buffer_size(max_buffer_size)
        if item_type is not None:
            warnings.warn(
                "The item_type argument has been deprecated since anyio 4.0 and "
                "does nothing: write create_memory_object_stream[T](...)",
                DeprecationWarning,
                stacklevel=2,
            )
        state: ChannelState[T_Item] = ChannelState(
            math.inf if max_buffer_size == math.inf else max_buffer_size
        )
        return (MemoryObjectSendStream(state), MemoryObjectReceiveStream(state))
