"""Subscriptions: where the client delivers each message it reads."""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING

import anyio

from ..channel import (
    BrokenResourceError,
    EndOfStream,
    WouldBlock,
    create_memory_object_stream,
)
from ._errors import ConnectionClosedError, NatsError, SlowConsumerError
from ._protocol import Msg

if TYPE_CHECKING:
    from ._client import Client

__all__ = ["Subscription"]


class Subscription:
    """A subscription of a ``Client`` to a subject.

    Messages go either to a sync callback, called as the client reads them
    (by its reader task on Trio, in the transport's callback on asyncio: it
    must not block nor enter a cancel scope; an exception it raises goes to
    the client's ``error_callback``), or into a buffer of ``max_pending``
    messages read with ``async for msg in sub`` or ``next_msg``. When the
    buffer is full, a new message is dropped and counted in ``dropped``
    (NATS's slow-consumer policy: the reader never waits for a subscriber),
    and a ``SlowConsumerError`` goes to the ``error_callback`` when dropping
    starts.

    Attributes:
        subject: the subject (wildcards allowed).
        queue: the queue group, or ``None``.
        sid: the subscription id on the wire (kept across reconnects).
        delivered: messages received for it so far (dropped ones included).
        dropped: messages dropped because the buffer was full.
        max_msgs: after this many messages it ends on its own (0: no limit).
    """

    __slots__ = (
        "_callback",
        "_client",
        "_receive",
        "_send_nowait",
        "_sender",
        "_slow",
        "delivered",
        "dropped",
        "max_msgs",
        "queue",
        "sid",
        "subject",
    )

    def __init__(
        self,
        client: Client,
        sid: int,
        subject: str,
        queue: str | None,
        max_pending: float,
        callback: Callable[[Msg], object] | None,
    ) -> None:
        self._client = client
        self.sid = sid
        self.subject = subject
        self.queue = queue
        self.delivered = 0
        self.dropped = 0
        self.max_msgs = 0
        self._callback = callback
        self._slow = False
        sender, receiver = create_memory_object_stream[Msg](
            0 if callback is not None else max_pending
        )
        if callback is not None:
            receiver.close()
            sender.close()
        self._sender = sender
        self._send_nowait = sender.send_nowait
        self._receive = receiver

    def subscribe_line(self) -> bytes:
        """The SUB command of this subscription."""
        if self.queue is None:
            return f"SUB {self.subject} {self.sid}\r\n".encode()
        return f"SUB {self.subject} {self.queue} {self.sid}\r\n".encode()

    def deliver(self, msg: Msg) -> None:
        """Hand ``msg`` over (called as the client reads it; never waits)."""
        self.delivered += 1
        callback = self._callback
        if callback is not None:
            try:
                callback(msg)
            except Exception as exc:
                self._client._report(exc)
        else:
            try:
                self._send_nowait(msg)
            except WouldBlock:
                self.dropped += 1
                self._client._dropped += 1
                if not self._slow:
                    self._slow = True
                    self._client._report(SlowConsumerError(self.subject, self.sid))
            except BrokenResourceError:
                # The reader side was closed by its user: nobody reads any more.
                self.dropped += 1
                self._client._dropped += 1
                self._client._remove(self, send_unsub=True)
                return
            else:
                if self._slow:
                    self._slow = False
        if self.delivered == self.max_msgs:
            self._client._remove(self, send_unsub=False)

    def close(self) -> None:
        """End delivery: readers get what is buffered, then the end."""
        self._sender.close()

    @property
    def pending(self) -> int:
        """Messages buffered and not yet read."""
        return self._receive.statistics().current_buffer_used

    async def unsubscribe(self, max_msgs: int | None = None) -> None:
        """Stop the subscription now, or after ``max_msgs`` messages in all.

        With ``max_msgs``, the server is told to stop after that many messages
        in all (counting those already delivered); if that many arrived
        already, it stops now. Messages already buffered stay readable; without
        ``max_msgs``, those the server sent before it got the UNSUB and that
        arrive after this call are dropped (``Client.drain`` ends cleanly).
        A checkpoint.

        Raises:
            TypeError: ``max_msgs`` is not an integer.
            ValueError: ``max_msgs`` is smaller than 1.
        """
        await anyio.lowlevel.checkpoint()
        if max_msgs is not None:
            if type(max_msgs) is not int:
                raise TypeError(
                    f"max_msgs must be an int, not {type(max_msgs).__name__}"
                )
            if max_msgs < 1:
                raise ValueError(f"max_msgs must be at least 1, not {max_msgs}")
            if max_msgs > self.delivered:
                self.max_msgs = max_msgs
                if self._client.is_connected:
                    # Disconnected: the reconnection's replay sends the rest.
                    self._client._send_control(
                        f"UNSUB {self.sid} {max_msgs}\r\n".encode()
                    )
                return
        self._client._remove(self, send_unsub=True)

    async def drain(self, timeout: float = 10.0) -> None:
        """Stop the subscription without losing what the server sent it:
        the server is told (``UNSUB``), then a PING/PONG round trip brings
        every message it routed here before, delivered as usual; then the
        subscription ends (as nats.py's ``Subscription.drain``). A message
        published after the server took the ``UNSUB`` is not routed here (a
        request gets the no-responders status). Within ``timeout`` seconds;
        a broken connection or a closed client ends it at once.

        Raises:
            ValueError: ``timeout`` is not > 0.
        """
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, not {timeout!r}")
        client = self._client
        if client.is_connected and self.sid in client._subs:
            client._send_control(f"UNSUB {self.sid}\r\n".encode())
            # Closed or broken: nothing more comes anyway.
            with anyio.move_on_after(timeout), suppress(NatsError, TimeoutError):
                await client.flush(timeout)
        client._remove(self, send_unsub=False)

    async def next_msg(self, timeout: float | None = None) -> Msg:
        """The next message, waiting up to ``timeout`` seconds (``None``: no limit).

        Raises:
            TimeoutError: nothing came within ``timeout``.
            EndOfStream: the subscription ended (unsubscribed, its ``max_msgs``
                reached, or the client closed) and its buffer is empty.
            ConnectionClosedError: the client failed (it gave up reconnecting)
                and the buffer is empty.
        """
        with anyio.fail_after(math.inf if timeout is None else timeout):
            try:
                return await self._receive.receive()
            except EndOfStream:
                failure = self._client._failure
                if failure is not None:
                    raise ConnectionClosedError(str(failure)) from failure
                raise

    async def next_msgs(self, limit: int) -> list[Msg]:
        """Between 1 and ``limit`` buffered messages, waiting for the first
        (drain-many: a consumer takes a burst in one wake).

        Raises:
            TypeError / ValueError: ``limit`` is not an integer of at least 1.
            EndOfStream: the subscription ended and its buffer is empty.
            ConnectionClosedError: the client failed and the buffer is empty.
        """
        try:
            return await self._receive.receive_many(limit)
        except EndOfStream:
            failure = self._client._failure
            if failure is not None:
                raise ConnectionClosedError(str(failure)) from failure
            raise

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Msg:
        try:
            return await self._receive.receive()
        except EndOfStream:
            failure = self._client._failure
            if failure is not None:
                raise ConnectionClosedError(str(failure)) from failure
            raise StopAsyncIteration from None

    def __del__(self) -> None:
        # Its reader side is ours to close: nobody else holds it.
        receive = getattr(self, "_receive", None)
        if receive is not None:
            receive.close()

    def __repr__(self) -> str:
        return (
            f"<Subscription sid={self.sid} subject={self.subject!r} "
            f"delivered={self.delivered} dropped={self.dropped}>"
        )
