"""The envelope of an ``ask``: the message and the slot its reply goes into.

Told messages travel bare (no wrapper on the tell path); only asks are wrapped.
"""

from __future__ import annotations

from typing import Any

from .channel._waiters import Backend, Waiter, ki_protected
from .channel._waiters import _asyncio_backend as _ASYNCIO

__all__ = ["EXPIRED", "Ask"]

#: Returned by :meth:`Ask.wait` when its timeout expired (a reply can be None,
#: and a handler can raise TimeoutError itself, so neither can mean "expired").
EXPIRED: Any = object()

_PENDING = 0
_REPLIED = 1
_FAILED = 2


class Ask(Waiter):
    """One ask in flight: filled once by the actor, awaited once by the asker.

    The envelope is itself what the asker parks on (one object per ask).
    """

    # prev, next, deadline: its place among the asks awaiting a timeout on
    # asyncio (see _deadlines.py); set only there.
    __slots__ = (
        "abandoned",
        "deadline",
        "message",
        "next",
        "outcome",
        "prev",
        "state",
        "waiting",
    )

    prev: Ask | None
    next: Ask | None
    deadline: float

    def __init__(self, message: object) -> None:
        self.handle = None
        self.message = message
        self.state = _PENDING
        self.outcome: Any = None  # the reply, or the exception to raise
        self.waiting = False  # the asker is parked on this envelope
        self.abandoned = False  # the asker timed out or was cancelled

    @property
    def done(self) -> bool:
        return self.state != _PENDING

    @ki_protected
    def reply(self, value: object, backend: Backend | None) -> bool:
        """Deliver the reply; False if nobody waits for it any more."""
        if self.state != _PENDING:
            return False
        self.state = _REPLIED
        self.outcome = value
        return self._wake(backend)

    @ki_protected
    def fail(self, exc: BaseException, backend: Backend | None) -> bool:
        """Deliver an exception to the asker; False if nobody waits any more."""
        if self.state != _PENDING:
            return False
        self.state = _FAILED
        self.outcome = exc
        return self._wake(backend)

    @ki_protected
    def _wake(self, backend: Backend | None) -> bool:
        if self.waiting:
            self.waiting = False
            if backend is _ASYNCIO:
                # Every ask's reply: resolve the future here rather than through
                # two backend calls. Done already means Task.cancel() won.
                fut = self.handle
                if fut.done():
                    return False
                fut.set_result(None)
                return True
            if backend is not None and not backend.is_cancelled(self):
                backend.wake(self)
                return True
            return False
        return not self.abandoned

    @ki_protected
    async def wait(self, backend: Backend, timeout: float | None = None) -> Any:
        """Wait for the outcome, at most ``timeout`` seconds (None: no limit).

        Returns:
            The reply, or :data:`EXPIRED` when the timeout expired first (the
            ask is then abandoned).

        Raises:
            Exception: the handler's exception.
        """
        if self.state == _PENDING:
            self.waiting = True
            if timeout is None:
                await backend.park(self, abandon, abandon)
            elif not await backend.park_for(self, timeout, abandon, abandon):
                return EXPIRED
        return self.outcome_or_raise()

    def outcome_or_raise(self) -> Any:
        """The reply, or raise the handler's exception."""
        if self.state == _FAILED:
            raise self.outcome
        return self.outcome


def abandon(ask: Ask) -> None:
    # The asker timed out or was cancelled: a later reply is a dead letter.
    ask.waiting = False
    ask.abandoned = True
