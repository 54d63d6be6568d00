"""Dead letters: messages that could not be delivered or handled.

Counted, the latest kept, and published to subscribers (as Akka's event
stream), so a test or an application can account for every one of them without
the system keeping them all.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from ._validation import check_count
from .channel import (
    BrokenResourceError,
    ClosedResourceError,
    MemoryObjectReceiveStream,
    MemoryObjectSendStream,
    create_memory_object_stream,
)

if TYPE_CHECKING:
    from ._ref import ActorRef

__all__ = [
    "DeadLetter",
    "DeadLetterStream",
    "DeadLetterSubscription",
    "DeadLetters",
]

logger = logging.getLogger("actors")


class DeadLetter(NamedTuple):
    """A message that could not be handled."""

    recipient: ActorRef[Any]  #: the actor it was for
    message: object  #: the message itself
    reason: str  #: why: "actor stopped", "handler failed", "unhandled", ...


class DeadLetterSubscription:
    """A subscription made by [``DeadLetters.subscribe``][actors.DeadLetters.subscribe].

    ``unsubscribe()`` ends it (at once: the callback sees no later letter);
    calling it again does nothing. As a context manager (``with``) it ends
    when the block is left.
    """

    __slots__ = ("_letters", "_on_exit", "callback")

    def __init__(
        self,
        letters: DeadLetters,
        callback: Callable[[DeadLetter], object],
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        self._letters = letters
        #: What is called with each dead letter.
        self.callback = callback
        #: Called when the system exits (a stream ends there).
        self._on_exit = on_exit

    @property
    def active(self) -> bool:
        """Whether the callback still gets dead letters."""
        return self in self._letters._subscribers

    def unsubscribe(self) -> None:
        """Stop calling the callback (idempotent)."""
        self._letters._remove(self)

    def __enter__(self) -> DeadLetterSubscription:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.unsubscribe()

    def __repr__(self) -> str:
        state = "active" if self.active else "ended"
        return f"<DeadLetterSubscription {self.callback!r} {state}>"


class DeadLetterStream:
    """``async with system.dead_letters.stream() as letters``: every dead letter
    from when the block is entered until it is left, in order.

    ``letters`` is a receive stream of [``DeadLetter``][actors.DeadLetter] (the
    channel core's, anyio's contract: ``await letters.receive()``,
    ``letters.receive_nowait()``, ``async for letter in letters``). Letters wait
    in an unbounded buffer until received: none is dropped however slow the
    reader. Iteration ends when the system has exited and every letter was
    received (the teardown's dead letters come first).

    Raises:
        RuntimeError: the same stream object is entered twice.
    """

    __slots__ = ("_letters", "_receive", "_send", "_subscription")

    def __init__(self, letters: DeadLetters) -> None:
        self._letters = letters
        self._send: MemoryObjectSendStream[DeadLetter] | None = None
        self._receive: MemoryObjectReceiveStream[DeadLetter] | None = None
        self._subscription: DeadLetterSubscription | None = None

    async def __aenter__(self) -> MemoryObjectReceiveStream[DeadLetter]:
        if self._send is not None:
            raise RuntimeError("a dead letter stream can be entered only once")
        send, receive = create_memory_object_stream[DeadLetter](math.inf)
        self._send, self._receive = send, receive
        letters = self._letters
        self._subscription = letters._add(self._deliver, self._end)
        if self._subscription is None:
            send.close()  # the system has exited: no letter will come
        return receive

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._end()
        assert self._receive is not None
        self._receive.close()

    def _deliver(self, letter: DeadLetter) -> None:
        send = self._send
        assert send is not None
        try:
            send.send_nowait(letter)  # never WouldBlock: the buffer is unbounded
        except (BrokenResourceError, ClosedResourceError):
            self._end()  # the reader closed its end: nobody reads any more

    def _end(self) -> None:
        """Unsubscribe and close the sending side: the reader sees the end
        once it has received what is buffered."""
        if self._subscription is not None:
            self._subscription.unsubscribe()
            self._subscription = None
        if self._send is not None:
            self._send.close()

    def __repr__(self) -> str:
        return f"<DeadLetterStream of {self._letters!r}>"


class DeadLetters:
    """Messages that could not be delivered or handled: counted, never silent.

    Every dead letter is counted, the latest ``keep`` are kept, and each one is
    handed to every subscriber, in the order they happened (see
    [``subscribe``][actors.DeadLetters.subscribe] and
    [``stream``][actors.DeadLetters.stream]).

    Attributes:
        count: how many there were since the system started.
        recent: the latest ones (at most ``keep``), oldest first.

    Raises:
        TypeError: ``keep`` is not an integer.
        ValueError: ``keep`` < 0.
    """

    __slots__ = ("_lock", "_subscribers", "closed", "count", "recent")

    def __init__(self, keep: int) -> None:
        check_count(keep, "keep")
        self.count = 0
        self.recent: deque[DeadLetter] = deque(maxlen=keep)
        #: Copy-on-write: replaced whole under the lock, read without it, so
        #: publishing never sees a half-changed collection.
        self._subscribers: tuple[DeadLetterSubscription, ...] = ()
        self._lock = threading.Lock()
        #: The system has exited: streams end, no letter comes any more.
        self.closed = False

    def subscribe(
        self, callback: Callable[[DeadLetter], object]
    ) -> DeadLetterSubscription:
        """Call ``callback(letter)`` for every later dead letter.

        The callback runs in the event loop's thread at the moment the letter
        is counted, inside the runtime (it must not block; to do async work,
        hand the letter on, for example with ``ref.tell`` or through
        [``stream``][actors.DeadLetters.stream]). An exception from it is logged
        on the ``actors`` logger and does not stop the runtime nor later calls.
        The same callback subscribed twice is called twice. Safe to call from
        any thread.

        Args:
            callback: called with each [``DeadLetter``][actors.DeadLetter].

        Returns:
            The subscription: ``unsubscribe()`` it, or use it as a context
            manager (``with system.dead_letters.subscribe(seen.append):``).

        Raises:
            TypeError: ``callback`` is not callable.
        """
        if not callable(callback):
            raise TypeError(f"callback must be callable, not {callback!r}")
        return self._add(callback)

    def stream(self) -> DeadLetterStream:
        """Every dead letter from now on as an async stream::

            async with system.dead_letters.stream() as letters:
                async for letter in letters:
                    ...

        See [``DeadLetterStream``][actors.DeadLetterStream].
        """
        return DeadLetterStream(self)

    def publish(self, letter: DeadLetter) -> None:
        """Count, keep and hand out one dead letter to every subscriber, in
        the event loop's thread (the runtime calls it for each dead letter).
        """
        self.count += 1
        self.recent.append(letter)
        for subscription in self._subscribers:
            try:
                subscription.callback(letter)
            except Exception:
                logger.exception(
                    "dead letter subscriber %r failed on %r",
                    subscription.callback,
                    letter,
                )

    def _close(self) -> None:
        """The system has exited: end every stream (after its letters)."""
        with self._lock:
            self.closed = True
            subscribers = self._subscribers
        for subscription in subscribers:
            if subscription._on_exit is not None:
                subscription._on_exit()

    @overload
    def _add(
        self, callback: Callable[[DeadLetter], object]
    ) -> DeadLetterSubscription: ...

    @overload
    def _add(
        self,
        callback: Callable[[DeadLetter], object],
        on_exit: Callable[[], None],
    ) -> DeadLetterSubscription | None: ...

    def _add(
        self,
        callback: Callable[[DeadLetter], object],
        on_exit: Callable[[], None] | None = None,
    ) -> DeadLetterSubscription | None:
        """Subscribe. With ``on_exit`` (a stream): called when the system
        exits, and no subscription (None) if it has exited already; the test
        and the change are one step, so _close() cannot miss a stream."""
        subscription = DeadLetterSubscription(self, callback, on_exit)
        with self._lock:
            if on_exit is not None and self.closed:
                return None
            self._subscribers = (*self._subscribers, subscription)
        return subscription

    def _remove(self, subscription: DeadLetterSubscription) -> None:
        with self._lock:
            self._subscribers = tuple(
                s for s in self._subscribers if s is not subscription
            )

    def __repr__(self) -> str:
        return f"<DeadLetters count={self.count}>"
