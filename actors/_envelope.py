"""The envelope of an ``ask``: the message and the slot its reply goes into.

Told messages travel bare (no wrapper on the tell path); only asks are wrapped.
"""

from __future__ import annotations

from typing import Any

from .channel._waiters import Backend, ReceiveWaiter

__all__ = ["Ask"]

_PENDING = 0
_REPLIED = 1
_FAILED = 2


class Ask:
    """One ask in flight: filled once by the actor, awaited once by the asker."""

    __slots__ = ("abandoned", "message", "outcome", "state", "waiter")

    def __init__(self, message: object) -> None:
        self.message = message
        self.state = _PENDING
        self.outcome: Any = None  # the reply, or the exception to raise
        self.waiter: ReceiveWaiter[Any] | None = None
        self.abandoned = False  # the asker timed out or was cancelled

    @property
    def done(self) -> bool:
        return self.state != _PENDING

    def reply(self, value: object, backend: Backend | None) -> bool:
        """Deliver the reply; False if nobody waits for it any more."""
        if self.state != _PENDING:
            return False
        self.state = _REPLIED
        self.outcome = value
        return self._wake(backend)

    def fail(self, exc: BaseException, backend: Backend | None) -> bool:
        """Deliver an exception to the asker; False if nobody waits any more."""
        if self.state != _PENDING:
            return False
        self.state = _FAILED
        self.outcome = exc
        return self._wake(backend)

    def _wake(self, backend: Backend | None) -> bool:
        waiter = self.waiter
        if waiter is not None:
            self.waiter = None
            if backend is not None and not backend.is_cancelled(waiter):
                backend.wake(waiter)
                return True
            return False
        return not self.abandoned

    async def wait(self, backend: Backend) -> Any:
        """Wait for the outcome (the caller bounds it with a cancel scope)."""
        if self.state == _PENDING:
            waiter: ReceiveWaiter[Any] = ReceiveWaiter(1, self)
            self.waiter = waiter
            await backend.park(waiter, self._abandon, self._abandon)
        if self.state == _FAILED:
            raise self.outcome
        return self.outcome

    def _abandon(self, waiter: ReceiveWaiter[Any]) -> None:
        self.waiter = None
        self.abandoned = True
