"""The runtime's signals: items it puts in mailboxes outside the quota."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .mailbox import Signal

if TYPE_CHECKING:
    from ._lifecycle import ExitReason
    from ._ref import ActorRef

__all__ = ["Terminated"]


class Terminated(Signal):
    """Delivered once to each watcher when a watched actor terminates.

    Attributes:
        ref: the actor that terminated.
        reason: how it ended: ``StopReason.NORMAL`` for a normal stop,
            ``StopReason.PARENT`` / ``StopReason.SYSTEM`` when its parent or its
            system stopped it, or the exception of the failure that ended it
            (its supervisor said stop, gave up, or it was ``temporary``). The
            same value ``ref.join()`` returns. Typed
            ``ExitReason``.
    """

    __slots__ = ("reason", "ref")
    # ``case Terminated(ref, reason):``, as the docs write it.
    __match_args__ = ("ref", "reason")

    def __init__(self, ref: ActorRef[Any], reason: ExitReason) -> None:
        self.ref = ref
        self.reason: ExitReason = reason

    def __repr__(self) -> str:
        return f"Terminated({self.ref!r}, reason={self.reason!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Terminated)
            and other.ref == self.ref
            and other.reason is self.reason
        )

    def __hash__(self) -> int:
        return hash((Terminated, self.ref))


class Wake(Signal):
    """Wakes an idle actor so it looks at its control commands. Internal."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Wake()"


WAKE = Wake()
