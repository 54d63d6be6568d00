"""The envelope of an ``ask``: the message and the slot its reply goes into.

Told messages travel bare (no wrapper on the tell path); only asks are wrapped.
"""

from __future__ import annotations

from typing import Any

from .channel._waiters import Backend, ReceiveWaiter

__all__ = ["EXPIRED", "Ask"]

#: Returned by :meth:`Ask.wait` when its timeout expired (a reply can be None,
#: and a handler can raise TimeoutError itself, so neither can mean "expired").
EXPIRED: Any = object()

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

    async def wait(self, backend: Backend, timeout: float | None = None) -> Any:
        """Wait for the outcome, at most ``timeout`` seconds (None: no limit).

        Returns:
            The reply, or :data:`EXPIRED` when the timeout expired first (the
            ask is then abandoned).

        Raises:
            Exception: the handler's exception.
        """
        if self.state == _PENDING:
            waiter: ReceiveWaiter[Any] = ReceiveWaiter(1, self)
            self.waiter = waiter
            if timeout is None:
                await backend.park(waiter, self._abandon, self._abandon)
            elif not await backend.park_for(
                waiter, timeout, self._abandon, self._abandon
            ):
                return EXPIRED
        if self.state == _FAILED:
            raise self.outcome
        return self.outcome

    def _abandon(self, waiter: ReceiveWaiter[Any]) -> None:
        self.waiter = None
        self.abandoned = True
