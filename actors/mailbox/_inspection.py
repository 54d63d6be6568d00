"""What a mailbox says of itself: ``statistics()`` (a ``MailboxStatistics``
snapshot, as anyio's streams' ``statistics()``), ``capacity``, ``closed``,
``len()`` and ``repr()``. A base class of
[``Mailbox``][actors.mailbox.Mailbox], one concept of it; it reads the
state ``RuntimeReceive`` declares and changes none of it.
"""

from __future__ import annotations

from typing import NamedTuple, TypeVar

from ._runtime_receive import RuntimeReceive

__all__ = ["MailboxInspection", "MailboxStatistics"]

M = TypeVar("M")


class MailboxStatistics(NamedTuple):
    """A snapshot of one mailbox."""

    queued_messages: int  #: user messages waiting to be received
    queued_signals: int  #: signals waiting to be received
    capacity: int | None  #: the quota (None: unbounded)
    waiting_senders: int  #: tasks parked in ``send`` for a unit of quota
    peak_queue_length: int  #: the most items (messages and signals) queued at once
    units_in_use: int  #: quota units held by queued messages
    wakeups: int  #: times the parked consumer was woken (sends, close, interrupts)


class MailboxInspection(RuntimeReceive[M]):
    """The mailbox's inspection (see the module doc)."""

    __slots__ = ()  # the state's slots are declared by RuntimeReceive

    _capacity: int | None

    @property
    def closed(self) -> bool:
        """Whether [``close``][actors.mailbox.Mailbox.close] was called."""
        return self._closed

    @property
    def capacity(self) -> int | None:
        """The quota (None: unbounded)."""
        return self._capacity

    def __len__(self) -> int:
        return len(self._queue)

    def statistics(self) -> MailboxStatistics:
        """Return a snapshot of the mailbox's state."""
        return MailboxStatistics(
            len(self._queue) - self._signals,
            self._signals,
            self._capacity,
            len(self._quota.senders or ()),
            max(self._peak, len(self._queue)),
            self._quota.used,
            self._wakeups,
        )

    def __repr__(self) -> str:
        status = "closed" if self._closed else "open"
        return (
            f"<Mailbox {status} queued={len(self._queue)}"
            f" capacity={self._capacity} in_use={self._quota.used}>"
        )
